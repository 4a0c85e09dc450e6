"""nn.Linear on CUDA with the bias in cuBLASLt's GEMM epilogues (the forward adds it as the product
is written, the weight gradient's GEMM sums the bias gradient): output and the gradients of input,
weight and bias against a float64 CPU reference for float32, bfloat16 and float16, 2-D and 3-D
inputs, shapes cuBLASLt takes and shapes it declines (the composite path then runs), a
non-contiguous input, and create_graph (double backward) through the fused node. Without CUDA the
module is skipped."""

from __future__ import annotations

import numpy as np
import pytest

import spiraltorch as st
from conftest import HAVE_CUDA, CUDA_SKIP_REASON, to_np

pytestmark = pytest.mark.skipif(not HAVE_CUDA, reason=CUDA_SKIP_REASON)

TOL = {"float32": 1e-5, "bfloat16": 3e-2, "float16": 4e-3}


def reference(x, w, b, g):
    ins = [st.tensor(a.astype(np.float64)).requires_grad_(True) for a in (x, w, b)]
    y = st.nn.functional.linear(*ins)
    (y * st.tensor(g.astype(np.float64))).sum().backward()
    return to_np(y), [to_np(t.grad) for t in ins]


def close(got, want, dtype, what):
    err = np.abs(got - want).max() / max(np.abs(want).max(), 1.0)
    assert err < TOL[dtype], f"{what}: {err:.2e}"


@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "float16"])
@pytest.mark.parametrize("shape,k,n", [((5, 64), 64, 48), ((3, 7, 64), 64, 96), ((2, 9, 30), 30, 10)],
                         ids=["2d", "3d", "declined"])
def test_linear_bias_matches_float64(dtype, shape, k, n):
    rng = np.random.default_rng(k + n)
    x = rng.standard_normal(shape).astype(np.float32)
    w = (rng.standard_normal((n, k)) / np.sqrt(k)).astype(np.float32)
    b = rng.standard_normal(n).astype(np.float32)
    g = rng.standard_normal(shape[:-1] + (n,)).astype(np.float32)
    want_y, want_grads = reference(x, w, b, g)
    dt = getattr(st, dtype)
    tf32 = st.cuda.allow_tf32()
    st.cuda.set_allow_tf32(False)
    try:
        ins = [st.tensor(a).to(dt).cuda().requires_grad_(True) for a in (x, w, b)]
        y = st.nn.functional.linear(*ins)
        assert y.dtype == dt and tuple(y.shape) == shape[:-1] + (n,)
        y.backward(st.tensor(g).to(dt).cuda())
    finally:
        st.cuda.set_allow_tf32(tf32)
    close(to_np(y.to(st.float32)), want_y, dtype, "output")
    for name, t, want in zip(("dx", "dw", "db"), ins, want_grads):
        assert t.grad.dtype == dt
        close(to_np(t.grad.to(st.float32)), want, dtype, name)


@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "float16"])
@pytest.mark.parametrize("n", [776, 36], ids=["many_rows", "declined_bias_sum"])
def test_linear_bias_gradient_over_many_rows(dtype, n):
    """The bias gradient's column sums over 20,000 rows (many partial rows to add; 776 columns end
    inside a 256-column tile), and 36 columns (not a multiple of 8: the sum declines, so the
    composite's matmul and sum run): against float64 sums of the same rounded values."""
    rng = np.random.default_rng(n)
    m, k = 20000, 24
    x = rng.standard_normal((m, k)).astype(np.float32)
    w = (rng.standard_normal((n, k)) / 5).astype(np.float32)
    b = rng.standard_normal(n).astype(np.float32)
    g = rng.standard_normal((m, n)).astype(np.float32)
    dt = getattr(st, dtype)
    ins = [st.tensor(a).to(dt).cuda().requires_grad_(True) for a in (x, w, b)]
    gs = st.tensor(g).to(dt).cuda()
    st.nn.functional.linear(*ins).backward(gs)
    gd = to_np(gs.to(st.float32)).astype(np.float64)
    want = gd.sum(0)
    err = np.abs(to_np(ins[2].grad.to(st.float32)) - want).max() / np.abs(want).max()
    assert err < {"float32": 1e-5, "bfloat16": 1e-2, "float16": 2e-3}[dtype], err
    xd = to_np(ins[0].to(st.float32)).astype(np.float64)
    close(to_np(ins[1].grad.to(st.float32)), gd.T @ xd, dtype, "dw")


def test_linear_module_non_contiguous_input_and_no_bias_grad():
    st.manual_seed(0)
    lin = st.nn.Linear(32, 16).cuda()
    lin.bias.requires_grad_(False)
    x = st.randn(32, 6).cuda().requires_grad_(True)
    y = lin(x.T)  # a transposed view: the composite path
    y.sum().backward()
    xr = to_np(x).T.astype(np.float64)
    np.testing.assert_allclose(to_np(y), xr @ to_np(lin.weight).T + to_np(lin.bias), rtol=1e-4, atol=1e-4)
    assert lin.bias.grad is None and lin.weight.grad is not None
    np.testing.assert_allclose(to_np(lin.weight.grad), np.ones((6, 16)).T @ xr, rtol=1e-4, atol=1e-4)


def test_linear_bias_create_graph_double_backward():
    """d/dw of sum(dx^2) where dx = d(sum(y * g))/dx = g w: 2 g^T (g w), through the fused node."""
    rng = np.random.default_rng(1)
    x, g = rng.standard_normal((8, 16)), rng.standard_normal((8, 12))
    w, b = rng.standard_normal((12, 16)), rng.standard_normal(12)
    xs, ws, bs = (st.tensor(a.astype(np.float32)).cuda().requires_grad_(True) for a in (x, w, b))
    y = st.nn.functional.linear(xs, ws, bs)
    (dx,) = st.autograd.grad([y], [xs], [st.tensor(g.astype(np.float32)).cuda()], create_graph=True)
    (dw2,) = st.autograd.grad([(dx ** 2).sum()], [ws])
    np.testing.assert_allclose(to_np(dx), g @ w, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(to_np(dw2), 2 * g.T @ (g @ w), rtol=1e-3, atol=1e-3)


@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "float16"])
def test_linear_without_bias_matches_float64(dtype):
    """No bias: the same fused node with cuBLASLt's default epilogue; the bias gradient is absent."""
    rng = np.random.default_rng(5)
    x = rng.standard_normal((3, 7, 64)).astype(np.float32)
    w = (rng.standard_normal((40, 64)) / 8).astype(np.float32)
    g = rng.standard_normal((3, 7, 40)).astype(np.float32)
    dt = getattr(st, dtype)
    tf32 = st.cuda.allow_tf32()
    st.cuda.set_allow_tf32(False)
    try:
        xs, ws = (st.tensor(a).to(dt).cuda().requires_grad_(True) for a in (x, w))
        y = st.nn.functional.linear(xs, ws)
        y.backward(st.tensor(g).to(dt).cuda())
    finally:
        st.cuda.set_allow_tf32(tf32)
    xd, wd, gd = (to_np(st.tensor(a).to(dt).to(st.float32)).astype(np.float64) for a in (x, w, g))
    close(to_np(y.to(st.float32)), xd @ wd.T, dtype, "output")
    close(to_np(xs.grad.to(st.float32)), gd @ wd, dtype, "dx")
    assert ws.grad.dtype == dt
    close(to_np(ws.grad.to(st.float32)), gd.reshape(-1, 40).T @ xd.reshape(-1, 64), dtype, "dw")


@pytest.mark.parametrize("bias", [True, False], ids=["bias", "no_bias"])
@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_autocast_linear_master_gradients_are_float32_and_unrounded(dtype, bias):
    """Under autocast the float32 weight and bias are the fused node's own inputs: the product runs
    in the region's dtype, and the weight-gradient GEMM writes float32 gradients that equal the
    float64 products of the rounded operands to float32 accuracy (a half gradient widened
    afterwards would be off by the half type's rounding, ~1e-3)."""
    st.manual_seed(2)
    lin = st.nn.Linear(64, 96, bias=bias).cuda()
    dt = getattr(st, dtype)
    rng = np.random.default_rng(7)
    x = rng.standard_normal((4, 9, 64)).astype(np.float32)
    g = rng.standard_normal((4, 9, 96)).astype(np.float32)
    with st.autocast("cuda", dtype=dt):
        y = lin(st.tensor(x).cuda())
    assert y.dtype == dt
    y.backward(st.tensor(g).to(dt).cuda())
    assert lin.weight.grad.dtype == st.float32
    rd = [to_np(st.tensor(a).to(dt).to(st.float32)).astype(np.float64) for a in (x, g)]
    xd, gd = rd[0].reshape(-1, 64), rd[1].reshape(-1, 96)
    want_dw = gd.T @ xd
    err = np.abs(to_np(lin.weight.grad) - want_dw).max() / np.abs(want_dw).max()
    assert err < 1e-5, err
    wd = to_np(lin.weight.to(dt).to(st.float32)).astype(np.float64)
    want_y = xd @ wd.T
    if bias:
        assert lin.bias.grad.dtype == st.float32
        want_db = gd.sum(0)
        assert np.abs(to_np(lin.bias.grad) - want_db).max() / np.abs(want_db).max() < 1e-5
        want_y = want_y + to_np(lin.bias.to(dt).to(st.float32)).astype(np.float64)
    close(to_np(y.to(st.float32)).reshape(-1, 96), want_y, dtype, "output")


def test_autocast_linear_create_graph_reaches_the_float32_master():
    """Double backward through the autocast node: d/dw of sum(dx^2), dx = g w_bf16, reaches the
    float32 weight as a float32 gradient, 2 g^T (g w)."""
    rng = np.random.default_rng(3)
    x, g = rng.standard_normal((8, 16)), rng.standard_normal((8, 12))
    w, b = rng.standard_normal((12, 16)), rng.standard_normal(12)
    xs, ws, bs = (st.tensor(a.astype(np.float32)).cuda().requires_grad_(True) for a in (x, w, b))
    with st.autocast("cuda", dtype=st.bfloat16):
        y = st.nn.functional.linear(xs, ws, bs)
    gs = st.tensor(g.astype(np.float32)).to(st.bfloat16).cuda()
    (dx,) = st.autograd.grad([y], [xs], [gs], create_graph=True)
    (dw2,) = st.autograd.grad([(dx.to(st.float32) ** 2).sum()], [ws])
    assert dw2.dtype == st.float32
    gd = to_np(gs.to(st.float32)).astype(np.float64)
    wd = to_np(ws.to(st.bfloat16).to(st.float32)).astype(np.float64)
    # bfloat16 products (dx, and 2 dx rounded on its way back): errors relative to the largest entry
    for got, want in ((to_np(dx.to(st.float32)), gd @ wd), (to_np(dw2), 2 * gd.T @ (gd @ wd))):
        assert np.abs(got - want).max() / np.abs(want).max() < 1e-2


@pytest.fixture
def gemm_tuning():
    """st.cuda.tunable on for one test (the shapes below are not used elsewhere, so each is planned
    and timed here)."""
    before = st.cuda.tunable.is_enabled()
    st.cuda.tunable.enable(True)
    yield
    st.cuda.tunable.enable(before)


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_tuned_gemms_match_float64(gemm_tuning, dtype):
    """With tuning on, every cuBLASLt GEMM of a linear + GELU feed-forward block (bias forward,
    GELU_AUX forward, DGELU and bias-gradient backward) runs the fastest of its candidates, timed
    on the call's operands: results still equal the float64 reference."""
    rng = np.random.default_rng(11)
    m, d, h = 264, 136, 552
    x = rng.standard_normal((m, d)).astype(np.float32)
    w1, w2 = (rng.standard_normal(s) / np.sqrt(s[1]) for s in ((h, d), (d, h)))
    b1, b2 = rng.standard_normal(h), rng.standard_normal(d)
    g = rng.standard_normal((m, d)).astype(np.float32)
    arrays = [a.astype(np.float32) for a in (x, w1, b1, w2, b2)]
    want = [st.tensor(a.astype(np.float64)).requires_grad_(True) for a in arrays]
    ref = st.nn.functional.feed_forward(*want, activation="gelu_tanh")
    ref.backward(st.tensor(g.astype(np.float64)))
    dt = getattr(st, dtype)
    tf32 = st.cuda.allow_tf32()
    st.cuda.set_allow_tf32(False)
    try:
        ins = [st.tensor(a).to(dt).cuda().requires_grad_(True) for a in arrays]
        y = st.nn.functional.feed_forward(*ins, activation="gelu_tanh")
        y.backward(st.tensor(g).to(dt).cuda())
    finally:
        st.cuda.set_allow_tf32(tf32)
    close(to_np(y.to(st.float32)), to_np(ref), dtype, "output")
    for name, t, r in zip(("dx", "dw1", "db1", "dw2", "db2"), ins, want):
        close(to_np(t.grad.to(st.float32)), to_np(r.grad), dtype, name)


def test_tuned_weight_gradient_accumulates_once(gemm_tuning):
    """Timing writes the call's own output, which the call then rewrites: a weight gradient that
    the engine accumulates into an existing one (no bias, a second backward) is the sum of the two,
    not more."""
    st.manual_seed(4)
    lin = st.nn.Linear(200, 120, bias=False).cuda()
    x = st.randn(328, 200).cuda()
    lin(x).sum().backward()
    once = to_np(lin.weight.grad).copy()
    lin(x).sum().backward()
    np.testing.assert_allclose(to_np(lin.weight.grad), 2 * once, rtol=1e-5, atol=1e-4)
    want = np.ones((328, 120)).T @ to_np(x).astype(np.float64)
    np.testing.assert_allclose(once, want, rtol=1e-4, atol=1e-3)


def test_tuned_accumulating_weight_gradient_times_on_scratch(gemm_tuning):
    """linear_cross_entropy adds each chunk's weight gradient into the last (a GEMM that accumulates
    into its output): tuning times that GEMM on a scratch matrix, so the gradient equals the
    one-chunk computation's."""
    rng = np.random.default_rng(13)
    h = rng.standard_normal((96, 40)).astype(np.float32)
    w = (rng.standard_normal((136, 40)) / 6).astype(np.float32)
    target = rng.integers(0, 136, 96)
    grads = []
    for chunk_rows in (24, 0):  # four chunks, then the default (one chunk at this size)
        hs, ws = (st.tensor(a).cuda().requires_grad_(True) for a in (h, w))
        st.nn.functional.linear_cross_entropy(hs, ws, st.tensor(target).cuda(), chunk_rows=chunk_rows).backward()
        grads.append([to_np(hs.grad), to_np(ws.grad)])
    for chunked, whole in zip(*grads):
        np.testing.assert_allclose(chunked, whole, rtol=1e-5, atol=1e-6)


def test_tuned_gemm_first_met_under_capture_replays_the_eager_result(gemm_tuning):
    """A shape first met inside a graph capture cannot be timed there (timing synchronises): the
    captured call takes the heuristic's choice, and replays equal the eager computation."""
    st.manual_seed(6)
    lin = st.nn.Linear(72, 88).cuda()
    x = st.randn(56, 72).cuda()
    st.cuda.synchronize()
    g = st.cuda.CUDAGraph()
    with st.cuda.graph(g):
        y = lin(x)
    x.copy_(st.randn(56, 72).cuda())
    g.replay()
    st.cuda.synchronize()
    want = to_np(x).astype(np.float64) @ to_np(lin.weight).T.astype(np.float64) + to_np(lin.bias)
    np.testing.assert_allclose(to_np(y), want, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(to_np(lin(x)), to_np(y), rtol=1e-5, atol=1e-5)
