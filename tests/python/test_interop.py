"""NumPy and DLPack interop: zero-copy in both directions, dtypes, strides, lifetimes."""

import gc
import os
import subprocess
import sys

import numpy as np
import pytest

import spiraltorch as st
from conftest import CUDA_SKIP_REASON, HAVE_CUDA, PY_DIR, needs_torch, rand_array, to_np

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


class _Producer:
    """A DLPack producer wrapping an array that records how __dlpack__ was called."""

    def __init__(self, arr, device=(1, 0)):
        self.arr, self.device, self.calls = arr, device, []

    def __dlpack_device__(self):
        return self.device

    def __dlpack__(self, **kwargs):
        self.calls.append(kwargs)
        kwargs.pop("stream", None)
        return self.arr.__dlpack__(**kwargs)


def test_from_dlpack_stream_protocol_on_host():
    # A host producer is imported as before: no consumer stream is passed to it.
    p = _Producer(np.arange(4.0))
    s = st.from_dlpack(p)
    assert s.tolist() == [0.0, 1.0, 2.0, 3.0] and p.calls
    assert all(c.get("stream") is None for c in p.calls)
    # Our own __dlpack__ takes the consumer keywords on the host too.
    t = st.tensor([1.0, 2.0])
    assert np.from_dlpack(t).tolist() == [1.0, 2.0]
    assert t.__dlpack__(stream=None) is not None


@pytest.mark.skipif(st.cuda.is_available(), reason="checks the error without CUDA")
def test_from_dlpack_cuda_producer_without_cuda():
    p = _Producer(np.arange(4.0), device=(2, 0))
    with pytest.raises(st.DeviceUnavailableError):
        st.from_dlpack(p)
    assert not p.calls  # refused before asking the producer for a capsule


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
# CUDA tensors through DLPack: CuPy and PyTorch (skipped without a GPU)
# ---------------------------------------------------------------------------
#
# Zero-copy both ways (same device pointer, writes visible on the other side), dtypes,
# strided views, lifetimes, and stream order: the DLPack consumer passes the stream it
# will read on and the producer makes that stream wait for its queued work, so values
# are right without any explicit synchronize.

CUDA_DTYPES = ["float32", "float64", "int64", "int32", "uint8", "bool", "float16", "bfloat16"]
# Dtypes a consumer may legitimately lack (CuPy has no bfloat16; older CuPy no DLPack bool).
OPTIONAL_DTYPES = {"bool", "bfloat16"}


@pytest.fixture(scope="module")
def cupy():
    if not HAVE_CUDA:
        pytest.skip(CUDA_SKIP_REASON)
    try:
        import cupy as cp
    except Exception as e:  # ImportError, or a CuPy built for another CUDA
        pytest.skip(f"CuPy is not usable: {e}")
    try:
        if cp.cuda.runtime.getDeviceCount() < 1:
            pytest.skip("CuPy sees no GPU")
    except Exception as e:
        pytest.skip(f"CuPy cannot use the GPU: {e}")
    return cp


@pytest.fixture(scope="module")
def torch_cuda():
    if not HAVE_CUDA:
        pytest.skip(CUDA_SKIP_REASON)
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("this PyTorch build has no CUDA")
    return torch


def _st_cuda(dt, shape=(3, 4), seed=0):
    """A SpiralTorch CUDA tensor of dtype name ``dt`` with reproducible values."""
    if dt == "bfloat16":
        return st.tensor(rand_array(shape, np.float32, seed=seed)).to(st.bfloat16).to("cuda")
    npdt = np.bool_ if dt == "bool" else np.dtype(dt)
    return st.tensor(rand_array(shape, npdt, seed=seed)).to("cuda")


def _host(t):
    """Host NumPy copy of a SpiralTorch tensor (bfloat16 widened to float32)."""
    if t.dtype == st.bfloat16:
        t = t.float()
    return to_np(t)


# Stream-order tests queue ~10+ ms of dependent GPU matmuls (HEAVY_N^3 each) before the
# result is handed over, far longer than launching them takes, so a consumer that is not
# ordered after the producer reads the result buffer before it is written.
HEAVY_N, HEAVY_ITERS, OUT_N = 4096, 6, 256


def _heavy_st(x):
    y = x
    for _ in range(HEAVY_ITERS):
        y = st.tanh((y @ x) * (1.0 / 64))
    return y[:OUT_N, :OUT_N]


def _heavy_cupy(cp, seed):
    a = cp.random.RandomState(seed).standard_normal((HEAVY_N, HEAVY_N), dtype=cp.float32)
    h = a
    for _ in range(HEAVY_ITERS):
        h = cp.tanh((h @ a) * (1.0 / 64))
    return h[:OUT_N, :OUT_N]


def _heavy_torch(torch):
    a = torch.randn(HEAVY_N, HEAVY_N, device="cuda")
    h = a
    for _ in range(HEAVY_ITERS):
        h = torch.tanh((h @ a) * (1.0 / 64))
    return h[:OUT_N, :OUT_N]


@pytest.mark.parametrize("dt", CUDA_DTYPES)
def test_cuda_dlpack_spiraltorch_to_cupy_shares_memory(cupy, dt):
    s = _st_cuda(dt, seed=1)
    try:
        c = cupy.from_dlpack(s)
    except Exception as e:
        if dt in OPTIONAL_DTYPES:
            pytest.skip(f"CuPy cannot import {dt}: {e}")
        raise
    assert c.shape == (3, 4) and c.dtype.name == dt
    assert c.data.ptr == s.data_ptr()
    assert c.device.id == 0
    np.testing.assert_array_equal(cupy.asnumpy(c), _host(s))
    # writes on either side, read on the other without any explicit synchronize
    c[1, 2] = 1
    assert s[1, 2].item() == 1
    s[2, 3] = 0
    assert bool(c[2, 3] == 0)
    s.fill_(1)
    assert bool(cupy.all(c == 1))


@pytest.mark.parametrize("dt", [d for d in CUDA_DTYPES if d != "bfloat16"])
def test_cuda_dlpack_cupy_to_spiraltorch_shares_memory(cupy, dt):
    try:
        c = cupy.asarray(rand_array((4, 5), np.bool_ if dt == "bool" else np.dtype(dt), seed=2))
        s = st.from_dlpack(c)
    except Exception as e:
        if dt in OPTIONAL_DTYPES:
            pytest.skip(f"CuPy cannot export {dt}: {e}")
        raise
    assert s.device == "cuda:0" and s.is_cuda
    assert s.dtype.name == dt and tuple(s.shape) == (4, 5)
    assert s.data_ptr() == c.data.ptr
    np.testing.assert_array_equal(to_np(s), cupy.asnumpy(c))
    c[0, 0] = 1
    assert s[0, 0].item() == 1
    s[3, 4] = 0
    assert bool(c[3, 4] == 0)
    # SpiralTorch ops read the shared memory on the device
    assert (s.to(st.float64) * 2).sum().item() == pytest.approx(float(cupy.asnumpy(c).astype(np.float64).sum() * 2))


def test_cuda_dlpack_cupy_views_strides_and_lifetime(cupy):
    base = st.tensor(np.arange(24.0).reshape(4, 6)).to("cuda")
    v = base.T[1:, ::2]  # non-contiguous, with an offset
    c = cupy.from_dlpack(v)
    assert c.strides == tuple(x * 8 for x in v.stride())
    assert c.data.ptr == v.data_ptr()
    np.testing.assert_array_equal(cupy.asnumpy(c), np.arange(24.0).reshape(4, 6).T[1:, ::2])
    c *= -1
    expected = np.arange(24.0).reshape(4, 6)
    expected.T[1:, ::2] *= -1
    np.testing.assert_array_equal(to_np(base), expected)
    # the exported array keeps the storage alive: freed blocks go back to the caching
    # allocator, so reuse would show up as changed values
    del base, v
    gc.collect()
    junk = [st.full((4, 6), 7.0, dtype=st.float64).to("cuda") for _ in range(8)]
    np.testing.assert_array_equal(cupy.asnumpy(c), -np.arange(24.0).reshape(4, 6).T[1:, ::2])
    # and the other way: a CuPy view imported keeps the CuPy memory alive
    a = cupy.arange(30, dtype=cupy.float32).reshape(5, 6)
    s = st.from_dlpack(a[1:, 2:5])
    assert tuple(s.stride()) == (6, 1)
    del a
    gc.collect()
    junk += [cupy.full((5, 6), 9.0, dtype=cupy.float32) for _ in range(8)]
    np.testing.assert_array_equal(to_np(s), np.arange(30, dtype=np.float32).reshape(5, 6)[1:, 2:5])
    del junk


def test_cuda_dlpack_cupy_consumer_waits_for_spiraltorch_stream(cupy):
    # Work queued on a SpiralTorch side stream, exported inside that stream's context: the
    # consumer (CuPy, which passes its stream) must be made to wait for it by __dlpack__.
    st.manual_seed(0)
    x = st.randn(HEAVY_N, HEAVY_N, device="cuda")
    r = rand_array((OUT_N, OUT_N), np.float32, seed=3)
    rt = st.tensor(r).to("cuda")
    st.cuda.synchronize()
    side = st.cuda.Stream()
    with st.cuda.stream(side):
        out = _heavy_st(x) * 0.0 + rt  # == r once the whole chain has run
        c = cupy.from_dlpack(out)
        got = cupy.asnumpy(c)  # on CuPy's stream, no explicit synchronize
    np.testing.assert_array_equal(got, r)


def test_cuda_dlpack_spiraltorch_waits_for_cupy_stream(cupy):
    # CuPy work queued on a non-blocking CuPy stream, imported inside that stream's context
    # (CuPy orders it before the legacy default stream), then read by SpiralTorch on its
    # default stream.
    r = rand_array((OUT_N, OUT_N), np.float32, seed=4)
    st.cuda.synchronize()
    cupy.cuda.Device(0).synchronize()
    cs = cupy.cuda.Stream(non_blocking=True)
    with cs:
        out = _heavy_cupy(cupy, 5) * 0 + cupy.asarray(r)
        s = st.from_dlpack(out)
        got = to_np(s * 1.0)  # SpiralTorch's default stream, no explicit synchronize
    np.testing.assert_array_equal(got, r)


def test_cuda_dlpack_spiraltorch_side_stream_waits_for_cupy(cupy):
    # The DLPack consumer passes the stream it will read on (here a SpiralTorch side stream,
    # current while st.from_dlpack runs), and the producer orders its work before it.
    r = rand_array((OUT_N, OUT_N), np.float32, seed=6)
    st.cuda.synchronize()
    cupy.cuda.Device(0).synchronize()
    cs = cupy.cuda.Stream(non_blocking=True)
    side = st.cuda.Stream()
    with cs:
        out = _heavy_cupy(cupy, 7) * 0 + cupy.asarray(r)
        with st.cuda.stream(side):
            s = st.from_dlpack(out)
            y = s * 1.0  # queued on the side stream
    side.synchronize()
    np.testing.assert_array_equal(to_np(y), r)


@pytest.mark.parametrize("dt", CUDA_DTYPES)
def test_cuda_dlpack_spiraltorch_to_torch_shares_memory(torch_cuda, dt):
    torch = torch_cuda
    s = _st_cuda(dt, seed=8)
    t = torch.from_dlpack(s)
    assert t.is_cuda and t.device.index == 0
    assert str(t.dtype) == "torch." + dt and tuple(t.shape) == (3, 4)
    assert t.data_ptr() == s.data_ptr()
    expected = t.float().cpu().numpy() if dt == "bfloat16" else t.cpu().numpy()
    np.testing.assert_array_equal(expected, _host(s))
    t[1, 1] = 1
    assert s[1, 1].item() == 1
    s[2, 3] = 0
    assert t[2, 3].item() == 0


@pytest.mark.parametrize("dt", CUDA_DTYPES)
def test_cuda_dlpack_torch_to_spiraltorch_shares_memory(torch_cuda, dt):
    torch = torch_cuda
    t = torch.ones(4, 5, dtype=getattr(torch, dt), device="cuda")
    s = st.from_dlpack(t)
    assert s.device == "cuda:0" and s.dtype.name == dt and tuple(s.shape) == (4, 5)
    assert s.data_ptr() == t.data_ptr()
    t[0, 0] = 0
    assert s[0, 0].item() == 0
    s[3, 4] = 0
    assert t[3, 4].item() == 0
    assert s.to(st.float64).sum().item() == float(t.double().sum().item())


def test_cuda_dlpack_torch_views_and_roundtrip(torch_cuda):
    torch = torch_cuda
    base = torch.arange(24, dtype=torch.float64, device="cuda").reshape(4, 6)
    view = base.t()[1:, ::2]
    s = st.from_dlpack(view)
    assert tuple(s.stride()) == tuple(view.stride()) and s.data_ptr() == view.data_ptr()
    np.testing.assert_array_equal(to_np(s), view.cpu().numpy())
    del base, view
    gc.collect()
    torch.cuda.empty_cache()
    junk = [torch.full((4, 6), 5.0, dtype=torch.float64, device="cuda") for _ in range(8)]
    assert s.sum().item() == float(np.arange(24.0).reshape(4, 6).T[1:, ::2].sum())
    # SpiralTorch -> torch -> SpiralTorch is the same memory
    x = st.rand(5, 5, device="cuda")
    x2 = st.from_dlpack(torch.from_dlpack(x))
    assert x2.data_ptr() == x.data_ptr()
    x2.zero_()
    assert x.sum().item() == 0.0
    del junk


def test_cuda_dlpack_torch_consumer_waits_for_spiraltorch_stream(torch_cuda):
    torch = torch_cuda
    st.manual_seed(0)
    x = st.randn(HEAVY_N, HEAVY_N, device="cuda")
    r = rand_array((OUT_N, OUT_N), np.float32, seed=9)
    rt = st.tensor(r).to("cuda")
    st.cuda.synchronize()
    side = st.cuda.Stream()
    with st.cuda.stream(side):
        out = _heavy_st(x) * 0.0 + rt
        t = torch.from_dlpack(out)  # torch passes its current (default) stream
        got = t.cpu().numpy()
    np.testing.assert_array_equal(got, r)


def test_cuda_dlpack_spiraltorch_waits_for_torch_side_stream(torch_cuda):
    # torch orders its queued work only for a consumer that passes a stream to __dlpack__
    # (stream=None means no synchronization there), so this checks that st.from_dlpack does.
    torch = torch_cuda
    r = rand_array((OUT_N, OUT_N), np.float32, seed=10)
    st.cuda.synchronize()
    torch.cuda.synchronize()
    ts = torch.cuda.Stream()
    with torch.cuda.stream(ts):
        out = _heavy_torch(torch) * 0 + torch.tensor(r, device="cuda")
        s = st.from_dlpack(out)
        got = to_np(s * 1.0)  # SpiralTorch's default stream, no explicit synchronize
    np.testing.assert_array_equal(got, r)


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
