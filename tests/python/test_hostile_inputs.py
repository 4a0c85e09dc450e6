"""Hostile and careless inputs (issue #19): each must raise a typed error or work, never crash
or hang the process. Every reproducer runs in a fresh interpreter, so a crash (a signal) or a
hang fails that one test instead of the whole run."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap

import pytest

import spiraltorch as st

_PKG_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(st.__file__)))

_PRELUDE = """
import gc, os, sys
import numpy as np
import spiraltorch as st

def expect(exc, fn, match=None):
    try:
        fn()
    except exc as e:
        if match is not None:
            assert match in str(e), f"message {str(e)!r} lacks {match!r}"
        return e
    except BaseException as e:
        raise AssertionError(f"expected {exc.__name__}, got {type(e).__name__}: {e}") from e
    raise AssertionError(f"expected {exc.__name__}, nothing was raised")
"""


def run(code: str, *, timeout: float = 60.0, cwd: str | None = None) -> str:
    """Runs `code` after the prelude in a new interpreter; fails on a signal, an error or a hang."""
    env = dict(os.environ)
    env["PYTHONPATH"] = _PKG_ROOT + os.pathsep + env.get("PYTHONPATH", "")
    try:
        p = subprocess.run([sys.executable, "-c", _PRELUDE + textwrap.dedent(code)], capture_output=True, text=True,
                           timeout=timeout, env=env, cwd=cwd)
    except subprocess.TimeoutExpired:
        pytest.fail(f"hung for more than {timeout} s")
    if p.returncode < 0:
        pytest.fail(f"killed by {signal.Signals(-p.returncode).name}\n{p.stderr[-3000:]}")
    assert p.returncode == 0, p.stderr[-3000:]
    return p.stdout


# ---------------------------------------------------------------- crashes


@pytest.mark.parametrize("dtype", ["int64", "int32"])
def test_integer_division_overflow_wraps_like_pytorch(dtype):
    run(f"""
    dt = st.{dtype}
    lo = -2**63 if dt == st.int64 else -2**31
    x = st.tensor([lo, 7, -7], dtype=dt)
    assert (x // -1).tolist() == [lo, -7, 7]
    assert (x % -1).tolist() == [0, 0, 0]
    m = st.tensor([-1, -1, -1], dtype=dt)
    assert (x // m).tolist() == [lo, -7, 7]
    assert st.remainder(x, m).tolist() == [0, 0, 0]
    expect(st.SpiralError, lambda: x // 0, "division by zero")
    """)


def test_shape_overflow_and_negative_sizes_raise_shape_error():
    run("""
    expect(st.ShapeError, lambda: st.zeros(2**62))
    expect(st.ShapeError, lambda: st.zeros(2**32, 2**32))
    expect(st.ShapeError, lambda: st.ones(2**31, 2**31, 4))
    expect(st.ShapeError, lambda: st.zeros(2**64))          # does not fit in int64 at all
    expect(st.ShapeError, lambda: st.zeros(-1))
    expect(st.ShapeError, lambda: st.randn(1).expand(-2))
    expect(st.ShapeError, lambda: st.randn(1).expand(2**62, 2**62))
    expect(st.ShapeError, lambda: st.nn.Linear(2**31, 2**31))
    expect(st.ShapeError, lambda: st.Tensor(2**40, 2**40, [1.0]))
    expect(st.ShapeError, lambda: st.Tensor(2**40, 2**40))
    a = st.ones(1, 1).expand(2**31, 2**31)                    # a view: nothing allocated yet
    assert a.shape == (2**31, 2**31)
    expect(st.SpiralError, lambda: a @ a)                      # the product cannot be allocated
    expect(st.SpiralError, lambda: a.contiguous())
    """)


def test_allocation_failure_is_typed():
    run("""
    e = expect(st.OutOfMemoryError, lambda: st.empty(2**59))  # 2**61 bytes: beyond any address space
    assert isinstance(e, MemoryError) and isinstance(e, st.SpiralError)
    """)


def test_releasing_a_long_graph_does_not_overflow_the_stack():
    run("""
    x = st.ones(1, requires_grad=True)
    total = x
    for _ in range(200_000):
        total = total + x
    del total
    gc.collect()
    y = x * 2
    for _ in range(100_000):
        y = y * 1.0
    y.sum().backward()
    assert x.grad.tolist() == [2.0]
    del y
    """, timeout=300)


def test_deeply_nested_list_raises():
    run("""
    deep = 0.0
    for _ in range(20_000):
        deep = [deep]
    expect(st.ShapeError, lambda: st.tensor(deep), "deeper than the maximum")
    ok = 1.0
    for _ in range(64):
        ok = [ok]
    assert st.tensor(ok).dim() == 64
    """)


def test_maximum_rank_is_enforced_everywhere(tmp_path):
    run(f"""
    import json, struct
    expect(st.ShapeError, lambda: st.zeros([1] * 65), "maximum of 64")
    expect(st.ShapeError, lambda: st.zeros([1] * 129))
    expect(st.ShapeError, lambda: st.zeros([1] * 100_000))
    expect(st.ShapeError, lambda: st.ones(3).reshape([1] * 64 + [3]))
    expect(st.ShapeError, lambda: st.ones(3).view([1] * 65 + [3]) if hasattr(st.Tensor, "view") else st.zeros([1] * 65))
    t = st.zeros([1] * 64)
    assert t.numpy().shape == (1,) * 64
    assert isinstance(t.tolist(), list)
    assert "tensor" in repr(t)
    expect(st.ShapeError, lambda: t.unsqueeze(0))
    # A safetensors file declaring 65 dims.
    header = json.dumps({{"x": {{"dtype": "F32", "shape": [1] * 65, "data_offsets": [0, 4]}}}}).encode()
    path = os.path.join({str(tmp_path)!r}, "deep.safetensors")
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(header)) + header + b"\\0" * 4)
    expect(st.CheckpointError, lambda: st.io.load_safetensors(path), "maximum of 64")
    """)


@pytest.mark.parametrize("source", [
    "np.frombuffer(b'\\\\0' * 16, dtype=np.float32)",
    "np.broadcast_to(np.zeros(4, np.float32), (3, 4))",
    "readonly",
    "memmap",
])
def test_read_only_inputs_are_never_written_through(tmp_path, source):
    run(f"""
    source = {source!r}
    if source == "readonly":
        a = np.arange(4, dtype=np.float32); a.flags.writeable = False
    elif source == "memmap":
        path = os.path.join({str(tmp_path)!r}, "m.bin")
        np.arange(4, dtype=np.float32).tofile(path)
        a = np.memmap(path, dtype=np.float32, mode="r")
    else:
        a = eval(source)
    before = a.copy()
    for make in (st.from_numpy, st.from_dlpack):
        t = make(a)
        assert t.tolist() == a.tolist()
        expect(st.SpiralError, lambda: t.add_(1), "read-only memory")
        expect(st.SpiralError, lambda: t.mul_(3), "read-only memory")
        expect(st.SpiralError, lambda: t.zero_(), "read-only memory")
        expect(st.SpiralError, lambda: t.__setitem__(0, 42), "read-only memory")
        expect(st.SpiralError, lambda: t[0].fill_(7), "read-only memory")   # views too
        assert not t.numpy().flags.writeable
        t.requires_grad_(True)
        opt = st.optim.SGD([t], lr=0.1)
        (t * t).sum().backward()
        expect(st.SpiralError, opt.step, "read-only memory")
        assert np.array_equal(a, before), "the read-only source changed"
        c = t.detach().clone()      # the way to get a writable copy
        c.add_(1)
        assert np.array_equal(a, before)
    if source == "memmap":
        del a
        assert np.array_equal(np.fromfile(path, dtype=np.float32), before)
    # Writable arrays are still shared without a copy.
    w = np.zeros(3, np.float32)
    st.from_numpy(w).add_(1)
    assert w.tolist() == [1, 1, 1]
    """)


def test_immutable_bytes_stay_unchanged():
    run("""
    data = bytes(16)
    t = st.from_numpy(np.frombuffer(data, dtype=np.float32))
    def iadd():
        global t
        t += 1
    expect(st.SpiralError, iadd, "read-only memory")
    assert data == bytes(16)
    assert (t + 1).tolist() == [1.0] * 4     # reading and out-of-place ops are fine
    """)


def test_load_safetensors_copies_by_default(tmp_path):
    run(f"""
    path = os.path.join({str(tmp_path)!r}, "w.safetensors")
    st.nn.save(path, {{"w": st.arange(1024, dtype=st.float32)}})
    tensors, _ = st.io.load_safetensors(path)
    with open(path, "r+b") as f:
        f.truncate(8)             # would make a mapped tensor fault (SIGBUS) on access
    assert tensors["w"].sum().item() == sum(range(1024))
    tensors["w"].add_(1)
    """)


# ---------------------------------------------------------------- hangs


def test_zero_element_tensors_with_huge_dims_cost_nothing(tmp_path):
    run(f"""
    import json, struct
    header = json.dumps({{"x": {{"dtype": "F32", "shape": [2**40, 0], "data_offsets": [0, 0]}}}}).encode()
    path = os.path.join({str(tmp_path)!r}, "z.safetensors")
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(header)) + header)
    for copy in (True, False):
        x = st.io.load_safetensors(path, copy=copy)[0]["x"]
        assert x.shape == (2**40, 0) and (x + 1).numel() == 0 and "size=(1099511627776, 0)" in repr(x)
    z = st.zeros(2**47, 0)
    assert z.shape == (2**47, 0) and z.numel() == 0
    for r in (z + 1, z * z, st.ones(2**47, 0) - 2, z.exp(), (z > 0), z.clone(), z.contiguous(), z.t().contiguous()):
        assert r.numel() == 0
    assert z.sum().item() == 0.0 and z.sum(dim=0).shape == (0,)
    assert z.reshape(0, 2**47).shape == (0, 2**47)
    st.zeros(0, 2**40).fill_(3.0)
    """, timeout=30)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
@pytest.mark.parametrize("name", ["x.safetensors", "x.json", "x.bin", "x.safetensors.manifest.json"])
def test_loading_a_fifo_fails_fast(tmp_path, name):
    run(f"""
    path = os.path.join({str(tmp_path)!r}, {name!r})
    os.mkfifo(path)
    expect(st.CheckpointError, lambda: st.nn.load(path), "not a regular file")
    """, timeout=30)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_index_shard_that_is_a_fifo_fails_fast(tmp_path):
    run(f"""
    import json
    d = {str(tmp_path)!r}
    os.mkfifo(os.path.join(d, "shard.safetensors"))
    with open(os.path.join(d, "model.safetensors.index.json"), "w") as f:
        json.dump({{"metadata": {{}}, "weight_map": {{"w": "shard.safetensors"}}}}, f)
    expect(st.CheckpointError, lambda: st.nn.load(os.path.join(d, "model.safetensors.index.json")))
    expect(st.CheckpointError, lambda: st.nn.load(d))
    """, timeout=30)


# ---------------------------------------------------------------- data integrity


def _dead_pid() -> int:
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    return p.pid


@pytest.mark.parametrize("ext", ["safetensors", "bin", "json"])
def test_manifest_pair_survives_a_kill_between_renames(tmp_path, ext):
    dead = _dead_pid()
    tag = st._core.io.temporary_host_tag()  # temporaries of this host: a dead PID's may be removed
    run(f"""
    import shutil
    d = {str(tmp_path)!r}
    path = os.path.join(d, "model.{ext}")
    manifest = path + ".manifest.json"
    new_dir = os.path.join(d, "new"); os.mkdir(new_dir)
    st.nn.save(path, {{"w": st.zeros(4)}})
    st.nn.save(os.path.join(new_dir, "model.{ext}"), {{"w": st.ones(4)}})
    # What a save killed after renaming its weights but before its manifest leaves behind:
    # new weights, the old manifest, and the new manifest complete in its temporary.
    shutil.copy(os.path.join(new_dir, "model.{ext}"), path)
    shutil.copy(os.path.join(new_dir, "model.{ext}.manifest.json"),
                os.path.join(d, ".model.{ext}.manifest.json.tmp-{tag}-{dead}-0"))
    state = st.nn.load(manifest)
    assert state["w"].tolist() == [1.0] * 4
    # Without the temporary the mismatch is reported, not hidden.
    os.rename(os.path.join(d, ".model.{ext}.manifest.json.tmp-{tag}-{dead}-0"), os.path.join(d, "keep"))
    expect(st.CheckpointError, lambda: st.nn.load(manifest), "does not match")
    os.rename(os.path.join(d, "keep"), os.path.join(d, ".model.{ext}.manifest.json.tmp-{tag}-{dead}-0"))
    # The next save promotes it (so a kill in that save still leaves a pair) and cleans up.
    with open(os.path.join(d, ".model.{ext}.tmp-{tag}-{dead}-7"), "wb") as f:
        f.write(b"x" * 1000)
    st.nn.save(path, {{"w": st.full((4,), 2.0)}})
    assert st.nn.load(manifest)["w"].tolist() == [2.0] * 4
    left = sorted(n for n in os.listdir(d) if ".tmp-" in n)
    assert left == [], left
    """)


def test_manifest_pair_is_consistent_under_sigkill(tmp_path):
    """Kills a process that keeps saving, at varied moments; loading through the manifest must
    always give one of the saved versions."""
    import random
    import time

    path = os.path.join(str(tmp_path), "model.bin")
    env = dict(os.environ)
    env["PYTHONPATH"] = _PKG_ROOT + os.pathsep + env.get("PYTHONPATH", "")
    saver = textwrap.dedent(f"""
        import sys, spiraltorch as st
        i = 0
        st.nn.save({path!r}, {{"w": st.zeros(200_000)}})
        print("ready", flush=True)
        while True:
            i += 1
            st.nn.save({path!r}, {{"w": st.full((200_000,), float(i))}})
    """)
    rng = random.Random(19)
    for trial in range(8):
        p = subprocess.Popen([sys.executable, "-c", saver], stdout=subprocess.PIPE, env=env)
        assert p.stdout.readline().strip() == b"ready"
        time.sleep(rng.uniform(0.01, 0.4))
        p.kill()
        p.wait()
        out = run(f"""
        state = st.nn.load({path + '.manifest.json'!r})
        w = state["w"]
        assert w.numel() == 200_000 and (w == w[0]).all().item()
        print(len([n for n in os.listdir({str(tmp_path)!r}) if ".tmp-" in n]))
        """)
        assert out.strip().isdigit()
    # A later save removes what the killed ones left.
    run(f"""
    st.nn.save({path!r}, {{"w": st.zeros(3)}})
    assert [n for n in os.listdir({str(tmp_path)!r}) if ".tmp-" in n] == []
    """)


def test_lone_surrogates_raise_typed_errors(tmp_path):
    run(f"""
    path = os.path.join({str(tmp_path)!r}, "s.safetensors")
    e = expect(ValueError, lambda: st.nn.save(path, {{"a\\udc80": st.zeros(1)}}), "surrogate")
    assert isinstance(e, st.SpiralError)
    expect(ValueError, lambda: st.nn.save(path, {{"a": st.zeros(1)}}, metadata={{"k": "\\ud800"}}), "surrogate")
    expect(ValueError, lambda: st.nn.save(path, {{"a": st.zeros(1)}}, metadata={{"\\ud800": "v"}}), "surrogate")
    expect(ValueError, lambda: st.io.save_json(path + ".json", {{"\\udfff": st.zeros(1)}}), "surrogate")
    assert not os.path.exists(path)
    # A file name that is not UTF-8 (bytes surrogate-escaped by os.fsdecode) is a valid path.
    odd = os.path.join({str(tmp_path)!r}, os.fsdecode(b"w\\xff.safetensors"))
    st.io.save_safetensors(odd, {{"a": st.ones(2)}}, manifest=False)
    assert st.io.load_safetensors(odd)[0]["a"].tolist() == [1.0, 1.0]
    """)


# ---------------------------------------------------------------- wrong error types


def test_conversion_failures_are_typed():
    run("""
    for bad in ([1.0], object(), np.zeros(2, dtype=object), np.zeros(2, dtype=">f4"),
                np.zeros(2, dtype=np.longdouble), np.zeros(2, dtype="datetime64[s]"),
                np.zeros(2, dtype=[("a", "f4"), ("b", "i4")])):
        for fn in (st.from_numpy, st.from_dlpack):
            e = expect(st.DtypeError, lambda: fn(bad))
            assert isinstance(e, TypeError) and "std::bad_cast" not in str(e)
    x = st.zeros(3)
    expect(st.SpiralError, lambda: x[2**70])
    expect(st.SpiralError, lambda: x.reshape(2**70))
    """)


def test_bitwise_operators_refuse_floats():
    run("""
    f = st.tensor([1.0, 0.0])
    expect(st.DtypeError, lambda: ~f)
    expect(st.DtypeError, lambda: f & f)
    expect(st.DtypeError, lambda: f | f)
    expect(st.DtypeError, lambda: f ^ f)
    b = st.tensor([True, False])
    expect(st.DtypeError, lambda: b & 1.5)
    assert (~b).tolist() == [False, True] and (b & b).tolist() == [True, False]
    """)


def test_integer_to_negative_integer_power_raises():
    run("""
    expect(ValueError, lambda: st.tensor([2, 3]) ** -1, "negative integer powers")
    expect(ValueError, lambda: st.tensor([2]) ** st.tensor([-2]))
    assert (st.tensor([2, 3]) ** 2).tolist() == [4, 9]
    assert (st.tensor([2.0]) ** -1).tolist() == [0.5]
    """)


def test_arange_with_wrong_sign_step_raises():
    run("""
    expect(ValueError, lambda: st.arange(0, 10, -1), "step sign")
    expect(ValueError, lambda: st.arange(10, 0, 1), "step sign")
    expect(ValueError, lambda: st.arange(0, 10, float("nan")))
    assert st.arange(10, 0, -3).tolist() == [10, 7, 4, 1]
    assert st.arange(3, 3).numel() == 0
    """)


def test_random_fill_of_a_leaf_requiring_grad_raises():
    run("""
    w = st.zeros(3, requires_grad=True)
    expect(st.SpiralError, lambda: w.uniform_(0, 1), "leaf")
    expect(st.SpiralError, lambda: w.normal_(0, 1), "leaf")
    assert w.tolist() == [0.0, 0.0, 0.0]
    with st.no_grad():
        w.uniform_(0, 1)
    """)


def test_bool_mask_of_the_wrong_length_raises():
    run("""
    x = st.arange(5)
    expect(IndexError, lambda: x[st.tensor([True, False])], "does not match")
    def assign():
        x[st.tensor([True, True])] = 0
    expect(IndexError, assign)
    assert x.tolist() == [0, 1, 2, 3, 4]
    assert x[st.tensor([True, False, True, False, False])].tolist() == [0, 2]
    """)


def test_integer_grad_raises():
    run("""
    x = st.zeros(2, requires_grad=True)
    def assign():
        x.grad = st.tensor([1, 2])
    expect(TypeError, assign)
    """)


def test_non_finite_learning_rates_are_refused():
    run("""
    w = st.zeros(2, requires_grad=True)
    for bad in (float("inf"), float("nan"), -1.0):
        expect(ValueError, lambda: st.optim.Adam([w], lr=bad))
        expect(ValueError, lambda: st.optim.SGD([w], lr=bad))
    opt = st.optim.Adam([w], lr=0.1)
    def set_nan():
        opt.param_groups[0]["lr"] = float("nan")
    expect(ValueError, set_nan)
    assert opt.param_groups[0]["lr"] == 0.1
    """)


def test_plugin_registration_is_check_and_insert_under_one_lock():
    run("""
    import threading, time
    from spiraltorch import plugin
    results = []
    class P:
        def __init__(self):
            self.id, self.version = "dup", "1"
        def on_load(self):
            time.sleep(0.2)
    def reg():
        try:
            plugin.register_python_plugin(P())
            results.append("ok")
        except RuntimeError as e:
            results.append("refused")
    ts = [threading.Thread(target=reg) for _ in range(4)]
    for t in ts: t.start()
    for t in ts: t.join()
    assert sorted(results) == ["ok", "refused", "refused", "refused"], results
    assert plugin.list_plugins().count("dup") == 1
    """)


def test_plugin_listen_queues_are_released():
    run("""
    import weakref
    from spiraltorch import plugin
    q = plugin.listen("HostileEvent")
    plugin.publish("HostileEvent", {"x": 1})
    ref = weakref.ref(q)
    del q
    gc.collect()
    assert ref() is None, "the bus kept the queue alive"
    assert not plugin.has_listeners("HostileEvent")
    with plugin.listen("HostileEvent") as q2:
        assert plugin.has_listeners("HostileEvent")
    assert not plugin.has_listeners("HostileEvent")
    """)


def test_mutated_manifests_raise_checkpoint_error_only(tmp_path):
    """A small deterministic mutation run over a manifest (no fuzzer is available here):
    every variant either loads or raises CheckpointError."""
    run(f"""
    import random
    d = {str(tmp_path)!r}
    path = os.path.join(d, "m.bin")
    st.nn.save(path, {{"w": st.ones(2, 3), "b": st.zeros(3, dtype=st.int64)}}, metadata={{"k": "v"}})
    good = open(path + ".manifest.json", "rb").read()
    rng = random.Random(19)
    tokens = [b"{{", b"}}", b"[", b"]", b'"', b",", b":", b"-1", b"1e999", b"null", b"\\xff", b"\\\\u0000",
              b"..", b"/etc/passwd", b"18446744073709551616", b"[[[[[[[[", b'"format_version": 2']
    target = os.path.join(d, "t.manifest.json")
    outcomes = {{"ok": 0, "CheckpointError": 0}}
    for i in range(3000):
        b = bytearray(good)
        for _ in range(rng.randint(1, 4)):
            pos = rng.randrange(len(b) + 1)
            op = rng.random()
            if op < 0.4:
                b[pos:pos + rng.randint(1, 8)] = b""
            elif op < 0.8:
                b[pos:pos] = rng.choice(tokens)
            else:
                b[pos:pos + 1] = bytes([rng.randrange(256)])
        with open(target, "wb") as f:
            f.write(bytes(b))
        try:
            st.io.read_manifest(target, verify=rng.random() < 0.5)
            outcomes["ok"] += 1
        except st.CheckpointError:
            outcomes["CheckpointError"] += 1
    assert outcomes["CheckpointError"] > 1000, outcomes
    """, timeout=300)
