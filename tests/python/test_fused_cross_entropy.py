"""Fused cross-entropy on the GPU backends, CUDA and wgpu (index targets, no class weights, no
label smoothing): loss and gradient against a float64 CPU reference for every reduction, with
ignore_index, half-precision logits and double backward; peak memory of forward + backward stays
near one logits-sized gradient; no host read for targets copied from the host (their range is
taken during the copy), one (the target bounds check) for targets made on the device. Other variants
(weights, smoothing, probability targets) keep the composite path."""

from __future__ import annotations

import numpy as np
import pytest

import spiraltorch as st
import spiraltorch.nn.functional as F
from conftest import HAVE_CUDA, CUDA_SKIP_REASON, to_np

HAVE_WGPU = st.wgpu.is_available()
DEVICES = [
    pytest.param("cuda", marks=pytest.mark.skipif(not HAVE_CUDA, reason=CUDA_SKIP_REASON)),
    pytest.param("wgpu", marks=pytest.mark.skipif(not HAVE_WGPU, reason="wgpu not available: " +
                                                  ("" if HAVE_WGPU else st.wgpu.unavailable_reason()))),
]
pytestmark = pytest.mark.parametrize("dev", DEVICES)


def memory(dev):
    """(synchronize, reset_peak, allocated, max_allocated) of the device's allocator."""
    m = st.cuda if dev == "cuda" else st.wgpu
    return m.synchronize, m.reset_peak_memory_stats, m.memory_allocated, m.max_memory_allocated


def reference(x, t, **kw):
    xr = st.tensor(x.astype(np.float64)).requires_grad_(True)
    loss = F.cross_entropy(xr, st.tensor(t), **kw)
    loss.sum().backward()
    return to_np(loss), to_np(xr.grad)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("ignore", [False, True])
def test_fused_matches_float64_reference(dev, reduction, ignore):
    rng = np.random.default_rng(0)
    x = (rng.standard_normal((37, 1003)) * 3).astype(np.float32)
    t = rng.integers(0, 1003, 37).astype(np.int64)
    kw = {"reduction": reduction}
    if ignore:
        t[::4] = -100
        kw["ignore_index"] = -100
    want, want_grad = reference(x, t, **kw)
    xs = st.tensor(x).to(dev).requires_grad_(True)
    loss = F.cross_entropy(xs, st.tensor(t).to(dev), **kw)
    loss.sum().backward()
    np.testing.assert_allclose(to_np(loss), want, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(to_np(xs.grad), want_grad, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("dtype", [st.bfloat16, st.float16], ids=["bf16", "fp16"])
def test_fused_half_logits(dev, dtype):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((64, 512)).astype(np.float32)
    t = rng.integers(0, 512, 64).astype(np.int64)
    xh = st.tensor(x).to(dtype)
    want, want_grad = reference(to_np(xh.to(st.float32)), t)
    xs = xh.to(dev).requires_grad_(True)
    loss = F.cross_entropy(xs, st.tensor(t).to(dev))
    assert loss.dtype == dtype
    loss.backward()
    np.testing.assert_allclose(float(to_np(loss.to(st.float32))), want, rtol=1e-2)
    np.testing.assert_allclose(to_np(xs.grad.to(st.float32)), want_grad, rtol=5e-2, atol=1e-4)


def test_fused_double_backward(dev):
    """create_graph through the fused loss: a Hessian-vector product equal to PyTorch's (float64
    on CUDA; float32 on wgpu, which has no float64)."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(2)
    ftype = np.float64 if dev == "cuda" else np.float32
    x = rng.standard_normal((5, 7)).astype(ftype)
    t = rng.integers(0, 7, 5).astype(np.int64)
    v = rng.standard_normal((5, 7)).astype(ftype)
    xs = st.tensor(x).to(dev).requires_grad_(True)
    loss = F.cross_entropy(xs, st.tensor(t).to(dev))
    (g,) = st.autograd.grad([loss], [xs], create_graph=True)
    (h,) = st.autograd.grad([(g * st.tensor(v).to(dev)).sum()], [xs])
    xt = torch.tensor(x.astype(np.float64), requires_grad=True)
    (gt,) = torch.autograd.grad(torch.nn.functional.cross_entropy(xt, torch.tensor(t)), xt, create_graph=True)
    (ht,) = torch.autograd.grad((gt * torch.tensor(v.astype(np.float64))).sum(), xt)
    tol = dict(rtol=1e-10, atol=1e-12) if dev == "cuda" else dict(rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(to_np(g), gt.detach().numpy(), **tol)
    np.testing.assert_allclose(to_np(h), ht.numpy(), **tol)


def test_fused_keeps_one_logits_sized_buffer(dev):
    """Forward + backward of (n, n) float32 logits allocate the input gradient and the leaf's
    accumulated .grad beyond the logits, nothing more (the composite path kept log-probabilities
    and a one-hot-sized gradient besides: at least 3 logits-sized buffers). Measured on the H200
    (CUDA, n = 8192, 256 MiB logits): exactly 2 x 256 MiB. n = 1024 on wgpu (lavapipe runs it on
    the CPU)."""
    n = 8192 if dev == "cuda" else 1024
    x = st.randn(n, n).to(dev).requires_grad_(True)
    t = st.randint(0, n, (n,)).to(dev)
    sync, reset_peak, allocated, max_allocated = memory(dev)
    sync()
    reset_peak()
    base = allocated()
    F.cross_entropy(x, t).backward()
    sync()
    extra = max_allocated() - base
    assert extra < 2.25 * n * n * 4, extra / 2**20


def test_fused_host_reads_per_loss(dev):
    """On wgpu, targets copied from the host carry their range (taken during the copy), so the
    loss and its backward read nothing back; targets made on the device, or written in place
    after the copy, are checked with one read (both ends of the range at once). Out-of-range
    targets raise either way, and the values match the checked path."""
    if dev != "wgpu":
        pytest.skip("host reads are counted by the wgpu backend")
    g = np.random.default_rng(4)
    xn = g.standard_normal((16, 10)).astype(np.float32)
    tn = g.integers(0, 10, 16)
    want, want_grad = reference(xn, tn)
    x = st.tensor(xn).to(dev).requires_grad_(True)
    t = st.tensor(tn).to(dev)
    st.wgpu.synchronize()
    r0, d0 = st.wgpu.host_reads(), st.wgpu.dispatches()
    loss = F.cross_entropy(x, t)
    # the mean's 1/N comes in the kernel's per-row losses: the rows and their sum, nothing else
    assert st.wgpu.dispatches() - d0 == 2
    d0 = st.wgpu.dispatches()
    loss.backward()
    assert st.wgpu.dispatches() - d0 == 2  # the seed gradient's fill and the fused backward
    st.wgpu.synchronize()
    assert st.wgpu.host_reads() - r0 == 0
    np.testing.assert_allclose(to_np(loss), want, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(to_np(x.grad), want_grad / 1, rtol=1e-5, atol=1e-6)
    # a view of a host copy: the copy's range bounds the view's
    tv = st.tensor(np.concatenate([tn, [3, 7]])).to(dev)[:16]
    r0 = st.wgpu.host_reads()
    F.cross_entropy(x, tv)
    assert st.wgpu.host_reads() - r0 == 0
    # targets computed on the device: the range is read once
    td = t + 0
    r0 = st.wgpu.host_reads()
    np.testing.assert_allclose(to_np(F.cross_entropy(x.detach(), td)), want, rtol=1e-5, atol=1e-6)
    assert st.wgpu.host_reads() - r0 == 2  # the check and to_np
    with pytest.raises(IndexError, match="target 10 is out of bounds for 10 classes"):
        F.cross_entropy(x, st.tensor(np.arange(16) % 11).to(dev))
    with pytest.raises(IndexError, match="target -3 is out of bounds for 10 classes"):
        F.cross_entropy(x, st.tensor(np.arange(16) % 10 - 3).to(dev))
    # written in place after the copy: the remembered range no longer counts
    t2 = st.tensor(tn).to(dev)
    t2[0] = 12
    with pytest.raises(IndexError, match="target 12 is out of bounds for 10 classes"):
        F.cross_entropy(x, t2)
    # ignore_index inside the class range: the mask and the check come back
    ti = st.tensor(np.where(tn == 2, -100, tn)).to(dev)
    w2, _ = reference(xn, np.where(tn == 2, -100, tn))
    np.testing.assert_allclose(to_np(F.cross_entropy(x.detach(), ti)), w2, rtol=1e-5, atol=1e-6)
    w3, _ = reference(xn, tn, ignore_index=2)
    np.testing.assert_allclose(to_np(F.cross_entropy(x.detach(), t, ignore_index=2)), w3, rtol=1e-5, atol=1e-6)


def test_index_checks_skip_reads_for_host_copies(dev):
    """index_select / gather / embedding on indices copied from the host check their bounds
    without reading the device; indices out of bounds still raise IndexError."""
    if dev != "wgpu":
        pytest.skip("host reads are counted by the wgpu backend")
    w = st.randn(20, 4).to(dev)
    idx = st.tensor(np.array([0, 5, 19, 3])).to(dev)
    st.wgpu.synchronize()
    r0 = st.wgpu.host_reads()
    e = st.nn.functional.embedding(idx, w)
    s = w.index_select(0, idx)
    st.wgpu.synchronize()
    assert st.wgpu.host_reads() - r0 == 0
    np.testing.assert_array_equal(to_np(e), to_np(w)[[0, 5, 19, 3]])
    np.testing.assert_array_equal(to_np(s), to_np(w)[[0, 5, 19, 3]])
    with pytest.raises(IndexError, match="index 20 is out of bounds"):
        w.index_select(0, st.tensor(np.array([0, 20])).to(dev))
