"""layer_norm on CUDA over float16/bfloat16 rows read and written as they are (computed in float32, no
float32 copies): output and the gradients of input, weight and bias against a float64 CPU reference,
for rows the register kernels take (cols a multiple of 8) and rows they decline, with and without the
affine parameters; half input with float32 parameters (the float32-copy path) keeps its old results;
create_graph through the node. Without CUDA the module is skipped."""

from __future__ import annotations

import numpy as np
import pytest

import spiraltorch as st
from conftest import HAVE_CUDA, CUDA_SKIP_REASON, to_np

pytestmark = pytest.mark.skipif(not HAVE_CUDA, reason=CUDA_SKIP_REASON)

# One rounding to the half type of an O(1) result (bfloat16 keeps 8 bits, float16 11).
TOL = {"bfloat16": 1.6e-2, "float16": 2e-3}


def reference(x, w, b, g, eps=1e-5):
    ins = [st.tensor(a.astype(np.float64)).requires_grad_(True) if a is not None else None for a in (x, w, b)]
    y = st.nn.functional.layer_norm(ins[0], [x.shape[-1]], ins[1], ins[2], eps)
    (y * st.tensor(g.astype(np.float64))).sum().backward()
    return to_np(y), [to_np(t.grad) if t is not None else None for t in ins]


def close(got, want, dtype, what, scale=1.0):
    err = np.abs(got.astype(np.float64) - want).max() / max(np.abs(want).max(), scale)
    assert err < TOL[dtype], f"{what}: relative error {err:.2e} over tolerance {TOL[dtype]:.1e}"


def half_inputs(rows, cols, affine, seed):
    rng = np.random.default_rng(seed)
    # Values exactly representable in bfloat16 and float16, so the reference sees what the kernel reads.
    q = lambda a: (np.round(a * 64) / 64).astype(np.float32)  # noqa: E731
    x = q(rng.standard_normal((rows, cols)) * 2 + 0.5)
    w = q(1 + 0.5 * rng.standard_normal(cols)) if affine else None
    b = q(0.5 * rng.standard_normal(cols)) if affine else None
    g = q(rng.standard_normal((rows, cols)))
    return x, w, b, g


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("cols", [768, 300, 37], ids=["regs", "rows-300", "rows-37"])
@pytest.mark.parametrize("affine", [True, False], ids=["affine", "plain"])
def test_half_layer_norm_matches_float64(dtype, cols, affine):
    rows = 33
    x, w, b, g = half_inputs(rows, cols, affine, cols)
    want_y, want_grads = reference(x, w, b, g)
    dt = getattr(st, dtype)
    ins = [st.tensor(a).to(dt).cuda().requires_grad_(True) if a is not None else None for a in (x, w, b)]
    y = st.nn.functional.layer_norm(ins[0], [cols], ins[1], ins[2], 1e-5)
    assert y.dtype == dt and tuple(y.shape) == (rows, cols)
    y.backward(st.tensor(g).to(dt).cuda())
    close(to_np(y.to(st.float32)), want_y, dtype, "output")
    for name, t, want in zip(("dx", "dw", "db"), ins, want_grads):
        if t is None:
            continue
        assert t.grad.dtype == dt, name
        # dw and db sum `rows` products: their scale is that of the largest entry
        close(to_np(t.grad.to(st.float32)), want, dtype, name)


def test_half_layer_norm_module_3d_and_float32_parameters():
    """LayerNorm(768) cast to bfloat16 runs the half kernels; the same input through a float32
    LayerNorm (float32 parameters) takes the float32 copies and gives a bfloat16 output as before;
    both agree with each other to one bfloat16 rounding."""
    st.manual_seed(0)
    ln32 = st.nn.LayerNorm(768).cuda()
    with st.no_grad():
        ln32.weight.copy_(st.randn(768).cuda() * 0.25 + 1)
        ln32.bias.copy_(st.randn(768).cuda() * 0.25)
    ln16 = st.nn.LayerNorm(768).cuda()
    ln16.load_state_dict(ln32.state_dict())
    ln16 = ln16.to(st.bfloat16)
    x = (st.randn(2, 5, 768) * 3).to(st.bfloat16).cuda()
    a, c = ln16(x), ln32(x)
    assert a.dtype == st.bfloat16 and c.dtype == st.bfloat16 and tuple(a.shape) == (2, 5, 768)
    # ln16's parameters are bfloat16 roundings of ln32's: within two bfloat16 roundings of each other
    np.testing.assert_allclose(to_np(a.to(st.float32)), to_np(c.to(st.float32)), rtol=2e-2, atol=4e-2)


def test_half_layer_norm_create_graph():
    """d/dx of sum(dx^2) through the bfloat16 node equals the float32 result within bfloat16 rounding."""
    x, w, b, g = half_inputs(6, 64, True, 5)
    outs = {}
    for dt in (st.float32, st.bfloat16):
        xs, ws = st.tensor(x).to(dt).cuda().requires_grad_(True), st.tensor(w).to(dt).cuda().requires_grad_(True)
        y = st.nn.functional.layer_norm(xs, [64], ws, st.tensor(b).to(dt).cuda(), 1e-5)
        (dx,) = st.autograd.grad([y], [xs], [st.tensor(g).to(dt).cuda()], create_graph=True)
        (dw2,) = st.autograd.grad([(dx.to(st.float32) ** 2).sum()], [ws])
        outs[dt] = (to_np(dx.to(st.float32)), to_np(dw2.to(st.float32)))
    for got, want in zip(outs[st.bfloat16], outs[st.float32]):
        err = np.abs(got - want).max() / max(np.abs(want).max(), 1.0)
        assert err < 5e-2, err
