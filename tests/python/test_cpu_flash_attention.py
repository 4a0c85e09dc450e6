"""The CPU's tiled (flash-style) scaled_dot_product_attention (src/backend/cpu/attention.cpp).

Without dropout, float32/float64 attention on the CPU runs the tiled kernel: online
softmax over key blocks, only each row's log-sum-exp kept for the backward, the probabilities
recomputed there block by block, causal blocks above the diagonal skipped. Checked here against
PyTorch's scaled_dot_product_attention (output and the three gradients), against finite
differences in float64, against the composite path (a mask), on shapes off the 128-row / 256-key
blocks, T = 1 and one head, for every CPU capability (a fresh interpreter forced to each), and
for its memory: no (L, S) buffer in the allocator's peak. Boolean and additive masks run the same
kernel, which adds them to each score block through a broadcast (B, H, L, S) view (a row with
every key masked gets zeros, as PyTorch's); masks that require grad take the composite
(materialised scores) path, checked against PyTorch here. Dropout runs in the kernel too: it draws
per key block exactly the Philox mask dropout() draws for the (B, H, L, S) probabilities, so it
equals softmax -> dropout -> matmul under the same seed, with the same memory as without.
"""

from __future__ import annotations

import numpy as np
import pytest

import spiraltorch as st
import spiraltorch.nn.functional as F
from conftest import needs_torch, run_python, to_np

SUPPORTED = list(st.describe_device("cpu")["cpu_capabilities"])
SHAPES = [  # (B, H, L, S, d, dv)
    (1, 1, 1, 1, 8, 8),  # T = 1
    (1, 1, 300, 300, 64, 64),  # one head, T off both block sizes
    (2, 3, 70, 130, 16, 24),  # L != S, dv != d
    (1, 2, 257, 100, 32, 32),  # L > S
    (2, 4, 129, 129, 64, 64),
]


def inputs(B, H, L, S, d, dv, seed=0):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal((B, H, L, d)), rng.standard_normal((B, H, S, d)), rng.standard_normal((B, H, S, dv)),
            rng.standard_normal((B, H, L, dv)))


def leaf(a, dtype=st.float64):
    # (requires_grad set as an attribute: t.requires_grad_(True) currently keeps the tensor alive
    # after its last reference, which later exact memory counts in this process would see)
    t = st.tensor(a).to(dtype)
    t.requires_grad = True
    return t


def ours(q, k, v, g, dtype, **kw):
    ins = [leaf(a, dtype) for a in (q, k, v)]
    out = F.scaled_dot_product_attention(*ins, **kw)
    assert out.dtype == dtype
    out.backward(st.tensor(g).to(dtype))
    return [to_np(out)] + [to_np(t.grad) for t in ins]


def theirs(q, k, v, g, dtype, **kw):
    import torch

    tdt = {st.float32: torch.float32, st.float64: torch.float64}[dtype]
    ins = [torch.tensor(a, dtype=tdt, requires_grad=True) for a in (q, k, v)]
    if "attn_mask" in kw:
        kw["attn_mask"] = torch.from_numpy(kw["attn_mask"])
    out = torch.nn.functional.scaled_dot_product_attention(*ins, **kw)
    out.backward(torch.tensor(g, dtype=tdt))
    return [out.detach().numpy()] + [t.grad.numpy() for t in ins]


def assert_close(got, want, dtype, what=""):
    tol = 1e-11 if dtype == st.float64 else 2e-5
    for name, a, b in zip(("output", "dq", "dk", "dv"), got, want):
        assert a.shape == b.shape, (what, name)
        err = np.abs(a - b).max() / max(np.abs(b).max(), 1.0)
        assert err < tol, f"{what} {name}: error {err:.2e} of the largest value exceeds {tol:.0e}"


@needs_torch
@pytest.mark.parametrize("dtype", [st.float32, st.float64], ids=["f32", "f64"])
@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_matches_torch(shape, causal, dtype):
    q, k, v, g = inputs(*shape, seed=sum(shape))
    assert_close(ours(q, k, v, g, dtype, is_causal=causal), theirs(q, k, v, g, dtype, is_causal=causal), dtype)


@needs_torch
@pytest.mark.parametrize("dtype", [st.float32, st.float64], ids=["f32", "f64"])
def test_scale_and_3d_inputs_match_torch(dtype):
    q, k, v, g = inputs(1, 3, 45, 50, 20, 20, seed=4)
    q, k, v, g = (a[0] for a in (q, k, v, g))  # (H, rows, d): no batch dim
    for kw in ({"scale": 0.37}, {"scale": 0.37, "is_causal": True}):
        assert_close(ours(q, k, v, g, dtype, **kw), theirs(q, k, v, g, dtype, **kw), dtype, str(kw))


@needs_torch
@pytest.mark.parametrize("dtype", [st.float32, st.float64], ids=["f32", "f64"])
def test_masks_match_torch(dtype):
    q, k, v, g = inputs(2, 2, 67, 300, 16, 16, seed=5)  # S over one 256-key block
    rng = np.random.default_rng(6)
    bool_mask = rng.random((67, 300)) < 0.8
    bool_mask[:, 0] = True
    bool_mask[5] = False  # a row with every key masked: zeros, as PyTorch's
    float_mask = rng.standard_normal((2, 1, 67, 300))
    head_mask = np.where(rng.random((2, 1, 300)) < 0.9, 0.0, -np.inf)  # broadcast over heads and rows
    for mask in (bool_mask, float_mask, head_mask):
        ours_mask = st.tensor(mask) if mask.dtype == bool else st.tensor(mask).to(dtype)
        got = ours(q, k, v, g, dtype, attn_mask=ours_mask)
        np_dtype = np.float64 if dtype == st.float64 else np.float32
        want = theirs(q, k, v, g, dtype, attn_mask=mask if mask.dtype == bool else mask.astype(np_dtype))
        assert_close(got, want, dtype, str(mask.dtype))


@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
def test_tiled_equals_composite(causal):
    """A zero (or causal) additive mask that requires grad sends the same inputs through the
    composite path; a constant one through the masked kernel."""
    q, k, v, g = inputs(2, 3, 90, 90, 32, 32, seed=7)
    mask = np.triu(np.full((90, 90), -np.inf), 1) if causal else np.zeros((90, 90))
    tiled = ours(q, k, v, g, st.float64, is_causal=causal)
    composite = ours(q, k, v, g, st.float64, attn_mask=leaf(mask))
    masked = ours(q, k, v, g, st.float64, attn_mask=st.tensor(mask))
    assert_close(tiled, composite, st.float64, "composite")
    assert_close(tiled, masked, st.float64, "masked kernel")


@needs_torch
def test_mask_that_requires_grad_gets_torchs_gradient():
    import torch

    q, k, v, g = inputs(1, 2, 30, 40, 8, 8, seed=14)
    m = np.random.default_rng(15).standard_normal((30, 40))
    mask = leaf(m)
    out = F.scaled_dot_product_attention(*(st.tensor(a) for a in (q, k, v)), attn_mask=mask)
    out.backward(st.tensor(g))
    tm = torch.tensor(m, requires_grad=True)
    tout = torch.nn.functional.scaled_dot_product_attention(*(torch.tensor(a) for a in (q, k, v)), attn_mask=tm)
    tout.backward(torch.tensor(g))
    np.testing.assert_allclose(to_np(mask.grad), tm.grad.numpy(), rtol=1e-9, atol=1e-11)


def test_masked_keeps_no_score_matrix():
    """An (L, S) additive mask at L = S = 1024, 4 heads, float32: the peak above the inputs and
    the mask stays below one (B, H, L, S) score buffer (16 MiB)."""
    q, k, v, _ = inputs(1, 4, 1024, 1024, 32, 32, seed=16)
    ins = [leaf(a, st.float32) for a in (q, k, v)]
    mask = st.tensor(np.triu(np.full((1024, 1024), -np.inf), 1)).to(st.float32)
    st.cpu.reset_peak_memory_stats()
    base = st.cpu.memory_allocated()
    F.scaled_dot_product_attention(*ins, attn_mask=mask).sum().backward()
    extra = st.cpu.max_memory_allocated() - base
    assert extra < 4 * 1024 * 1024 * 4 / 2, extra
    assert all(t.grad is not None for t in ins)


@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
def test_gradients_match_finite_differences(causal):
    q, k, v, w = inputs(1, 2, 5, 7, 3, 2, seed=8)
    g_all = ours(q, k, v, w, st.float64, is_causal=causal)[1:]

    def loss(qq, kk, vv):
        with st.no_grad():
            out = F.scaled_dot_product_attention(*(st.tensor(a) for a in (qq, kk, vv)), is_causal=causal)
        return float((to_np(out) * w).sum())

    eps = 1e-6
    arrays = [q, k, v]
    for which, grad in enumerate(g_all):
        num = np.zeros_like(arrays[which])
        for idx in np.ndindex(*arrays[which].shape):
            up = [a.copy() for a in arrays]
            down = [a.copy() for a in arrays]
            up[which][idx] += eps
            down[which][idx] -= eps
            num[idx] = (loss(*up) - loss(*down)) / (2 * eps)
        np.testing.assert_allclose(grad, num, atol=1e-8, rtol=1e-6)


def test_create_graph_matches_the_composite():
    """Double backward through the tiled path (differentiable recomputation) equals the composite's."""
    q, k, v, g = inputs(1, 2, 40, 40, 16, 16, seed=9)

    def second_order(**kw):
        ins = [leaf(a) for a in (q, k, v)]
        out = F.scaled_dot_product_attention(*ins, **kw)
        (dq,) = st.autograd.grad([out], [ins[0]], [st.tensor(g)], create_graph=True)
        (dk2,) = st.autograd.grad([(dq ** 2).sum()], [ins[1]])
        return to_np(dk2)

    mask = st.tensor(np.triu(np.full((40, 40), -np.inf), 1))
    np.testing.assert_allclose(second_order(is_causal=True), second_order(attn_mask=mask), rtol=1e-9, atol=1e-10)


def composite_dropout(q, k, v, g, p, causal=False, mask=None, dtype=st.float64):
    """softmax(scale q k^T + mask) -> F.dropout -> @ v as separate ops, and its three gradients."""
    ins = [leaf(a, dtype) for a in (q, k, v)]
    scores = (ins[0] * q.shape[-1] ** -0.5) @ ins[1].transpose(-1, -2)
    if causal:
        scores = scores + st.tensor(np.triu(np.full((q.shape[-2], k.shape[-2]), -np.inf), 1)).to(dtype)
    if mask is not None:
        scores = scores + st.tensor(mask).to(dtype)
    out = F.dropout(st.softmax(scores, -1), p, True) @ ins[2]
    out.backward(st.tensor(g).to(dtype))
    return [to_np(out)] + [to_np(t.grad) for t in ins]


@pytest.mark.parametrize("dtype", [st.float32, st.float64], ids=["f32", "f64"])
@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
def test_dropout_in_the_kernel_equals_the_composite_draw(causal, dtype):
    """dropout_p in the tiled kernel: under one seed, the same output and gradients as the separate
    ops draw (L, S off the 128-row / 256-key blocks, so rows straddle Philox blocks of four)."""
    q, k, v, g = inputs(2, 3, 150, 150 if causal else 301, 16, 8, seed=20)
    st.manual_seed(5)
    got = ours(q, k, v, g, dtype, dropout_p=0.3, is_causal=causal)
    st.manual_seed(5)
    want = composite_dropout(q, k, v, g, 0.3, causal=causal, dtype=dtype)
    assert_close(got, want, dtype, "dropout")
    st.manual_seed(5)
    again = ours(q, k, v, g, dtype, dropout_p=0.3, is_causal=causal)
    assert all(np.array_equal(a, b) for a, b in zip(got, again))  # a seed fixes the mask
    assert not np.allclose(ours(q, k, v, g, dtype, dropout_p=0.3, is_causal=causal)[0], got[0])  # next draw differs


def test_dropout_with_a_mask_and_the_generator_after_it():
    """A constant additive mask with dropout takes the masked kernel; afterwards the generator
    stands where the separate ops leave it (the next random numbers agree)."""
    q, k, v, g = inputs(1, 2, 40, 70, 8, 8, seed=21)
    mask = np.random.default_rng(22).standard_normal((40, 70))
    st.manual_seed(9)
    got = ours(q, k, v, g, st.float64, dropout_p=0.5, attn_mask=st.tensor(mask))
    after_kernel = to_np(st.rand(5, dtype=st.float64))
    st.manual_seed(9)
    want = composite_dropout(q, k, v, g, 0.5, mask=mask)
    after_ops = to_np(st.rand(5, dtype=st.float64))
    assert_close(got, want, st.float64, "masked dropout")
    np.testing.assert_array_equal(after_kernel, after_ops)


def test_dropout_edges_and_create_graph():
    """p = 1 drops everything (zero output, zero gradients) and create_graph differentiates the
    composite with the kernel's mask (double backward equals the separate ops')."""
    q, k, v, g = inputs(1, 1, 12, 12, 4, 4, seed=23)
    zero = ours(q, k, v, g, st.float64, dropout_p=1.0)
    assert all(not a.any() for a in zero)

    def second_order(fused):
        st.manual_seed(3)
        ins = [leaf(a) for a in (q, k, v)]
        if fused:
            out = F.scaled_dot_product_attention(*ins, dropout_p=0.4)
        else:
            scores = (ins[0] * 0.5) @ ins[1].transpose(-1, -2)
            out = F.dropout(st.softmax(scores, -1), 0.4, True) @ ins[2]
        (dq,) = st.autograd.grad([out], [ins[0]], [st.tensor(g)], create_graph=True)
        (dk2,) = st.autograd.grad([(dq ** 2).sum()], [ins[1]])
        return to_np(dk2)

    np.testing.assert_allclose(second_order(True), second_order(False), rtol=1e-9, atol=1e-11)


def test_dropout_keeps_no_score_matrix():
    """Dropout adds no (L, S) buffer: the peak at L = S = 2048, 4 heads stays as without it."""
    q, k, v, _ = inputs(1, 4, 2048, 2048, 32, 32, seed=24)
    ins = [leaf(a, st.float32) for a in (q, k, v)]
    st.cpu.reset_peak_memory_stats()
    base = st.cpu.memory_allocated()
    F.scaled_dot_product_attention(*ins, is_causal=True, dropout_p=0.1).sum().backward()
    extra = st.cpu.max_memory_allocated() - base
    assert extra < 4 * 2048 * 2048 * 4 / 4, extra
    assert all(t.grad is not None for t in ins)


def test_multihead_attention_trains_with_dropout_through_the_kernel():
    """nn.MultiheadAttention in training with dropout and need_weights=False: the kernel's draw,
    so under one seed it equals the same module's separate-op path (need_weights=True)."""
    rng = np.random.default_rng(25)
    x = rng.standard_normal((2, 30, 16))
    mha = st.nn.MultiheadAttention(16, 4, dropout=0.2, batch_first=True)
    mha.train()
    results = []
    for need_weights in (False, True):
        st.manual_seed(11)
        xs = leaf(x, st.float32)
        out, _ = mha(xs, xs, xs, need_weights=need_weights, is_causal=False)
        out.sum().backward()
        results.append((to_np(out), to_np(xs.grad)))
        for prm in mha.parameters():
            prm.grad = None
    np.testing.assert_allclose(results[0][0], results[1][0], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(results[0][1], results[1][1], rtol=1e-5, atol=1e-6)


def test_head_views_of_a_packed_projection():
    """q, k, v as (B, L, H, d) -> (B, H, L, d) views of one tensor, as MultiheadAttention makes
    them: the same values and gradients as contiguous copies."""
    rng = np.random.default_rng(10)
    B, L, H, d = 2, 90, 3, 32
    qkv = rng.standard_normal((B, L, 3 * H * d))
    g = rng.standard_normal((B, H, L, d))
    x = leaf(qkv, st.float32)
    views = [x[..., i * H * d:(i + 1) * H * d].reshape(B, L, H, d).transpose(1, 2) for i in range(3)]
    out = F.scaled_dot_product_attention(*views, is_causal=True)
    out.backward(st.tensor(g).to(st.float32))
    parts = [qkv[..., i * H * d:(i + 1) * H * d].reshape(B, L, H, d).transpose(0, 2, 1, 3) for i in range(3)]
    want = ours(*parts, g, st.float32, is_causal=True)
    gx = to_np(x.grad)
    got = [to_np(out)] + [gx[..., i * H * d:(i + 1) * H * d].reshape(B, L, H, d).transpose(0, 2, 1, 3)
                          for i in range(3)]
    assert_close(got, want, st.float32)


def test_keeps_no_score_matrix():
    """Forward + backward at L = S = 2048, 4 heads, float32: the allocator's peak stays far below
    one (L, S) buffer per head (64 MiB in all)."""
    q, k, v, _ = inputs(1, 4, 2048, 2048, 32, 32, seed=11)
    ins = [leaf(a, st.float32) for a in (q, k, v)]
    st.cpu.reset_peak_memory_stats()
    base = st.cpu.memory_allocated()
    F.scaled_dot_product_attention(*ins, is_causal=True).sum().backward()
    extra = st.cpu.max_memory_allocated() - base
    assert extra < 4 * 2048 * 2048 * 4 / 4, extra
    assert all(t.grad is not None for t in ins)


@pytest.mark.parametrize("half", [st.bfloat16, st.float16], ids=["bf16", "fp16"])
@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
def test_half_operands_run_the_float32_kernel_and_stay_half(half, causal):
    """bfloat16/float16 q, k, v (CPU autocast's case) run the float32 kernel on copies made for the
    call: the output is the float32 kernel's on the widened inputs, rounded once (bit for bit), the
    gradients match float64 to the half type's precision, and what the forward keeps is the half
    output and lse, not float32 copies of q, k, v (the cast path kept those and a float32 output)."""
    B, H, L, d = 1, 4, 1024, 64
    q, k, v, g = inputs(B, H, L, L, d, d, seed=12)
    results = []
    for cast in (False, True):
        ins = [leaf(a, half) for a in (q, k, v)]
        base = st.cpu.memory_allocated()
        xs = [t.to(st.float32) for t in ins] if cast else ins
        out = F.scaled_dot_product_attention(*xs, is_causal=causal).to(half)
        del xs
        kept = st.cpu.memory_allocated() - base
        out.backward(st.tensor(g).to(half))
        results.append(([to_np(out.to(st.float32))] + [to_np(t.grad.to(st.float32)) for t in ins], kept))
        del out, ins
    (got, kept), (via_cast, cast_kept) = results
    np.testing.assert_array_equal(got[0], via_cast[0])
    exact = ours(*(to_np(leaf(a, half).to(st.float64)) for a in (q, k, v)), g, st.float64, is_causal=causal)
    tol = 2e-2 if half == st.bfloat16 else 3e-3
    for name, a, b in zip(("output", "dq", "dk", "dv"), got, exact):
        err = np.abs(a - b).max() / max(np.abs(b).max(), 1.0)
        assert err < tol, f"{name}: error {err:.2e}"
    half_bytes = B * H * L * d * 2
    assert kept < 1.1 * half_bytes, (kept, half_bytes)  # the output (and B*H*L lse floats)
    assert cast_kept > 6 * half_bytes, cast_kept  # float32 q, k, v and output copies


def test_half_operands_with_dropout_equal_the_float32_kernel():
    """Dropout on half operands draws the float32 kernel's mask: under one seed the output is that
    kernel's on the widened inputs, rounded once."""
    rng = np.random.default_rng(14)
    q, k, v = (st.tensor(rng.standard_normal((2, 3, 50, 16))).to(st.bfloat16) for _ in range(3))
    outs = []
    for cast in (False, True):
        st.manual_seed(3)
        xs = [t.to(st.float32) for t in (q, k, v)] if cast else [q, k, v]
        out = F.scaled_dot_product_attention(*xs, is_causal=True, dropout_p=0.3)
        outs.append(to_np(out.to(st.bfloat16).to(st.float32)))
    np.testing.assert_array_equal(outs[0], outs[1])


def test_half_head_views_of_a_packed_projection():
    """Strided bfloat16 head views of one (B, L, 3E) projection (MultiheadAttention's layout) give
    exactly what contiguous bfloat16 copies give."""
    rng = np.random.default_rng(13)
    B, L, H, d = 2, 90, 3, 32
    qkv = leaf(rng.standard_normal((B, L, 3 * H * d)), st.bfloat16)
    views = [qkv[..., i * H * d:(i + 1) * H * d].reshape(B, L, H, d).transpose(1, 2) for i in range(3)]
    copies = [leaf(to_np(t.detach().to(st.float32)), st.bfloat16) for t in views]
    g = st.tensor(rng.standard_normal((B, H, L, d))).to(st.bfloat16)
    outs = []
    for ins in (views, copies):
        out = F.scaled_dot_product_attention(*ins, is_causal=True)
        out.backward(g)
        outs.append(to_np(out.to(st.float32)))
    np.testing.assert_array_equal(outs[0], outs[1])
    gx = to_np(qkv.grad.to(st.float32))
    for i, c in enumerate(copies):
        part = gx[..., i * H * d:(i + 1) * H * d].reshape(B, L, H, d).transpose(0, 2, 1, 3)
        np.testing.assert_array_equal(part, to_np(c.grad.to(st.float32)))


_CAPABILITY_SCRIPT = r"""
import sys
import numpy as np
import spiraltorch as st
import spiraltorch.nn.functional as F
q, k, v, g = (np.load(sys.argv[1])[n] for n in "qkvg")
out = {}
for dt_name in ("float32", "float64"):
    dt = getattr(st, dt_name)
    for causal in (False, True):
        ins = [st.tensor(a).to(dt).requires_grad_(True) for a in (q, k, v)]
        o = F.scaled_dot_product_attention(*ins, is_causal=causal)
        o.backward(st.tensor(g).to(dt))
        for name, t in zip(("out", "dq", "dk", "dv"), [o.detach()] + [t.grad for t in ins]):
            out[f"{dt_name}/{causal}/{name}"] = t.numpy().copy()
np.savez(sys.argv[2], **out)
print("capability", st.describe_device("cpu")["cpu_capability"])
"""


@needs_torch
@pytest.mark.parametrize("capability", SUPPORTED)
def test_every_capability_matches_torch(capability, tmp_path):
    q, k, v, g = inputs(1, 2, 300, 300, 64, 64, seed=12)
    src, dst = tmp_path / "in.npz", tmp_path / "out.npz"
    np.savez(src, q=q, k=k, v=v, g=g)
    code = "import sys; sys.argv = ['', %r, %r]\n" % (str(src), str(dst)) + _CAPABILITY_SCRIPT
    r = run_python(code, SPIRALTORCH_CPU_CAPABILITY=capability)
    assert r.returncode == 0, r.stderr[-3000:]
    assert r.stdout.split("capability", 1)[1].strip() == capability
    got = dict(np.load(dst))
    for dt_name, dtype in (("float32", st.float32), ("float64", st.float64)):
        for causal in (False, True):
            want = theirs(q, k, v, g, dtype, is_causal=causal)
            mine = [got[f"{dt_name}/{causal}/{n}"] for n in ("out", "dq", "dk", "dv")]
            assert_close(mine, want, dtype, f"{capability} {dt_name} causal={causal}")
