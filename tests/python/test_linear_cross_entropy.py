"""st.nn.functional.linear_cross_entropy: cross_entropy(linear(x, w, b), target) computed in chunks
of rows without keeping the (rows, classes) logits. Loss and gradients against PyTorch's composite
in float64 (both reductions, ignored rows, uneven chunks, leading dims), the peak memory against
our own composite (the logits never live whole), autocast's float32 master gradients on the CPU
and on CUDA, and the errors."""

from __future__ import annotations

import numpy as np
import pytest

import spiraltorch as st
from conftest import HAVE_CUDA, CUDA_SKIP_REASON, needs_torch, to_np

F = st.nn.functional


def _case(rows=11, features=6, classes=9, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((rows, features))
    w = rng.standard_normal((classes, features))
    b = rng.standard_normal(classes)
    t = rng.integers(0, classes, rows)
    t[2] = -100
    return x, w, b, t


@needs_torch
@pytest.mark.parametrize("reduction", ["mean", "sum"])
@pytest.mark.parametrize("chunk_rows", [0, 4, 5])
@pytest.mark.parametrize("bias", [True, False], ids=["bias", "no_bias"])
def test_matches_torch_composite_in_float64(reduction, chunk_rows, bias):
    import torch

    x, w, b, t = _case()
    xs, ws, bs = (st.tensor(a).requires_grad_(True) for a in (x, w, b))
    loss = F.linear_cross_entropy(xs, ws, st.tensor(t), bs if bias else None, reduction=reduction,
                                  chunk_rows=chunk_rows)
    (loss * 1.5).backward()
    xt, wt, bt = (torch.tensor(a, requires_grad=True) for a in (x, w, b))
    want = torch.nn.functional.cross_entropy(torch.nn.functional.linear(xt, wt, bt if bias else None),
                                             torch.tensor(t), reduction=reduction)
    (want * 1.5).backward()
    np.testing.assert_allclose(to_np(loss), want.item(), rtol=1e-12)
    np.testing.assert_allclose(to_np(xs.grad), xt.grad.numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(to_np(ws.grad), wt.grad.numpy(), rtol=1e-10, atol=1e-12)
    if bias:
        np.testing.assert_allclose(to_np(bs.grad), bt.grad.numpy(), rtol=1e-10, atol=1e-12)
    else:
        assert bs.grad is None


def test_leading_dims_equal_the_composite():
    rng = np.random.default_rng(1)
    x = st.tensor(rng.standard_normal((2, 5, 8))).requires_grad_(True)
    w = st.tensor(rng.standard_normal((7, 8))).requires_grad_(True)
    t = st.tensor(rng.integers(0, 7, (2, 5)))
    loss = F.linear_cross_entropy(x, w, t, chunk_rows=3)
    loss.backward()
    gx, gw = to_np(x.grad), to_np(w.grad)
    x.grad = None
    w.grad = None
    want = F.cross_entropy(F.linear(x, w).reshape(10, 7), t.reshape(10))
    want.backward()
    np.testing.assert_allclose(to_np(loss), to_np(want), rtol=1e-12)
    np.testing.assert_allclose(gx, to_np(x.grad), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(gw, to_np(w.grad), rtol=1e-10, atol=1e-12)


def test_keeps_no_logits_on_the_cpu():
    """Forward and backward of 2048 rows x 4096 classes in the CPU's automatic chunks (256 rows): the
    allocator's peak stays well under the logits' size; the composite's holds the logits and their
    gradient."""
    rng = np.random.default_rng(2)
    rows, feats, classes = 2048, 32, 4096
    x = st.tensor(rng.standard_normal((rows, feats)).astype(np.float32))
    w0 = st.tensor(rng.standard_normal((classes, feats)).astype(np.float32) / 6)
    t = st.tensor(rng.integers(0, classes, rows))
    peaks, grads = [], []
    for fused in (True, False):
        w = w0.detach().requires_grad_(True)
        st.cpu.reset_peak_memory_stats()
        base = st.cpu.memory_allocated()
        loss = F.linear_cross_entropy(x, w, t) if fused else F.cross_entropy(F.linear(x, w), t)
        loss.backward()
        peaks.append(st.cpu.max_memory_allocated() - base)
        grads.append(to_np(w.grad))
        del w, loss
    logits_bytes = rows * classes * 4
    np.testing.assert_allclose(grads[0], grads[1], rtol=2e-4, atol=1e-7)
    assert peaks[0] < 0.4 * logits_bytes, (peaks, logits_bytes)
    assert peaks[1] >= 2 * logits_bytes, (peaks, logits_bytes)


def test_cpu_autocast_gives_float32_master_gradients():
    x, w, b, t = _case(rows=9, features=16, classes=12, seed=3)
    ins = [st.tensor(a.astype(np.float32)).requires_grad_(True) for a in (x, w, b)]
    ref = [st.tensor(a.astype(np.float32)).requires_grad_(True) for a in (x, w, b)]
    with st.autocast("cpu", dtype=st.bfloat16):
        loss = F.linear_cross_entropy(ins[0], ins[1], st.tensor(t), ins[2], chunk_rows=4)
        want = F.cross_entropy(F.linear(*ref), st.tensor(t))
    assert loss.dtype == st.float32
    np.testing.assert_allclose(to_np(loss), to_np(want), rtol=1e-5)
    loss.backward()
    want.backward()
    for got, exp in zip(ins, ref):
        assert got.grad.dtype == st.float32
        scale = np.abs(to_np(exp.grad)).max()
        assert np.abs(to_np(got.grad) - to_np(exp.grad)).max() / scale < 1e-2


def test_errors_name_the_operation():
    x, w = st.randn(4, 3), st.randn(5, 3)
    t = st.tensor(np.array([0, 1, 2, 3]))
    with pytest.raises(ValueError, match="linear_cross_entropy.*'none'"):
        F.linear_cross_entropy(x, w, t, reduction="none")
    with pytest.raises(ValueError, match="chunk_rows"):
        F.linear_cross_entropy(x, w, t, chunk_rows=-2)
    with pytest.raises(IndexError, match="linear_cross_entropy: target 9 is out of bounds for 5 classes"):
        F.linear_cross_entropy(x, w, st.tensor(np.array([0, 9, 1, 2])))
    with pytest.raises(Exception, match="linear_cross_entropy.*does not match"):
        F.linear_cross_entropy(st.randn(4, 2), w, t)
    wg = w.detach().requires_grad_(True)
    loss = F.linear_cross_entropy(x, wg, t)
    with pytest.raises(ValueError, match="create_graph"):
        st.autograd.grad([loss], [wg], create_graph=True)


@pytest.mark.skipif(not HAVE_CUDA, reason=CUDA_SKIP_REASON)
@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_cuda_autocast_equals_composite_with_less_memory(dtype):
    """On CUDA under autocast: the loss equals the composite's, the float32 weight and bias get
    float32 gradients close to it, and the peak stays far below the composite's logits + gradient."""
    dt = getattr(st, dtype)
    rng = np.random.default_rng(4)
    rows, feats, classes = 4096, 128, 16384
    x = st.tensor(rng.standard_normal((rows, feats)).astype(np.float32)).cuda()
    w0 = st.tensor((rng.standard_normal((classes, feats)) / 11).astype(np.float32)).cuda()
    b0 = st.tensor(rng.standard_normal(classes).astype(np.float32)).cuda()
    t = st.tensor(rng.integers(0, classes, rows)).cuda()
    out = []
    for fused in (True, False):
        w, b = w0.detach().requires_grad_(True), b0.detach().requires_grad_(True)
        st.cuda.synchronize()
        st.cuda.reset_peak_memory_stats()
        base = st.cuda.memory_allocated()
        with st.autocast("cuda", dtype=dt):
            loss = (F.linear_cross_entropy(x, w, t, b, chunk_rows=256) if fused
                    else F.cross_entropy(F.linear(x, w, b), t))
        loss.backward()
        st.cuda.synchronize()
        out.append((loss.item(), to_np(w.grad), to_np(b.grad), st.cuda.max_memory_allocated() - base))
        assert w.grad.dtype == st.float32 and b.grad.dtype == st.float32
        del w, b, loss
    (l1, gw1, gb1, p1), (l2, gw2, gb2, p2) = out
    assert abs(l1 - l2) < 1e-3 * abs(l2)
    for a, e in ((gw1, gw2), (gb1, gb2)):
        assert np.abs(a - e).max() / np.abs(e).max() < 2e-2
    logits_bytes = rows * classes * 2
    assert p1 < 0.5 * logits_bytes, (p1, logits_bytes)
    assert p2 >= 2 * logits_bytes, (p2, logits_bytes)


def _float64_reference(x, w, b, t, ignore_index=-100):
    """Mean cross-entropy of x w^T + b against t and its gradients, in float64 NumPy."""
    z = x @ w.T + b
    m = z.max(axis=1, keepdims=True)
    p = np.exp(z - m)
    lse = (m + np.log(p.sum(axis=1, keepdims=True)))[:, 0]
    keep = t != ignore_index
    n = keep.sum()
    rows = np.flatnonzero(keep)
    loss = (lse[rows] - z[rows, t[rows]]).sum() / n
    dz = np.exp(z - lse[:, None])
    dz[rows, t[rows]] -= 1
    dz[~keep] = 0
    dz /= n
    return loss, dz @ w, dz.T @ x, dz.sum(axis=0)


@pytest.mark.parametrize("device", ["cpu", pytest.param("cuda", marks=pytest.mark.skipif(
    not HAVE_CUDA, reason=CUDA_SKIP_REASON))])
@pytest.mark.parametrize("autocast,classes", [
    (None, 7), (None, 1001), (None, 50304),  # float32: 50304 is past the row-in-registers kernel
    ("bfloat16", 7), ("bfloat16", 1001), ("bfloat16", 50304), ("bfloat16", 70001), ("float16", 1001),
])
def test_rows_and_gradient_in_one_pass_match_float64(device, autocast, classes):
    """Each chunk's loss and gradient come from one pass over its logits (on CUDA a block holds its
    row in registers up to 61,440 half or 30,720 float32 classes, two passes beyond): both, rows of
    every alignment (odd class counts), ignored rows and several chunks, against float64."""
    rng = np.random.default_rng(classes)
    rows, feats = 48, 32
    x = rng.standard_normal((rows, feats))
    w = rng.standard_normal((classes, feats)) / 4
    b = rng.standard_normal(classes) / 4
    t = rng.integers(0, classes, rows)
    t[[3, 17]] = -100
    ins = [st.tensor(a.astype(np.float32)).to(device).requires_grad_(True) for a in (x, w, b)]
    tt = st.tensor(t).to(device)
    if autocast:
        with st.autocast(device, dtype=getattr(st, autocast)):
            loss = F.linear_cross_entropy(ins[0], ins[1], tt, ins[2], chunk_rows=20)
    else:
        loss = F.linear_cross_entropy(ins[0], ins[1], tt, ins[2], chunk_rows=20)
    loss.backward()
    want = _float64_reference(x, w, b, t)
    tol = 2e-2 if autocast else 2e-3  # bf16/fp16 products; TF32 may take float32's on CUDA
    assert abs(loss.item() - want[0]) < tol * abs(want[0])
    for got, ref in zip((ins[0].grad, ins[1].grad, ins[2].grad), want[1:]):
        g = to_np(got).astype(np.float64)
        assert np.abs(g - ref).max() <= tol * np.abs(ref).max(), (np.abs(g - ref).max(), np.abs(ref).max())


@pytest.mark.skipif(not st.wgpu.is_available(), reason="wgpu not available")
def test_wgpu_equals_the_cpu():
    """On wgpu (lavapipe in CI): the chunked op through its fused cross-entropy rows equals the CPU's."""
    x, w, b, t = _case(rows=13, features=8, classes=12, seed=5)
    res = []
    for dev in ("cpu", "wgpu"):
        ins = [st.tensor(a.astype(np.float32)).to(dev).requires_grad_(True) for a in (x, w, b)]
        loss = F.linear_cross_entropy(ins[0], ins[1], st.tensor(t).to(dev), ins[2], chunk_rows=5)
        assert loss.device == dev
        loss.backward()
        res.append([to_np(loss)] + [to_np(v.grad) for v in ins])
    for got, want in zip(res[1], res[0]):
        np.testing.assert_allclose(got, want, rtol=2e-5, atol=2e-6)


def test_no_rows_is_the_composites_empty_mean():
    x = st.zeros((0, 4)).requires_grad_(True)
    w = st.randn(3, 4).requires_grad_(True)
    loss = F.linear_cross_entropy(x, w, st.tensor(np.zeros(0, dtype=np.int64)))
    want = F.cross_entropy(F.linear(x, w), st.tensor(np.zeros(0, dtype=np.int64)))
    np.testing.assert_equal(np.isnan(to_np(loss)), np.isnan(to_np(want)))
