"""Security and reliability, one test per finding (README "Security and trust model"): no file we
load runs code, no input crashes the process, no save loses what was there.

C++ side: thread-count bounds, loading with copies, atomic saves (modes, links, host-tagged
temporaries), JSON size caps, trace modes, st.save/st.load's structure decoder, PNG chunks (see also
tests/cpp/test_security.cpp and the SpiralK else-if test in tests/cpp/test_spiralk.cpp).
Python side: model bundles run a factory only with trust_code=True and name no path outside
themselves, their declared sizes are bounded by their weights before anything is built, re-saving
keeps the old bundle loadable, the Python writers go through one mkstemp + fsync + rename helper,
plugin paths that others can write are refused, a failing rank's buffered output survives
os._exit, and spiral-run runs as root only when asked."""

from __future__ import annotations

import json
import logging
import os
import pathlib
import stat
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import spiraltorch as st
from spiraltorch import _atomic, export_cli, launch, plugin
from spiraltorch import integrations as integ
from spiraltorch.integrations import architecture, model_card, torchserve

_PKG_ROOT = os.path.dirname(os.path.dirname(st.__file__))


def run(code: str, timeout: float = 120) -> subprocess.CompletedProcess:
    """Runs ``code`` in a fresh interpreter that imports this spiraltorch; returns the process."""
    env = dict(os.environ)
    env["PYTHONPATH"] = _PKG_ROOT + os.pathsep + env.get("PYTHONPATH", "")
    return subprocess.run([sys.executable, "-c", "import spiraltorch as st\n" + textwrap.dedent(code)],
                          capture_output=True, text=True, timeout=timeout, env=env)


# --- threads ---------------------------------------------------------------------------------

def test_set_num_threads_refuses_absurd_counts_and_keeps_the_setting():
    before = st.get_num_threads()
    for n in (10**6, 10**12, 0, -3):
        with pytest.raises(ValueError, match=r"set_num_threads: .* threads requested; the count must be in \[1, "):
            st.set_num_threads(n)
        assert st.get_num_threads() == before
    # A crash used to follow in the next matmul: run that in a child so a regression shows as a signal.
    p = run("""
    try:
        st.set_num_threads(10**6)
    except ValueError:
        pass
    a = st.ones(128, 128)
    print((a @ a).sum().item())
    """)
    assert p.returncode == 0, p.stderr
    assert float(p.stdout.strip()) == 128.0**3


# --- loading with copies ---------------------------------------------------------------------

def test_nn_load_into_a_module_survives_the_file_being_rewritten():
    """nn.load(path, module) used to memory-map the file: truncating it mid-load killed the
    process with SIGBUS (this loop with copy=False dies within a few loads). It now reads with
    copies, so each load succeeds or raises CheckpointError."""
    p = run("""
    import os, tempfile, threading
    d = tempfile.mkdtemp()
    path = os.path.join(d, "m.safetensors")
    model = st.nn.Linear(4096, 2048)  # 32 MiB: the copy takes long enough for the race to hit
    st.nn.save(path, model, manifest=False)
    data = open(path, "rb").read()
    stop = False
    def churn():
        while not stop:
            with open(path, "r+b") as f:
                f.truncate(len(data) // 2)
            with open(path, "r+b") as f:
                f.write(data)
    t = threading.Thread(target=churn); t.start()
    ok = bad = 0
    try:
        for _ in range(60):
            try:
                st.nn.load(path, model)
                ok += 1
            except st.CheckpointError:
                bad += 1
    finally:
        stop = True; t.join()
    print(ok, bad)
    """, timeout=300)
    assert p.returncode == 0, f"died with {p.returncode}: {p.stderr[-2000:]}"
    ok, bad = map(int, p.stdout.split())
    assert ok + bad == 60


# --- atomic saves ----------------------------------------------------------------------------

def test_saving_over_a_checkpoint_keeps_its_permissions(tmp_path):
    path = tmp_path / "w.safetensors"
    st.save({"w": st.ones(3)}, path)
    os.chmod(path, 0o600)
    st.save({"w": st.zeros(3)}, path)
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    st.nn.save(path, {"w": st.ones(3)})  # with its manifest
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600


def test_saving_through_a_symlink_updates_the_linked_file(tmp_path):
    (tmp_path / "runs").mkdir()
    real = tmp_path / "runs" / "ckpt.safetensors"
    link = tmp_path / "latest.safetensors"
    st.save({"w": st.zeros(2)}, real)
    link.symlink_to("runs/ckpt.safetensors")
    st.nn.save(link, {"w": st.ones(2)})
    assert link.is_symlink()
    assert st.load(real)["w"].tolist() == [1.0, 1.0]
    assert st.nn.load(str(link) + ".manifest.json")["w"].tolist() == [1.0, 1.0]


def test_another_hosts_temporaries_are_left_alone(tmp_path):
    tag = st._core.io.temporary_host_tag()
    ours = tmp_path / f".m.safetensors.tmp-{tag}-999999999-0"
    theirs = tmp_path / ".m.safetensors.tmp-0123456789abcdef-999999999-0"
    for p in (ours, theirs):
        p.write_bytes(b"partial")
    st.nn.save(tmp_path / "m.safetensors", {"w": st.ones(1)})
    assert not ours.exists()
    assert theirs.exists()  # its PID means nothing here: another host may still be writing it


# --- size caps -------------------------------------------------------------------------------

def test_json_inputs_are_capped_before_they_are_parsed(tmp_path):
    big = tmp_path / "big.json"
    with open(big, "wb") as f:
        f.write(b"{")
        f.truncate((256 << 20) + 1)  # sparse: costs no disk
    with pytest.raises(st.CheckpointError, match="more than the limit"):
        st.nn.load(big)
    header = b'{"x":{"dtype":"F32","shape":[' + b"0," * 5_000_000 + b'0],"data_offsets":[0,0]}}'
    blob = len(header).to_bytes(8, "little") + header
    with pytest.raises(st.CheckpointError, match="more than 4000000 values"):
        st._core.io.load_safetensors_bytes(blob)


# --- traces ----------------------------------------------------------------------------------

def test_a_trace_never_erases_an_earlier_one_unasked(tmp_path):
    from spiraltorch._core._trace import TraceWriter

    path = tmp_path / "run.jsonl"
    TraceWriter(path, "Mine").write("step", step=1)
    with pytest.raises(st.SpiralError, match="already exists; pass append=True"):
        TraceWriter(path, "Mine")
    TraceWriter(path, "Mine", append=True).write("step", step=2)
    assert len(path.read_text().splitlines()) == 2
    TraceWriter(path, "Mine", overwrite=True).write("step", step=3)
    assert len(path.read_text().splitlines()) == 1
    with pytest.raises(ValueError, match="contradict"):
        TraceWriter(tmp_path / "x.jsonl", "Mine", append=True, overwrite=True)
    trainer = st.nn.ModuleTrainer()
    with pytest.raises(st.SpiralError, match="already exists"):
        trainer.set_trace(path)


# --- st.save / st.load's structure -------------------------------------------------------------

def _with_structure(tmp_path, structure: str, tensors=None):
    path = tmp_path / "s.safetensors"
    st._core.io.save_safetensors(str(path), tensors or {"t0": st.ones(2)},
                                 {"spiraltorch.structure": structure}, manifest=False)
    return path


@pytest.mark.parametrize("structure", [
    "not json", "[]", "{}", '{"value": 1.5}', '{"tensor": 7}', '{"tensor": "t9"}', '{"float": "1.5x"}',
    '{"dict": [[{"str": "a"}]]}', '{"dict": [[{"str": "a"}, {"value": 1}], [{"str": "a"}, {"value": 2}]]}',
    '{"list": [{"value": 1}, 7]}', '{"module": "os", "call": "system"}', '{"value": 1, "extra": 2}',
    '{"tensor": "t0", "numpy": "pickle"}', "[" * 5000 + "]" * 5000,
    '{"list": ' * 40 + "[]" + "}" * 40,
])
def test_malformed_structure_metadata_raises_checkpoint_error(tmp_path, structure):
    with pytest.raises(st.CheckpointError):
        st.load(_with_structure(tmp_path, structure))


def test_st_save_round_trips_numpy_arrays_and_plain_values(tmp_path):
    obj = {"model": {"w": st.ones(2, 3, requires_grad=True)}, "epoch": 3, "lr": 0.1, "inf": float("-inf"),
           "name": "run", "none": None, "flag": True, "hist": np.arange(6, dtype=np.int32).reshape(2, 3),
           "best": np.float64(0.25), 7: (1, [2.5, "x"])}
    st.save(obj, tmp_path / "ckpt.safetensors")
    back = st.load(tmp_path / "ckpt.safetensors")
    assert back["model"]["w"].tolist() == [[1.0] * 3] * 2 and back["model"]["w"].requires_grad
    assert isinstance(back["hist"], np.ndarray) and back["hist"].dtype == np.int32
    np.testing.assert_array_equal(back["hist"], obj["hist"])
    assert isinstance(back["best"], np.float64) and back["best"] == 0.25
    assert back[7] == (1, [2.5, "x"])
    assert (back["epoch"], back["lr"], back["inf"], back["name"], back["none"], back["flag"]) == \
        (3, 0.1, float("-inf"), "run", None, True)
    # Nothing but data: the header is plain JSON and safetensors.
    meta = json.loads(st._core.io.load_safetensors(str(tmp_path / "ckpt.safetensors"))[1]["spiraltorch.structure"])
    assert "dict" in meta


def test_encode_and_decode_structure_directly():
    io = st._core.io
    text, tensors = io.encode_structure({"a": [1, 2.5, None, "x"], "t": st.ones(2), 3: (True,)})
    assert sorted(tensors) == ["t0"] and json.loads(text)["dict"][0][0] == {"str": "a"}
    back = io.decode_structure(text, tensors)
    assert back["a"] == [1, 2.5, None, "x"] and back[3] == (True,) and back["t"].tolist() == [1.0, 1.0]
    with pytest.raises(st.CheckpointError, match="does not hold"):
        io.decode_structure(text, {})


def test_st_save_refuses_what_it_cannot_store_without_pickle(tmp_path):
    with pytest.raises(TypeError, match="cannot store set"):
        st.save({"x": {1, 2}}, tmp_path / "a.safetensors")
    loop: list = []
    loop.append(loop)
    with pytest.raises(ValueError, match="nested more than"):
        st.save(loop, tmp_path / "b.safetensors")
    with pytest.raises(ValueError, match="int64"):
        st.save({"n": 2**70}, tmp_path / "c.safetensors")
    assert not any(tmp_path.iterdir())  # a failed save writes nothing


# --- PNG ------------------------------------------------------------------------------------

def test_png_image_data_spans_chunks_of_legal_length():
    import zlib

    surface = st.tensor(np.random.default_rng(0).integers(0, 256, (19, 7, 4)), dtype=st.uint8)
    png = st._core.canvas.encode_png(surface)
    pos, idat, types = 8, b"", []
    while pos < len(png):
        n = int.from_bytes(png[pos:pos + 4], "big")
        kind = png[pos + 4:pos + 8]
        assert n <= 2**31 - 1
        assert int.from_bytes(png[pos + 8 + n:pos + 12 + n], "big") == zlib.crc32(png[pos + 4:pos + 8 + n])
        if kind == b"IDAT":
            idat += png[pos + 8:pos + 8 + n]
        types.append(kind)
        pos += 12 + n
    assert types[0] == b"IHDR" and types[-1] == b"IEND"
    raw = zlib.decompress(idat)
    assert len(raw) == 19 * (7 * 4 + 1)


# ---------------------------------------------------------------- Python side: bundles, writers, plugins, launcher

nn = st.nn
PKG_PARENT = str(pathlib.Path(st.__file__).resolve().parents[1])

# Module-level code runs when the file is executed; build() runs when the bundle is rebuilt.
FACTORY_SOURCE = '''
import pathlib
import spiraltorch as st

MARKER = pathlib.Path({marker!r})
MARKER.write_text("factory code ran")


class Doubler(st.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = st.nn.Linear(3, 2)

    def forward(self, x):
        return self.lin(x) * 2


def build():
    return Doubler()
'''


def _env() -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([PKG_PARENT] + [p for p in [env.get("PYTHONPATH")] if p])
    return env


def _out(model, x):
    model.eval()
    with st.no_grad():
        return model(st.tensor(x)).numpy()


def _factory_bundle(tmp_path):
    """A bundle rebuilt by a factory whose file writes a marker when executed; the marker of
    the save (which checks the factory) is removed."""
    marker = tmp_path / "marker.txt"
    src = tmp_path / "mymodel.py"
    src.write_text(FACTORY_SOURCE.format(marker=str(marker)))
    model = architecture.load_factory(f"{src}:build")()
    bundle = integ.save_model_bundle(model, tmp_path / "bundle", input_shape=(None, 3), factory=f"{src}:build")
    marker.unlink()
    return model, bundle, marker


def _edit_meta(bundle, **changes):
    path = pathlib.Path(bundle) / architecture.ARCHITECTURE_FILE
    meta = json.loads(path.read_text())
    meta.update(changes)
    path.write_text(json.dumps(meta))


# ---------------------------------------------------------------- bundles: factories need trust


def test_factory_bundle_runs_code_only_with_trust_code(tmp_path, capsys, monkeypatch):
    model, bundle, marker = _factory_bundle(tmp_path)
    x = np.random.default_rng(0).standard_normal((4, 3)).astype(np.float32)
    with pytest.raises(st.CheckpointError, match=r"factory 'mymodel\.py:build'.*trust_code=True.*--trust-code"):
        integ.load_model_bundle(bundle)
    assert not marker.exists()  # nothing of the bundle's code ran
    # spiral-export refuses it too (exit 2, the flag named), and loads it with --trust-code.
    out = tmp_path / "art"
    assert export_cli.main(["card", "--bundle", str(bundle), "--out", str(out), "--input-shape", "2,3"]) == 2
    assert "--trust-code" in capsys.readouterr().err and not marker.exists()
    assert export_cli.main(["card", "--bundle", str(bundle), "--trust-code", "--out", str(out),
                            "--input-shape", "2,3"]) == 0
    assert marker.exists() and (out / "model.card.json").is_file()
    marker.unlink()
    # The TorchServe handler: refused unless the handler class or the environment trusts it.
    ctx = type("Context", (), {"system_properties": {"model_dir": str(bundle)},
                               "manifest": {"model": {"serializedFile": "model.safetensors"}}})()
    monkeypatch.delenv(torchserve.TRUST_ENV, raising=False)
    with pytest.raises(st.CheckpointError, match="SPIRALTORCH_TRUST_CODE=1"):
        integ.SpiralTorchHandler().initialize(ctx)
    assert not marker.exists()

    class Trusting(integ.SpiralTorchHandler):
        trust_code = True

    handler = Trusting()
    handler.initialize(ctx)
    np.testing.assert_array_equal(_out(handler.model, x), _out(model, x))
    monkeypatch.setenv(torchserve.TRUST_ENV, "1")
    integ.SpiralTorchHandler().initialize(ctx)
    # With trust the bundle loads and computes what the saved model computed.
    loaded = integ.load_model_bundle(bundle, trust_code=True)
    np.testing.assert_array_equal(_out(loaded, x), _out(model, x))
    # A bundle described by data needs no trust.
    plain = integ.save_model_bundle(nn.Sequential(nn.Linear(3, 2)), tmp_path / "plain", input_shape=(None, 3))
    assert isinstance(integ.load_model_bundle(plain), nn.Sequential)


def test_bentoml_factory_models_need_trust_code(tmp_path, bentoml_in_tmp):  # the store in a temp dir
    marker = tmp_path / "marker.txt"
    src = tmp_path / "mymodel.py"
    src.write_text(FACTORY_SOURCE.format(marker=str(marker)))
    model = architecture.load_factory(f"{src}:build")()
    saved = integ.bentoml_save_model(model, "spiral-doubler", input_shape=(None, 3), factory=f"{src}:build")
    marker.unlink()
    with pytest.raises(st.CheckpointError, match="trust_code=True"):
        integ.bentoml_load_model(str(saved.tag))
    assert not marker.exists()
    x = np.random.default_rng(2).standard_normal((2, 3)).astype(np.float32)
    np.testing.assert_array_equal(_out(integ.bentoml_load_model(str(saved.tag), trust_code=True), x), _out(model, x))
    # The runner in a fresh interpreter: BentoML keeps process-wide state, and once another test has
    # started a service in this process it can no longer build runners.
    np.save(tmp_path / "x.npy", x)
    np.save(tmp_path / "want.npy", _out(model, x))
    script = textwrap.dedent(f"""
        import numpy as np, spiraltorch as st
        from spiraltorch import integrations as integ
        x = np.load({str(tmp_path / 'x.npy')!r})
        runner = integ.bentoml_runner("spiral-doubler")
        try:
            runner.init_local(quiet=True)
            raise SystemExit("a runner of a factory model started without trust_code")
        except st.CheckpointError:
            pass
        runner = integ.bentoml_runner("spiral-doubler", trust_code=True)
        runner.init_local(quiet=True)
        np.testing.assert_allclose(runner.predict.run(x), np.load({str(tmp_path / 'want.npy')!r}), rtol=1e-6)
        print("ok")
    """)
    env = _env()
    env["BENTOML_HOME"] = os.environ["BENTOML_HOME"]
    p = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=300)
    assert p.returncode == 0 and p.stdout.strip().endswith("ok"), p.stdout[-2000:] + p.stderr[-3000:]


def test_archive_handler_trusts_only_a_factory_its_builder_named():
    # torchserve_archive writes trust_code = True into the handler only for a factory it was given.
    plain = torchserve._HANDLER_SOURCE
    trusted = torchserve._HANDLER_SOURCE + torchserve._HANDLER_TRUST
    for source, want in ((plain, False), (trusted, True)):
        scope: dict = {}
        exec(compile(source, "spiraltorch_handler.py", "exec"), scope)
        assert scope["ModelHandler"].trust_code is want


# ---------------------------------------------------------------- bundles: paths stay inside


def test_bundle_paths_that_leave_the_bundle_are_refused(tmp_path):
    model = nn.Sequential(nn.Linear(3, 2))
    bundle = integ.save_model_bundle(model, tmp_path / "b", input_shape=(None, 3))
    weights = bundle / "model.safetensors"
    outside = tmp_path / "outside.safetensors"
    outside.write_bytes(weights.read_bytes())
    digest = architecture.sha256_of(outside)
    for name, why in (("../outside.safetensors", "leaves the bundle directory"),
                      (str(outside), "is absolute")):
        _edit_meta(bundle, weights=name, weights_sha256=digest)
        with pytest.raises(st.CheckpointError, match=why):
            integ.load_model_bundle(bundle)
    # A symlink inside the bundle that points out of it.
    (bundle / "link.safetensors").symlink_to(outside)
    _edit_meta(bundle, weights="link.safetensors")
    with pytest.raises(st.CheckpointError, match="outside the bundle directory"):
        integ.load_model_bundle(bundle)
    # An architecture.json that is itself a link out of the bundle.
    real = tmp_path / "elsewhere.json"
    os.replace(bundle / "architecture.json", real)
    (bundle / "architecture.json").symlink_to(real)
    with pytest.raises(st.CheckpointError, match="outside the bundle directory"):
        integ.load_model_bundle(bundle)


def test_factory_paths_that_leave_the_bundle_are_refused_even_with_trust(tmp_path):
    _, bundle, marker = _factory_bundle(tmp_path)
    evil = tmp_path / "evil.py"
    evil.write_text((bundle / "mymodel.py").read_text())
    for factory, why in (("../evil.py:build", "leaves the bundle directory"), (f"{evil}:build", "is absolute")):
        _edit_meta(bundle, factory=factory)
        with pytest.raises(st.CheckpointError, match=why):
            integ.load_model_bundle(bundle, trust_code=True)
    (bundle / "link.py").symlink_to(evil)
    _edit_meta(bundle, factory="link.py:build")
    with pytest.raises(st.CheckpointError, match="outside the bundle directory"):
        integ.load_model_bundle(bundle, trust_code=True)
    # Trusted code must also be code nobody else could have changed (the plugin directories' rule).
    _edit_meta(bundle, factory="mymodel.py:build")
    os.chmod(bundle, 0o777)
    with pytest.raises(st.CheckpointError, match="world-writable"):
        integ.load_model_bundle(bundle, trust_code=True)
    os.chmod(bundle, 0o755)
    os.chmod(bundle / "mymodel.py", 0o666)
    with pytest.raises(st.CheckpointError, match=r"mymodel\.py' is world-writable"):
        integ.load_model_bundle(bundle, trust_code=True)
    assert not marker.exists()
    os.chmod(bundle / "mymodel.py", 0o644)
    integ.load_model_bundle(bundle, trust_code=True)
    assert marker.exists()


def test_malformed_bundle_metadata_raises_checkpoint_error(tmp_path):
    bundle = integ.save_model_bundle(nn.Sequential(nn.Linear(3, 2)), tmp_path / "b", input_shape=(None, 3))
    meta_path = bundle / "architecture.json"
    good = meta_path.read_text()
    for text in ("{not json", "[1, 2]", json.dumps(dict(json.loads(good), weights=7)),
                 json.dumps(dict(json.loads(good), weights_sha256="zz")),
                 json.dumps(dict(json.loads(good), factory="x.py:build")),  # both architecture and factory
                 "[" * 100000 + "]" * 100000):
        meta_path.write_text(text)
        with pytest.raises(st.CheckpointError):
            integ.load_model_bundle(bundle)
    os.unlink(meta_path)
    os.mkfifo(meta_path)  # refused before anything blocks on it
    with pytest.raises(st.CheckpointError, match="not a regular file"):
        integ.load_model_bundle(bundle)


# ---------------------------------------------------------------- bundles: declared sizes


def _every_layer():
    """One module of every describable layer type, with non-default options."""
    st.manual_seed(0)
    return [
        nn.Linear(3, 4), nn.Linear(3, 4, bias=False), nn.Conv1d(2, 4, 3, groups=2), nn.Conv2d(2, 3, (2, 3), bias=False),
        nn.BatchNorm1d(5), nn.BatchNorm2d(3, affine=False), nn.BatchNorm2d(3, track_running_stats=False),
        nn.LayerNorm((2, 3)), nn.LayerNorm(4, bias=False), nn.LayerNorm(4, elementwise_affine=False),
        nn.Embedding(7, 3, padding_idx=0), nn.MultiheadAttention(8, 2), nn.MultiheadAttention(4, 1, bias=False),
        nn.LSTM(3, 5, num_layers=2), nn.GRU(4, 3, bias=False), nn.RNN(3, 4, num_layers=3, bidirectional=True),
        nn.LSTM(2, 3, num_layers=2, bidirectional=True, bias=False), nn.LSTM(3, 5, num_layers=2, proj_size=2),
        nn.LSTM(2, 4, bidirectional=True, proj_size=3), nn.LoraLinear(4, 6, rank=2),
        nn.FeatureReorder2d(2, 3, 4, layout="NHWC"), nn.WaveGate(5),
        nn.TransformerEncoderLayer(8, 2, 16), nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2, 12), 2,
                                                                    norm=nn.LayerNorm(8)),
        nn.ReLU(), nn.GELU(approximate="tanh"), nn.Flatten(), nn.Dropout(0.2), nn.MaxPool2d(2), nn.AvgPool2d(2),
        nn.AdaptiveAvgPool2d(1), nn.Softmax(dim=1), nn.Identity(), nn.SiLU(), nn.Sigmoid(), nn.Tanh(),
    ]


def test_declared_elements_are_exactly_the_state_dict_of_every_layer():
    # The bound compares the declared count with the weights file: it must never refuse a real model.
    layers = _every_layer()
    assert {type(m).__name__ for m in layers} == set(integ.SUPPORTED_LAYERS) - {"Sequential"}
    for m in layers + [nn.Sequential(*_every_layer()[:4])]:
        spec = integ.describe_architecture(m)
        want = sum(int(np.prod(t.shape)) for t in m.state_dict().values())
        assert architecture.declared_elements(spec) == want, type(m).__name__


def test_declared_sizes_are_bounded_before_anything_is_allocated(tmp_path):
    bundle = integ.save_model_bundle(nn.Sequential(nn.Linear(3, 2)), tmp_path / "b", input_shape=(None, 3))
    huge = [
        # 2**62 elements: building it would exhaust memory; the check refuses it first.
        ({"type": "Linear", "args": {"in_features": 2**31 - 1, "out_features": 2**31 - 1, "bias": True}},
         rf"declares {(2**31 - 1) * 2**31} state-dict elements by Linear at <root>.*more than the 8 elements"),
        ({"type": "Linear", "args": {"in_features": 2**40, "out_features": 1, "bias": True}},
         r"in_features = 1099511627776 is outside the supported range"),
        ({"type": "Sequential", "children": [{"key": "0", "module": {"type": "Linear", "args": {
            "in_features": 3, "out_features": 2, "bias": True}}}, {"key": "1", "module": {
                "type": "Embedding", "args": {"num_embeddings": 10**6, "embedding_dim": 1000, "padding_idx": None}}}]},
         r"by Embedding at 1 \(1000000000 there\)"),
        ({"type": "TransformerEncoder", "args": {"encoder_layer": {"d_model": 2, "nhead": 1, "dim_feedforward": 2},
                                                 "num_layers": 10**9, "norm": None}}, "TransformerEncoder at <root>"),
        ({"type": "LSTM", "args": {"input_size": 2, "hidden_size": 2, "num_layers": 2**31 - 1}}, "LSTM at <root>"),
        ({"type": "Linear", "args": {"in_features": -2**30, "out_features": 2**30}}, "Linear at <root>"),
        ({"type": "FeatureReorder2d", "args": {"channels": 2**31 - 1, "height": 2**31 - 1, "width": 4}},
         "features per sample"),
    ]
    deep: dict = {"type": "ReLU", "args": {}}
    for _ in range(100):
        deep = {"type": "Sequential", "children": [{"key": "0", "module": deep}]}
    huge.append((deep, "nested deeper than 64 levels"))
    for spec, why in huge:
        _edit_meta(bundle, architecture=spec)
        with pytest.raises(st.CheckpointError, match=why):
            integ.load_model_bundle(bundle)
    # Called directly, build_from_architecture has the same checks (SpiralValueError) and a default cap.
    with pytest.raises(st.SpiralValueError, match="more than the limit of 17179869184"):
        integ.build_from_architecture(huge[0][0])
    with pytest.raises(st.SpiralValueError, match="more than the limit of 5"):
        integ.build_from_architecture({"type": "Linear", "args": {"in_features": 3, "out_features": 2}}, max_elements=5)


# ---------------------------------------------------------------- bundles: re-saving


def test_resaving_a_bundle_keeps_the_old_one_until_the_new_one_is_complete(tmp_path, monkeypatch):
    x = np.random.default_rng(1).standard_normal((2, 3)).astype(np.float32)
    first, second = nn.Sequential(nn.Linear(3, 2)), nn.Sequential(nn.Linear(3, 2))
    target = tmp_path / "b"
    integ.save_model_bundle(first, target, input_shape=(None, 3))
    os.chmod(target, 0o750)

    def crash(*args, **kwargs):
        raise OSError("disk full (simulated)")

    # A save that fails after the new weights are written leaves the old bundle whole and no debris.
    with monkeypatch.context() as m:
        m.setattr(architecture, "atomic_write_text", crash)
        with pytest.raises(OSError, match="simulated"):
            integ.save_model_bundle(second, target, input_shape=(None, 3))
    np.testing.assert_array_equal(_out(integ.load_model_bundle(target), x), _out(first, x))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["b"]
    # A successful one replaces it whole, keeps the directory's mode and leaves nothing behind.
    integ.save_model_bundle(second, target, input_shape=(None, 3))
    np.testing.assert_array_equal(_out(integ.load_model_bundle(target), x), _out(second, x))
    assert stat.S_IMODE(os.stat(target).st_mode) == 0o750
    assert sorted(p.name for p in tmp_path.iterdir()) == ["b"]
    assert sorted(p.name for p in target.iterdir()) == ["architecture.json", "model.safetensors",
                                                         "model.safetensors.manifest.json"]
    # A bundle directory holding other files is not replaced (they would be lost).
    (target / "notes.txt").write_text("mine")
    with pytest.raises(st.SpiralValueError, match=r"other files \['notes.txt'\]"):
        integ.save_model_bundle(first, target, input_shape=(None, 3))
    assert (target / "notes.txt").read_text() == "mine"
    np.testing.assert_array_equal(_out(integ.load_model_bundle(target), x), _out(second, x))
    # An existing directory without a bundle receives the files in place.
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "keep.txt").write_text("kept")
    integ.save_model_bundle(first, plain, input_shape=(None, 3))
    assert (plain / "keep.txt").read_text() == "kept"
    np.testing.assert_array_equal(_out(integ.load_model_bundle(plain), x), _out(first, x))


# ---------------------------------------------------------------- atomic writers


def test_atomic_writer_keeps_modes_and_never_follows_planted_links(tmp_path):
    umask = os.umask(0o022)
    os.umask(umask)
    new = tmp_path / "new.json"
    _atomic.atomic_write_text(new, "{}")
    assert stat.S_IMODE(os.stat(new).st_mode) == 0o666 & ~umask
    # Replacing a file keeps its permission bits.
    secret = tmp_path / "secret.card.json"
    secret.write_text("old")
    os.chmod(secret, 0o600)
    card = {"format": model_card.CARD_FORMAT, "artifacts": []}
    integ.write_deployment_card(card, secret)
    assert json.loads(secret.read_text()) == card and stat.S_IMODE(os.stat(secret).st_mode) == 0o600
    # The predictable temporary names the writers used before: a link planted there is not followed.
    victim = tmp_path / "victim.txt"
    victim.write_text("untouched")
    (tmp_path / f".card.json.tmp-{os.getpid()}").symlink_to(victim)
    integ.write_deployment_card(card, tmp_path / "card.json")
    bundle_dir = tmp_path / "bundle"
    bundle_dir.mkdir()
    (bundle_dir / "architecture.json.tmp").symlink_to(victim)
    integ.save_model_bundle(nn.Sequential(nn.Linear(2, 2)), bundle_dir, input_shape=(None, 2))
    assert victim.read_text() == "untouched"
    assert (tmp_path / f".card.json.tmp-{os.getpid()}").is_symlink()
    assert isinstance(integ.load_model_bundle(bundle_dir), nn.Sequential)
    # A link at the target itself is kept and the file it points to replaced (as the C++ writers
    # do, and as open() would write through it), with that file's mode.
    linked = tmp_path / "linked.json"
    linked.write_text("old")
    os.chmod(linked, 0o640)
    link = tmp_path / "link.json"
    link.symlink_to(linked)
    _atomic.atomic_write_text(link, "new")
    assert link.is_symlink() and linked.read_text() == "new" and stat.S_IMODE(os.stat(linked).st_mode) == 0o640
    assert victim.read_text() == "untouched"
    # A failing writer leaves the old file and no temporary.
    before = sorted(p.name for p in tmp_path.iterdir())

    def fail(f):
        f.write(b"partial")
        raise RuntimeError("writer failed")

    with pytest.raises(RuntimeError, match="writer failed"):
        _atomic.atomic_write(secret, fail)
    assert json.loads(secret.read_text()) == card and sorted(p.name for p in tmp_path.iterdir()) == before


def test_numpy_and_onnx_writers_use_the_helper(tmp_path):
    from spiraltorch.zoo import poincare_wordnet

    ckpt = tmp_path / "w.npy"
    ckpt.write_bytes(b"old")
    os.chmod(ckpt, 0o640)
    poincare_wordnet._save(str(ckpt), st.ones(2, 3))
    np.testing.assert_array_equal(np.load(ckpt), np.ones((2, 3), np.float32))
    assert stat.S_IMODE(os.stat(ckpt).st_mode) == 0o640 and sorted(p.name for p in tmp_path.iterdir()) == ["w.npy"]
    pytest.importorskip("onnx")
    victim = tmp_path / "victim"
    victim.write_text("untouched")
    (tmp_path / f".m.onnx.tmp-{os.getpid()}").symlink_to(victim)
    integ.export_onnx(nn.Sequential(nn.Linear(3, 2)), np.zeros((1, 3), np.float32), tmp_path / "m.onnx")
    assert victim.read_text() == "untouched" and (tmp_path / "m.onnx").stat().st_size > 0


# ---------------------------------------------------------------- plugin directories

PLUGIN_SOURCE = '''
import pathlib
pathlib.Path({marker!r}).write_text("plugin code ran")


class P:
    metadata = {{"id": {pid!r}, "version": "1"}}


plugins = [P()]
'''


@pytest.fixture
def clean_plugins():
    plugin.reset()
    yield
    plugin.reset()


def _plugin_dir(tmp_path, name="plugins", pid="sec_plugin"):
    d = tmp_path / name
    d.mkdir()
    marker = tmp_path / f"{name}.ran"
    (d / "p.py").write_text(PLUGIN_SOURCE.format(marker=str(marker), pid=pid))
    return d, marker


def test_plugin_paths_others_can_write_are_refused(tmp_path, clean_plugins, caplog):
    d, marker = _plugin_dir(tmp_path)
    os.chmod(d, 0o777)
    with pytest.raises(st.SpiralError, match="world-writable"):
        plugin.load_path(str(d))
    with pytest.raises(st.SpiralError, match="world-writable"):
        plugin.watch_path(str(d))
    os.chmod(d, 0o755)
    os.chmod(d / "p.py", 0o666)  # a world-writable file in a safe directory
    with pytest.raises(st.SpiralError, match=r"p\.py.*world-writable"):
        plugin.load_path(str(d))
    os.chmod(d / "p.py", 0o644)
    sub = d / "sub"
    sub.mkdir()
    os.chmod(sub, 0o777)  # a sub-directory the walk would enter
    with pytest.raises(st.SpiralError, match="sub': it is world-writable"):
        plugin.load_path(str(d))
    assert plugin.load_path(str(d), recursive=False) == ["sec_plugin"]  # not walked without recursion
    plugin.reset()
    marker.unlink()
    os.rmdir(sub)
    # Below a world-writable directory without the sticky bit, anyone could swap the plugins.
    shared = tmp_path / "shared"
    shared.mkdir()
    os.chmod(shared, 0o777)
    inner, inner_marker = _plugin_dir(shared, "inner", pid="inner_plugin")
    with pytest.raises(st.SpiralError, match="lies in"):
        plugin.load_path(str(inner))
    os.chmod(shared, 0o1777)  # like /tmp: sticky, so only the owner may rename it
    assert plugin.load_path(str(inner)) == ["inner_plugin"] and inner_marker.exists()
    plugin.reset()
    if os.geteuid() == 0:  # another user's file (only root can make one here)
        os.chown(d / "p.py", 12345, 12345)
        with pytest.raises(st.SpiralError, match="owned by uid 12345"):
            plugin.load_path(str(d))
        os.chown(d / "p.py", 0, 0)
    assert not marker.exists()  # no refused code ran
    # A safe directory loads, and every executed file is logged.
    with caplog.at_level(logging.INFO, logger="spiraltorch.plugin"):
        assert plugin.load_path(str(d)) == ["sec_plugin"]
    assert marker.exists() and f"plugin.load_path: executing {d / 'p.py'}" in caplog.text


def test_watch_path_does_not_run_a_world_writable_file_that_appears_later(tmp_path, clean_plugins):
    d = tmp_path / "watched"
    d.mkdir()
    errors = []
    with plugin.watch_path(str(d), poll_interval=0.01, on_error=lambda e, p: errors.append(e)) as w:
        assert w.wait_scanned(5)
        marker = tmp_path / "late.ran"
        hidden = d / ".late.py"  # dot-files are never loaded: the file appears world-writable at once
        hidden.write_text(PLUGIN_SOURCE.format(marker=str(marker), pid="late"))
        os.chmod(hidden, 0o666)
        os.replace(hidden, d / "late.py")
        import time

        deadline = time.monotonic() + 10
        while not errors and time.monotonic() < deadline:
            time.sleep(0.01)
    assert errors and isinstance(errors[0], st.SpiralError) and "world-writable" in str(errors[0])
    assert not marker.exists() and plugin.list_plugins() == []


# ---------------------------------------------------------------- os._exit after flushing

FAILING_RANK = r'''
import ctypes, sys
print("python-partial", end="")            # no newline, no flush: still in sys.stdout's buffer
ctypes.CDLL(None).printf(b"c-partial")     # in C's stdout buffer (native code printing)
raise RuntimeError("rank failed on purpose")
'''


def test_a_failing_rank_flushes_its_output_before_os_exit(tmp_path):
    script = tmp_path / "rank.py"
    script.write_text(FAILING_RANK)
    errors = tmp_path / "errors"
    errors.mkdir()
    env = dict(_env(), SPIRAL_RUN_ERROR_DIR=str(errors))
    proc = subprocess.run([sys.executable, "-m", "spiraltorch.launch", "--worker", str(script)], env=env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1
    assert "python-partial" in proc.stdout and "c-partial" in proc.stdout, proc.stdout
    assert "[rank 0]" in proc.stderr and "RuntimeError: rank failed on purpose" in proc.stderr
    assert "rank failed on purpose" in (errors / "rank0.txt").read_text()
    assert sorted(p.name for p in errors.iterdir()) == ["rank0.txt"]
    # The hook distributed installs for multi-rank groups does the same.
    hooked = tmp_path / "hooked.py"
    hooked.write_text("import sys, spiraltorch.distributed as dist\nsys.excepthook = dist._exit_on_uncaught\n"
                      + FAILING_RANK)
    proc = subprocess.run([sys.executable, str(hooked)], env=_env(), capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1
    assert "python-partial" in proc.stdout and "c-partial" in proc.stdout, proc.stdout
    assert "RuntimeError: rank failed on purpose" in proc.stderr


# ---------------------------------------------------------------- spiral-run and root


def _fake_mpirun(tmp_path):
    """An 'mpirun' that records the two Open MPI root variables it was started with."""
    record = tmp_path / "mpirun.env"
    fake = tmp_path / "mpirun"
    fake.write_text(textwrap.dedent(f"""\
        #!/bin/sh
        echo "ALLOW=${{OMPI_ALLOW_RUN_AS_ROOT:-unset}} CONFIRM=${{OMPI_ALLOW_RUN_AS_ROOT_CONFIRM:-unset}}" > {record}
        """))
    fake.chmod(0o755)
    return fake, record


def test_spiral_run_runs_as_root_only_when_asked(tmp_path, monkeypatch, capsys):
    fake, record = _fake_mpirun(tmp_path)
    monkeypatch.setenv("SPIRAL_RUN_MPIRUN", str(fake))
    for var in ("OMPI_ALLOW_RUN_AS_ROOT", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setattr(launch.os, "geteuid", lambda: 0)
    # As root without the flag: refused before mpirun starts, the flag named.
    assert launch.main(["train.py"]) == 2
    assert "pass --allow-run-as-root" in capsys.readouterr().err and not record.exists()
    # With the flag, mpirun gets both variables.
    assert launch.main(["--allow-run-as-root", "train.py"]) == 0
    assert record.read_text().split() == ["ALLOW=1", "CONFIRM=1"]
    # Variables the user set themselves are enough.
    monkeypatch.setenv("OMPI_ALLOW_RUN_AS_ROOT", "1")
    monkeypatch.setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    assert launch.main(["train.py"]) == 0
    # Not root: nothing is set behind the user's back.
    monkeypatch.delenv("OMPI_ALLOW_RUN_AS_ROOT")
    monkeypatch.delenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM")
    monkeypatch.setattr(launch.os, "geteuid", lambda: 1000)
    assert launch.main(["train.py"]) == 0
    assert record.read_text().split() == ["ALLOW=unset", "CONFIRM=unset"]


@pytest.mark.skipif(os.geteuid() != 0, reason="needs to run as root")
def test_spiral_run_as_root_without_the_flag_fails_with_the_message(tmp_path):
    env = {k: v for k, v in _env().items() if not k.startswith("OMPI_ALLOW_RUN_AS_ROOT")}
    script = tmp_path / "noop.py"
    script.write_text("print('ran')\n")
    proc = subprocess.run([sys.executable, "-m", "spiraltorch.launch", "--nproc-per-node", "1", str(script)],
                          env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and "ran" not in proc.stdout
    assert "refusing to start the ranks as root" in proc.stderr and "--allow-run-as-root" in proc.stderr
