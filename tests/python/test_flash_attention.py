"""Fused attention on CUDA: scaled_dot_product_attention with float16/bfloat16 operands takes
cuDNN's fused attention (where the build has cuDNN's graph API) or SpiralTorch's own flash kernels
(no (L, S) buffer either way) and matches a float64 reference in output and all three input
gradients on both paths, with and without the causal mask, for head dims 32/48/64/128, sequence
lengths off the 64-row tile and L != S; a cuDNN forward followed by the own kernels' backward (and
the reverse) agrees too, as both keep the same log-sum-exp; the ``st.backends.cuda`` switches turn
either off. Without CUDA: the switches still read back."""

from __future__ import annotations

import numpy as np
import pytest

import spiraltorch as st
import spiraltorch.nn.functional as F
from conftest import HAVE_CUDA, CUDA_SKIP_REASON, to_np

needs_cuda = pytest.mark.skipif(not HAVE_CUDA, reason=CUDA_SKIP_REASON)


def test_flash_switch_reads_back():
    sw = st.backends.cuda
    assert sw.flash_sdp_enabled() is True
    try:
        sw.enable_flash_sdp(False)
        assert sw.flash_sdp_enabled() is False
        assert repr(sw) == "cuda(flash_sdp_enabled=False, cudnn_sdp_enabled=True)"
    finally:
        sw.enable_flash_sdp(True)
    assert sw.flash_sdp_enabled() is True


def test_cudnn_sdp_switch_reads_back():
    sw = st.backends.cuda
    assert sw.cudnn_sdp_enabled() is True
    try:
        sw.enable_cudnn_sdp(False)
        assert sw.cudnn_sdp_enabled() is False
        assert repr(sw) == "cuda(flash_sdp_enabled=True, cudnn_sdp_enabled=False)"
    finally:
        sw.enable_cudnn_sdp(True)
    assert sw.cudnn_sdp_enabled() is True


class paths:
    """Context manager: which fused paths scaled_dot_product_attention may take."""

    def __init__(self, cudnn=True, flash=True):
        self.cudnn, self.flash = cudnn, flash

    def __enter__(self):
        st.backends.cuda.enable_cudnn_sdp(self.cudnn)
        st.backends.cuda.enable_flash_sdp(self.flash)

    def __exit__(self, *exc):
        st.backends.cuda.enable_cudnn_sdp(True)
        st.backends.cuda.enable_flash_sdp(True)


def cudnn_attention_built():
    return bool(st.describe_device("cuda").get("cudnn_attention"))


def reference(q, k, v, g, causal):
    """Output and (dq, dk, dv) of softmax(q k^T / sqrt(d) [+ causal]) v in float64 on the CPU."""
    ins = [st.tensor(a.astype(np.float64)).requires_grad_(True) for a in (q, k, v)]
    out = F.scaled_dot_product_attention(*ins, is_causal=causal)
    (out * st.tensor(g.astype(np.float64))).sum().backward()
    return to_np(out), [to_np(t.grad) for t in ins]


def on_cuda(q, k, v, g, causal, dtype):
    ins = [st.tensor(a).to(dtype).cuda().requires_grad_(True) for a in (q, k, v)]
    out = F.scaled_dot_product_attention(*ins, is_causal=causal)
    assert out.dtype == dtype and out.shape == tuple(q.shape[:-1]) + (v.shape[-1],)
    out.backward(st.tensor(g).to(dtype).cuda())
    return to_np(out.to(st.float32)), [to_np(t.grad.to(st.float32)) for t in ins]


def assert_close(got, want, dtype, what):
    # Relative to the largest reference value, at least 1: gradients that vanish (one visible
    # key) come out as the rounding noise of delta = rowsum(dO * O) in the storage type.
    tol = 4e-2 if dtype == st.bfloat16 else 5e-3
    err = np.abs(got - want).max() / max(np.abs(want).max(), 1.0)
    assert err < tol, f"{what}: max error {err:.2e} of the largest value exceeds {tol:.0e}"


def inputs(shape_q, shape_kv, seed=0):
    rng = np.random.default_rng(seed)
    q = rng.standard_normal(shape_q).astype(np.float32)
    k, v = (rng.standard_normal(shape_kv).astype(np.float32) for _ in range(2))
    g = rng.standard_normal(shape_q[:-1] + (shape_kv[-1],)).astype(np.float32)
    return q, k, v, g


@needs_cuda
@pytest.mark.parametrize("path", ["cudnn", "own"])
@pytest.mark.parametrize("dtype", [st.bfloat16, st.float16], ids=["bf16", "fp16"])
@pytest.mark.parametrize("d", [32, 64, 128, 48])
@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
@pytest.mark.parametrize("L,S", [(130, 130), (64, 200), (200, 77), (1, 5)])
def test_flash_matches_float64_reference(path, dtype, d, causal, L, S):
    q, k, v, g = inputs((2, 3, L, d), (2, 3, S, d), seed=L + S + d)
    want_out, want_grads = reference(q, k, v, g, causal)
    with paths(cudnn=path == "cudnn"):
        out, grads = on_cuda(q, k, v, g, causal, dtype)
    assert_close(out, want_out, dtype, "output")
    for name, a, b in zip(("dq", "dk", "dv"), grads, want_grads):
        assert_close(a, b, dtype, name)


@needs_cuda
@pytest.mark.parametrize("dtype", [st.bfloat16, st.float16], ids=["bf16", "fp16"])
def test_flash_and_gemm_paths_agree(dtype):
    q, k, v, g = inputs((4, 2, 96, 64), (4, 2, 96, 64), seed=7)
    flash = on_cuda(q, k, v, g, True, dtype)
    st.backends.cuda.enable_flash_sdp(False)
    st.backends.cuda.enable_cudnn_sdp(False)
    try:
        plain = on_cuda(q, k, v, g, True, dtype)
    finally:
        st.backends.cuda.enable_flash_sdp(True)
        st.backends.cuda.enable_cudnn_sdp(True)
    assert_close(flash[0], plain[0], dtype, "output")
    for a, b in zip(flash[1], plain[1]):
        assert_close(a, b, dtype, "gradient")


@needs_cuda
@pytest.mark.parametrize("order", ["cudnn_then_own", "own_then_cudnn"])
def test_cudnn_and_own_kernels_share_the_log_sum_exp(order):
    """A forward on one path and its backward on the other (the switch flipped in between) give
    the float64 reference's gradients: cuDNN's Stats and the own kernels' lse are the same rows'
    natural log-sum-exp."""
    q, k, v, g = inputs((2, 4, 160, 64), (2, 4, 160, 64), seed=11)
    want_out, want_grads = reference(q, k, v, g, True)
    first, second = (True, False) if order == "cudnn_then_own" else (False, True)
    ins = [st.tensor(a).to(st.bfloat16).cuda().requires_grad_(True) for a in (q, k, v)]
    try:
        st.backends.cuda.enable_cudnn_sdp(first)
        out = F.scaled_dot_product_attention(*ins, is_causal=True)
        st.backends.cuda.enable_cudnn_sdp(second)
        out.backward(st.tensor(g).to(st.bfloat16).cuda())
    finally:
        st.backends.cuda.enable_cudnn_sdp(True)
    assert_close(to_np(out.to(st.float32)), want_out, st.bfloat16, "output")
    for name, t, want in zip(("dq", "dk", "dv"), ins, want_grads):
        assert_close(to_np(t.grad.to(st.float32)), want, st.bfloat16, name)


@needs_cuda
def test_cudnn_attention_is_taken_where_built():
    """With the own flash kernels off, a bf16 forward + backward at L = S = 2048 still keeps no
    (L, S) buffer exactly when cuDNN's attention is built in (it took the call); otherwise the
    GEMM path's buffers show."""
    q, k, v, g = inputs((2, 4, 2048, 64), (2, 4, 2048, 64), seed=4)
    scores_bytes = 8 * 2048 * 2048 * 2
    ins = [st.tensor(a).to(st.bfloat16).cuda().requires_grad_(True) for a in (q, k, v)]
    gg = st.tensor(g).to(st.bfloat16).cuda()
    with paths(cudnn=True, flash=False):
        st.cuda.synchronize()
        st.cuda.reset_peak_memory_stats()
        base = st.cuda.memory_allocated()
        F.scaled_dot_product_attention(*ins, is_causal=True).backward(gg)
        st.cuda.synchronize()
        extra = st.cuda.max_memory_allocated() - base
    if cudnn_attention_built():
        assert extra < scores_bytes / 2
    else:
        assert extra >= scores_bytes


@needs_cuda
def test_flash_keeps_no_score_matrix():
    """Peak memory of a forward + backward at L = S = 2048 stays far below one (L, S) buffer per
    batch-head (8 x 2048 x 2048 bf16 = 64 MiB) with the flash kernels, and exceeds it without."""
    q, k, v, g = inputs((2, 4, 2048, 64), (2, 4, 2048, 64), seed=3)
    scores_bytes = 8 * 2048 * 2048 * 2

    def peak_extra():
        ins = [st.tensor(a).to(st.bfloat16).cuda().requires_grad_(True) for a in (q, k, v)]
        gg = st.tensor(g).to(st.bfloat16).cuda()
        st.cuda.synchronize()
        st.cuda.reset_peak_memory_stats()
        base = st.cuda.memory_allocated()
        F.scaled_dot_product_attention(*ins, is_causal=True).backward(gg)
        st.cuda.synchronize()
        return st.cuda.max_memory_allocated() - base

    with paths(cudnn=False):
        with_flash = peak_extra()
    with paths(cudnn=False, flash=False):
        without = peak_extra()
    assert with_flash < scores_bytes / 2 < scores_bytes <= without


@needs_cuda
def test_transformer_layer_bf16_uses_flash_consistently():
    st.manual_seed(0)
    layer = st.nn.TransformerEncoderLayer(128, 2, dim_feedforward=256, dropout=0.0, batch_first=True).cuda()
    layer.to(st.bfloat16)
    x = st.tensor(np.random.default_rng(1).standard_normal((3, 70, 128)).astype(np.float32)).to(st.bfloat16).cuda()
    a = to_np(layer(x, is_causal=True).to(st.float32))
    st.backends.cuda.enable_flash_sdp(False)
    st.backends.cuda.enable_cudnn_sdp(False)
    try:
        b = to_np(layer(x, is_causal=True).to(st.float32))
    finally:
        st.backends.cuda.enable_flash_sdp(True)
        st.backends.cuda.enable_cudnn_sdp(True)
    assert np.isfinite(a).all()
    np.testing.assert_allclose(a, b, rtol=5e-2, atol=5e-2)


@needs_cuda
@pytest.mark.parametrize("d", [32, 64, 128])
@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
def test_flash_float32_under_tf32(d, causal):
    """float32 takes the flash kernels (TF32 products) only while TF32 matmuls are allowed, and
    matches the float64 reference to TF32 accuracy; without TF32 the exact path runs."""
    q, k, v, g = inputs((2, 2, 150, d), (2, 2, 150, d), seed=d)
    want_out, want_grads = reference(q, k, v, g, causal)
    before = st.cuda.allow_tf32()
    try:
        for tf32, tol in ((True, 1e-2), (False, 1e-5)):
            st.cuda.set_allow_tf32(tf32)
            out, grads = on_cuda(q, k, v, g, causal, st.float32)
            for got, want in zip([out] + grads, [want_out] + want_grads):
                err = np.abs(got - want).max() / max(np.abs(want).max(), 1.0)
                assert err < tol, (tf32, err)
    finally:
        st.cuda.set_allow_tf32(before)


@needs_cuda
@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
def test_flash_reads_head_views_in_place(causal):
    """q, k, v as head views (B, L, H, d) -> (B, H, L, d) of one packed projection, as
    MultiheadAttention makes them: same values and gradients as contiguous copies."""
    rng = np.random.default_rng(5)
    B, L, H, d = 2, 90, 3, 64
    qkv = rng.standard_normal((B, L, 3 * H * d)).astype(np.float32)
    g = rng.standard_normal((B, H, L, d)).astype(np.float32)
    q, k, v = (qkv[..., i * H * d:(i + 1) * H * d].reshape(B, L, H, d).transpose(0, 2, 1, 3) for i in range(3))
    want_out, want_grads = reference(q, k, v, g, causal)
    x = st.tensor(qkv).to(st.bfloat16).cuda().requires_grad_(True)
    views = [x[..., i * H * d:(i + 1) * H * d].reshape(B, L, H, d).transpose(1, 2) for i in range(3)]
    out = F.scaled_dot_product_attention(*views, is_causal=causal)
    out.backward(st.tensor(g).to(st.bfloat16).cuda())
    assert_close(to_np(out.to(st.float32)), want_out, st.bfloat16, "output")
    gx = to_np(x.grad.to(st.float32))
    for i, (name, want) in enumerate(zip(("dq", "dk", "dv"), want_grads)):
        got = gx[..., i * H * d:(i + 1) * H * d].reshape(B, L, H, d).transpose(0, 2, 1, 3)
        assert_close(got, want, st.bfloat16, name)


@needs_cuda
def test_flash_create_graph_matches_the_unfused_path():
    """Double backward through the flash path (differentiable recomputation) equals the
    GEMM path's: gradient of sum(dq^2) w.r.t. k."""
    q, k, v, g = inputs((1, 2, 40, 32), (1, 2, 40, 32), seed=9)

    def second_order():
        ins = [st.tensor(a).to(st.float16).cuda().requires_grad_(True) for a in (q, k, v)]
        out = F.scaled_dot_product_attention(*ins, is_causal=True)
        (dq,) = st.autograd.grad([out], [ins[0]], [st.tensor(g).to(st.float16).cuda()], create_graph=True)
        (dk2,) = st.autograd.grad([(dq.to(st.float32) ** 2).sum()], [ins[1]])
        return to_np(dk2.to(st.float32))

    a = second_order()
    st.backends.cuda.enable_flash_sdp(False)
    st.backends.cuda.enable_cudnn_sdp(False)
    try:
        b = second_order()
    finally:
        st.backends.cuda.enable_flash_sdp(True)
        st.backends.cuda.enable_cudnn_sdp(True)
    assert np.isfinite(a).all()
    np.testing.assert_allclose(a, b, rtol=5e-2, atol=5e-2 * np.abs(b).max())
