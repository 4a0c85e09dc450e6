"""NumPy and DLPack interop: zero-copy in both directions, dtypes, strides, lifetimes."""

import gc
import os
import subprocess
import sys

import numpy as np
import pytest

import spiraltorch as st
from conftest import PY_DIR, needs_torch, rand_array, st_tensor, to_np

INTEROP_DTYPES = [np.float32, np.float64, np.int32, np.int64, np.uint8, np.bool_, np.float16]


# ---------------------------------------------------------------------------
# NumPy
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("npdt", INTEROP_DTYPES, ids=lambda d: np.dtype(d).name)
def test_numpy_export_shares_memory(npdt):
    t = st.tensor(rand_array((3, 4), npdt, seed=1))
    a = t.numpy()
    assert a.dtype == np.dtype(npdt)
    assert a.shape == (3, 4)
    # write through NumPy, read on the SpiralTorch side
    a[1, 2] = 1
    a[0, 0] = 0
    assert t[1, 2].item() == 1
    assert t[0, 0].item() == 0
    # write through SpiralTorch, read on the NumPy side
    t[2, 3] = 1
    assert a[2, 3] == 1
    assert t.data_ptr() == a.__array_interface__["data"][0]


@pytest.mark.parametrize("npdt", INTEROP_DTYPES, ids=lambda d: np.dtype(d).name)
def test_from_numpy_shares_memory(npdt):
    a = rand_array((4, 3), npdt, seed=2)
    t = st.from_numpy(a)
    assert t.dtype.name == np.dtype(npdt).name
    assert t.shape == (4, 3)
    np.testing.assert_array_equal(to_np(t), a)
    a[2, 1] = 1
    assert t[2, 1].item() == 1
    t[3, 0] = 0
    assert a[3, 0] == 0
    t.fill_(1)
    assert np.all(a == 1)


def test_from_numpy_noncontiguous_and_views():
    a = np.arange(24, dtype=np.float64).reshape(4, 6)
    v = a.T[1:, ::2]
    t = st.from_numpy(v)
    assert t.shape == v.shape
    assert tuple(t.stride()) == tuple(s // 8 for s in v.strides)
    np.testing.assert_array_equal(to_np(t), v)
    expected = a.copy()
    expected.T[1:, ::2] = 0
    t.mul_(0)
    assert np.all(v == 0)
    np.testing.assert_array_equal(a, expected)  # only the viewed elements changed


def test_numpy_export_of_views_keeps_strides():
    t = st.tensor(np.arange(12.0).reshape(3, 4))
    v = t.T[::2]
    a = v.numpy()
    np.testing.assert_array_equal(a, np.arange(12.0).reshape(3, 4).T[::2])
    assert a.strides == tuple(s * a.itemsize for s in v.stride())
    a[0, 1] = -1.0
    assert t[1, 0].item() == -1.0


def test_exported_array_keeps_storage_alive():
    t = st.tensor([1.0, 2.0, 3.0])
    a = t.numpy()
    del t
    gc.collect()
    _ = [st.zeros(1000) for _ in range(10)]
    assert a.tolist() == [1.0, 2.0, 3.0]


def test_imported_tensor_keeps_array_alive():
    a = np.arange(5, dtype=np.float64)
    t = st.from_numpy(a)
    del a
    gc.collect()
    _ = [np.zeros(1000) for _ in range(10)]
    assert t.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0]
    v = t[1:]
    del t
    gc.collect()
    assert v.tolist() == [1.0, 2.0, 3.0, 4.0]


def test_zero_dim_and_empty():
    a = np.array(3.5)
    t = st.from_numpy(a)
    assert t.shape == () and t.item() == 3.5
    e = st.from_numpy(np.zeros((0, 3), np.float32))
    assert e.shape == (0, 3)
    assert st.zeros(0, 2).numpy().shape == (0, 2)
    assert st.tensor(2.0).numpy().shape == ()


def test_st_tensor_copies_and_np_asarray():
    a = np.arange(4.0)
    t = st.tensor(a)
    a[0] = 100
    assert t.tolist()[0] == 0.0  # st.tensor copies
    assert t.dtype == st.float64
    arr = np.asarray(st.tensor([[1, 2], [3, 4]], dtype=st.int32))
    assert arr.dtype == np.int32 and arr.tolist() == [[1, 2], [3, 4]]
    assert np.asarray(st.tensor([1.0]), dtype=np.float64).dtype == np.float64
    # arrays of a tensor that requires grad via __array__ (detached)
    g = st.tensor([1.0, 2.0], requires_grad=True)
    assert np.asarray(g).tolist() == [1.0, 2.0]


def test_numpy_scalars_as_operands():
    t = st.tensor([1.0, 2.0])
    assert (t * np.float64(2.0)).tolist() == [2.0, 4.0]
    assert (t + np.int64(1)).tolist() == [2.0, 3.0]
    assert (t * np.array(3.0)).tolist() == [3.0, 6.0]


def test_dlpack_with_numpy_both_directions():
    t = st.tensor(np.arange(6, dtype=np.float32).reshape(2, 3))
    a = np.from_dlpack(t)
    assert a.shape == (2, 3) and a.dtype == np.float32
    a[0, 1] = 42
    assert t[0, 1].item() == 42
    t[1, 2] = -5
    assert a[1, 2] == -5
    assert t.__dlpack_device__() == (1, 0)

    b = np.arange(6, dtype=np.int64)
    s = st.from_dlpack(b)
    assert s.dtype == st.int64
    b[3] = 99
    assert s[3].item() == 99
    s[0] = 7
    assert b[0] == 7
    # from_dlpack of a spiraltorch tensor is the same tensor
    assert st.from_dlpack(t).data_ptr() == t.data_ptr()


def test_numpy_requires_grad_refused():
    with pytest.raises(st.SpiralError):
        st.tensor([1.0], requires_grad=True).numpy()
    assert st.tensor([1.0], requires_grad=True).detach().numpy().tolist() == [1.0]


def test_bfloat16_numpy_refused():
    with pytest.raises(st.DtypeError):
        st.tensor([1.0]).bfloat16().numpy()


def test_negative_strides_refused():
    a = np.arange(5.0)[::-1]
    with pytest.raises((st.SpiralValueError, ValueError, BufferError, TypeError)):
        st.from_numpy(a)


# ---------------------------------------------------------------------------
# PyTorch via DLPack
# ---------------------------------------------------------------------------


@needs_torch
@pytest.mark.parametrize("dt", ["float32", "float64", "int32", "int64", "uint8", "bool", "float16"])
def test_torch_from_dlpack_shares_memory(dt):
    import torch

    s = st.tensor(rand_array((3, 4), np.dtype(dt if dt != "bool" else np.bool_), seed=3))
    t = torch.from_dlpack(s)
    assert str(t.dtype) == "torch." + dt
    assert tuple(t.shape) == (3, 4)
    np.testing.assert_array_equal(t.numpy(), to_np(s))
    t[1, 1] = 1
    assert s[1, 1].item() == 1
    s[2, 3] = 0
    assert t[2, 3].item() == 0
    assert t.data_ptr() == s.data_ptr()


@needs_torch
@pytest.mark.parametrize("dt", ["float32", "float64", "int32", "int64", "uint8", "bool", "float16", "bfloat16"])
def test_st_from_dlpack_torch_shares_memory(dt):
    import torch

    t = torch.ones(4, 5, dtype=getattr(torch, dt))
    s = st.from_dlpack(t)
    assert s.dtype.name == dt
    assert s.shape == (4, 5)
    t[0, 0] = 0
    assert s[0, 0].item() == 0
    s[3, 4] = 0
    assert t[3, 4].item() == 0
    assert s.data_ptr() == t.data_ptr()


@needs_torch
def test_torch_dlpack_views_and_lifetime():
    import torch

    base = torch.arange(24, dtype=torch.float64).reshape(4, 6)
    view = base.t()[1:, ::2]
    s = st.from_dlpack(view)
    assert tuple(s.stride()) == tuple(view.stride())
    np.testing.assert_array_equal(to_np(s), view.numpy())
    del base, view
    gc.collect()
    assert s.sum().item() == float(np.arange(24.0).reshape(4, 6).T[1:, ::2].sum())
    # a spiraltorch view exported to torch keeps strides and offset
    x = st.tensor(np.arange(12.0).reshape(3, 4))
    tv = torch.from_dlpack(x.T[1:])
    np.testing.assert_array_equal(tv.numpy(), np.arange(12.0).reshape(3, 4).T[1:])
    tv.mul_(2)
    assert x[0, 1].item() == 2.0
    del x
    gc.collect()
    assert tv[0, 0].item() == 2.0


@needs_torch
def test_torch_roundtrip_through_both():
    import torch

    s = st.rand(5, 5)
    t = torch.from_dlpack(s)
    s2 = st.from_dlpack(t)
    assert s2.data_ptr() == s.data_ptr()
    s2.zero_()
    assert float(t.sum()) == 0.0 and float(s.sum()) == 0.0


@needs_torch
def test_torch_detached_tensor_imports():
    import torch

    t = torch.ones(3, requires_grad=True)
    s = st.from_dlpack(t.detach())
    assert s.tolist() == [1.0, 1.0, 1.0]
    assert s.data_ptr() == t.data_ptr()
    assert not s.requires_grad


# ---------------------------------------------------------------------------
# import hygiene
# ---------------------------------------------------------------------------


def test_import_does_not_pull_numpy_or_torch():
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (PY_DIR, env.get("PYTHONPATH", "")) if p)
    code = ("import sys, spiraltorch; "
            "assert 'numpy' not in sys.modules and 'torch' not in sys.modules, "
            "[m for m in sys.modules if m.split('.')[0] in ('numpy', 'torch')]")
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr


def test_basic_use_without_numpy_in_subprocess():
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (PY_DIR, env.get("PYTHONPATH", "")) if p)
    code = ("import sys; sys.modules['numpy'] = None; sys.modules['torch'] = None\n"
            "import spiraltorch as st\n"
            "x = st.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)\n"
            "y = (x @ x).sum(); y.backward()\n"
            "assert x.grad.tolist() == [[7.0, 11.0], [9.0, 13.0]], x.grad.tolist()\n"
            "assert st.Tensor(2, 2, [1.0, 2.0, 3.0, 4.0]).row_softmax().shape == (2, 2)\n"
            "print(repr(x))\n")
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
