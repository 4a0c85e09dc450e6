"""Checkpoint files: safetensors (compatibility with the `safetensors` package), JSON,
bincode, manifests, sharded indexes, atomic writes and hostile inputs."""

from __future__ import annotations

import hashlib
import json
import os
import pathlib
import struct

import numpy as np
import pytest

import spiraltorch as st

BAD_DIR = pathlib.Path(__file__).resolve().parents[1] / "data" / "bad_safetensors"

DTYPES = {
    "float32": np.float32,
    "float64": np.float64,
    "float16": np.float16,
    "int64": np.int64,
    "int32": np.int32,
    "uint8": np.uint8,
    "bool": np.bool_,
}


def _sample():
    out = {}
    for name, npdt in DTYPES.items():
        arr = (np.arange(6).reshape(2, 3) % 2 == 0) if npdt is np.bool_ else np.arange(6).reshape(2, 3).astype(npdt) - 2 * (npdt not in (np.uint8,))
        out[name] = st.tensor(arr)
    out["bfloat16"] = st.tensor([[1.5, -2.0, 3.0]]).to(st.bfloat16)
    out["scalar"] = st.tensor(3.25)
    out["empty"] = st.zeros(0, 4)
    out["empty_i64"] = st.zeros(3, 0, dtype=st.int64)
    return out


def _np(t):
    if t.dtype == st.bfloat16:
        return t.to(st.float32).numpy()
    return t.numpy()


def _assert_same(a, b):
    assert list(sorted(a)) == list(sorted(b))
    for k in a:
        assert a[k].dtype == b[k].dtype, k
        assert tuple(a[k].shape) == tuple(b[k].shape), k
        np.testing.assert_array_equal(_np(a[k]), _np(b[k]), err_msg=k)


@pytest.mark.parametrize("fmt", ["safetensors", "json", "bincode"])
def test_round_trip_every_dtype(tmp_path, fmt):
    sample = _sample()
    path = tmp_path / f"w.{'bin' if fmt == 'bincode' else fmt}"
    st.nn.save(path, sample, metadata={"note": "ünïcode"})
    _assert_same(sample, st.nn.load(path))
    tensors, meta = st.nn.serialization.load_with_metadata(path)
    assert meta["note"] == "ünïcode"


@pytest.mark.parametrize("copy", [False, True])
def test_safetensors_mmap_and_copy(tmp_path, copy):
    sample = _sample()
    st.io.save_safetensors(tmp_path / "a.safetensors", sample)
    tensors, meta = st.io.load_safetensors(tmp_path / "a.safetensors", copy=copy)
    _assert_same(sample, tensors)
    # In-place writes never reach the file (private mapping or copy).
    tensors["float32"].add_(1.0)
    again, _ = st.io.load_safetensors(tmp_path / "a.safetensors")
    np.testing.assert_array_equal(again["float32"].numpy(), sample["float32"].numpy())


def test_json_keeps_non_finite_and_exact_floats(tmp_path):
    x = st.tensor([float("nan"), float("inf"), float("-inf"), 0.1, -0.0, 1e-45], dtype=st.float32)
    st.nn.save(tmp_path / "x.json", {"x": x})
    y = st.nn.load(tmp_path / "x.json")["x"]
    assert x.numpy().tobytes() == y.numpy().tobytes()


# ---------------------------------------------------------------- compatibility

def test_bytes_identical_to_safetensors_package(tmp_path):
    sn = pytest.importorskip("safetensors.numpy")
    arrays = {
        "w": np.arange(6, dtype=np.float32).reshape(2, 3),
        "b": np.array([1.5, -2.0], dtype=np.float64),
        "i": np.array([1, -2, 3], dtype=np.int64),
        "j": np.array([[7]], dtype=np.int32),
        "h": np.array([0.5, 2.0], dtype=np.float16),
        "u": np.array([0, 255], dtype=np.uint8),
        "m": np.array([True, False]),
        "s": np.array(2.5, dtype=np.float32),
        "e": np.zeros((0, 3), dtype=np.float32),
    }
    ref = sn.save(arrays, metadata={"format": "np"})
    ours = st.io.save_safetensors_bytes({k: st.tensor(v) for k, v in arrays.items()}, {"format": "np"})
    assert ours == ref
    # ... and files written by us are read by the package, and vice versa.
    st.io.save_safetensors(tmp_path / "ours.safetensors", {k: st.tensor(v) for k, v in arrays.items()})
    loaded = sn.load_file(str(tmp_path / "ours.safetensors"))
    for k, v in arrays.items():
        np.testing.assert_array_equal(loaded[k], v)
        assert loaded[k].dtype == v.dtype
    sn.save_file(arrays, str(tmp_path / "ref.safetensors"), metadata={"k": "v"})
    tensors, meta = st.io.load_safetensors(tmp_path / "ref.safetensors")
    assert meta == {"k": "v"}
    for k, v in arrays.items():
        np.testing.assert_array_equal(tensors[k].numpy(), v)


def test_bfloat16_with_torch(tmp_path):
    torch = pytest.importorskip("torch")
    stt = pytest.importorskip("safetensors.torch")
    ref = {"bf": torch.tensor([[1.5, -2.0], [3.0, 0.25]], dtype=torch.bfloat16),
           "f": torch.arange(4, dtype=torch.float32), "l": torch.tensor([5, 6], dtype=torch.int64)}
    stt.save_file(ref, str(tmp_path / "t.safetensors"))
    tensors, _ = st.io.load_safetensors(tmp_path / "t.safetensors")
    assert tensors["bf"].dtype == st.bfloat16
    np.testing.assert_array_equal(tensors["bf"].to(st.float32).numpy(), ref["bf"].float().numpy())
    st.io.save_safetensors(tmp_path / "o.safetensors", tensors)
    back = stt.load_file(str(tmp_path / "o.safetensors"))
    for k in ref:
        assert torch.equal(back[k], ref[k])
    assert (tmp_path / "o.safetensors").read_bytes() == stt.save(ref)


def test_bfloat16_bytes_match_package(tmp_path):
    sn = pytest.importorskip("safetensors")
    bf = st.tensor([1.0, -2.5, 3.0]).to(st.bfloat16)
    data = st.io.save_safetensors_bytes({"bf": bf})
    header_len = struct.unpack("<Q", data[:8])[0]
    header = json.loads(data[8:8 + header_len])
    assert header["bf"] == {"dtype": "BF16", "shape": [3], "data_offsets": [0, 6]}
    # bfloat16 is the upper half of float32.
    f32 = np.array([1.0, -2.5, 3.0], dtype=np.float32).view(np.uint32) >> 16
    assert data[8 + header_len:] == f32.astype("<u2").tobytes()
    assert sn is not None


# ---------------------------------------------------------------- sharded

def test_sharded_index(tmp_path):
    st.io.save_safetensors(tmp_path / "model-00001-of-00002.safetensors", {"a": st.ones(2), "b": st.zeros(3)})
    st.io.save_safetensors(tmp_path / "model-00002-of-00002.safetensors", {"c": st.tensor([1, 2], dtype=st.int64)})
    index = {"metadata": {"total_size": 36}, "weight_map": {
        "a": "model-00001-of-00002.safetensors", "b": "model-00001-of-00002.safetensors",
        "c": "model-00002-of-00002.safetensors"}}
    (tmp_path / "model.safetensors.index.json").write_text(json.dumps(index))
    for target in (tmp_path, tmp_path / "model.safetensors.index.json"):
        state = st.nn.load(target)
        assert sorted(state) == ["a", "b", "c"]
        assert state["c"].tolist() == [1, 2]
    _, meta = st.io.load_safetensors(tmp_path)
    assert meta["total_size"] == "36"
    index["weight_map"]["c"] = "model-00001-of-00002.safetensors"
    (tmp_path / "bad.index.json").write_text(json.dumps(index))
    with pytest.raises(st.CheckpointError, match="does not contain|does not assign"):
        st.nn.load(tmp_path / "bad.index.json")
    index["weight_map"]["c"] = "/etc/passwd"
    (tmp_path / "evil.index.json").write_text(json.dumps(index))
    with pytest.raises(st.CheckpointError, match="outside"):
        st.nn.load(tmp_path / "evil.index.json")


# ---------------------------------------------------------------- atomic writes

def test_failed_serialisation_leaves_old_file(tmp_path):
    path = tmp_path / "w.safetensors"
    st.nn.save(path, {"x": st.ones(2)})
    before = path.read_bytes()
    with pytest.raises(st.CheckpointError, match="duplicate"):
        st.io.save_safetensors(path, [("x", st.ones(1)), ("x", st.zeros(1))])
    with pytest.raises(st.CheckpointError, match="reserved"):
        st.io.save_safetensors(path, {"__metadata__": st.ones(1)})
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["w.safetensors", "w.safetensors.manifest.json"]


@pytest.mark.skipif(hasattr(os, "geteuid") and os.geteuid() == 0, reason="root ignores directory permissions")
def test_read_only_directory_leaves_old_file(tmp_path):
    path = tmp_path / "w.bin"
    st.nn.save(path, {"x": st.ones(2)})
    before = path.read_bytes()
    os.chmod(tmp_path, 0o555)
    try:
        with pytest.raises(st.CheckpointError, match="temporary file"):
            st.nn.save(path, {"x": st.zeros(5)})
    finally:
        os.chmod(tmp_path, 0o755)
    assert path.read_bytes() == before


def test_target_is_directory(tmp_path):
    (tmp_path / "d.safetensors").mkdir()
    with pytest.raises(st.CheckpointError, match="is a directory"):
        st.io.save_safetensors(tmp_path / "d.safetensors", {"x": st.ones(1)})


# ---------------------------------------------------------------- manifests and nn.save/load

@pytest.mark.parametrize("ext", ["safetensors", "json", "bin", "bincode"])
def test_module_save_load_with_manifest(tmp_path, ext):
    st.manual_seed(0)
    model = st.nn.Sequential(st.nn.Linear(4, 3), st.nn.ReLU(), st.nn.Linear(3, 2))
    path = tmp_path / "sub" / f"model.{ext}"
    assert st.nn.save(path, model) == str(path)
    manifest_file = pathlib.Path(str(path) + ".manifest.json")
    manifest = json.loads(manifest_file.read_text())
    assert manifest["format"] == {"bin": "bincode", "bincode": "bincode"}.get(ext, ext)
    assert manifest["weights"]["path"] == path.name
    assert manifest["weights"]["sha256"] == hashlib.sha256(path.read_bytes()).hexdigest()
    assert manifest["spiraltorch_version"] == st.__version__
    assert manifest["module_type"] == "Sequential"
    state = model.state_dict()
    assert [e["name"] for e in manifest["tensors"]] == list(state)
    assert [tuple(e["shape"]) for e in manifest["tensors"]] == [tuple(t.shape) for t in state.values()]
    assert all(e["dtype"] == "float32" for e in manifest["tensors"])

    st.manual_seed(1)
    other = st.nn.Sequential(st.nn.Linear(4, 3), st.nn.ReLU(), st.nn.Linear(3, 2))
    for source in (path, manifest_file):
        assert st.nn.load(source, other) is other
        x = st.randn(5, 4)
        np.testing.assert_array_equal(other(x).detach().numpy(), model(x).detach().numpy())


def test_load_into_module_is_atomic(tmp_path):
    model = st.nn.Linear(3, 2)
    st.nn.save(tmp_path / "w.safetensors", {"weight": st.ones(2, 3), "bias": st.ones(5)})
    before = model.weight.detach().numpy().copy()
    with pytest.raises(st.CheckpointError, match="shape"):
        st.nn.load(tmp_path / "w.safetensors", model)
    np.testing.assert_array_equal(model.weight.detach().numpy(), before)


def test_manifest_detects_tampering(tmp_path):
    path = tmp_path / "w.json"
    st.nn.save(path, {"x": st.ones(3)})
    st.io.save_json(path, {"x": st.zeros(3)}, manifest=False)  # replace the weights behind the manifest
    with pytest.raises(st.CheckpointError, match="sha256|bytes"):
        st.nn.load(str(path) + ".manifest.json")
    assert st.nn.load(path)["x"].tolist() == [0.0, 0.0, 0.0]


def test_save_rejects_unknown_extension_and_manifest_target(tmp_path):
    with pytest.raises(ValueError):
        st.nn.save(tmp_path / "w.pt", {"x": st.ones(1)})
    with pytest.raises(ValueError):
        st.nn.save(tmp_path / "w.manifest.json", {"x": st.ones(1)})


def test_format_specific_helpers(tmp_path):
    model = st.nn.Linear(2, 2)
    for name in ("safetensors", "json", "bincode"):
        p = tmp_path / f"m.{name}"
        getattr(st.nn, f"save_{name}")(p, model)
        state = getattr(st.nn, f"load_{name}")(p)
        assert sorted(state) == sorted(model.state_dict())
        assert getattr(st.nn, f"load_{name}")(p, st.nn.Linear(2, 2)) is not None


def test_safetensors_header_only(tmp_path):
    st.io.save_safetensors(tmp_path / "a.safetensors", {"w": st.ones(2, 3), "i": st.tensor([1], dtype=st.int32)}, {"a": "b"})
    entries, meta = st.io.safetensors_header(tmp_path / "a.safetensors")
    assert meta == {"a": "b"}
    assert [(e["name"], e["dtype"], tuple(e["shape"])) for e in entries] == [("w", st.float32, (2, 3)), ("i", st.int32, (1,))]


# ---------------------------------------------------------------- hostile files

BAD_FILES = sorted(BAD_DIR.glob("*.safetensors"))


def test_bad_corpus_is_present():
    assert len(BAD_FILES) >= 30


@pytest.mark.parametrize("path", BAD_FILES, ids=[p.name for p in BAD_FILES])
def test_bad_file_raises_checkpoint_error(path):
    for copy in (False, True):
        with pytest.raises(st.CheckpointError) as info:
            st.io.load_safetensors(path, copy=copy)
        msg = str(info.value)
        assert msg.startswith(f"safetensors: {path}: ")
        assert len(msg) > len(f"safetensors: {path}: ") + 5  # a reason, not just a prefix
    with pytest.raises(st.CheckpointError):
        st.io.load_safetensors_bytes(path.read_bytes())


def test_every_truncation_of_a_good_file_is_refused():
    data = st.io.save_safetensors_bytes(_sample(), {"k": "v"})
    for cut in range(len(data)):
        with pytest.raises(st.CheckpointError):
            st.io.load_safetensors_bytes(data[:cut])
    for loader, save in ((st.io.load_bincode_bytes, None), (st.io.load_json_bytes, None)):
        with pytest.raises(st.CheckpointError):
            loader(data)
