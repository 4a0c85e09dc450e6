"""spiraltorch.utils.tensorboard.SummaryWriter: event files read back by TensorBoard's own
EventAccumulator, histograms equal to PyTorch's, the projector's files, and the writer hooks of
nn.fit, nn.ModuleTrainer and ZSpaceTrainer."""

from __future__ import annotations

import os
import struct
import subprocess
import sys
import textwrap
import zlib

import numpy as np
import pytest

from conftest import PY_DIR, needs_torch
import spiraltorch as st
from spiraltorch.utils.tensorboard import SummaryWriter, _records, histogram_proto

pytest.importorskip("tensorboard")
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator  # noqa: E402
from tensorboard.compat.proto.summary_pb2 import HistogramProto  # noqa: E402

KEEP_ALL = {"compressedHistograms": 0, "images": 0, "audio": 0, "scalars": 0, "histograms": 0, "tensors": 0}


def accumulate(path):
    acc = EventAccumulator(str(path), size_guidance=KEEP_ALL)
    acc.Reload()
    return acc


def decode_png(data: bytes) -> np.ndarray:
    """(H, W, 4) uint8 from an RGBA PNG with filter-0 scanlines (what the canvas encoder writes)."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, size = 8, b"", None
    while pos < len(data):
        (n,) = struct.unpack(">I", data[pos:pos + 4])
        kind, body = data[pos + 4:pos + 8], data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            w, h, depth, color = struct.unpack(">IIBB", body[:10])
            assert (depth, color) == (8, 6)
            size = (h, w)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    h, w = size
    raw = np.frombuffer(zlib.decompress(idat), dtype=np.uint8).reshape(h, 1 + 4 * w)
    assert (raw[:, 0] == 0).all()
    return raw[:, 1:].reshape(h, w, 4)


# ---------------------------------------------------------------- the record format


def test_crc32c_and_framing_match_tensorboard():
    from tensorboard.compat.tensorflow_stub.pywrap_tensorflow import masked_crc32c

    assert _records.crc32c(b"123456789") == 0xE3069283
    rng = np.random.default_rng(0)
    for n in (0, 1, 7, 64, 1000):
        data = rng.integers(0, 256, n, dtype=np.uint8).tobytes()
        assert _records.masked_crc32c(data) == masked_crc32c(data)
    framed = _records.frame_record(b"abc") + _records.frame_record(b"")
    assert list(_records.read_records(framed)) == [b"abc", b""]
    with pytest.raises(ValueError, match="CRC"):
        list(_records.read_records(framed[:13] + b"x" + framed[14:]))


def test_writer_needs_no_tensorflow_tensorboard_or_protobuf(tmp_path):
    script = textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {PY_DIR!r}) if {PY_DIR!r} else None
        class Block:
            def find_spec(self, name, path=None, target=None):
                if name.split(".")[0] in ("tensorflow", "tensorboard", "google", "PIL", "torch"):
                    raise ImportError("blocked: " + name)
        sys.meta_path.insert(0, Block())
        import spiraltorch as st
        from spiraltorch.utils.tensorboard import SummaryWriter
        with SummaryWriter({str(tmp_path)!r}) as w:
            w.add_scalar("a", 1.0, 1)
            w.add_histogram("h", st.randn(100), 1)
            w.add_image("i", st.rand(3, 4, 5), 1)
            w.add_text("t", "hello", 1)
            w.add_hparams({{"lr": 0.1}}, {{"m": 1.0}}, run_name="hp")
            w.add_embedding(st.rand(4, 2), metadata=list("abcd"))
        assert not [m for m in sys.modules if m.split(".")[0] in ("tensorflow", "tensorboard", "google")]
        print("ok")
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"


# ---------------------------------------------------------------- round trips


def test_scalars_histogram_image_text_round_trip(tmp_path):
    values = st.randn(1000, dtype=st.float64) * 3.0
    with SummaryWriter(tmp_path) as w:
        for step in range(1, 6):
            w.add_scalar("loss", 1.0 / step, step, walltime=1000.0 + step)
        w.add_scalar("t0", st.tensor(2.5))  # a one-element tensor, no step: step 0
        w.add_histogram("weights", values, global_step=3)
        img = st.rand(3, 5, 7)
        w.add_image("picture", img, 2)
        w.add_text("notes", "**bold** text", 4)
        w.add_scalar("newstyle", 0.25, 1, new_style=True)
    files = [f for f in os.listdir(tmp_path) if f.startswith("events.out.tfevents.")]
    assert len(files) == 1

    acc = accumulate(tmp_path)
    tags = acc.Tags()
    assert set(tags["scalars"]) == {"loss", "t0"}
    loss = acc.Scalars("loss")
    assert [e.step for e in loss] == [1, 2, 3, 4, 5]
    assert [e.wall_time for e in loss] == [1001.0, 1002.0, 1003.0, 1004.0, 1005.0]
    np.testing.assert_allclose([e.value for e in loss], [1.0 / s for s in range(1, 6)], rtol=1e-7)
    assert acc.Scalars("t0")[0].step == 0 and acc.Scalars("t0")[0].value == 2.5

    (h,) = acc.Histograms("weights")
    assert h.step == 3
    x = values.numpy()
    assert h.histogram_value.num == 1000
    assert h.histogram_value.min == x.min() and h.histogram_value.max == x.max()
    np.testing.assert_allclose(h.histogram_value.sum, x.sum(), rtol=1e-12)
    assert sum(h.histogram_value.bucket) == 1000

    (im,) = acc.Images("picture")
    assert (im.step, im.width, im.height) == (2, 7, 5)
    pixels = decode_png(im.encoded_image_string)
    expect = (np.clip(img.numpy() * 255.0, 0, 255)).astype(np.uint8).transpose(1, 2, 0)
    np.testing.assert_array_equal(pixels[..., :3], expect)
    assert (pixels[..., 3] == 255).all()

    assert "notes/text_summary" in tags["tensors"]
    (t,) = acc.Tensors("notes/text_summary")
    assert t.step == 4 and t.tensor_proto.string_val == [b"**bold** text"]
    assert acc.SummaryMetadata("notes/text_summary").plugin_data.plugin_name == "text"
    (ns,) = acc.Tensors("newstyle")
    assert ns.tensor_proto.float_val == [0.25]


@needs_torch
@pytest.mark.parametrize("case", ["normal", "positive", "zeros", "int_bins", "max_bins", "edges", "uint8"])
def test_histogram_equals_pytorch(case):
    from torch.utils.tensorboard.summary import make_histogram

    rng = np.random.default_rng(1)
    v, tf_bins = 1e-12, []  # torch's SummaryWriter.default_bins, built as it builds them
    while v < 1e20:
        tf_bins.append(v)
        v *= 1.1
    torch_default = [-b for b in tf_bins[::-1]] + [0] + tf_bins
    values, bins, max_bins = rng.standard_normal(5000) * 4.0, "tensorflow", None
    if case == "positive":
        values = rng.exponential(1e-3, 800)
    elif case == "zeros":
        values = np.concatenate([np.zeros(10), rng.standard_normal(5) * 1e-14, [-1e-12, 1e-12, 5.0]])
    elif case == "int_bins":
        bins = 30
    elif case == "max_bins":
        max_bins = 64
    elif case == "edges":
        bins = [-3.0, -1.0, 0.0, 0.5, 2.0, 10.0]
    elif case == "uint8":
        values = rng.integers(0, 256, (12, 9)).astype(np.uint8)
    ours = HistogramProto.FromString(histogram_proto(st.tensor(values), bins, max_bins))
    theirs = make_histogram(values.astype(float), torch_default if bins == "tensorflow" else bins, max_bins)
    assert list(ours.bucket_limit) == list(theirs.bucket_limit)
    assert list(ours.bucket) == list(theirs.bucket)
    assert (ours.min, ours.max, ours.num) == (theirs.min, theirs.max, theirs.num)
    np.testing.assert_allclose([ours.sum, ours.sum_squares], [theirs.sum, theirs.sum_squares], rtol=1e-12)


def test_histogram_skips_non_finite_values_and_refuses_none():
    h = HistogramProto.FromString(histogram_proto([1.0, float("nan"), 2.0, float("inf")]))
    assert h.num == 2 and h.max == 2.0
    with pytest.raises(ValueError, match="finite"):
        histogram_proto([float("nan")])
    with pytest.raises(ValueError, match="bins"):
        histogram_proto([1.0], bins="auto")


def test_images_grid_formats_and_uint8(tmp_path):
    batch = st.rand(10, 1, 4, 3)
    hwc = (st.rand(6, 2, 3) * 255).to(st.uint8)
    with SummaryWriter(tmp_path) as w:
        w.add_images("grid", batch, 1)
        w.add_image("hwc", hwc, 1, dataformats="HWC")
        w.add_image("gray", st.rand(4, 4), 1, dataformats="HW")
        w.add_images("nhwc", st.rand(2, 3, 3, 4), 1, dataformats="NHWC")
        with pytest.raises(ValueError, match="dataformats"):
            w.add_image("bad", st.rand(3, 4, 4), 1, dataformats="CHWX")
        with pytest.raises(ValueError, match="does not match"):
            w.add_image("bad", st.rand(4, 4), 1)
    acc = accumulate(tmp_path)
    grid = decode_png(acc.Images("grid")[0].encoded_image_string)
    assert grid.shape == (8, 24, 4)  # 2 rows x 8 columns of 4 x 3
    b = (np.clip(batch.numpy() * 255, 0, 255)).astype(np.uint8)
    np.testing.assert_array_equal(grid[4:8, 3:6, 0], b[9, 0])  # the 10th image: row 2, column 2
    assert (grid[4:8, 6:, :3] == 0).all()  # the empty cells
    np.testing.assert_array_equal(decode_png(acc.Images("hwc")[0].encoded_image_string)[..., :3], hwc.numpy())
    g = decode_png(acc.Images("gray")[0].encoded_image_string)
    assert g.shape == (4, 4, 4) and (g[..., 0] == g[..., 1]).all()
    assert decode_png(acc.Images("nhwc")[0].encoded_image_string).shape == (3, 6, 4)


def test_add_scalars_writes_one_run_per_tag(tmp_path):
    with SummaryWriter(tmp_path) as w:
        for step in range(3):
            w.add_scalars("run/loss", {"train": step * 1.0, "val": step * 2.0}, step)
    for tag, scale in (("train", 1.0), ("val", 2.0)):
        acc = accumulate(tmp_path / f"run_loss_{tag}")
        assert [e.value for e in acc.Scalars("run/loss")] == [0.0, scale, 2 * scale]


def test_hparams_round_trip(tmp_path):
    from tensorboard.plugins.hparams import metadata, plugin_data_pb2

    with SummaryWriter(tmp_path) as w:
        w.add_hparams({"lr": 0.01, "layers": 3, "act": "relu", "wd": True, "skip": None},
                      {"hparam/accuracy": 0.9, "hparam/loss": 0.3},
                      hparam_domain_discrete={"act": ["relu", "tanh"]}, run_name="trial0")
    acc = accumulate(tmp_path / "trial0")
    content = acc.PluginTagToContent(metadata.PLUGIN_NAME)
    exp = metadata.parse_experiment_plugin_data(content[metadata.EXPERIMENT_TAG])
    infos = {h.name: h for h in exp.hparam_infos}
    assert set(infos) == {"lr", "layers", "act", "wd"}
    assert [v.string_value for v in infos["act"].domain_discrete.values] == ["relu", "tanh"]
    assert infos["wd"].type == 2 and infos["lr"].type == 3 and infos["act"].type == 1
    assert [m.name.tag for m in exp.metric_infos] == ["hparam/accuracy", "hparam/loss"]
    ssi = metadata.parse_session_start_info_plugin_data(content[metadata.SESSION_START_INFO_TAG])
    assert ssi.hparams["lr"].number_value == 0.01 and ssi.hparams["layers"].number_value == 3
    assert ssi.hparams["act"].string_value == "relu" and ssi.hparams["wd"].bool_value is True
    sei = metadata.parse_session_end_info_plugin_data(content[metadata.SESSION_END_INFO_TAG])
    assert sei.status == 1  # STATUS_SUCCESS
    data = plugin_data_pb2.HParamsPluginData.FromString(content[metadata.EXPERIMENT_TAG])
    assert data.version == metadata.PLUGIN_DATA_VERSION
    np.testing.assert_allclose(acc.Scalars("hparam/accuracy")[0].value, 0.9, rtol=1e-7)


def test_embedding_projector_files(tmp_path):
    from google.protobuf import text_format
    from tensorboard.plugins.projector.projector_config_pb2 import ProjectorConfig

    # Poincare points: a trained-looking embedding inside the unit ball, and an object with .weight
    emb = st.geometry.PoincareEmbedding(6, 2, seed=3)
    names = [f"node{i}" for i in range(6)]
    imgs = st.rand(6, 1, 4, 4)
    with SummaryWriter(tmp_path) as w:
        w.add_embedding(emb, metadata=names, label_img=imgs, global_step=7, tag="wordnet/mammal")
        w.add_embedding(st.rand(3, 5), metadata=[["a", 1], ["b", 2], ["c", 3]], metadata_header=["name", "id"])
        with pytest.raises(ValueError, match="metadata rows"):
            w.add_embedding(st.rand(3, 2), metadata=["x"])
    config = text_format.Parse((tmp_path / "projector_config.pbtxt").read_text(), ProjectorConfig())
    first, second = config.embeddings
    assert first.tensor_name == "wordnet/mammal:00007"
    assert first.tensor_path == "00007/wordnet%2fmammal/tensors.tsv"
    assert first.metadata_path == "00007/wordnet%2fmammal/metadata.tsv"
    assert first.sprite.image_path == "00007/wordnet%2fmammal/sprite.png"
    assert list(first.sprite.single_image_dim) == [4, 4]
    points = np.loadtxt(tmp_path / first.tensor_path, delimiter="\t")
    np.testing.assert_array_equal(points, emb.weight.numpy())
    assert (tmp_path / first.metadata_path).read_text().splitlines() == names
    sprite = decode_png((tmp_path / first.sprite.image_path).read_bytes())
    assert sprite.shape == (12, 12, 4)  # 3 x 3 cells of 4 x 4
    assert second.tensor_name == "default:00000"
    assert (tmp_path / second.metadata_path).read_text().splitlines() == ["name\tid", "a\t1", "b\t2", "c\t3"]
    with pytest.raises(ValueError, match="directory"):
        SummaryWriter(tmp_path / "x").add_embedding(st.rand(2, 2), tag="..")


def test_purge_step_close_and_reopen(tmp_path):
    w = SummaryWriter(tmp_path, purge_step=5)
    w.add_scalar("a", 1.0, 5)
    first = w.file_path
    w.close()
    assert w.file_path is None
    w.add_scalar("a", 2.0, 6)  # a new file after close, as PyTorch
    w.close()
    raw = open(first, "rb").read()
    events = [_records.parse_message(r) for r in _records.read_records(raw)]
    assert (3, 2, b"brain.Event:2") in events[0]
    assert (2, 0, 5) in events[1] and any(f == 7 for f, _, _ in events[1])  # SessionLog START at step 5
    files = sorted(f for f in os.listdir(tmp_path) if "tfevents" in f)
    assert len(files) == 2
    acc = EventAccumulator(first, size_guidance=KEEP_ALL)
    acc.Reload()
    assert [(e.step, e.value) for e in acc.Scalars("a")] == [(5, 1.0)]


def test_default_log_dir_is_under_runs(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with SummaryWriter(comment="_x") as w:
        assert w.get_logdir().startswith("runs" + os.sep) and w.get_logdir().endswith("_x")
    assert os.path.isdir(tmp_path / w.get_logdir())


@needs_torch
def test_torch_tensors_and_numpy_arrays_are_accepted(tmp_path):
    import torch

    with SummaryWriter(tmp_path) as w:
        w.add_scalar("s", torch.tensor(1.5, requires_grad=True), 1)
        w.add_histogram("h", torch.randn(50, requires_grad=True), 1)
        w.add_image("i", np.zeros((1, 2, 2), dtype=np.float32), 1)
    acc = accumulate(tmp_path)
    assert acc.Scalars("s")[0].value == 1.5 and acc.Histograms("h")[0].histogram_value.num == 50


# ---------------------------------------------------------------- trainers


def _fashion_subset(n):
    if st.data.find_fashion_mnist() is None:
        pytest.skip("Fashion-MNIST is not installed (Debian: dataset-fashion-mnist)")
    x, y = st.data.load_fashion_mnist(split="train")
    return x[:n].contiguous(), y[:n].contiguous()


def test_fit_writes_a_fashion_mnist_run(tmp_path):
    from spiraltorch import nn, optim

    x, y = _fashion_subset(600)
    st.manual_seed(0)
    model = nn.Sequential(nn.Flatten(), nn.Linear(784, 32), nn.ReLU(), nn.Linear(32, 10))
    train = st.data.DataLoader(st.data.TensorDataset(x[:512], y[:512]), batch_size=64, shuffle=True)
    val = st.data.DataLoader(st.data.TensorDataset(x[512:], y[512:]), batch_size=88)
    with SummaryWriter(tmp_path / "fashion") as w:
        history = nn.fit(model, nn.CrossEntropyLoss(), optim.Adam(model.parameters(), lr=1e-2), train, epochs=2,
                         val_loader=val, progress=False, writer=w)
        w.add_images("fashion/inputs", x[:16], global_step=2)
        w.add_histogram("fashion/first_layer", model[1].weight, global_step=2)
    acc = accumulate(tmp_path / "fashion")
    scalars = set(acc.Tags()["scalars"])
    assert {"train/loss", "epoch/train_loss", "epoch/val_loss", "epoch/val_accuracy", "epoch/lr",
            "epoch/samples_per_second"} <= scalars
    steps = acc.Scalars("train/loss")
    assert [e.step for e in steps] == list(range(1, 17))  # 8 batches x 2 epochs
    train_loss = acc.Scalars("epoch/train_loss")
    assert [e.step for e in train_loss] == [1, 2]
    np.testing.assert_allclose([e.value for e in train_loss], [r.train_loss for r in history.epochs], rtol=1e-6)
    np.testing.assert_allclose([e.value for e in acc.Scalars("epoch/val_accuracy")],
                               [r.val_accuracy for r in history.epochs], rtol=1e-6)
    assert np.mean([e.value for e in steps[-8:]]) < np.mean([e.value for e in steps[:8]])
    (img,) = acc.Images("fashion/inputs")
    assert (img.width, img.height) == (8 * 28, 2 * 28)
    pixels = decode_png(img.encoded_image_string)
    first = (x[0, 0].numpy() * 255.0).astype(np.uint8)
    np.testing.assert_array_equal(pixels[:28, :28, 0], first)
    assert acc.Histograms("fashion/first_layer")[0].histogram_value.num == 784 * 32


def test_module_trainer_writes_steps_and_epochs(tmp_path):
    from spiraltorch import nn

    st.manual_seed(0)
    model = nn.Linear(3, 1)
    x, y = st.rand(16, 3), st.rand(16, 1)
    batches = [(x[i:i + 4], y[i:i + 4]) for i in range(0, 16, 4)]
    with SummaryWriter(tmp_path) as w:
        trainer = nn.ModuleTrainer(backend="cpu", curvature=-1.0, hyper_learning_rate=1e-2,
                                   fallback_learning_rate=0.1, writer=w, progress=False)
        schedule = trainer.roundtable(4, 1)
        stats = [trainer.train_epoch(model, nn.MSELoss(), batches, schedule) for _ in range(3)]
        trainer.evaluate_epoch(model, nn.MSELoss(), batches)
    acc = accumulate(tmp_path)
    steps = acc.Scalars("train/loss")
    assert [e.step for e in steps] == list(range(1, 13))
    epochs = acc.Scalars("epoch/train_loss")
    np.testing.assert_allclose([e.value for e in epochs], [s.average_loss for s in stats], rtol=1e-6)
    np.testing.assert_allclose(np.mean([e.value for e in steps[:4]]), stats[0].average_loss, rtol=1e-6)
    assert [e.step for e in acc.Scalars("epoch/eval_loss")] == [3]
    assert trainer.steps == 12


def test_zspace_trainer_writes_objective_and_norm(tmp_path):
    with SummaryWriter(tmp_path) as w:
        trainer = st.ZSpaceTrainer(z_dim=3, writer=w)
        first = trainer.step({"speed": 0.5, "memory": 0.2, "stability": 0.1, "gradient": [0.1, -0.2, 0.3]})
        rest = trainer.step_batch([{"speed": 0.4, "memory": 0.2, "stability": 0.1, "gradient": [0.2, 0.1, 0.0]}] * 2)
    acc = accumulate(tmp_path)
    objective = acc.Scalars("zspace/objective")
    assert [e.step for e in objective] == [1, 2, 3]
    np.testing.assert_allclose([e.value for e in objective], [first, *rest], rtol=1e-6)
    norm = acc.Scalars("zspace/z_norm")
    np.testing.assert_allclose(norm[-1].value, np.linalg.norm(trainer.state), rtol=1e-6)
