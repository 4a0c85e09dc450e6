"""Security and reliability findings, one test each: no file we load runs code, no input crashes
the process, no save loses what was there (README, "Security and trust model")."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import spiraltorch as st

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
