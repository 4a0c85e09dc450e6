"""spiraltorch.ecosystem: the PyTorch, JAX, TensorFlow and CuPy bridges, run against the real
frameworks (each group skips when its framework is not installed)."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np
import pytest

import spiraltorch as st
from conftest import run_python, to_np
from spiraltorch import ecosystem as eco

SEED_SNIPPET = textwrap.dedent("""
    import spiraltorch as st
    from spiraltorch.ecosystem import (
        tensor_to_cupy,
        tensor_to_jax,
        tensor_to_tensorflow,
        tensor_to_torch,
        cupy_to_tensor,
        jax_to_tensor,
        tensorflow_to_tensor,
        torch_to_tensor,
    )

    spiral = st.Tensor(2, 2, [1.0, 2.0, 3.0, 4.0])

    try:
        import torch

        torch_tensor = tensor_to_torch(spiral, dtype=torch.float32)
        roundtrip = torch_to_tensor(torch_tensor)
        print("torch:", roundtrip.shape())
    except Exception as exc:
        print("torch bridge skipped:", type(exc).__name__)

    try:
        jax_array = tensor_to_jax(spiral)
        spiral_again = jax_to_tensor(jax_array)
        print("jax:", spiral_again.shape())
    except Exception as exc:
        print("jax bridge skipped:", type(exc).__name__)

    try:
        cupy_array = tensor_to_cupy(spiral, stream="current")
        spiral_from_cupy = cupy_to_tensor(cupy_array, stream="current")
        print("cupy:", spiral_from_cupy.shape())
    except Exception as exc:
        print("cupy bridge skipped:", type(exc).__name__)

    try:
        tf_tensor = tensor_to_tensorflow(spiral)
        spiral_from_tf = tensorflow_to_tensor(tf_tensor)
        print("tensorflow:", spiral_from_tf.shape())
    except Exception as exc:
        print("tensorflow bridge skipped:", type(exc).__name__)
""")


def _installed(name):
    return subprocess.run([sys.executable, "-c", f"import {name}"], capture_output=True).returncode == 0


def test_seed_snippet_runs_and_reports_each_bridge():
    r = run_python(SEED_SNIPPET)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert len(lines) == 4, r.stdout
    for line, name in zip(lines, ["torch", "jax", "cupy", "tensorflow"]):
        if line.startswith(f"{name}:"):
            assert line == f"{name}: spiraltorch.Size([2, 2])"
        else:
            # Only a missing framework (or, for CuPy, a machine without a GPU) may skip.
            assert line.startswith(f"{name} bridge skipped: "), line
            assert not _installed(name) or name == "cupy", line


def test_missing_framework_names_the_package(monkeypatch):
    monkeypatch.setitem(sys.modules, "tensorflow", None)  # import fails as if not installed
    with pytest.raises(ImportError, match=r"'tensorflow' is not installed \(pip install tensorflow\)"):
        eco.tensor_to_tensorflow(st.zeros(2))


def test_tensor_that_requires_grad_is_refused():
    pytest.importorskip("torch")
    w = st.ones(3, requires_grad=True)
    with pytest.raises(ValueError, match="tensor_to_torch: the tensor requires grad"):
        eco.tensor_to_torch(w)
    assert eco.tensor_to_torch(w.detach()).tolist() == [1.0, 1.0, 1.0]


def test_wrong_argument_types():
    with pytest.raises(TypeError, match="tensor_to_torch: expected a spiraltorch.Tensor, got ndarray"):
        eco.tensor_to_torch(np.zeros(2))


# ---------------------------------------------------------------- PyTorch

@pytest.mark.parametrize("dt", [st.float32, st.float64, st.int64, st.bfloat16, st.bool])
def test_torch_bridge_shares_memory_both_ways(dt):
    pytest.importorskip("torch")
    s = st.arange(12).reshape(3, 4).to(dt)
    t = eco.tensor_to_torch(s)
    assert t.data_ptr() == s.data_ptr() and tuple(t.shape) == (3, 4)
    assert str(t.dtype) == "torch." + str(dt).split(".")[-1]
    back = eco.torch_to_tensor(t)
    assert back.data_ptr() == s.data_ptr() and back.dtype == dt
    if dt == st.float32:
        t[1, 2] = 42.0  # a write on one side is seen on the other
        assert s[1, 2].item() == 42.0


def test_torch_bridge_views_conversions_and_grad():
    torch = pytest.importorskip("torch")
    s = st.arange(12.0).reshape(3, 4).t()  # non-contiguous view
    t = eco.tensor_to_torch(s)
    assert t.stride() == (1, 4) and t.data_ptr() == s.data_ptr()
    np.testing.assert_array_equal(t.numpy(), to_np(s))
    d = eco.tensor_to_torch(s, dtype=torch.float64, requires_grad=True)
    assert d.dtype == torch.float64 and d.requires_grad and d.is_leaf
    c = eco.tensor_to_torch(s, copy=True)
    assert c.data_ptr() != s.data_ptr()
    np.testing.assert_array_equal(c.numpy(), to_np(s))
    # torch side: autograd history is dropped, conversions and copies on request.
    x = torch.linspace(-1, 1, 6, requires_grad=True) * 2
    y = eco.torch_to_tensor(x)
    assert not y.requires_grad and y.data_ptr() == x.data_ptr()
    y64 = eco.torch_to_tensor(x, dtype=torch.float64)
    assert y64.dtype == st.float64
    np.testing.assert_allclose(to_np(y64), x.detach().double().numpy())
    tt = torch.arange(6.0).reshape(2, 3).t()
    cont = eco.torch_to_tensor(tt, require_contiguous=True)
    assert cont.is_contiguous() and cont.data_ptr() != tt.data_ptr()
    assert eco.torch_to_tensor(tt, copy=True).data_ptr() != tt.data_ptr()
    with pytest.raises(TypeError, match="torch_to_tensor: expected a torch.Tensor"):
        eco.torch_to_tensor([1.0, 2.0])


# ---------------------------------------------------------------- JAX

@pytest.mark.parametrize("dt", [st.float32, st.int32, st.float16])
def test_jax_bridge_round_trip_and_sharing(dt):
    jax = pytest.importorskip("jax")
    s = (st.arange(8).reshape(2, 4) - 3).to(dt)
    j = eco.tensor_to_jax(s)
    assert isinstance(j, jax.Array) and j.shape == (2, 4)
    np.testing.assert_array_equal(np.asarray(j), to_np(s))
    assert j.unsafe_buffer_pointer() == s.data_ptr()  # zero-copy on the host
    back = eco.jax_to_tensor(j)
    assert back.dtype == dt and back.data_ptr() == s.data_ptr()
    np.testing.assert_array_equal(to_np(back), to_np(s))


def test_jax_bridge_from_computed_array_and_views():
    pytest.importorskip("jax")
    jnp = pytest.importorskip("jax.numpy")
    j = jnp.arange(12, dtype=jnp.float32).reshape(3, 4) * 2
    s = eco.jax_to_tensor(j)
    np.testing.assert_array_equal(to_np(s), np.arange(12, dtype=np.float32).reshape(3, 4) * 2)
    v = st.arange(12.0).reshape(3, 4).t()  # strided: JAX may copy, values must hold
    np.testing.assert_array_equal(np.asarray(eco.tensor_to_jax(v)), to_np(v))
    with pytest.raises(TypeError, match="jax_to_tensor: expected a jax.Array"):
        eco.jax_to_tensor(np.zeros(2))


# ---------------------------------------------------------------- TensorFlow

def test_tensorflow_bridge_round_trip():
    tf = pytest.importorskip("tensorflow")
    s = st.arange(6.0).reshape(2, 3)
    t = eco.tensor_to_tensorflow(s)
    assert isinstance(t, tf.Tensor) and tuple(t.shape) == (2, 3)
    np.testing.assert_array_equal(t.numpy(), to_np(s))
    v = st.arange(6.0).reshape(2, 3).t()
    np.testing.assert_array_equal(eco.tensor_to_tensorflow(v).numpy(), to_np(v))
    back = eco.tensorflow_to_tensor(tf.constant([[1.5, 2.5]], dtype=tf.float64))
    assert back.dtype == st.float64 and to_np(back).tolist() == [[1.5, 2.5]]


# ---------------------------------------------------------------- CuPy (needs a GPU)

@pytest.fixture
def cupy():
    cp = pytest.importorskip("cupy")
    if not st.cuda.is_available():
        pytest.skip("CuPy bridges need a CUDA device")
    return cp


def test_cupy_bridge_shares_cuda_memory_with_stream_aliases(cupy):
    s = st.arange(12.0, device="cuda").reshape(3, 4)  # created on the GPU
    for stream in (None, "current", "auto", "null", "default", cupy.cuda.Stream(non_blocking=True)):
        c = eco.tensor_to_cupy(s, stream=stream)
        assert c.data.ptr == s.data_ptr()
        np.testing.assert_array_equal(cupy.asnumpy(c), to_np(s))
        back = eco.cupy_to_tensor(c, stream=stream)
        assert back.data_ptr() == s.data_ptr() and back.device == s.device
    raw = cupy.cuda.Stream(non_blocking=True)
    assert eco.tensor_to_cupy(s, stream=raw.ptr).data.ptr == s.data_ptr()


def test_cupy_bridge_copies_host_tensors_and_checks_arguments(cupy):
    h = st.arange(5.0)
    c = eco.tensor_to_cupy(h)
    assert isinstance(c, cupy.ndarray)
    np.testing.assert_array_equal(cupy.asnumpy(c), to_np(h))
    with pytest.raises(ValueError, match="stream must be 'current'"):
        eco.tensor_to_cupy(h, stream="fastest")
    with pytest.raises(TypeError, match="stream must be a string alias"):
        eco.tensor_to_cupy(h, stream=True)
    with pytest.raises(TypeError, match="cupy_to_tensor: expected a cupy.ndarray"):
        eco.cupy_to_tensor(np.zeros(2))
