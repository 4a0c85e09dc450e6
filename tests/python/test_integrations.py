"""spiraltorch.integrations and spiral-export, end to end with the real packages:
ONNX graphs run in onnxruntime, TorchServe archives built by torch-model-archiver and served
through TorchServe's own model loader and by the real TorchServe server (where Java is),
BentoML's model store, runner and ASGI test client, Optuna studies with pruning and Ray Tune
(ASHA early stopping) on a local Ray runtime."""

import json
import os
import pathlib
import shutil
import subprocess
import sys
import time
import zipfile

import numpy as np
import pytest

import spiraltorch as st
from spiraltorch import export_cli
from spiraltorch import integrations as integ
from spiraltorch.integrations import architecture, bento, hpo, model_card, onnx_export, torchserve

nn = st.nn
rng = np.random.default_rng(0)
REPO_ROOT = pathlib.Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def _cwd_in_tmp(tmp_path, monkeypatch):
    """Every test runs in its own tmp_path: a relative path handed to an exporter, the
    archiver or a framework's own files land there, never in the repository (stray ONNX
    files named 0, 1, ... once reached the repository root from a relative output path)."""
    monkeypatch.chdir(tmp_path)


def _eval_out(model, x):
    model.eval()
    with st.no_grad():
        y = model(st.tensor(x))
    y = y[0] if isinstance(y, tuple) else y
    return y.numpy()


def _warm_batch_norm(model, x):
    model.train()
    with st.no_grad():
        model(st.tensor(x))
    model.eval()


def _lora(in_f, out_f, merged=False):
    """A LoraLinear whose adapter is not the zero-initialised one (so the delta shows)."""
    layer = nn.LoraLinear(in_f, out_f, rank=2, alpha=3.0, dropout=0.2)
    with st.no_grad():
        layer.lora_b.copy_(st.tensor(rng.standard_normal((out_f, 2)).astype(np.float32)))
    if merged:
        layer.merge()
    return layer


ONNX_CASES = {
    "mlp_softmax": (lambda: nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 3), nn.Softmax(dim=-1)), (5, 6)),
    "activations": (lambda: nn.Sequential(nn.Linear(6, 8), nn.GELU(), nn.GELU(approximate="tanh"), nn.SiLU(),
                                          nn.Sigmoid(), nn.Tanh(), nn.Dropout(0.3), nn.Identity()), (5, 6)),
    "cnn": (lambda: nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(), nn.MaxPool2d(2),
                                  nn.Conv2d(4, 6, 3, stride=2, groups=2), nn.AvgPool2d(2, padding=1),
                                  nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(6, 2)), (2, 3, 16, 16)),
    "conv_same_adaptive": (lambda: nn.Sequential(nn.Conv2d(3, 4, 4, padding="same", dilation=1),
                                                 nn.AdaptiveAvgPool2d((2, 2)), nn.Flatten()), (2, 3, 8, 8)),
    "conv1d_norms": (lambda: nn.Sequential(nn.Conv1d(3, 5, 3, padding=2, dilation=2), nn.BatchNorm1d(5),
                                           nn.Flatten(), nn.LayerNorm(50), nn.Linear(50, 4), nn.BatchNorm1d(4)),
                     (4, 3, 10)),
    "attention": (lambda: nn.Sequential(nn.Linear(8, 8), nn.LayerNorm((8,)), nn.MultiheadAttention(8, 2)), (2, 7, 8)),
    "attention_seq_first": (lambda: nn.Sequential(nn.MultiheadAttention(8, 4, batch_first=False)), (7, 2, 8)),
    "transformer": (lambda: nn.Sequential(nn.TransformerEncoderLayer(8, 2, 16),
                                          nn.TransformerEncoderLayer(8, 2, 16, activation="gelu", norm_first=True)),
                    (2, 5, 8)),
    "transformer_gelu_tanh": (lambda: nn.Sequential(nn.TransformerEncoderLayer(8, 2, 16, activation="gelu_tanh",
                                                                               batch_first=True)), (2, 5, 8)),
    "transformer_encoder": (lambda: nn.Sequential(nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2, 16),
                                                                        2, norm=nn.LayerNorm(8)),
                                                  nn.Linear(8, 3)), (2, 5, 8)),
    "lstm": (lambda: nn.Sequential(nn.LSTM(3, 5, num_layers=2), nn.Linear(5, 2)), (2, 6, 3)),
    "gru": (lambda: nn.Sequential(nn.GRU(3, 5, bias=False), nn.GRU(5, 4, batch_first=True), nn.Linear(4, 2)), (2, 6, 3)),
    "lstm_seq_first": (lambda: nn.Sequential(nn.LSTM(3, 5, batch_first=False)), (6, 2, 3)),
    "lstm_bidirectional": (lambda: nn.Sequential(nn.LSTM(3, 5, num_layers=2, batch_first=True, bidirectional=True),
                                                 nn.Linear(10, 2)), (2, 6, 3)),
    "rnn_relu_bidirectional": (lambda: nn.Sequential(nn.RNN(3, 4, num_layers=2, nonlinearity="relu",
                                                            batch_first=True, bidirectional=True),
                                                     nn.Linear(8, 2)), (2, 6, 3)),
    "rnn_tanh": (lambda: nn.Sequential(nn.RNN(3, 5, batch_first=True), nn.Linear(5, 2)), (2, 6, 3)),
    "gru_bidirectional_seq_first": (lambda: nn.Sequential(nn.GRU(3, 4, bidirectional=True, bias=False),
                                                          nn.Linear(8, 2)), (6, 2, 3)),
    "lora": (lambda: nn.Sequential(_lora(6, 5), nn.ReLU(), _lora(5, 3, merged=True)), (4, 6)),
    # Flat NHWC features to NCHW, then the Poincare-ball gate (inputs large enough to hit the clip).
    "reorder_wave_flat": (lambda: nn.Sequential(nn.FeatureReorder2d(3, 2, 4, layout="NHWC"), nn.Linear(24, 6),
                                                nn.WaveGate(6, curvature=-0.5)), (3, 24)),
    "reorder_wave_4d": (lambda: nn.Sequential(nn.FeatureReorder2d(2, 3, 4, layout="NHWC", direction="from"),
                                              nn.WaveGate(2), nn.FeatureReorder2d(2, 3, 4, layout="NHWC")),
                        (2, 2, 3, 4)),
}


@pytest.mark.parametrize("case", sorted(ONNX_CASES))
def test_onnx_export_matches_onnxruntime(case, tmp_path):
    pytest.importorskip("onnx")
    ort = pytest.importorskip("onnxruntime")
    st.manual_seed(1)
    build, shape = ONNX_CASES[case]
    model = build()
    x = (rng.standard_normal(shape) * (8.0 if "wave" in case else 1.0)).astype(np.float32)
    _warm_batch_norm(model, x)  # running statistics that are not the initial 0/1
    path = tmp_path / f"{case}.onnx"
    proto = integ.export_onnx(model, x, path)
    assert path.is_file() and proto.opset_import[0].version == onnx_export.DEFAULT_OPSET
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    got = session.run(None, {"input": x})[0]
    ref = _eval_out(model, x)
    np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-5)
    # The batch axis is dynamic (a batch-first input of another size runs too).
    if not case.endswith("seq_first"):
        x2 = rng.standard_normal((3,) + shape[1:]).astype(np.float32)
        assert integ.verify_onnx(model, path, x2) <= 1e-5


def test_onnx_embedding_int64_and_static_batch(tmp_path):
    pytest.importorskip("onnx")
    pytest.importorskip("onnxruntime")
    model = nn.Sequential(nn.Embedding(10, 4), nn.Flatten(), nn.Linear(12, 2))
    idx = rng.integers(0, 10, (3, 3)).astype(np.int64)
    proto = integ.export_onnx(model, idx, tmp_path / "emb.onnx", dynamic_batch=False)
    dims = [d.dim_value for d in proto.graph.input[0].type.tensor_type.shape.dim]
    assert dims == [3, 3] and proto.graph.input[0].type.tensor_type.elem_type == 7  # INT64
    assert integ.verify_onnx(model, tmp_path / "emb.onnx", idx) == 0.0
    assert set(integ.EXPORTABLE_LAYERS) >= {"Linear", "Conv2d", "LSTM", "GRU", "Embedding", "MultiheadAttention",
                                            "LayerNorm", "BatchNorm2d", "MaxPool2d", "GELU"}


def test_onnx_unmappable_layers_are_named(tmp_path):
    pytest.importorskip("onnx")

    class Custom(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(4, 4)

        def forward(self, x):
            return self.lin(x) * 2

    model = nn.Sequential(nn.Linear(4, 4), nn.Sequential(nn.ReLU(), Custom()))
    target = tmp_path / "bad.onnx"
    with pytest.raises(integ.UnsupportedLayerError, match=r"Custom at 1\.1 is a Python Module subclass"):
        integ.export_onnx(model, np.zeros((2, 4), np.float32), target)
    assert not target.exists()  # nothing written
    with pytest.raises(integ.UnsupportedLayerError, match=r"ZSpaceProjector at 0"):
        integ.export_onnx(nn.Sequential(nn.ZSpaceProjector(4)), np.zeros((2, 4), np.float32))
    with pytest.raises(integ.UnsupportedLayerError, match="ceil_mode"):
        integ.export_onnx(nn.AvgPool2d(2, ceil_mode=True), np.zeros((1, 1, 5, 5), np.float32))
    with pytest.raises(st.DtypeError, match="float32"):
        integ.export_onnx(nn.Linear(2, 2), np.zeros((1, 2), np.float64))
    with pytest.raises(st.ShapeError, match=r"export_onnx: Linear at 1 failed on the example's activation of shape \(2, 4\)"):
        integ.export_onnx(nn.Sequential(nn.Linear(4, 4), nn.Linear(3, 2)), np.zeros((2, 4), np.float32), target)
    assert not target.exists()
    assert isinstance(integ.UnsupportedLayerError("x"), ValueError)


def test_verify_onnx_reports_a_mismatch(tmp_path):
    pytest.importorskip("onnx")
    pytest.importorskip("onnxruntime")
    model = nn.Sequential(nn.Linear(3, 2))
    x = rng.standard_normal((2, 3)).astype(np.float32)
    integ.export_onnx(model, x, tmp_path / "m.onnx")
    with st.no_grad():
        model[0].bias.add_(1.0)  # the file no longer matches the model
    with pytest.raises(st.SpiralValueError, match="differs from SpiralTorch by up to 1"):
        integ.verify_onnx(model, tmp_path / "m.onnx", x)


def test_architecture_round_trip_and_bundle(tmp_path):
    st.manual_seed(2)
    model = nn.Sequential(nn.Conv2d(1, 2, 3, name="conv"), nn.ReLU(), nn.Flatten(),
                          nn.Sequential(nn.Linear(16, 3), nn.LayerNorm(3)), nn.Identity())
    spec = integ.describe_architecture(model)
    assert spec["children"][0] == {"key": "conv", "module": {"type": "Conv2d", "args": {
        "in_channels": 1, "out_channels": 2, "kernel_size": [3, 3], "stride": [1, 1], "padding": [0, 0],
        "dilation": [1, 1], "groups": 1, "bias": True}}}
    rebuilt = integ.build_from_architecture(json.loads(json.dumps(spec)))
    assert list(rebuilt.state_dict()) == list(model.state_dict())
    assert architecture.layer_kind(model) == "Sequential" and architecture.layer_kind(nn.Linear(1, 1)) == "Linear"
    assert "Linear" in integ.SUPPORTED_LAYERS and "Sequential" in integ.SUPPORTED_LAYERS
    x = rng.standard_normal((2, 1, 4, 6)).astype(np.float32)
    out = integ.save_model_bundle(model, tmp_path / "b", input_shape=(None, 1, 4, 6), preprocessing={"scale": 0.5})
    meta = architecture.read_bundle_meta(out)
    assert meta["input_shape"] == [None, 1, 4, 6] and meta["preprocessing"] == {"scale": 0.5}
    assert meta["weights_sha256"] == architecture.sha256_of(out / "model.safetensors")
    loaded = integ.load_model_bundle(out)
    np.testing.assert_array_equal(_eval_out(loaded, x), _eval_out(model, x))
    # A corrupted weights file is refused.
    data = bytearray((out / "model.safetensors").read_bytes())
    data[-1] ^= 0xFF
    (out / "model.safetensors").write_bytes(bytes(data))
    with pytest.raises(st.CheckpointError, match="SHA-256"):
        integ.load_model_bundle(out)
    # Adapters (merged or not), layout reorders and the Poincare gate survive a bundle too.
    extra = nn.Sequential(nn.FeatureReorder2d(2, 1, 3, layout="NHWC"), _lora(6, 4), _lora(4, 4, merged=True),
                          nn.WaveGate(4, curvature=-2.0))
    spec = integ.describe_architecture(extra)
    assert spec["children"][2]["module"]["args"] == {"in_features": 4, "out_features": 4, "rank": 2, "alpha": 3.0,
                                                     "dropout": 0.2, "bias": True, "merged": True}
    assert spec["children"][3]["module"]["args"] == {"features": 4, "curvature": -2.0}
    loaded = integ.load_model_bundle(integ.save_model_bundle(extra, tmp_path / "extra", input_shape=(None, 6)))
    assert loaded[2].merged and not loaded[1].merged
    # A bidirectional LSTM keeps its flag and its *_reverse weights through a bundle.
    birnn = nn.Sequential(nn.LSTM(3, 4, num_layers=2, batch_first=True, bidirectional=True), nn.Linear(8, 2))
    assert integ.describe_architecture(birnn)["children"][0]["module"]["args"]["bidirectional"] is True
    loaded_bi = integ.load_model_bundle(integ.save_model_bundle(birnn, tmp_path / "bi", input_shape=(None, 5, 3)))
    assert loaded_bi[0].bidirectional
    spec_bi = integ.describe_architecture(birnn)["children"][0]["module"]
    assert architecture.declared_elements(spec_bi) == sum(p.numel() for p in birnn[0].parameters())
    elman = nn.Sequential(nn.RNN(3, 4, nonlinearity="relu", batch_first=True, bidirectional=True))
    spec_rnn = integ.describe_architecture(elman)["children"][0]["module"]
    assert spec_rnn["args"]["nonlinearity"] == "relu"
    assert architecture.declared_elements(spec_rnn) == sum(p.numel() for p in elman[0].parameters())
    loaded_rnn = integ.load_model_bundle(integ.save_model_bundle(elman, tmp_path / "rnn", input_shape=(None, 5, 3)))
    assert loaded_rnn[0].nonlinearity == "relu"
    projected = nn.Sequential(nn.LSTM(3, 5, batch_first=True, proj_size=2), nn.Linear(2, 1))
    loaded_proj = integ.load_model_bundle(integ.save_model_bundle(projected, tmp_path / "proj", input_shape=(None, 4, 3)))
    assert loaded_proj[0].proj_size == 2
    xp = rng.standard_normal((2, 4, 3)).astype(np.float32)
    np.testing.assert_array_equal(_eval_out(loaded_proj, xp), _eval_out(projected, xp))
    with pytest.raises(integ.UnsupportedLayerError, match="proj_size"):
        integ.export_onnx(projected, xp)
    xb = rng.standard_normal((2, 5, 3)).astype(np.float32)
    np.testing.assert_array_equal(_eval_out(loaded_bi, xb), _eval_out(birnn, xb))
    # A TransformerEncoder: the layer's configuration once, the copies' values from the weights.
    enc = nn.Sequential(nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2, 16, activation="gelu"), 2,
                                              norm=nn.LayerNorm(8)))
    with st.no_grad():
        enc[0].layers[1].linear1.weight.mul_(1.5)
    spec = integ.describe_architecture(enc)["children"][0]["module"]
    assert spec["type"] == "TransformerEncoder" and spec["args"]["num_layers"] == 2
    assert spec["args"]["encoder_layer"]["activation"] == "gelu" and spec["args"]["norm"]["type"] == "LayerNorm"
    loaded_enc = integ.load_model_bundle(integ.save_model_bundle(enc, tmp_path / "enc", input_shape=(None, 5, 8)))
    xe = rng.standard_normal((2, 5, 8)).astype(np.float32)
    np.testing.assert_array_equal(_eval_out(loaded_enc, xe), _eval_out(enc, xe))
    x6 = (3 * rng.standard_normal((5, 6))).astype(np.float32)
    np.testing.assert_array_equal(_eval_out(loaded, x6), _eval_out(extra, x6))
    with pytest.raises(integ.UnsupportedLayerError, match="unknown layer type 'Conv3d'"):
        integ.build_from_architecture({"type": "Conv3d", "args": {}})


FACTORY_SOURCE = '''
import spiraltorch as st


class Doubler(st.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = st.nn.Linear(3, 2)

    def forward(self, x):
        return self.lin(x) * 2


def build():
    return Doubler()
'''


def test_factory_bundles_for_python_modules(tmp_path):
    src = tmp_path / "mymodel.py"
    src.write_text(FACTORY_SOURCE)
    model = architecture.load_factory(f"{src}:build")()
    with pytest.raises(integ.UnsupportedLayerError, match="Doubler at <root> is a Python Module subclass"):
        integ.describe_architecture(model)
    out = integ.save_model_bundle(model, tmp_path / "bundle", input_shape=(None, 3), factory=f"{src}:build")
    assert (out / "mymodel.py").is_file()
    x = rng.standard_normal((4, 3)).astype(np.float32)
    # The factory is Python code from the bundle: it runs only when the caller says so.
    with pytest.raises(st.CheckpointError, match="trust_code=True"):
        integ.load_model_bundle(out)
    np.testing.assert_array_equal(_eval_out(integ.load_model_bundle(out, trust_code=True), x), _eval_out(model, x))
    with pytest.raises(st.SpiralValueError, match="file.py:function"):
        architecture.load_factory("no_colon")


def test_deployment_card(tmp_path):
    pytest.importorskip("onnx")
    model = nn.Sequential(nn.Linear(4, 3), nn.Softmax())
    x = rng.standard_normal((2, 4)).astype(np.float32)
    integ.export_onnx(model, x, tmp_path / "m.onnx")
    card = integ.deployment_card(model, x, name="clf", artifacts={"onnx": tmp_path / "m.onnx"},
                                 preprocessing={"mean": [0.5], "std": [0.25]})
    assert card["format"] == model_card.CARD_FORMAT
    assert card["inputs"] == [{"name": "input", "dtype": "float32", "shape": ["batch", 4]}]
    assert card["outputs"] == [{"name": "output", "dtype": "float32", "shape": ["batch", 3]}]
    assert card["model"]["parameters"] == 15 and card["model"]["state_dict_sha256"] == nn.state_dict_hash(model.state_dict())
    assert card["artifacts"][0]["sha256"] == architecture.sha256_of(tmp_path / "m.onnx")
    assert card["preprocessing"] == {"mean": [0.5], "std": [0.25]}
    path = integ.write_deployment_card(card, tmp_path / "clf.card.json")
    assert json.loads(path.read_text())["name"] == "clf"
    assert integ.verify_deployment_card(path) == {"m.onnx": True}
    (tmp_path / "m.onnx").write_bytes(b"changed")
    assert integ.verify_deployment_card(path) == {"m.onnx": False}
    with pytest.raises(FileNotFoundError, match="missing.onnx"):
        integ.deployment_card(model, x, artifacts={"onnx": tmp_path / "missing.onnx"})


def test_torchserve_archive_served_like_torchserve(tmp_path):
    pytest.importorskip("model_archiver")
    pytest.importorskip("ts")
    st.manual_seed(3)
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))
    mar = integ.torchserve_archive(model, "mlp", tmp_path, input_shape=(None, 4),
                                   preprocessing={"scale": 2.0})
    names = zipfile.ZipFile(mar).namelist()
    assert {"MAR-INF/MANIFEST.json", "model.safetensors", "architecture.json", torchserve.HANDLER_FILE} <= set(names)
    manifest = json.loads(zipfile.ZipFile(mar).read("MAR-INF/MANIFEST.json"))
    assert manifest["model"]["serializedFile"] == "model.safetensors"
    assert manifest["model"]["handler"] == torchserve.HANDLER_FILE
    x = rng.standard_normal((2, 4)).astype(np.float32)
    ref = _eval_out(model, 2.0 * x)
    # One request with a single sample, one with a batch of two ({"inputs": ...} form).
    results = integ.torchserve_predict(mar, [x[0].tolist(), {"inputs": x.tolist()}])
    assert [status for status, _ in results] == [200, 200]
    np.testing.assert_allclose(results[0][1], ref[0], rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(results[1][1], ref, rtol=1e-6, atol=1e-6)
    # A request of the wrong shape fails the batch, as TorchServe reports handler errors.
    assert integ.torchserve_predict(mar, [[1.0, 2.0]]) == [(503, "Prediction failed")]
    with pytest.raises(FileExistsError, match="mlp.mar"):
        integ.torchserve_archive(model, "mlp", tmp_path)
    assert integ.torchserve_archive(model, "mlp", tmp_path, force=True) == mar
    # int64 token ids (an Embedding first) are decoded as int64.
    emb = nn.Sequential(nn.Embedding(7, 3), nn.Flatten(), nn.Linear(6, 2))
    ids = np.array([[1, 6], [0, 3]], np.int64)
    emb_mar = integ.torchserve_archive(emb, "emb", tmp_path, input_shape=(None, 2), input_dtype="int64")
    [(status, got)] = integ.torchserve_predict(emb_mar, [ids.tolist()])
    assert status == 200
    np.testing.assert_allclose(got, _eval_out(emb, ids), rtol=1e-6, atol=1e-6)


def _free_ports(n):
    import socket

    socks = [socket.socket() for _ in range(n)]
    for sock in socks:
        sock.bind(("127.0.0.1", 0))
    ports = [sock.getsockname()[1] for sock in socks]
    for sock in socks:
        sock.close()
    return ports


def test_torchserve_server_serves_the_archive(tmp_path):
    """The real TorchServe (Java frontend + Python worker) loads the .mar and answers HTTP."""
    import urllib.request

    pytest.importorskip("ts")
    torchserve = shutil.which("torchserve") or str(pathlib.Path(sys.executable).with_name("torchserve"))
    if shutil.which("java") is None or not pathlib.Path(torchserve).exists():
        pytest.skip("the TorchServe server needs Java and the torchserve command")
    st.manual_seed(8)
    model = nn.Sequential(nn.Linear(4, 6), nn.Tanh(), nn.Linear(6, 2))
    integ.torchserve_archive(model, "mlp", tmp_path / "store", input_shape=(None, 4))
    infer, manage, metrics = _free_ports(3)
    (tmp_path / "config.properties").write_text(
        f"inference_address=http://127.0.0.1:{infer}\nmanagement_address=http://127.0.0.1:{manage}\n"
        f"metrics_address=http://127.0.0.1:{metrics}\ndisable_token_authorization=true\n"
        "default_workers_per_model=1\ninstall_py_dep_per_model=false\n")
    # TorchServe keeps its pid file in the temp dir and its logs in LOG_LOCATION: both private here.
    env = dict(os.environ, PYTHONPATH=str(pathlib.Path(st.__file__).parents[1]), TMPDIR=str(tmp_path),
               LOG_LOCATION=str(tmp_path / "logs"), METRICS_LOCATION=str(tmp_path / "logs"),
               PATH=os.pathsep.join([str(pathlib.Path(sys.executable).parent), os.environ.get("PATH", "")]))
    start = [torchserve, "--start", "--ncs", "--model-store", str(tmp_path / "store"), "--models", "mlp=mlp.mar",
             "--ts-config", str(tmp_path / "config.properties")]
    x = rng.standard_normal((3, 4)).astype(np.float32)

    def predict(body):
        req = urllib.request.Request(f"http://127.0.0.1:{infer}/predictions/mlp", data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=10) as resp:
            return resp.status, json.loads(resp.read())

    try:
        # The server outlives the start command: its output goes to a file, not a pipe it would hold open.
        with open(tmp_path / "torchserve.out", "wb") as out:
            subprocess.run(start, cwd=tmp_path, env=env, stdout=out, stderr=subprocess.STDOUT, timeout=60, check=True)
        deadline = time.monotonic() + 120
        while True:  # the model is registered once its Python worker has started
            try:
                status, one = predict(x[0].tolist())
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise AssertionError("TorchServe did not answer within 120 s: "
                                         + "".join(p.read_text()[-2000:] for p in (tmp_path / "logs").glob("*.log")))
                time.sleep(0.5)
        ref = _eval_out(model, x)
        assert status == 200
        np.testing.assert_allclose(one, ref[0], rtol=1e-6, atol=1e-6)
        status, batch = predict({"inputs": x.tolist()})
        assert status == 200
        np.testing.assert_allclose(batch, ref, rtol=1e-6, atol=1e-6)
        with pytest.raises(urllib.error.HTTPError) as bad:
            predict([1.0, 2.0])
        assert bad.value.code >= 400
    finally:
        with open(tmp_path / "torchserve.stop", "wb") as out:
            subprocess.run([torchserve, "--stop"], cwd=tmp_path, env=env, stdout=out, stderr=subprocess.STDOUT,
                           timeout=60)


def test_spiral_torch_handler_protocol(tmp_path):
    model = nn.Sequential(nn.Linear(2, 2))
    integ.save_model_bundle(model, tmp_path, input_shape=(None, 2), preprocessing={"mean": [1.0, 0.0], "std": [2.0, 1.0]})

    class Context:
        system_properties = {"model_dir": str(tmp_path)}
        manifest = {"model": {"serializedFile": "model.safetensors"}}

    handler = integ.SpiralTorchHandler()
    assert handler.handle(None, Context()) is None and handler.initialized
    out = handler.handle([{"body": b"[[3.0, 4.0]]"}, {"data": "[1.0, 1.0]"}], Context())
    expect = _eval_out(model, np.array([[1.0, 4.0], [0.0, 1.0]], np.float32))
    np.testing.assert_allclose(out[0], expect[:1], rtol=1e-6)
    np.testing.assert_allclose(out[1], expect[1], rtol=1e-6)
    np.testing.assert_allclose(torchserve.apply_preprocessing(np.ones((1, 2, 2), np.float32), {"scale": 3.0, "mean": [1.0, 2.0]}),
                               [[[2.0, 2.0], [1.0, 1.0]]])
    with pytest.raises(st.SpiralValueError, match="'inputs' key"):
        handler.handle([{"body": {"x": 1}}], Context())


def test_bentoml_store_runner_and_service(bentoml_in_tmp):
    bentoml, home = bentoml_in_tmp
    TestClient = pytest.importorskip("starlette.testclient").TestClient
    st.manual_seed(4)
    model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 2))
    saved = integ.bentoml_save_model(model, "spiral-mlp", input_shape=(None, 4), labels={"team": "st"})
    assert bentoml.models.get("spiral-mlp").tag == saved.tag
    assert pathlib.Path(saved.path).resolve().is_relative_to(home.resolve())  # the store is the private one
    assert saved.info.module == bento.MODULE_NAME and saved.info.metadata["parameters"] == 58
    x = rng.standard_normal((3, 4)).astype(np.float32)
    ref = _eval_out(model, x)
    np.testing.assert_array_equal(_eval_out(integ.bentoml_load_model(str(saved.tag)), x), ref)
    runner = integ.bentoml_runner("spiral-mlp")
    runner.init_local(quiet=True)
    np.testing.assert_allclose(runner.predict.run(x), ref, rtol=1e-6)
    service = integ.bentoml_service("spiral-mlp")
    with TestClient(app=service.to_asgi()) as client:
        resp = client.post("/predict", json={"inputs": x.tolist()})
        assert resp.status_code == 200
        np.testing.assert_allclose(resp.json(), ref, rtol=1e-6)
        bad = client.post("/predict", json={"inputs": [[1.0, 2.0]]})
        assert bad.status_code == 400 and "(1, 2)" in bad.text


def _regression_data():
    data_rng = np.random.default_rng(5)
    X = data_rng.standard_normal((64, 4)).astype(np.float32)
    Y = X @ data_rng.standard_normal((4, 1)).astype(np.float32)
    return X, Y


def _batches(X, Y):
    return [(st.tensor(X[i:i + 16]), st.tensor(Y[i:i + 16])) for i in range(0, len(X), 16)]


def _build(lr):
    st.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 1))
    return model, nn.MSELoss(), st.optim.SGD(model.parameters(), lr=lr)


def test_optuna_study_beats_bad_default_and_prunes():
    optuna = pytest.importorskip("optuna")
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    X, Y = _regression_data()
    train, val = _batches(X[:48], Y[:48]), _batches(X[48:], Y[48:])
    objective = integ.optuna_objective(lambda t: _build(t.suggest_float("lr", 1e-4, 0.5, log=True)), train, val, epochs=8)
    default = objective(optuna.trial.FixedTrial({"lr": 1e-4}))
    study = integ.optuna_optimize(objective, 12, seed=0)
    assert study.best_value < 0.01 * default and study.best_params["lr"] > 1e-2
    states = [t.state for t in study.trials]
    assert optuna.trial.TrialState.PRUNED in states  # the median pruner stopped poor trials early
    pruned = [t for t in study.trials if t.state == optuna.trial.TrialState.PRUNED]
    assert all(len(t.intermediate_values) < 8 for t in pruned)
    complete = [t for t in study.trials if t.state == optuna.trial.TrialState.COMPLETE]
    assert all(sorted(t.intermediate_values) == list(range(1, 9)) for t in complete)
    # The reports are nn.fit's per-epoch val_loss; the objective's value is their minimum.
    model, loss, opt = _build(study.best_params["lr"])
    history = nn.fit(model, loss, opt, train, epochs=8, val_loader=val, progress=False)
    expected = [e.val_loss for e in history.epochs]
    np.testing.assert_allclose([study.best_trial.intermediate_values[i] for i in range(1, 9)], expected, rtol=1e-6)
    assert study.best_value == pytest.approx(min(expected), rel=1e-6)


def test_optuna_pruning_callback_raises_trial_pruned():
    optuna = pytest.importorskip("optuna")
    study = optuna.create_study(pruner=optuna.pruners.ThresholdPruner(upper=1.0))
    trial = study.ask()
    callback = integ.OptunaPruningCallback(trial, monitor="train_loss")
    result = nn.EpochResult(epoch=1, train_loss=5.0, seconds=0.0)
    with pytest.raises(optuna.TrialPruned, match="epoch 1"):
        callback.on_epoch_end(result, nn.FitHistory())
    assert trial.storage.get_trial(trial._trial_id).intermediate_values == {1: 5.0}
    with pytest.raises(st.SpiralValueError, match="epochs must be >= 1"):
        hpo.optuna_objective(lambda t: _build(0.1), [], epochs=0)


def test_ray_tune_finds_better_lr_and_stops_the_bad_trial(tmp_path):
    ray = pytest.importorskip("ray")
    tune = pytest.importorskip("ray.tune")
    from ray.tune.schedulers import ASHAScheduler

    X, Y = _regression_data()
    trainable = integ.ray_tune_trainable(lambda cfg: _build(cfg["lr"]),
                                         lambda: (_batches(X[:48], Y[:48]), _batches(X[48:], Y[48:])), epochs=5)
    try:
        # Two trials on a local two-CPU Ray runtime keep this cheap (Ray 2.x has no local_mode):
        # most of its ~20 s is ray.init and the trial workers' start. One at a time, the good
        # learning rate first, so ASHA deterministically stops the bad one at its first rung.
        asha = ASHAScheduler(grace_period=1, reduction_factor=2, max_t=5)
        results = integ.ray_tune_run(trainable, {"lr": tune.grid_search([0.2, 1e-4])}, num_cpus=2,
                                     scheduler=asha, max_concurrent_trials=1, storage_path=str(tmp_path))
        assert len(results) == 2 and not results.errors
        by_lr = {r.config["lr"]: r for r in results}
        best = results.get_best_result()
        assert best.config["lr"] == 0.2 and best.metrics["val_loss"] < 0.01 * by_lr[1e-4].metrics["val_loss"]
        assert best.metrics["epoch"] == 5 and len(best.metrics_dataframe) == 5  # one report per epoch
        assert by_lr[1e-4].metrics["epoch"] == 1  # stopped early by the scheduler on its report
        # Each report is the val_loss nn.fit computes for that epoch in this process.
        model, loss, opt = _build(0.2)
        history = nn.fit(model, loss, opt, _batches(X[:48], Y[:48]), epochs=5,
                         val_loader=_batches(X[48:], Y[48:]), progress=False)
        np.testing.assert_allclose(best.metrics_dataframe["val_loss"].to_numpy(),
                                   [e.val_loss for e in history.epochs], rtol=1e-6)
    finally:
        ray.shutdown()


def test_spiral_export_cli(tmp_path, capsys):
    pytest.importorskip("onnx")
    pytest.importorskip("onnxruntime")
    st.manual_seed(6)
    model = nn.Sequential(nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
                          nn.Linear(4, 2))
    integ.save_model_bundle(model, tmp_path / "bundle", input_shape=(None, 3, 8, 8))
    out = tmp_path / "art"
    assert export_cli.main(["onnx", "--bundle", str(tmp_path / "bundle"), "--out", str(out), "--name", "cnn",
                            "--preprocessing", '{"scale": 0.00392}']) == 0
    printed = capsys.readouterr().out
    assert "onnxruntime max |diff|" in printed
    card = json.loads((out / "cnn.card.json").read_text())
    assert card["inputs"][0] == {"name": "input", "dtype": "float32", "shape": ["batch", 3, 8, 8]}
    assert card["outputs"][0]["shape"] == ["batch", 2] and card["preprocessing"] == {"scale": 0.00392}
    assert card["artifacts"][0]["sha256"] == architecture.sha256_of(out / "cnn.onnx")
    assert card["onnx"]["onnxruntime_max_abs_diff"] <= 1e-5
    # card: weights + checksums for any model, even one with no ONNX mapping.
    src = tmp_path / "mymodel.py"
    src.write_text(FACTORY_SOURCE)
    assert export_cli.main(["card", "--factory", f"{src}:build", "--input-shape", "2,3", "--out", str(out),
                            "--name", "py"]) == 0
    assert json.loads((out / "py.card.json").read_text())["artifacts"][0]["kind"] == "safetensors"
    # onnx on a Python module: exit 2, the layer named.
    assert export_cli.main(["onnx", "--factory", f"{src}:build", "--input-shape", "2,3", "--out", str(out)]) == 2
    assert "Doubler at <root>" in capsys.readouterr().err
    assert export_cli.main(["layers"]) == 0 and "LSTM" in capsys.readouterr().out
    # int64 token ids: the example draws indices below the first Embedding's size.
    emb = nn.Sequential(nn.Embedding(11, 4), nn.GRU(4, 3), nn.Flatten(), nn.Linear(15, 2))
    integ.save_model_bundle(emb, tmp_path / "emb", input_shape=(None, 5), input_dtype="int64")
    assert export_cli.main(["onnx", "--bundle", str(tmp_path / "emb"), "--out", str(out), "--name", "emb",
                            "--static-batch"]) == 0
    card = json.loads((out / "emb.card.json").read_text())
    assert card["inputs"][0] == {"name": "input", "dtype": "int64", "shape": [2, 5]}
    assert card["onnx"]["onnxruntime_max_abs_diff"] <= 1e-5
    assert export_cli.main(["onnx", "--factory", f"{src}:build", "--input-shape", "2,3", "--input-dtype", "int64",
                            "--out", str(out)]) == 2
    assert "needs --max-index" in capsys.readouterr().err


def test_spiral_export_cli_torchserve_and_errors(tmp_path, capsys):
    pytest.importorskip("model_archiver")
    pytest.importorskip("ts")
    st.manual_seed(7)
    model = nn.Sequential(nn.Linear(3, 5), nn.GELU(), nn.Linear(5, 2))
    bundle = integ.save_model_bundle(model, tmp_path / "bundle", input_shape=(None, 3),
                                     preprocessing={"mean": [1.0, 0.0, -1.0], "std": [2.0, 1.0, 0.5]})
    out = tmp_path / "store"
    # The bundle's preprocessing goes into the archive when --preprocessing is not given.
    assert export_cli.main(["torchserve", "--bundle", str(bundle), "--out", str(out), "--name", "mlp"]) == 0
    assert capsys.readouterr().out.strip() == str(out / "mlp.mar")
    x = rng.standard_normal((4, 3)).astype(np.float32)
    ref = _eval_out(model, (x - np.array([1.0, 0.0, -1.0], np.float32)) / np.array([2.0, 1.0, 0.5], np.float32))
    [(status, got)] = integ.torchserve_predict(out / "mlp.mar", [{"inputs": x.tolist()}])
    assert status == 200
    np.testing.assert_allclose(got, ref, rtol=1e-6, atol=1e-6)
    # An existing archive is kept unless --force.
    assert export_cli.main(["torchserve", "--bundle", str(bundle), "--out", str(out), "--name", "mlp"]) == 2
    assert "mlp.mar" in capsys.readouterr().err
    # A Python module (factory + weights) is archived with its factory file.
    src = tmp_path / "mymodel.py"
    src.write_text(FACTORY_SOURCE)
    doubler = architecture.load_factory(f"{src}:build")()
    weights = tmp_path / "doubler.safetensors"
    st.nn.save(str(weights), doubler)
    assert export_cli.main(["torchserve", "--factory", f"{src}:build", "--weights", str(weights), "--input-shape",
                            "2,3", "--out", str(out), "--name", "doubler", "--preprocessing", '{"scale": 2.0}']) == 0
    assert "mymodel.py" in zipfile.ZipFile(out / "doubler.mar").namelist()
    [(status, got)] = integ.torchserve_predict(out / "doubler.mar", [x[0].tolist()])
    assert status == 200
    np.testing.assert_allclose(got, _eval_out(doubler, 2.0 * x[:1])[0], rtol=1e-6, atol=1e-6)
    capsys.readouterr()
    # Bad input: exit 2 with the reason on stderr, nothing written.
    assert export_cli.main(["card", "--bundle", str(bundle), "--out", str(out), "--preprocessing", "[1]"]) == 2
    assert "--preprocessing must be a JSON object, got '[1]'" in capsys.readouterr().err
    assert export_cli.main(["card", "--factory", f"{src}:build", "--out", str(out)]) == 2
    assert "--input-shape is required" in capsys.readouterr().err
    data = bytearray((bundle / "model.safetensors").read_bytes())
    data[-1] ^= 0xFF
    (bundle / "model.safetensors").write_bytes(bytes(data))
    assert export_cli.main(["onnx", "--bundle", str(bundle), "--out", str(out)]) == 2
    assert "SHA-256" in capsys.readouterr().err
    assert not (out / "model.onnx").exists() and not (out / "model.card.json").exists()


def test_spiral_export_help_documents_everything():
    env = dict(os.environ, PYTHONPATH=str(pathlib.Path(st.__file__).parents[1]))
    top = subprocess.run([sys.executable, "-m", "spiraltorch.export_cli", "--help"], capture_output=True, text=True, env=env)
    assert top.returncode == 0
    for word in ("onnx", "card", "torchserve", "layers", "--bundle", "--factory", "--weights", "Examples:",
                 "Exit status"):
        assert word in top.stdout
    sub = subprocess.run([sys.executable, "-m", "spiraltorch.export_cli", "onnx", "--help"], capture_output=True,
                         text=True, env=env)
    for flag in ("--input-shape", "--input-dtype", "--max-index", "--weights", "--opset", "--static-batch", "--atol",
                 "--no-verify", "--preprocessing", "--seed", "--out", "--name"):
        assert flag in sub.stdout
    words = " ".join(sub.stdout.split())  # argparse wraps lines at the terminal width
    assert "(default: 1e-5)" in words and "(default: None)" not in words
    ts_help = subprocess.run([sys.executable, "-m", "spiraltorch.export_cli", "torchserve", "--help"],
                             capture_output=True, text=True, env=env).stdout
    for flag in ("--version", "--force", "--preprocessing", "torch-model-archiver", "torchserve --start"):
        assert flag in " ".join(ts_help.split())
    # An installed package (pip install . in the test command) has the console script too.
    script = shutil.which("spiral-export")
    if script is not None:
        installed = subprocess.run([script, "--help"], capture_output=True, text=True)
        assert installed.returncode == 0 and "usage: spiral-export" in installed.stdout


def test_integrations_quickstart_example(tmp_path):
    """examples/integrations_quickstart.py (the README's lines) runs and prints real results."""
    pytest.importorskip("bentoml")
    pytest.importorskip("ts")
    pytest.importorskip("optuna")
    env = dict(os.environ, PYTHONPATH=str(pathlib.Path(st.__file__).parents[1]))
    env.pop("BENTOML_HOME", None)
    proc = subprocess.run([sys.executable, str(REPO_ROOT / "examples" / "integrations_quickstart.py"), str(tmp_path)],
                          capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300)
    assert proc.returncode == 0, proc.stderr
    lines = {line.split(":", 1)[0]: line for line in proc.stdout.splitlines()}
    assert float(lines["onnx max |diff| vs onnxruntime"].split(":")[1]) <= 1e-5
    assert "{'model.onnx': True}" in lines["card"]
    assert "[(200, [" in lines["torchserve"] and (tmp_path / "model_store" / "mlp.mar").is_file()
    served = json.loads(lines["torchserve"].split("mlp.mar ", 1)[1].replace("(", "[").replace(")", "]"))[0][1]
    runner_out = json.loads(lines["bentoml runner"].split(":", 1)[1])
    np.testing.assert_allclose(served, runner_out[0], atol=1e-5)  # both served the same model on the same row
    assert (tmp_path / "bentoml" / "models" / "mlp").is_dir()
    default, best = (float(v) for v in
                     [lines["optuna"].split("val_loss ")[1].split(";")[0], lines["optuna"].split("val_loss ")[2].split(";")[0]])
    assert best < 0.01 * default
