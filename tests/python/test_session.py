"""SpiralSession: backend resolution, fallback policy, seeding and the objects it hands out."""

from __future__ import annotations

import numpy as np
import pytest

import spiraltorch as st
from conftest import to_np


def test_auto_takes_the_best_backend_here():
    s = st.SpiralSession()
    want = "cuda" if st.cuda.is_available() else "cpu"
    assert (s.backend, s.requested_backend, s.effective_backend) == ("auto", want, want)
    assert s.device == ("cuda:0" if want == "cuda" else "cpu") and s.fallback_reason is None
    assert s.device_preflight["backend"] == want and s.device_preflight["available"]
    assert st.SpiralSession("faer").effective_backend == "cpu"


@pytest.mark.parametrize("label", ["mps", "hip"] + ([] if st.wgpu.is_available() else ["wgpu"])
                         + ([] if st.cuda.is_available() else ["cuda"]))
def test_unavailable_backend_falls_back_or_raises(label, monkeypatch):
    s = st.SpiralSession(label)
    assert (s.requested_backend, s.effective_backend, s.device) == (label, "cpu", "cpu")
    assert s.fallback_reason and "fallback_reason" in repr(s)
    with pytest.raises(st.DeviceUnavailableError, match=f"backend '{label}' cannot run here"):
        st.SpiralSession(label, accelerator_fallback="forbid")
    monkeypatch.setenv("SPIRALTORCH_STRICT_GPU", "1")
    with pytest.raises(st.DeviceUnavailableError, match="accelerator_fallback='forbid'"):
        st.SpiralSession(label)
    assert st.SpiralSession("cpu").accelerator_fallback == "forbid"  # the CPU always runs


def test_bad_labels_and_policies():
    with pytest.raises(ValueError, match="unknown SpiralSession backend label 'tpu'"):
        st.SpiralSession("tpu")
    with pytest.raises(ValueError, match="invalid accelerator fallback override 'sometimes'"):
        st.SpiralSession(accelerator_fallback="sometimes")


def test_seed_makes_runs_reproducible():
    st.SpiralSession(seed=123)
    a = to_np(st.randn(4))
    st.SpiralSession(seed=123)
    b = to_np(st.randn(4))
    np.testing.assert_array_equal(a, b)


def _session_for(device):
    if str(device).startswith("cuda"):
        return st.SpiralSession("cuda", accelerator_fallback="forbid")
    return st.SpiralSession("cpu")


def test_tensors_data_and_plans_are_bound_to_the_device(device):
    if str(device).startswith("cpu:"):
        pytest.skip("sessions choose real backends, not the host stand-in device")
    s = _session_for(device)
    t = s.tensor([[1.0, 2.0]], dtype=st.float64, requires_grad=True)
    assert t.device == s.device and t.requires_grad and t.dtype == st.float64
    samples = [([0.0, 1.0], [1.0]), (st.tensor([1.0, 0.0]), [0.0]), ([1.0, 1.0], [1.0])]
    batches = list(s.dataloader(samples, batch_size=2))
    assert [tuple(x.shape) for x, _ in batches] == [(2, 2), (1, 2)]
    assert all(x.device == s.device and y.device == s.device for x, y in batches)
    np.testing.assert_array_equal(to_np(batches[0][0]), [[0.0, 1.0], [1.0, 0.0]])
    assert s.plan_topk(2, 4, 2).effective_backend == s.effective_backend
    assert s.plan("bottomk", 3, 9, 2).kind == "bottomk"
    with pytest.raises(TypeError, match=r"sample 0 has 3 values, expected \(input, target\)"):
        s.dataset([([1.0], [2.0], [3.0])])
    with pytest.raises(ValueError, match="no samples"):
        s.dataset([])


def test_trainer_and_close():
    with st.SpiralSession("cpu") as s:
        trainer = s.trainer(hyper_learning_rate=0.05)
        assert isinstance(trainer, st.nn.ModuleTrainer)
    with pytest.raises(RuntimeError, match="SpiralSession.plan: the session is closed"):
        s.plan_topk(1, 2, 1)


def test_seed_session_snippet_reports_the_runtime():
    code = (
        "from spiraltorch import SpiralSession\n"
        "session = SpiralSession(backend='wgpu')\n"
        "print(session.requested_backend, '->', session.effective_backend)\n"
        "print('runtime:', session.device_preflight['runtime_status'])\n"
        "plan = session.plan_topk(rows=8, cols=64, k=4)\n"
        "print(plan.kind, plan.effective_backend, plan.tile)\n"
        "print(session.device_preflight['requested_runtime_status'])\n"
    )
    from conftest import run_python

    r = run_python(code)
    assert r.returncode == 0, r.stderr
    if st.wgpu.is_available():  # the session runs on the adapter and plans for wgpu
        tile = st.plan_topk(8, 64, 4, backend="wgpu").tile
        assert r.stdout.splitlines() == ["wgpu -> wgpu", "runtime: ready", f"topk wgpu {tile}", "ready"]
    else:
        tile = st.plan_topk(8, 64, 4, backend="cpu").tile
        want = "initialization_failed" if st.wgpu.is_built() else "feature_disabled"
        assert r.stdout.splitlines() == ["wgpu -> cpu", "runtime: cpu", f"topk cpu {tile}", want]
    s = st.SpiralSession("cuda")
    want = "ready" if st.cuda.is_available() else ("initialization_failed" if st.cuda.is_built()
                                                   else "feature_disabled")
    assert s.device_preflight["requested_runtime_status"] == want


def test_session_dataset_samples_from_a_generator():
    s = st.SpiralSession("cpu")
    gen = ((([float(i), 1.0], [float(i % 2)]) for i in range(3)))
    ds = s.dataset(gen)
    pairs = ds.samples()
    assert len(pairs) == 3 and all(isinstance(x, st.Tensor) and isinstance(y, st.Tensor) for x, y in pairs)
    assert [(x.tolist(), y.tolist()) for x, y in pairs] == [([0.0, 1.0], [0.0]), ([1.0, 1.0], [1.0]),
                                                          ([2.0, 1.0], [0.0])]
    with pytest.raises(TypeError, match=r"sample 0 has 1 values"):
        s.dataset([([1.0],)])


def test_session_dataloader_prefetch_runs_ahead_on_another_thread():
    import threading
    import time

    s = st.SpiralSession("cpu")
    samples = [([float(i)], [float(i)]) for i in range(6)]
    plain = [[t.tolist() for t in b] for b in s.dataloader(samples, batch_size=2)]
    loader = s.dataloader(samples, batch_size=2, prefetch=2)
    assert loader.prefetch == 2

    python_threads = threading.active_count()
    it = iter(loader)
    first = next(it)
    deadline = time.time() + 5
    while it.produced < 3 and time.time() < deadline:  # the producer fills the queue on its own
        time.sleep(0.01)
    assert it.produced == 3  # batch 1 was taken, batches 2 and 3 wait in the depth-2 queue
    assert threading.active_count() == python_threads  # the producer is a C++ thread, not a Python one
    rest = list(it)
    assert [[t.tolist() for t in b] for b in [first] + rest] == plain
    with pytest.raises(st.SpiralValueError, match="prefetch must be a non-negative int, got -1"):
        s.dataloader(samples, prefetch=-1)


def test_prefetch_reraises_producer_errors_in_the_consumer():
    from spiraltorch.dataset import prefetch_iter

    def broken():
        yield 1
        raise KeyError("bad sample")

    it = prefetch_iter(broken, 1)
    assert next(it) == 1
    with pytest.raises(KeyError, match="bad sample"):
        next(it)
    assert list(prefetch_iter(lambda: iter(range(4)), 0)) == [0, 1, 2, 3]
    with pytest.raises(ValueError, match="depth must be a non-negative int"):
        list(prefetch_iter(lambda: iter(()), -2))
