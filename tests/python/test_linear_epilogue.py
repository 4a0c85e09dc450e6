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
