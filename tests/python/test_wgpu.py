"""The wgpu backend (WebGPU through wgpu-native) against the CPU: every op and gradient of the
table entries it implements runs once on "cpu" and once on "wgpu" from the same inputs, and the
two must agree (to float32 rounding; WGSL's transcendental functions are a few ulp off). The
device tests skip, naming the reason, where the build has no wgpu or no adapter answers; CI runs
them on Mesa's lavapipe (Vulkan on the CPU)."""

from __future__ import annotations

import numpy as np
import pytest

import spiraltorch as st
import spiraltorch.nn.functional  # noqa: F401  (binds st.nn.functional)
from conftest import HAVE_TORCH, to_np

HAVE_WGPU = st.wgpu.is_available()
needs_wgpu = pytest.mark.skipif(not HAVE_WGPU, reason="wgpu not available: " + st.wgpu.unavailable_reason())

RNG = np.random.default_rng(1234)


def both(fn, *arrays, grad=False, dtype=None):
    """Runs ``fn`` on tensors made from ``arrays`` on the CPU and on wgpu; returns the two
    results (and the inputs' gradients after ``.sum().backward()`` when ``grad``) as NumPy."""
    out = []
    for dev in ("cpu", "wgpu"):
        ts = [st.tensor(np.asarray(a), dtype=dtype).to(dev) for a in arrays]
        if grad:
            ts = [t.requires_grad_(True) for t in ts]
        y = fn(*ts)
        assert y.device == dev, f"result on {y.device}, expected {dev}"
        res = [to_np(y)]
        if grad:
            # A fixed, non-uniform upstream gradient so every output weighs differently.
            w = st.tensor(np.linspace(0.5, 1.5, max(y.numel(), 1)).reshape(tuple(y.shape)).astype(np.float32)).to(dev)
            (y * w).sum().backward()
            res += [to_np(t.grad) for t in ts]
        out.append(res)
    return out


def check(fn, *arrays, grad=False, rtol=2e-5, atol=2e-6, dtype=None):
    cpu, gpu = both(fn, *arrays, grad=grad, dtype=dtype)
    for a, b in zip(cpu, gpu):
        assert a.dtype == b.dtype and a.shape == b.shape
        np.testing.assert_allclose(b, a, rtol=rtol, atol=atol, equal_nan=True)
    return cpu


def f32(*shape, lo=-2.0, hi=2.0):
    return RNG.uniform(lo, hi, size=shape).astype(np.float32)


# ---------------------------------------------------------------------------
# device model, availability, transfers
# ---------------------------------------------------------------------------


def test_describe_device_reports_the_adapter_or_why_not():
    d = st.describe_device("wgpu")
    assert d["backend"] == "wgpu" and d["device"] == "wgpu"
    assert d["available"] == HAVE_WGPU == st.wgpu.is_available()
    state = st.runtime.runtime_state("wgpu")
    if HAVE_WGPU:
        info = st.wgpu.adapter_info()
        assert d["device_name"] == info["name"] and d["graphics_backend"] == info["backend"]
        assert info["backend"] in ("vulkan", "metal", "dx12", "gl")
        assert d["limits"]["max_storage_buffer_binding_size"] >= 128 << 20
        assert d["limits"]["max_compute_invocations_per_workgroup"] >= 256
        assert isinstance(d["features"], list) and d["shader_f16"] == ("shader-f16" in d["features"])
        assert st.wgpu.unavailable_reason() == ""
        assert state == {"backend": "wgpu", "compiled": True, "runtime_ready": True, "runtime_status": "ready",
                         "reason": None}
        assert st.init_backend("wgpu") is True
    else:
        assert d["reason"] == st.wgpu.unavailable_reason() != ""
        assert state["runtime_ready"] is False and state["reason"] == d["reason"]
        with pytest.raises(st.DeviceUnavailableError, match="wgpu"):
            st.wgpu.adapter_info()
        with pytest.raises(st.DeviceUnavailableError, match="wgpu"):
            st.zeros(3).to("wgpu")


def test_session_resolves_wgpu_when_an_adapter_exists():
    s = st.SpiralSession(backend="wgpu")
    if HAVE_WGPU:
        assert (s.requested_backend, s.effective_backend, s.device, s.fallback_reason) == ("wgpu", "wgpu", "wgpu",
                                                                                           None)
        assert s.device_preflight["runtime_status"] == "ready"
    else:
        assert s.effective_backend == "cpu" and s.fallback_reason == st.wgpu.unavailable_reason()


@needs_wgpu
@pytest.mark.parametrize("dtype", [st.float32, st.float16, st.bfloat16, st.int32, st.int64, st.uint8, st.bool])
def test_round_trip_keeps_values(dtype):
    base = np.array([[0, 1, -2, 3, 100], [7, -1, 0, 1, 2]], dtype=np.float32)
    if dtype in (st.uint8, st.bool):
        base = np.abs(base)
    h = st.tensor(base).to(dtype)
    d = h.to("wgpu")
    assert d.device == "wgpu" and d.dtype == dtype and tuple(d.shape) == (2, 5)
    back = d.cpu()
    assert back.device == "cpu"
    np.testing.assert_array_equal(to_np(back.float()), to_np(h.float()))
    # A strided view goes through the device's copy kernel.
    np.testing.assert_array_equal(to_np(d.t().contiguous().cpu().float()), to_np(h.t().float()))


@needs_wgpu
def test_float64_and_dlpack_are_refused_with_a_reason():
    with pytest.raises(st.DtypeError, match="float64"):
        st.zeros(3, dtype=st.float64).to("wgpu")
    d = st.ones(3).to("wgpu")
    with pytest.raises(st.DeviceUnavailableError, match="DLPack"):
        d.__dlpack__()
    with pytest.raises(st.DeviceUnavailableError, match="DLPack"):
        d.__dlpack_device__()
    with pytest.raises(st.SpiralError, match="cpu"):
        d.numpy()


@needs_wgpu
def test_caching_allocator_counts_and_reuses():
    st.wgpu.synchronize()
    before = st.wgpu.memory_allocated()
    x = st.ones(1000).to("wgpu")
    assert st.wgpu.memory_allocated() == before + 4000
    assert st.wgpu.max_memory_allocated() >= before + 4000
    reserved = st.wgpu.memory_reserved()
    del x
    assert st.wgpu.memory_allocated() == before
    y = st.ones(1000).to("wgpu")  # served from the cache: nothing new reserved
    assert st.wgpu.memory_reserved() == reserved
    del y
    st.wgpu.empty_cache()
    assert st.wgpu.memory_reserved() <= reserved
    st.wgpu.reset_peak_memory_stats()
    assert st.wgpu.max_memory_allocated() == st.wgpu.memory_allocated()


@needs_wgpu
def test_pipelines_are_cached_per_specialisation():
    a = st.tensor(f32(5, 3)).to("wgpu")
    (a + a).cpu()
    n = st.wgpu.pipelines_compiled()
    d = st.wgpu.dispatches()
    for _ in range(3):
        (a + a).cpu()
    assert st.wgpu.pipelines_compiled() == n  # same op, dtypes and layout: no new pipeline
    assert st.wgpu.dispatches() >= d + 3
    # A new op compiles at most one pipeline (none if an earlier test in this process already
    # compiled it), and running it again compiles nothing.
    (a * a).cpu()
    m = st.wgpu.pipelines_compiled()
    assert n <= m <= n + 1
    (a * a).cpu()
    assert st.wgpu.pipelines_compiled() == m


@needs_wgpu
def test_cross_device_ops_are_refused():
    with pytest.raises(st.SpiralError, match="device"):
        st.ones(3).to("wgpu") + st.ones(3)


# ---------------------------------------------------------------------------
# elementwise: binary with broadcasting and strides, unary, where, fill, casts
# ---------------------------------------------------------------------------

BINARY = {
    "add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b, "div": lambda a, b: a / b,
    "pow": lambda a, b: st.pow(a.abs() + 0.5, b), "maximum": st.maximum, "minimum": st.minimum,
    "atan2": st.atan2,
}
PAIRS = [((3, 4), (3, 4)), ((3, 1), (1, 4)), ((4,), (2, 3, 4)), ((2, 1, 5), (3, 1)), ((), (3, 2))]


@needs_wgpu
@pytest.mark.parametrize("name", sorted(BINARY))
@pytest.mark.parametrize("shapes", PAIRS, ids=str)
def test_binary_broadcast_and_gradients(name, shapes):
    a, b = f32(*shapes[0]), f32(*shapes[1], lo=0.5, hi=2.0)
    check(BINARY[name], a, b, grad=True, rtol=1e-4, atol=1e-5)


@needs_wgpu
def test_binary_on_strided_views():
    a, b = f32(4, 6), f32(6, 4)
    check(lambda x, y: x.t() * y, a, b, grad=True)
    check(lambda x, y: x[:, 1::2] - y.t()[:, ::2], a, b, grad=True)


@needs_wgpu
@pytest.mark.parametrize("shapes", [((1027,), (1027,)), ((4096,), (4096,)), ((64, 32), (32,)), ((64, 30), (30,)),
                                    ((8, 16), ()), ((5, 1, 8), (5, 3, 8)), ((4, 8), (4, 1))], ids=str)
def test_binary_fast_paths(shapes):
    """Contiguous operands take the flat indexing (four elements per invocation, vec4 loads for
    float32 with aligned offsets and numel a multiple of 4); broadcast scalars and bias rows
    keep their fast indexing; the rest the N-d path. Each against NumPy, plus unaligned views."""
    a, b = f32(*shapes[0]), f32(*shapes[1], lo=0.5, hi=2.0)
    for name, fn in (("add", np.add), ("mul", np.multiply), ("div", np.divide), ("max", np.maximum)):
        tfn = {"add": lambda x, y: x + y, "mul": lambda x, y: x * y, "div": lambda x, y: x / y,
               "max": st.maximum}[name]
        y = tfn(st.tensor(a).to("wgpu"), st.tensor(b).to("wgpu"))
        np.testing.assert_allclose(to_np(y), fn(a, b), rtol=1e-6, atol=1e-6, err_msg=name)
    # An operand starting at an odd element (no vec4 loads) and an in-place update.
    big = f32(4097)
    x = st.tensor(big).to("wgpu")
    np.testing.assert_allclose(to_np(x[1:] + x[:-1]), big[1:] + big[:-1], rtol=1e-6)
    np.testing.assert_allclose(to_np(x[1:].exp()), np.exp(big[1:]), rtol=1e-5)
    z = st.tensor(big[:4096]).to("wgpu")
    z.add_(z)
    np.testing.assert_allclose(to_np(z), 2 * big[:4096], rtol=1e-6)
    # Copies: 16-byte aligned (vec4 kernel), 4-byte aligned (copy command), strided.
    for view, ref in ((x[:4096], big[:4096]), (x[1:], big[1:]), (x[::2], big[::2])):
        np.testing.assert_array_equal(to_np(view.clone()), ref)
    h = st.tensor(np.arange(10, dtype=np.float32)).to("wgpu").to(st.float16)
    np.testing.assert_array_equal(to_np(h[2:].clone()), np.arange(2, 10, dtype=np.float16))


@needs_wgpu
@pytest.mark.parametrize("op", ["eq", "ne", "lt", "le", "gt", "ge"])
def test_comparisons_give_bool(op):
    a = np.array([[1, 2, 3], [4, 5, 6]], dtype=np.float32)
    b = np.array([2, 2, 7], dtype=np.float32)
    cpu, gpu = both(lambda x, y: getattr(st, op)(x, y), a, b)
    assert gpu[0].dtype == np.bool_
    np.testing.assert_array_equal(gpu[0], cpu[0])


@needs_wgpu
def test_integer_arithmetic():
    a = np.array([-7, -3, 0, 5, 9], dtype=np.int32)
    b = np.array([2, -2, 3, 3, -4], dtype=np.int32)
    for fn in (lambda x, y: x + y, lambda x, y: x * y, lambda x, y: x // y, lambda x, y: x % y,
               lambda x, y: st.maximum(x, y)):
        cpu, gpu = both(fn, a, b)
        np.testing.assert_array_equal(gpu[0], cpu[0])


UNARY = {
    "neg": lambda x: -x, "abs": st.abs, "exp": st.exp, "log": lambda x: st.log(x.abs() + 0.1),
    "sqrt": lambda x: st.sqrt(x.abs() + 0.1), "rsqrt": lambda x: st.rsqrt(x.abs() + 0.1),
    "sin": st.sin, "cos": st.cos, "tanh": st.tanh, "sigmoid": st.sigmoid, "relu": st.relu,
    "gelu": st.nn.functional.gelu, "gelu_tanh": lambda x: st.nn.functional.gelu(x, approximate="tanh"),
    "silu": st.nn.functional.silu, "softplus": st.softplus, "square": st.square,
    "reciprocal": lambda x: st.reciprocal(x.abs() + 0.5), "log1p": lambda x: st.log1p(x.abs()),
    "expm1": st.expm1, "erf": st.erf, "clamp": lambda x: st.clamp(x, -0.5, 0.7),
    "leaky_relu": lambda x: st.leaky_relu(x, 0.1), "elu": st.elu,
}


@needs_wgpu
@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_and_gradients(name):
    check(UNARY[name], f32(3, 7), grad=True, rtol=1e-4, atol=2e-6)


@needs_wgpu
def test_unary_special_values():
    x = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1e30, -1e30, 88.0, -104.0], dtype=np.float32)
    for fn in (st.exp, st.tanh, st.sigmoid, st.relu, st.isnan, st.isinf, st.isfinite, st.sign, st.floor):
        check(fn, x, rtol=1e-5, atol=0)


@needs_wgpu
def test_where_fill_and_casts():
    c = np.array([[True, False, True]])
    a, b = f32(2, 3), f32(3)
    cpu, gpu = both(lambda x, y: st.where(x > 0, x, y), a, b)
    np.testing.assert_array_equal(gpu[0], cpu[0])
    w = st.full((2, 3), 2.5).to("wgpu")
    w.fill_(-1.25)
    np.testing.assert_array_equal(to_np(w), np.full((2, 3), -1.25, np.float32))
    z = st.zeros(5, dtype=st.int64).to("wgpu")
    z.fill_(7)
    np.testing.assert_array_equal(to_np(z), np.full(5, 7, np.int64))
    m = st.tensor(c).to("wgpu")
    np.testing.assert_array_equal(to_np(st.where(m, st.ones(3).to("wgpu"), st.zeros(3).to("wgpu"))),
                                  np.where(c, 1.0, 0.0).astype(np.float32))
    for dt in (st.float16, st.bfloat16, st.int32, st.int64, st.uint8, st.bool):
        x = np.array([0.0, 1.5, 2.75, 100.25, 3.0], dtype=np.float32)
        if dt != st.bfloat16:  # (NumPy has no bfloat16: that one is compared through float32 below)
            cpu, gpu = both(lambda t: t.to(dt), x)
            np.testing.assert_array_equal(gpu[0], cpu[0])
        cpu, gpu = both(lambda t: t.to(dt).float() * 2, x)
        np.testing.assert_array_equal(gpu[0], cpu[0])


@needs_wgpu
def test_half_types_compute_in_float32_and_round_once():
    x, y = f32(4, 5), f32(4, 5)
    for dt in (st.float16, st.bfloat16):
        cpu, gpu = both(lambda a, b: (a.to(dt) * b.to(dt) + 1).float(), x, y)
        np.testing.assert_array_equal(gpu[0], cpu[0])
        # Numbers the half type cannot hold join at float32 precision, in the kernel (as on the CPU).
        cpu, gpu = both(lambda a: ((a.to(dt) * 1000) / 4e6 + 0.1 - 2.5 / (a.to(dt) + 7)).float(), x)
        np.testing.assert_array_equal(gpu[0], cpu[0])
        assert np.all(cpu[0] != 0)


# ---------------------------------------------------------------------------
# reductions
# ---------------------------------------------------------------------------

REDUCE = {
    "sum0": lambda x: x.sum(0), "sum1": lambda x: x.sum(1), "sum_all": lambda x: x.sum(),
    "mean_keep": lambda x: x.mean(1, keepdim=True), "amax0": lambda x: st.amax(x, 0),
    "amin1": lambda x: st.amin(x, 1), "prod1": lambda x: st.prod(x * 0.1 + 1, 1),
    "sum_01": lambda x: x.sum((0, 2)) if x.dim() == 3 else x.sum((0, 1)),
}


@needs_wgpu
@pytest.mark.parametrize("name", sorted(REDUCE))
@pytest.mark.parametrize("shape", [(5, 7), (3, 300), (70, 2), (4, 5, 6)], ids=str)
def test_reductions_and_gradients(name, shape):
    check(REDUCE[name], f32(*shape), grad=name not in ("amax0", "amin1"), rtol=1e-4, atol=1e-5)


@needs_wgpu
def test_long_reduction_takes_the_two_pass_path():
    x = f32(3, 20000)
    check(lambda t: t.sum(1), x, rtol=1e-4, atol=1e-3)
    check(lambda t: t.sum(), f32(50000), rtol=1e-4, atol=1e-3)
    check(lambda t: st.amax(t, 1), x)


@needs_wgpu
@pytest.mark.parametrize("shape, dim", [((256, 1024), 0), ((300, 70), 0), ((2, 1000, 33), 1), ((1024, 100), 0)],
                         ids=str)
def test_short_column_reductions_take_one_pass(shape, dim):
    # Few outputs along a reduced run of at most 1024 (a bias gradient over the batch): one
    # dispatch of cols_tile instead of a chunked pass and a second one over the chunks.
    x = f32(*shape)
    x[(0,) * len(shape)] = np.nan  # NaN wins max/min and poisons sum in the first column only
    for fn in (lambda t: t.sum(dim), lambda t: st.amax(t, dim), lambda t: st.amin(t, dim),
               lambda t: st.prod(t * 0.001 + 1, dim)):
        cpu, gpu = both(fn, x)
        np.testing.assert_allclose(gpu[0], cpu[0], rtol=1e-4, atol=1e-4)
    ints = RNG.integers(-50, 50, size=shape).astype(np.int32)
    for fn in (lambda t: t.sum(dim), lambda t: st.amax(t, dim), lambda t: (t > 40).any(dim), lambda t: (t > -49).all(dim)):
        cpu, gpu = both(fn, ints)
        np.testing.assert_array_equal(gpu[0], cpu[0])
    before = st.wgpu.dispatches()
    st.tensor(x).to("wgpu").sum(dim)
    assert st.wgpu.dispatches() - before == 1


@needs_wgpu
def test_argmax_argmin_and_bool_reductions():
    x = np.array([[1, 5, 5, 0], [np.nan, 2, 3, np.nan], [-1, -1, -2, -3]], dtype=np.float32)
    for fn in (lambda t: st.argmax(t, 1), lambda t: st.argmin(t, 1), lambda t: st.argmax(t, 0)):
        cpu, gpu = both(fn, x)
        np.testing.assert_array_equal(gpu[0], cpu[0])
    b = np.array([[True, False], [True, True]])
    for fn in (lambda t: t.any(), lambda t: t.all(), lambda t: t[1].all(), lambda t: st.amax(t.to(st.int32), 1)):
        cpu, gpu = both(fn, b)
        np.testing.assert_array_equal(gpu[0], cpu[0])


@needs_wgpu
def test_cumsum():
    check(lambda t: st.cumsum(t, 1), f32(4, 33), grad=True, rtol=1e-4, atol=1e-5)
    cpu, gpu = both(lambda t: st.cumsum(t, 0), np.arange(12, dtype=np.int64).reshape(4, 3))
    np.testing.assert_array_equal(gpu[0], cpu[0])


# ---------------------------------------------------------------------------
# matmul / bmm, softmax, layer norm
# ---------------------------------------------------------------------------


@needs_wgpu
@pytest.mark.parametrize("m,k,n", [(1, 1, 1), (5, 3, 7), (64, 64, 64), (65, 17, 130), (33, 200, 9),
                                   (300, 100, 270), (256, 64, 256)])  # the last two: 128x128 tiles
def test_matmul_and_gradients(m, k, n):
    check(lambda a, b: a @ b, f32(m, k), f32(k, n), grad=True, rtol=1e-4, atol=1e-4)


@needs_wgpu
def test_matmul_transposed_operands_and_bmm():
    a, b = f32(20, 30), f32(40, 30)
    check(lambda x, y: x @ y.t(), a, b, grad=True, rtol=1e-4, atol=1e-4)
    check(lambda x: x.t() @ x, a, grad=True, rtol=1e-4, atol=1e-4)
    check(lambda x, y: st.bmm(x, y), f32(3, 9, 11), f32(3, 11, 5), grad=True, rtol=1e-4, atol=1e-4)
    # The 128x128-tile kernel with each transpose combination, batched.
    big_a, big_b = f32(2, 260, 90), f32(2, 300, 90)
    check(lambda x, y: st.bmm(x, y.transpose(1, 2)), big_a, big_b, grad=True, rtol=1e-4, atol=1e-4)
    check(lambda x: x.transpose(1, 2) @ x, f32(2, 70, 257), rtol=1e-4, atol=1e-4)
    check(lambda x, y: x @ y, f32(2, 3, 9, 11), f32(11, 4), grad=True, rtol=1e-4, atol=1e-4)


@needs_wgpu
@pytest.mark.parametrize("m,k,n", [(256, 64, 256), (259, 67, 261), (260, 68, 264), (300, 129, 257), (1, 300, 300),
                                   (70, 3, 5)])
@pytest.mark.parametrize("ta,tb", [(False, False), (True, False), (False, True), (True, True)])
def test_matmul_register_blocked_tiles_vs_numpy(m, k, n, ta, tb):
    """Both tile shapes with every transpose, against float64 NumPy: 4-aligned extents take the
    vector loads/stores, odd ones the bounds-checked scalar edges."""
    a, b = f32(m, k), f32(k, n)
    at = st.tensor(np.ascontiguousarray(a.T) if ta else a).to("wgpu")
    bt = st.tensor(np.ascontiguousarray(b.T) if tb else b).to("wgpu")
    y = (at.t() if ta else at) @ (bt.t() if tb else bt)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    np.testing.assert_allclose(to_np(y), ref, rtol=1e-4, atol=1e-4 * np.sqrt(k))


@needs_wgpu
def test_matmul_split_k():
    """Few output tiles and a long K: K split into slices summed by a second kernel (with the
    GEMM's alpha/beta), batched, transposed and through a Linear layer's forward/backward."""
    a, b = f32(2, 64, 1000), f32(2, 1000, 66)
    y = st.bmm(st.tensor(a).to("wgpu"), st.tensor(b).to("wgpu"))
    np.testing.assert_allclose(to_np(y), a.astype(np.float64) @ b.astype(np.float64), rtol=1e-4, atol=3e-3)
    check(lambda x, w, c: st.nn.functional.linear(x, w, c), f32(256, 784, lo=0, hi=1), f32(100, 784, lo=-0.05, hi=0.05),
          f32(100), grad=True, rtol=1e-4, atol=1e-4)
    check(lambda x, y: x.t() @ y, f32(700, 30), f32(700, 9), grad=True, rtol=1e-4, atol=1e-3)


@needs_wgpu
def test_gpu_only_paths_on_a_cpu_adapter():
    """Split K, the vec4 compute copy and several optimizer slots per dispatch are skipped on a
    CPU adapter (lavapipe) unless SPIRALTORCH_WGPU_GPU_PATHS=1; a fresh interpreter with it set
    checks them against NumPy and the CPU."""
    import os
    import subprocess
    import sys
    code = """
import numpy as np, spiraltorch as st, spiraltorch.nn.functional
r = np.random.default_rng(0)
a, b = r.standard_normal((2, 64, 1000), dtype=np.float32), r.standard_normal((2, 1000, 66), dtype=np.float32)
y = st.bmm(st.tensor(a).to("wgpu"), st.tensor(b).to("wgpu")).cpu().numpy()
assert np.allclose(y, a.astype(np.float64) @ b.astype(np.float64), rtol=1e-4, atol=3e-3)
x, w, c = r.random((256, 784), dtype=np.float32), r.standard_normal((100, 784), dtype=np.float32), np.ones(100, np.float32)
y = st.nn.functional.linear(st.tensor(x).to("wgpu"), st.tensor(w).to("wgpu"), st.tensor(c).to("wgpu")).cpu().numpy()
assert np.allclose(y, x.astype(np.float64) @ w.T.astype(np.float64) + 1, rtol=1e-4, atol=3e-3)
t = st.tensor(a).to("wgpu")
assert (t.clone().cpu().numpy() == a).all() and (t[1].clone().cpu().numpy() == a[1]).all()
assert (t.reshape(-1)[1:].clone().cpu().numpy() == a.reshape(-1)[1:]).all()
# Several optimizer slots per dispatch (one per dispatch on a CPU adapter otherwise).
inits = [r.standard_normal((3, 5 + i), dtype=np.float32) for i in range(9)]
res = []
for dev in ("cpu", "wgpu"):
    ps = [st.tensor(v).to(dev).requires_grad_(True) for v in inits]
    opt = st.optim.Adam(ps, lr=1e-2, amsgrad=True)
    for _ in range(2):
        opt.zero_grad()
        sum(((p * p).sum() for p in ps), st.zeros(()).to(dev)).backward()
        opt.step()
    res.append([p.detach().cpu().numpy() for p in ps])
for u, v in zip(*res):
    assert np.allclose(u, v, rtol=1e-5, atol=1e-6)
print("ok")
"""
    env = dict(os.environ, SPIRALTORCH_WGPU_GPU_PATHS="1")
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and "ok" in r.stdout, r.stdout + r.stderr


@needs_wgpu
def test_dump_wgsl_writes_each_compiled_kernel(tmp_path):
    """SPIRALTORCH_WGPU_DUMP_WGSL=<dir> writes the text of every kernel the process compiles; a
    fresh interpreter (pipelines are cached per process) compiles a GEMM and an add."""
    import os
    import subprocess
    import sys
    code = ("import spiraltorch as st\n"
            "a = st.ones(8, 8).to('wgpu')\n"
            "print(((a @ a) + a).cpu().sum().item())\n")
    env = dict(os.environ, SPIRALTORCH_WGPU_DUMP_WGSL=str(tmp_path))
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and "576.0" in r.stdout, r.stdout + r.stderr
    texts = [f.read_text() for f in sorted(tmp_path.glob("kernel_*.wgsl"))]
    assert len(texts) >= 2
    assert all("@compute" in t for t in texts)
    assert any("var<workgroup> As" in t for t in texts)  # the tiled GEMM


@needs_wgpu
@pytest.mark.parametrize("var,value", [("SPIRALTORCH_WGPU_GEMM_TILE", "64"), ("SPIRALTORCH_WGPU_GEMM_TILE", "128"),
                                       ("SPIRALTORCH_WGPU_GEMM_TILE", "96"), ("SPIRALTORCH_WGPU_GEMM_READONLY", "0")])
def test_gemm_experiment_switches(var, value):
    """The GEMM's GPU timing switches: SPIRALTORCH_WGPU_GEMM_TILE=64|128 forces one kernel for every
    product, SPIRALTORCH_WGPU_GEMM_READONLY=0 binds the operands read_write; results still equal
    NumPy's, and a tile other than 64 or 128 is refused by name."""
    import os
    import subprocess
    import sys
    code = """
import numpy as np, spiraltorch as st
r = np.random.default_rng(0)
for (m, k, n) in [(300, 70, 260), (5, 300, 7), (64, 1000, 64)]:
    a, b = r.standard_normal((m, k), dtype=np.float32), r.standard_normal((k, n), dtype=np.float32)
    y = (st.tensor(a).to("wgpu") @ st.tensor(b).to("wgpu")).cpu().numpy()
    assert np.allclose(y, a.astype(np.float64) @ b.astype(np.float64), rtol=1e-4, atol=3e-3)
print("ok")
"""
    env = dict(os.environ, **{var: value})
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    if value == "96":
        assert r.returncode != 0 and "SPIRALTORCH_WGPU_GEMM_TILE must be 64 or 128, got '96'" in r.stderr
    else:
        assert r.returncode == 0 and "ok" in r.stdout, r.stdout + r.stderr


@needs_wgpu
def test_host_reads_count_each_device_read():
    """st.wgpu.host_reads() counts reads that wait for the queue (.item(), .cpu()), not kernels."""
    x = st.ones(16).to("wgpu")
    st.wgpu.synchronize()
    r0, d0 = st.wgpu.host_reads(), st.wgpu.dispatches()
    y = (x * 2 + 1).sum()
    assert st.wgpu.host_reads() == r0 and st.wgpu.dispatches() > d0
    assert y.item() == 48.0
    assert st.wgpu.host_reads() == r0 + 1
    x.cpu()
    assert st.wgpu.host_reads() == r0 + 2


@needs_wgpu
def test_matmul_unaligned_offsets_and_batch_strides():
    """Operands that start at an odd element (slices) or whose batch stride is odd take the
    scalar loads; the result must not depend on alignment."""
    a, b = f32(3, 257, 132), f32(3, 129, 260)
    wa = st.tensor(a).to("wgpu")[:, 1:, :128]   # offset 132 + strides: rows 4-aligned, offset aligned
    wb = st.tensor(b).to("wgpu")[:, 1:, 1:257]  # offset 261: unaligned
    y = st.bmm(wa, wb)
    ref = a[:, 1:, :128].astype(np.float64) @ b[:, 1:, 1:257].astype(np.float64)
    np.testing.assert_allclose(to_np(y), ref, rtol=1e-4, atol=2e-3)
    c = f32(2, 129, 129)  # odd batch stride
    y = st.tensor(c).to("wgpu") @ st.tensor(c).to("wgpu")
    np.testing.assert_allclose(to_np(y), c.astype(np.float64) @ c.astype(np.float64), rtol=1e-4, atol=2e-3)


@needs_wgpu
def test_linear_layer_forward_backward():
    check(lambda x, w, b: st.nn.functional.linear(x, w, b), f32(6, 10), f32(4, 10), f32(4), grad=True,
          rtol=1e-4, atol=1e-5)


@needs_wgpu
@pytest.mark.parametrize("cols", [1, 10, 257, 1000])
def test_softmax_log_softmax_and_gradients(cols):
    x = f32(6, cols, lo=-5, hi=5)
    check(lambda t: st.softmax(t, -1), x, grad=True, rtol=1e-4, atol=1e-6)
    check(lambda t: st.log_softmax(t, -1), x, grad=True, rtol=1e-4, atol=1e-5)
    check(lambda t: st.softmax(t, 0), x, grad=True, rtol=1e-4, atol=1e-6)  # a non-last dim


@needs_wgpu
@pytest.mark.parametrize("affine", [False, True])
def test_layer_norm_and_gradients(affine):
    x = f32(7, 3, 40)
    arrays = [x] + ([f32(40), f32(40)] if affine else [])
    fn = ((lambda t, w, b: st.nn.functional.layer_norm(t, (40,), w, b)) if affine
          else (lambda t: st.nn.functional.layer_norm(t, (40,))))
    check(fn, *arrays, grad=True, rtol=1e-4, atol=1e-4)


@needs_wgpu
def test_cross_entropy_and_gradients():
    logits = f32(8, 10, lo=-3, hi=3)
    target = RNG.integers(0, 10, size=8)
    out = []
    for dev in ("cpu", "wgpu"):
        x = st.tensor(logits).to(dev).requires_grad_(True)
        loss = st.nn.functional.cross_entropy(x, st.tensor(target).to(dev))
        loss.backward()
        out.append((float(loss.cpu().item()), to_np(x.grad)))
    assert out[1][0] == pytest.approx(out[0][0], rel=1e-5)
    np.testing.assert_allclose(out[1][1], out[0][1], rtol=1e-4, atol=1e-6)
    if HAVE_TORCH:
        import torch

        t = torch.nn.functional.cross_entropy(torch.tensor(logits), torch.tensor(target))
        assert out[1][0] == pytest.approx(float(t), rel=1e-5)


# ---------------------------------------------------------------------------
# indexing
# ---------------------------------------------------------------------------


@needs_wgpu
def test_one_hot_on_device():
    """one_hot on wgpu (a comparison against the class ids there) equals the CPU's, with the
    same class inference and range errors."""
    idx = np.array([[1, 0, 4], [2, 2, 0]])
    for n in (5, -1, 7):
        want = to_np(st.one_hot(st.tensor(idx), n))
        got = st.one_hot(st.tensor(idx).to("wgpu"), n)
        assert str(got.device) == "wgpu" and got.dtype == st.int64
        np.testing.assert_array_equal(to_np(got), want)
    with pytest.raises(IndexError, match="class value 4 is out of range for num_classes 3"):
        st.one_hot(st.tensor(idx).to("wgpu"), 3)


@needs_wgpu
def test_gather_index_select_scatter_add_cat_and_triangles():
    x = f32(4, 6)
    idx = RNG.integers(0, 6, size=(4, 3))
    check(lambda t, i: st.gather(t, 1, i), x, idx)
    cpu, gpu = both(lambda t: st.gather(t, 1, st.tensor(idx).to(t.device)), x, grad=True)
    for a, b in zip(cpu, gpu):
        np.testing.assert_allclose(b, a, rtol=1e-6)
    sel = np.array([3, 0, 3, 1])
    cpu, gpu = both(lambda t: st.index_select(t, 0, st.tensor(sel).to(t.device)), x, grad=True)
    for a, b in zip(cpu, gpu):
        np.testing.assert_allclose(b, a, rtol=1e-6)
    src = f32(4, 3)
    cpu, gpu = both(lambda t, s: st.scatter_add(t, 1, st.tensor(idx).to(t.device), s), x, src)
    np.testing.assert_allclose(gpu[0], cpu[0], rtol=1e-6)
    check(lambda a, b: st.cat([a, b, a], 1), x, f32(4, 2), grad=True)
    check(lambda a, b: st.cat([a, b], 0), x, f32(1, 6), grad=True)
    cpu, gpu = both(lambda a, b: st.cat([a, b], 1), np.arange(6, dtype=np.int64).reshape(2, 3),
                    np.array([[2 ** 40], [-5]], dtype=np.int64))
    np.testing.assert_array_equal(gpu[0], cpu[0])
    for fn in (lambda t: st.tril(t), lambda t: st.triu(t, 1), lambda t: st.tril(t, -2)):
        check(fn, f32(2, 5, 4), grad=True)


@needs_wgpu
def test_embedding_forward_backward():
    w = f32(10, 4)
    ids = np.array([[1, 3, 1], [9, 0, 3]])
    cpu, gpu = both(lambda t: st.nn.functional.embedding(st.tensor(ids).to(t.device), t), w, grad=True)
    for a, b in zip(cpu, gpu):
        np.testing.assert_allclose(b, a, rtol=1e-6)


# ---------------------------------------------------------------------------
# random draws, dropout, optimizers
# ---------------------------------------------------------------------------


@needs_wgpu
def test_random_and_dropout_draw_the_cpus_numbers():
    out = []
    for dev in ("cpu", "wgpu"):
        st.manual_seed(7)
        u = st.empty(1000, device=dev).uniform_(-1, 3)
        g = st.empty(1001, device=dev).normal_(2.0, 0.5)
        d = st.nn.functional.dropout(st.ones(999).to(dev), p=0.3, training=True)
        out.append([to_np(u), to_np(g), to_np(d)])
    np.testing.assert_array_equal(out[1][0], out[0][0])
    np.testing.assert_allclose(out[1][1], out[0][1], rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(out[1][2], out[0][2])
    assert -1 <= out[1][0].min() and out[1][0].max() < 3
    assert set(np.unique(out[1][2])) <= {0.0, np.float32(1 / 0.7)}


def _train_steps(dev, make_opt, steps=5):
    st.manual_seed(3)
    model = st.nn.Sequential(st.nn.Linear(6, 8), st.nn.ReLU(), st.nn.Linear(8, 3)).to(dev)
    opt = make_opt(model.parameters())
    x = st.tensor(np.linspace(-1, 1, 60, dtype=np.float32).reshape(10, 6)).to(dev)
    y = st.tensor(np.arange(10) % 3).to(dev)
    for _ in range(steps):
        opt.zero_grad()
        loss = st.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
    return [to_np(p) for p in model.parameters()]


@needs_wgpu
@pytest.mark.parametrize("name,make", [
    ("sgd", lambda p: st.optim.SGD(p, lr=0.1)),
    ("sgd_momentum_nesterov_wd", lambda p: st.optim.SGD(p, lr=0.1, momentum=0.9, nesterov=True, weight_decay=1e-2)),
    ("adam", lambda p: st.optim.Adam(p, lr=1e-2)),
    ("adam_amsgrad_wd", lambda p: st.optim.Adam(p, lr=1e-2, amsgrad=True, weight_decay=1e-2)),
    ("adamw", lambda p: st.optim.AdamW(p, lr=1e-2, weight_decay=0.1)),
    ("adagrad", lambda p: st.optim.Adagrad(p, lr=0.1, lr_decay=0.01, weight_decay=0.1)),
    ("adagrad_maximize", lambda p: st.optim.Adagrad(p, lr=0.05, initial_accumulator_value=0.1, maximize=True)),
    ("rmsprop", lambda p: st.optim.RMSprop(p, lr=1e-2)),
    ("rmsprop_centered_momentum_wd",
     lambda p: st.optim.RMSprop(p, lr=5e-3, centered=True, momentum=0.5, weight_decay=1e-2)),
    ("rmsprop_momentum", lambda p: st.optim.RMSprop(p, lr=1e-2, momentum=0.9, alpha=0.9)),
])
def test_optimizer_updates_match_the_cpu(name, make):
    cpu = _train_steps("cpu", make)
    gpu = _train_steps("wgpu", make)
    for a, b in zip(cpu, gpu):
        np.testing.assert_allclose(b, a, rtol=1e-4, atol=1e-5)


@needs_wgpu
@pytest.mark.parametrize("make", [lambda p: st.optim.Adam(p, lr=1e-2, amsgrad=True),
                                  lambda p: st.optim.SGD(p, lr=0.1, momentum=0.9),
                                  lambda p: st.optim.Adagrad(p, lr=0.1),
                                  lambda p: st.optim.RMSprop(p, lr=1e-2, centered=True, momentum=0.9)],
                         ids=["adam", "sgd", "adagrad", "rmsprop"])
def test_optimizer_many_slots_in_few_dispatches_and_nonfinite_skip(make):
    """Twenty parameter tensors (more than one dispatch holds on any adapter) against the CPU, and
    a NaN in one gradient skips the whole step on both devices."""
    shapes = [(i % 5 + 1, 7 + i) for i in range(20)]
    init = [f32(*s) for s in shapes]
    grads = [f32(*s) for s in shapes]
    res = {}
    for dev in ("cpu", "wgpu"):
        ps = [st.tensor(a).to(dev).requires_grad_(True) for a in init]
        opt = make(ps)
        for _ in range(3):
            opt.zero_grad()
            sum(((p * st.tensor(g).to(dev)).sum() for p, g in zip(ps, grads)), st.zeros(()).to(dev)).backward()
            opt.step()
        before = [to_np(p) for p in ps]
        opt.zero_grad()
        bad = [g.copy() for g in grads]
        bad[13][0, 3] = np.nan
        sum(((p * st.tensor(g).to(dev)).sum() for p, g in zip(ps, bad)), st.zeros(()).to(dev)).backward()
        opt.step()
        after = [to_np(p) for p in ps]
        for b, a in zip(before, after):
            np.testing.assert_array_equal(a, b)
        res[dev] = after
    for a, b in zip(res["cpu"], res["wgpu"]):
        np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-6)


def _steps_with_a_nan(dev, make, ask, bad):
    """Four steps of `make`'s optimizer on two parameters, step `bad`'s gradient holding a NaN;
    with `ask` each step's verdict is read at once, else only skipped_steps at the end. Returns the
    parameters, the per-parameter step counts and the verdicts asked for."""
    rng = np.random.default_rng(21)  # the same numbers for both devices
    init, grads = ([rng.uniform(-2, 2, s).astype(np.float32) for s in ((3, 4), (5,))] for _ in range(2))
    ps = [st.tensor(a).to(dev).requires_grad_(True) for a in init]
    opt = make(ps)
    verdicts = []
    for k in range(4):
        g = [x.copy() for x in grads]
        if k == bad:
            g[1][2] = np.nan
        for p, x in zip(ps, g):
            p.grad = st.tensor(x * (k + 1)).to(dev)
        r = opt.step()
        if ask:
            verdicts.append(bool(r))
    sd = opt.state_dict()
    return [to_np(p) for p in ps], [sd["state"][i]["step"] for i in (0, 1)], opt.skipped_steps, verdicts


@needs_wgpu
@pytest.mark.parametrize("make", [lambda p: st.optim.Adam(p, lr=1e-2, amsgrad=True),
                                  lambda p: st.optim.AdamW(p, lr=1e-2, weight_decay=0.1),
                                  lambda p: st.optim.SGD(p, lr=0.1, momentum=0.9, dampening=0.3)],
                         ids=["adam", "adamw", "sgd_momentum"])
@pytest.mark.parametrize("ask", [True, False], ids=["asked", "unasked"])
@pytest.mark.parametrize("bad", [0, 1], ids=["first_step_bad", "second_step_bad"])
def test_nonfinite_check_runs_on_the_device_and_matches_the_cpu(make, ask, bad):
    # On wgpu the flag is set and obeyed on the device and read later; what a skipped step changed
    # on the host is undone once the skip is known, asked for or not: the step counts, and after a
    # skipped first step the state it created (Adam's moments, SGD's momentum buffer, which the
    # next applied step must start afresh).
    cpu = _steps_with_a_nan("cpu", make, ask, bad)
    gpu = _steps_with_a_nan("wgpu", make, ask, bad)
    for a, b in zip(cpu[0], gpu[0]):
        np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-6)
    assert gpu[1] == cpu[1] == [3, 3]
    assert gpu[2] == cpu[2] == 1
    assert gpu[3] == cpu[3] == ([k != bad for k in range(4)] if ask else [])


@needs_wgpu
def test_a_device_checked_step_reads_nothing_until_asked():
    ps = [st.tensor(f32(64, 32)).to("wgpu").requires_grad_(True), st.tensor(f32(32)).to("wgpu").requires_grad_(True)]
    opt = st.optim.Adam(ps, lr=1e-3)
    for p in ps:
        p.grad = st.ones_like(p)
    st.wgpu.synchronize()
    r0 = st.wgpu.host_reads()
    r = opt.step()
    assert st.wgpu.host_reads() == r0  # no read in step(): the flag is fetched later
    assert isinstance(r, st.optim.StepResult) and not r.known and "pending" in repr(r)
    # reading the verdict waits for that step's submission only: not a host read that drains the queue
    assert bool(r) is True and r == True and r.known and st.wgpu.host_reads() == r0  # noqa: E712
    for p in ps:
        p.grad = st.ones_like(p)
    opt.step()
    opt.step()  # settles the previous verdict with a read that waits for that step only
    assert opt.skipped_steps == 0 and opt.state_dict()["state"][0]["step"] == 3


# ---------------------------------------------------------------------------
# Fashion-MNIST: the MLP recipe trains on wgpu to the CPU's accuracy
# ---------------------------------------------------------------------------


def _fashion_mlp(dev, n_train=6000, n_test=2000, epochs=2, batch=100):
    images, labels = st.data.load_fashion_mnist(split="train")
    timages, tlabels = st.data.load_fashion_mnist(split="test")
    x = images[:n_train].reshape(n_train, 784).to(dev)
    y = labels[:n_train].to(dev)
    tx = timages[:n_test].reshape(n_test, 784).to(dev)
    ty = tlabels[:n_test].to(dev)
    st.manual_seed(0)
    model = st.nn.Sequential(st.nn.Linear(784, 128), st.nn.ReLU(), st.nn.Linear(128, 10)).to(dev)
    opt = st.optim.Adam(model.parameters(), lr=1e-3)
    for _ in range(epochs):
        for i in range(0, n_train, batch):
            opt.zero_grad()
            loss = st.nn.functional.cross_entropy(model(x[i:i + batch]), y[i:i + batch])
            loss.backward()
            opt.step()
    with st.no_grad():
        pred = st.argmax(model(tx), 1)
        acc = float((pred == ty).float().mean().cpu().item())
    return acc, float(loss.detach().cpu().item())


@needs_wgpu
@pytest.mark.skipif(not st.data.find_fashion_mnist(), reason="Debian's dataset-fashion-mnist is not installed")
def test_fashion_mnist_mlp_trains_on_wgpu_to_the_cpu_accuracy():
    cpu_acc, cpu_loss = _fashion_mlp("cpu")
    gpu_acc, gpu_loss = _fashion_mlp("wgpu")
    assert cpu_acc > 0.75
    # Same initial weights, same batches: only float32 summation order differs.
    assert abs(gpu_acc - cpu_acc) < 0.01, (gpu_acc, cpu_acc)
    assert gpu_loss == pytest.approx(cpu_loss, rel=0.05, abs=0.02)


# ---------------------------------------------------------------------------
# sort / topk, masked_select, conv2d (im2col + GEMM) and pooling
# ---------------------------------------------------------------------------


@needs_wgpu
def test_sort_topk_stable_with_nan_and_gradients():
    x = np.array([[3, 1, np.nan, 1, 7, -2, 1], [0, 0, 5, -1, np.nan, 9, 2]], dtype=np.float32)
    for desc in (False, True):
        cpu, gpu = both(lambda t: st.sort(t, 1, descending=desc)[0], x)
        np.testing.assert_array_equal(gpu[0], cpu[0])
        cpu, gpu = both(lambda t: st.sort(t, 1, descending=desc)[1], x)
        np.testing.assert_array_equal(gpu[0], cpu[0])
    for k in (1, 3, 7):
        cpu, gpu = both(lambda t: st.topk(t, k, 1)[1], x)
        np.testing.assert_array_equal(gpu[0], cpu[0])
    check(lambda t: st.topk(t, 3, 0)[0], f32(9, 4), grad=True)
    cpu, gpu = both(lambda t: st.sort(t, 0)[0], np.array([5, -(2 ** 40), 2 ** 40, 0, -1], dtype=np.int64))
    np.testing.assert_array_equal(gpu[0], cpu[0])


def _stable_order(row, desc):
    """Reference permutation of a stable sort with NaN the largest value (torch's order)."""
    nan = np.isnan(row)
    if desc:
        return sorted(range(len(row)), key=lambda i: (not nan[i], 0.0 if nan[i] else -float(row[i]), i))
    return sorted(range(len(row)), key=lambda i: (bool(nan[i]), 0.0 if nan[i] else float(row[i]), i))


@needs_wgpu
@pytest.mark.parametrize("n", [1, 2, 5, 1000, 2048, 2049, 5000])
def test_sort_long_rows_with_ties_and_nan_vs_reference(n):
    """The bitonic sort: rows inside one workgroup (up to 2048) and longer rows merged through
    global steps; many ties (stability), NaN and -0.0/0.0, along the last and a leading dim."""
    x = np.round(RNG.uniform(-3, 3, size=(3, n))).astype(np.float32)
    x[:, ::7] = np.nan
    x[:, 1::11] = -0.0
    t = st.tensor(x).to("wgpu")
    for desc in (False, True):
        v, i = st.sort(t, 1, descending=desc)
        order = np.array([_stable_order(r, desc) for r in x], dtype=np.int64)
        np.testing.assert_array_equal(to_np(i), order)
        np.testing.assert_array_equal(to_np(v), np.take_along_axis(x, order, 1))
    # Along dim 0 (strided lines), and int32 keys.
    v0, i0 = st.sort(st.tensor(np.ascontiguousarray(x.T)).to("wgpu"), 0)
    np.testing.assert_array_equal(to_np(i0).T, np.array([_stable_order(r, False) for r in x]))
    xi = RNG.integers(-5, 5, size=(2, n)).astype(np.int32)
    vi, ii = st.sort(st.tensor(xi).to("wgpu"), 1, descending=True)
    ref = np.array([_stable_order(r.astype(np.float64), True) for r in xi])
    np.testing.assert_array_equal(to_np(ii), ref)
    np.testing.assert_array_equal(to_np(vi), np.take_along_axis(xi, ref, 1))
    k = min(n, 17)
    tv, ti = st.topk(t, k, 1)
    np.testing.assert_array_equal(to_np(ti), np.array([_stable_order(r, True)[:k] for r in x]))


@needs_wgpu
def test_masked_select_large_in_order():
    for n in (1023, 1024, 300_001):
        x = RNG.standard_normal(n).astype(np.float32)
        m = x > 0.3
        y = st.masked_select(st.tensor(x).to("wgpu"), st.tensor(m).to("wgpu"))
        np.testing.assert_array_equal(to_np(y), x[m])
    xi = np.arange(5000, dtype=np.int64) * (2 ** 33)
    y = st.masked_select(st.tensor(xi).to("wgpu"), st.tensor(xi % 3 == 0).to("wgpu"))
    np.testing.assert_array_equal(to_np(y), xi[xi % 3 == 0])


@needs_wgpu
def test_scatter_add_duplicate_indices():
    """Few lines with many sources: the atomic path (float32 compare-exchange, int32 atomicAdd)."""
    src = RNG.uniform(-1, 1, size=(20000,)).astype(np.float32)
    idx = RNG.integers(0, 7, size=20000)
    out = st.scatter_add(st.zeros(7).to("wgpu"), 0, st.tensor(idx).to("wgpu"), st.tensor(src).to("wgpu"))
    ref = np.zeros(7)
    np.add.at(ref, idx, src.astype(np.float64))
    np.testing.assert_allclose(to_np(out), ref, rtol=1e-4, atol=1e-3)
    srci = RNG.integers(-100, 100, size=(3, 500)).astype(np.int32)
    idxi = RNG.integers(0, 4, size=(3, 500))
    outi = st.scatter_add(st.zeros((3, 4), dtype=st.int32).to("wgpu"), 1, st.tensor(idxi).to("wgpu"),
                          st.tensor(srci).to("wgpu"))
    refi = np.zeros((3, 4), dtype=np.int64)
    for r in range(3):
        np.add.at(refi[r], idxi[r], srci[r])
    np.testing.assert_array_equal(to_np(outi), refi)


@needs_wgpu
def test_masked_select_and_gradient():
    x = f32(3, 300)
    mask = x > 0.5
    cpu, gpu = both(lambda t: st.masked_select(t, t > 0.5), x, grad=True)
    for a, b in zip(cpu, gpu):
        np.testing.assert_array_equal(b, a)
    assert gpu[0].shape == (int(mask.sum()),)
    cpu, gpu = both(lambda t: st.masked_select(t, st.tensor(np.array([True, False, True])).to(t.device)),
                    np.arange(6, dtype=np.int64).reshape(2, 3))
    np.testing.assert_array_equal(gpu[0], cpu[0])


@needs_wgpu
@pytest.mark.parametrize("stride,padding,dilation", [(1, 0, 1), (2, 1, 1), (1, 2, 2)])
def test_conv2d_through_im2col_and_gradients(stride, padding, dilation):
    check(lambda x, w, b: st.nn.functional.conv2d(x, w, b, stride=stride, padding=padding, dilation=dilation),
          f32(2, 3, 9, 8), f32(4, 3, 3, 3), f32(4), grad=True, rtol=1e-4, atol=1e-4)


@needs_wgpu
def test_pooling_and_gradients():
    x = f32(2, 3, 9, 10)
    F = st.nn.functional
    check(lambda t: F.max_pool2d(t, 3, stride=2, padding=1), x, grad=True)
    check(lambda t: F.max_pool2d(t, 2, dilation=2), x, grad=True)
    check(lambda t: F.avg_pool2d(t, 3, stride=2, padding=1), x, grad=True, rtol=1e-5, atol=1e-6)
    check(lambda t: F.avg_pool2d(t, 3, stride=2, padding=1, count_include_pad=False), x, grad=True, rtol=1e-5,
          atol=1e-6)
    check(lambda t: F.adaptive_avg_pool2d(t, (4, 3)), x, grad=True, rtol=1e-5, atol=1e-6)


@needs_wgpu
@pytest.mark.parametrize("affine", [True, False])
def test_batch_norm_training_eval_and_gradients(affine):
    F = st.nn.functional
    x = f32(4, 3, 5, 6)
    args = [x] + ([f32(3), f32(3)] if affine else [])

    def train(t, *wb):
        w, b = (wb if affine else (None, None))
        rm, rv = st.zeros(3).to(t.device), st.ones(3).to(t.device)
        return F.batch_norm(t, rm, rv, w, b, training=True, momentum=0.1, eps=1e-5)

    def evaluate(t, *wb):
        w, b = (wb if affine else (None, None))
        rm = st.tensor(np.array([0.1, -0.2, 0.3], np.float32)).to(t.device)
        rv = st.tensor(np.array([1.5, 0.5, 2.0], np.float32)).to(t.device)
        return F.batch_norm(t, rm, rv, w, b, training=False, eps=1e-5)

    check(train, *args, grad=True, rtol=1e-4, atol=1e-4)
    check(evaluate, *args, grad=True, rtol=1e-4, atol=1e-5)
    # The module form updates its running statistics on the device like on the CPU.
    out = []
    for dev in ("cpu", "wgpu"):
        bn = st.nn.BatchNorm2d(3).to(dev)
        bn(st.tensor(x).to(dev))
        out.append((to_np(bn.running_mean), to_np(bn.running_var)))
    np.testing.assert_allclose(out[1][0], out[0][0], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(out[1][1], out[0][1], rtol=1e-5, atol=1e-6)


@needs_wgpu
@pytest.mark.parametrize("stride,padding,dilation,bias", [(1, 1, 1, True), (2, 0, 1, False), (1, 2, 2, True)])
def test_depthwise_conv2d_and_gradients(stride, padding, dilation, bias):
    arrays = [f32(2, 4, 9, 8), f32(4, 1, 3, 3)] + ([f32(4)] if bias else [])

    def fn(x, w, *b):
        return st.nn.functional.conv2d(x, w, b[0] if b else None, stride=stride, padding=padding,
                                       dilation=dilation, groups=4)

    check(fn, *arrays, grad=True, rtol=1e-4, atol=1e-4)


@needs_wgpu
@pytest.mark.parametrize("causal", [False, True])
def test_fused_attention_and_gradients(causal):
    q, k, v = f32(2, 3, 7, 8), f32(2, 3, 9, 8), f32(2, 3, 9, 8)

    def fn(a, b, c):
        return st.nn.functional.scaled_dot_product_attention(a, b, c, is_causal=causal)

    check(fn, q, k, v, grad=True, rtol=1e-4, atol=1e-5)


@needs_wgpu
@pytest.mark.parametrize("kind", ["LSTM", "GRU"])
def test_lstm_gru_layers_and_gradients(kind):
    x = f32(5, 3, 4)  # (steps, batch, features)
    out = []
    for dev in ("cpu", "wgpu"):
        st.manual_seed(11)
        layer = getattr(st.nn, kind)(4, 6, num_layers=2).to(dev)
        xi = st.tensor(x).to(dev).requires_grad_(True)
        y, _ = layer(xi)
        assert y.device == dev
        w = st.tensor(np.linspace(0.5, 1.5, y.numel()).reshape(tuple(y.shape)).astype(np.float32)).to(dev)
        (y * w).sum().backward()
        out.append([to_np(y), to_np(xi.grad)] + [to_np(p.grad) for p in layer.parameters()])
    for a, b in zip(*out):
        np.testing.assert_allclose(b, a, rtol=1e-4, atol=1e-5)


@needs_wgpu
def test_kernels_compile_after_tensorflow_is_loaded():
    # TensorFlow exports its own LLVM symbols; Mesa's lavapipe JIT-compiles shaders with the
    # system's LLVM. Without the backend's RTLD_DEEPBIND preload of the driver, the first shader
    # compiled after `import tensorflow` crashed the process (a fresh interpreter checks it).
    pytest.importorskip("tensorflow")
    from conftest import run_python

    r = run_python("import spiraltorch as st\nimport tensorflow\n"
                   "x = st.ones(3).to('wgpu')\nprint((x * 3 + x).cpu().tolist())\n")
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.strip().splitlines()[-1] == "[4.0, 4.0, 4.0]"


@needs_wgpu
def test_rank_plans_and_the_gpu_probe_run_on_wgpu():
    p = st.plan_topk(rows=3, cols=40, k=5, backend="wgpu")
    assert p.effective_backend == "wgpu" and p.runtime_ready
    x = f32(3, 40)
    x[1, 7] = np.nan
    v_cpu, i_cpu = p.execute(st.tensor(x))
    v_gpu, i_gpu = p.execute(st.tensor(x).to("wgpu"))
    assert v_gpu.device == "wgpu"
    np.testing.assert_array_equal(to_np(v_gpu), to_np(v_cpu))
    np.testing.assert_array_equal(to_np(i_gpu), to_np(i_cpu))
    r = st.probe_gpu_path("bottomk", backend="wgpu", rows=2, cols=5, k=2)
    assert r["strict_success"] and r["gpu_path_available"] and not r["used_fallback"]
    assert r["strict_values"] == [-2.5, -1.5, -2.375, -1.375] and r["strict_indices"] == [0, 1, 0, 1]


@needs_wgpu
def test_allocation_beyond_the_adapters_limit_is_a_clear_error():
    limit = st.describe_device("wgpu")["limits"]["max_storage_buffer_binding_size"]
    before = st.wgpu.memory_allocated()
    with pytest.raises(st.OutOfMemoryError, match=r"wgpu: cannot allocate \d+ bytes: the adapter's largest buffer"):
        st.empty(limit // 4 + 1, device="wgpu")
    assert st.wgpu.memory_allocated() == before
