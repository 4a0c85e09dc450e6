"""bfloat16 matmul on the CPU: through oneDNN with float32 accumulation where the CPU multiplies
bf16 natively (describe_device("cpu")["bf16_matmul"] == "onednn"), else through float32 copies.
Either way the result equals the float32 product of the same bf16 values rounded once to bf16
(up to accumulation order), for plain, transposed, batched and broadcast operands, and gradients
flow; checked against NumPy and against torch's bf16 matmul."""

from __future__ import annotations

import numpy as np
import pytest

import spiraltorch as st
from conftest import HAVE_TORCH, to_np


def _bf16(a: np.ndarray) -> st.Tensor:
    return st.tensor(a.astype(np.float32)).to(st.bfloat16)


def _ref(x: st.Tensor, y: st.Tensor) -> np.ndarray:
    return np.matmul(to_np(x.to(st.float32)).astype(np.float64), to_np(y.to(st.float32)).astype(np.float64))


def test_cpu_reports_its_bf16_matmul_path():
    assert st.describe_device("cpu")["bf16_matmul"] in ("onednn", "float32")


@pytest.mark.parametrize("shape_a,shape_b,ta,tb", [
    ((64, 96), (96, 48), False, False),
    ((33, 17), (17, 65), True, False),
    ((40, 24), (24, 56), False, True),
    ((3, 20, 30), (3, 30, 10), False, False),   # batched
    ((4, 16, 8), (8, 12), False, False),         # broadcast weight
    ((2, 1, 8, 5), (3, 5, 7), False, True),      # broadcast batch dims, transposed b
])
def test_bf16_matmul_equals_float32_product_rounded_once(shape_a, shape_b, ta, tb):
    rng = np.random.default_rng(0)
    a = rng.standard_normal(shape_a[:-2] + (shape_a[-1], shape_a[-2]) if ta else shape_a)
    b = rng.standard_normal(shape_b[:-2] + (shape_b[-1], shape_b[-2]) if tb else shape_b)
    x, y = _bf16(a), _bf16(b)
    if ta:
        x = x.transpose(-1, -2)
    if tb:
        y = y.transpose(-1, -2)
    out = st.matmul(x, y)
    assert out.dtype == st.bfloat16
    ref = _ref(x, y)
    got = to_np(out.to(st.float32)).astype(np.float64)
    # one bf16 rounding (relative 2^-8) of a float32-accumulated sum
    np.testing.assert_allclose(got, ref, rtol=2 ** -7, atol=1e-2 * np.abs(ref).max())


def test_bf16_matmul_gradients_match_float32_within_bf16_rounding():
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal((16, 24)), rng.standard_normal((24, 8))
    x, y = _bf16(a).requires_grad_(), _bf16(b).requires_grad_()
    st.matmul(x, y).sum().backward()
    xf, yf = x.detach().to(st.float32).requires_grad_(), y.detach().to(st.float32).requires_grad_()
    st.matmul(xf, yf).sum().backward()
    for g, gf in ((x.grad, xf.grad), (y.grad, yf.grad)):
        assert g.dtype == st.bfloat16
        np.testing.assert_allclose(to_np(g.to(st.float32)), to_np(gf), rtol=2 ** -7, atol=1e-2)


@pytest.mark.skipif(not HAVE_TORCH, reason="PyTorch is not installed")
def test_bf16_matmul_matches_torch_bf16():
    import torch
    rng = np.random.default_rng(2)
    a, b = rng.standard_normal((8, 32, 64)).astype(np.float32), rng.standard_normal((64, 40)).astype(np.float32)
    ours = to_np(st.matmul(_bf16(a), _bf16(b)).to(st.float32))
    theirs = (torch.tensor(a).bfloat16() @ torch.tensor(b).bfloat16()).float().numpy()
    # both accumulate in float32 and round once; they may differ by one bf16 ulp
    np.testing.assert_allclose(ours, theirs, rtol=2 ** -7, atol=2 ** -7 * np.abs(theirs).max())
