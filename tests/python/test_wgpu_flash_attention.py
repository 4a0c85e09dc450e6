"""The wgpu backend's tiled (flash-style) scaled_dot_product_attention (src/backend/wgpu/attention.cpp,
kernels/attention.wgsl).

Attention on wgpu runs the tiled WGSL kernels: online softmax over key tiles in workgroup memory,
each row's log-sum-exp kept for the backward, which recomputes the probabilities tile by tile (dq
per query row, dk and dv per key row), causal tiles past a block's last row skipped. A constant
additive attn_mask (float, bool, broadcast (L, S) or full (B, H, L, S)) is read through its strides
and dropout_p draws dropout()'s Philox mask per tile, in the forward and again in the backward
(checked below against the CPU's kernel and the composite softmax -> dropout -> matmul under one
seed, down to the dropped elements, and for memory). Checked here against PyTorch's scaled_dot_product_attention and the CPU's tiled
kernel (output and the three gradients, float32: error below 2e-5 of the largest value), on head
dims 64 and 128 and odd ones, T off the 64-row blocks, L != S, head views of a packed projection,
float16/bfloat16 inputs (read as such, computed in float32), nn.MultiheadAttention /
TransformerEncoderLayer, and for its memory:
the allocator's peak grows linearly in T and stays below one (L, S) score buffer.
SPIRALTORCH_WGPU_FLASH=0 (a fresh interpreter) takes the composite, whose peak grows as T^2.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

import spiraltorch as st
import spiraltorch.nn.functional as F
from conftest import needs_torch, run_python, to_np

pytestmark = pytest.mark.skipif(not st.wgpu.is_available(),
                                reason="wgpu not available: " + st.wgpu.unavailable_reason())

SHAPES = [  # (B, H, L, S, d, dv)
    (1, 2, 70, 70, 64, 64),  # T off the 64-row block
    (2, 1, 100, 37, 64, 64),  # L > S
    (1, 2, 33, 150, 64, 64),  # L < S (causal: row i sees keys 0..i)
    (1, 1, 130, 90, 128, 128),
    (1, 2, 256, 256, 128, 128),
    (2, 3, 17, 23, 5, 7),  # head dims off the vec4 width, dv != d
    (1, 1, 1, 1, 8, 8),  # T = 1
]
TOL = 2e-5  # float32, relative to the largest value


def inputs(B, H, L, S, d, dv, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(s).astype(np.float32) for s in ((B, H, L, d), (B, H, S, d), (B, H, S, dv), (B, H, L, dv))]


def leaf(a, device):
    t = st.tensor(a, device=device)
    t.requires_grad = True
    return t


def ours(q, k, v, g, device, **kw):
    ins = [leaf(a, device) for a in (q, k, v)]
    out = F.scaled_dot_product_attention(*ins, **kw)
    assert out.device == device
    out.backward(st.tensor(g, device=device))
    return [to_np(out)] + [to_np(t.grad) for t in ins]


def theirs(q, k, v, g, **kw):
    import torch

    ins = [torch.tensor(a, requires_grad=True) for a in (q, k, v)]
    out = torch.nn.functional.scaled_dot_product_attention(*ins, **kw)
    out.backward(torch.tensor(g))
    return [out.detach().numpy()] + [t.grad.numpy() for t in ins]


def assert_close(got, want, what="", tol=TOL):
    for name, a, b in zip(("output", "dq", "dk", "dv"), got, want):
        assert a.shape == b.shape, (what, name, a.shape, b.shape)
        err = np.abs(a - b).max() / max(np.abs(b).max(), 1.0)
        assert err < tol, f"{what} {name}: error {err:.2e} of the largest value exceeds {tol:.0e}"


@needs_torch
@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_matches_torch_and_the_cpu(shape, causal):
    q, k, v, g = inputs(*shape, seed=sum(shape))
    got = ours(q, k, v, g, "wgpu", is_causal=causal)
    assert_close(got, theirs(q, k, v, g, is_causal=causal), "torch")
    assert_close(got, ours(q, k, v, g, "cpu", is_causal=causal), "cpu")


@needs_torch
def test_scale_and_3d_inputs_match_torch():
    q, k, v, g = (a[0] for a in inputs(1, 3, 45, 50, 64, 64, seed=4))  # (H, rows, d): no batch dim
    for kw in ({"scale": 0.37}, {"scale": 0.37, "is_causal": True}):
        assert_close(ours(q, k, v, g, "wgpu", **kw), theirs(q, k, v, g, **kw), str(kw))


@needs_torch
@pytest.mark.parametrize("dtype,tol", [(st.float16, 4e-3), (st.bfloat16, 3e-2)], ids=["f16", "bf16"])
def test_half_inputs_are_read_as_such_and_match_torch(dtype, tol):
    """16-bit q, k, v go to the kernels without float32 copies; the result keeps their dtype."""
    import torch

    tdt = {st.float16: torch.float16, st.bfloat16: torch.bfloat16}[dtype]
    q, k, v, g = inputs(1, 2, 50, 70, 64, 64, seed=12)
    ins = [st.tensor(a, device="wgpu").to(dtype) for a in (q, k, v)]
    for t in ins:
        t.requires_grad = True
    out = F.scaled_dot_product_attention(*ins, is_causal=True)
    assert out.dtype == dtype
    out.backward(st.tensor(g, device="wgpu").to(dtype))
    got = [to_np(out.float())] + [to_np(t.grad.float()) for t in ins]
    tins = [torch.tensor(a).to(tdt).requires_grad_(True) for a in (q, k, v)]
    tout = torch.nn.functional.scaled_dot_product_attention(*tins, is_causal=True)
    tout.backward(torch.tensor(g).to(tdt))
    want = [tout.detach().float().numpy()] + [t.grad.float().numpy() for t in tins]
    assert_close(got, want, str(dtype), tol=tol)


def test_nan_propagates_like_the_cpu():
    """A NaN in q's row 1 (so in key and value 1 too): rows that see key 1 come out NaN, and row 0,
    which does not, gets NaN only in column 2 (its zero weight times v's NaN), as on the CPU."""
    q = np.random.default_rng(13).standard_normal((1, 1, 4, 8)).astype(np.float32)
    q[0, 0, 1, 2] = np.nan
    got = [to_np(F.scaled_dot_product_attention(*(st.tensor(q, device=dev),) * 3, is_causal=True))
           for dev in ("wgpu", "cpu")]
    nan = np.isnan(got[0])
    np.testing.assert_array_equal(nan, np.isnan(got[1]))
    assert nan[0, 0, 1:].all() and nan[0, 0, 0].sum() == 1
    np.testing.assert_allclose(got[0][~nan], got[1][~nan], rtol=1e-5, atol=1e-6)


def test_head_views_of_a_packed_projection():
    """q, k, v as (B, L, H, d) -> (B, H, L, d) views of one tensor, read in place through their
    strides: the same values and gradients as contiguous copies on the CPU."""
    rng = np.random.default_rng(10)
    B, L, H, d = 2, 90, 3, 64
    qkv = rng.standard_normal((B, L, 3 * H * d)).astype(np.float32)
    g = rng.standard_normal((B, H, L, d)).astype(np.float32)
    x = leaf(qkv, "wgpu")
    views = [x[..., i * H * d:(i + 1) * H * d].reshape(B, L, H, d).transpose(1, 2) for i in range(3)]
    out = F.scaled_dot_product_attention(*views, is_causal=True)
    out.backward(st.tensor(g, device="wgpu"))
    parts = [np.ascontiguousarray(qkv[..., i * H * d:(i + 1) * H * d].reshape(B, L, H, d).transpose(0, 2, 1, 3))
             for i in range(3)]
    want = ours(*parts, g, "cpu", is_causal=True)
    gx = to_np(x.grad)
    got = [to_np(out)] + [gx[..., i * H * d:(i + 1) * H * d].reshape(B, L, H, d).transpose(0, 2, 1, 3)
                          for i in range(3)]
    assert_close(got, want)


@pytest.mark.parametrize("dtype,tol", [(st.float32, 2e-5), (st.float16, 5e-3), (st.bfloat16, 4e-2)],
                         ids=["f32", "f16", "bf16"])
def test_multihead_attention_matches_the_cpu(dtype, tol):
    """Self-attention (the packed-projection path: the kernels read the heads out of the (B, L, 3E)
    projection); half types are read and written as such and computed in float32."""
    st.manual_seed(3)
    mha = st.nn.MultiheadAttention(128, 2, batch_first=True)  # d = 64
    x = np.random.default_rng(3).standard_normal((2, 75, 128)).astype(np.float32)
    res = []
    for dev in ("cpu", "wgpu"):
        m = mha.to(dev)
        if dev == "wgpu" and dtype != st.float32:
            m = m.to(dtype)
        xi = st.tensor(x, device=dev).to(dtype if dev == "wgpu" else st.float32)
        xi.requires_grad = True
        y, _ = m(xi, xi, xi, need_weights=False, is_causal=True)
        y.float().sum().backward()
        res.append([to_np(y.float()), to_np(xi.grad.float())])
    for a, b in zip(*res):
        err = np.abs(a.astype(np.float64) - b).max() / max(np.abs(b).max(), 1.0)
        assert err < tol, err


def test_transformer_encoder_layer_matches_the_cpu():
    st.manual_seed(5)
    layer = st.nn.TransformerEncoderLayer(128, 1, dim_feedforward=64, dropout=0.0, batch_first=True)  # d = 128
    x = np.random.default_rng(5).standard_normal((1, 66, 128)).astype(np.float32)
    res = []
    for dev in ("cpu", "wgpu"):
        m = layer.to(dev)
        xi = leaf(x, dev)
        y = m(xi)
        y.sum().backward()
        res.append([to_np(y), to_np(xi.grad)] + [to_np(p.grad) for p in m.parameters()])
        m.zero_grad()
    for a, b in zip(*res):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-4)


def test_create_graph_matches_the_cpu():
    """Double backward goes through the differentiable recomputation (the composite formula)."""
    q, k, v, g = inputs(1, 2, 40, 40, 64, 64, seed=9)

    def second_order(device):
        ins = [leaf(a, device) for a in (q, k, v)]
        out = F.scaled_dot_product_attention(*ins, is_causal=True)
        (dq,) = st.autograd.grad([out], [ins[0]], [st.tensor(g, device=device)], create_graph=True)
        (dk2,) = st.autograd.grad([(dq ** 2).sum()], [ins[1]])
        return to_np(dk2)

    np.testing.assert_allclose(second_order("wgpu"), second_order("cpu"), rtol=1e-3, atol=1e-4)


_PEAK_SCRIPT = r"""
import json
import numpy as np
import spiraltorch as st
import spiraltorch.nn.functional as F
peaks = {}
for T in (256, 512):
    rng = np.random.default_rng(T)
    ins = [st.tensor(rng.standard_normal((1, 4, T, 32)).astype(np.float32), device="wgpu") for _ in range(3)]
    for t in ins:
        t.requires_grad = True
    st.wgpu.synchronize()
    base = st.wgpu.memory_allocated()
    st.wgpu.reset_peak_memory_stats()
    F.scaled_dot_product_attention(*ins, is_causal=True).sum().backward()
    st.wgpu.synchronize()
    peaks[T] = st.wgpu.max_memory_allocated() - base
    assert all(t.grad is not None for t in ins)
print(json.dumps(peaks))
"""


def peaks(**env):
    r = run_python(_PEAK_SCRIPT, **env)
    assert r.returncode == 0, r.stderr
    return {int(t): p for t, p in json.loads(r.stdout.strip().splitlines()[-1]).items()}


def test_memory_grows_linearly_in_t():
    """Forward + backward, 4 heads, d = 32, causal: the wgpu allocator's peak doubles from T = 256
    to 512 (the composite's grows about 3x there, and 4x in the limit) and stays below one
    (B, H, L, S) float32 score buffer (4 MiB at T = 512)."""
    tiled = peaks()
    assert tiled[512] <= 2.2 * tiled[256], tiled
    assert tiled[512] < 4 * 512 * 512 * 4, tiled
    composite = peaks(SPIRALTORCH_WGPU_FLASH="0")
    assert composite[512] > 2.8 * composite[256], composite
    assert composite[512] > 4 * 512 * 512 * 4, composite


# ---------------------------------------------------------------------------
# additive masks and dropout (Backend::flash_attention_masked)
# ---------------------------------------------------------------------------

MASK_SHAPES = [  # (B, H, L, S, d, dv)
    (1, 2, 70, 70, 64, 64),
    (2, 1, 100, 37, 64, 64),
    (1, 2, 33, 150, 64, 64),
    (2, 3, 17, 23, 5, 7),
]


def mask_for(kind, B, H, L, S, seed=0):
    """An attn_mask of `kind`: a float (L, S) or (B, H, L, S) mask with finite values and -inf
    blocks, or a bool (L, S) mask (True = attend); every row keeps at least one key."""
    rng = np.random.default_rng(seed)
    shape = (L, S) if kind != "float_full" else (B, H, L, S)
    if kind == "bool":
        m = rng.random(shape) < 0.7
        m[..., 0] = True
        return m
    m = rng.standard_normal(shape).astype(np.float32)
    m[rng.random(shape) < 0.3] = -np.inf
    m[..., 0] = 0.0
    return m


def mask_tensor(m, device):
    return st.tensor(m, device=device)


@pytest.mark.parametrize("kind", ["float_ls", "float_full", "bool"])
@pytest.mark.parametrize("shape", MASK_SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_masked_matches_the_cpu(shape, kind):
    """attn_mask through the masked tiled kernels: output and the three gradients equal the CPU's
    masked tiled kernel (broadcast (L, S) masks read through zero strides, bool masks made -inf/0)."""
    B, H, L, S = shape[:4]
    q, k, v, g = inputs(*shape, seed=sum(shape) + 1)
    m = mask_for(kind, B, H, L, S, seed=sum(shape))
    got = ours(q, k, v, g, "wgpu", attn_mask=mask_tensor(m, "wgpu"))
    assert_close(got, ours(q, k, v, g, "cpu", attn_mask=mask_tensor(m, "cpu")), f"cpu {kind}")


@needs_torch
@pytest.mark.parametrize("kind", ["float_ls", "bool"])
def test_masked_matches_torch(kind):
    import torch

    B, H, L, S = 2, 2, 45, 77
    q, k, v, g = inputs(B, H, L, S, 64, 64, seed=21)
    m = mask_for(kind, B, H, L, S, seed=22)
    assert_close(ours(q, k, v, g, "wgpu", attn_mask=mask_tensor(m, "wgpu")),
                 theirs(q, k, v, g, attn_mask=torch.tensor(m)), f"torch {kind}")


def test_fully_masked_rows_give_zeros_like_the_cpu():
    """Rows whose keys are all masked (-inf or False everywhere) come out zero, with zero gradient
    through them, as the CPU's kernel gives them (PyTorch's math path gives NaN there)."""
    B, H, L, S = 1, 2, 40, 50
    q, k, v, g = inputs(B, H, L, S, 64, 64, seed=23)
    dead = [0, 7, 39]
    for kind in ("float_full", "bool"):
        m = mask_for(kind, B, H, L, S, seed=24)
        m[..., dead, :] = False if kind == "bool" else -np.inf
        got = ours(q, k, v, g, "wgpu", attn_mask=mask_tensor(m, "wgpu"))
        assert np.all(got[0][:, :, dead] == 0), kind
        assert np.all(got[1][:, :, dead] == 0), kind  # dq of a dead row
        assert all(np.isfinite(a).all() for a in got), kind
        assert_close(got, ours(q, k, v, g, "cpu", attn_mask=mask_tensor(m, "cpu")), kind)


def test_causal_and_padding_masks_through_multihead_attention():
    """is_causal with a key_padding_mask: MultiheadAttention adds them into one (B, h, L, S) mask
    for the masked kernels; the CPU gives the same output and input gradient."""
    st.manual_seed(8)
    mha = st.nn.MultiheadAttention(128, 2, batch_first=True)
    rng = np.random.default_rng(8)
    x = rng.standard_normal((2, 53, 128)).astype(np.float32)
    pad = np.zeros((2, 53), dtype=bool)
    pad[1, 40:] = True  # batch 1: the last 13 keys are padding
    causal = np.triu(np.ones((53, 53), dtype=bool), 1)  # True = blocked (MultiheadAttention's sense)
    res = []
    for dev in ("cpu", "wgpu"):
        m = mha.to(dev)
        xi = leaf(x, dev)
        y, _ = m(xi, xi, xi, need_weights=False, attn_mask=st.tensor(causal, device=dev),
                 key_padding_mask=st.tensor(pad, device=dev))
        y.sum().backward()
        res.append([to_np(y), to_np(xi.grad)])
    for a, b in zip(*res):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-4)


def composite(q, k, v, g, device, p, dtype=None, mask=None, causal=False):
    """softmax(q k^T / sqrt(d) [+ mask]) -> dropout(p) -> @ v as separate ops, and its gradients."""
    ins = [leaf(a, device) for a in (q, k, v)]
    xs = [t.to(dtype) for t in ins] if dtype is not None else ins
    s = (xs[0] @ xs[1].transpose(-2, -1)) * (1.0 / np.sqrt(q.shape[-1]))
    L, S = q.shape[-2], k.shape[-2]
    if causal:
        mask = np.triu(np.full((L, S), -np.inf, dtype=np.float32), 1)
    if mask is not None:
        mt = st.tensor(mask, device=device)
        s = s + (mt.to(dtype) if dtype is not None else mt)
    w = F.dropout(F.softmax(s, -1), p, True)
    out = w @ xs[2]
    gt = st.tensor(g, device=device)
    out.backward(gt.to(dtype) if dtype is not None else gt)
    return [to_np(out.float())] + [to_np(t.grad.float()) for t in ins]


def fused(q, k, v, g, device, p, dtype=None, mask=None, causal=False):
    ins = [leaf(a, device) for a in (q, k, v)]
    xs = [t.to(dtype) for t in ins] if dtype is not None else ins
    kw = {"dropout_p": p, "is_causal": causal}
    if mask is not None:
        mt = st.tensor(mask, device=device)
        kw["attn_mask"] = mt.to(dtype) if dtype is not None else mt
    out = F.scaled_dot_product_attention(*xs, **kw)
    gt = st.tensor(g, device=device)
    out.backward(gt.to(dtype) if dtype is not None else gt)
    return [to_np(out.float())] + [to_np(t.grad.float()) for t in ins]


def seeded(fn, *args, **kw):
    """fn under st.manual_seed(11), and the generator's next draw after it."""
    st.manual_seed(11)
    res = fn(*args, **kw)
    return res, to_np(st.rand(4))


@pytest.mark.parametrize("variant", ["plain", "causal", "mask"])
@pytest.mark.parametrize("dtype,tol", [(st.float32, 2e-5), (st.float16, 4e-3)], ids=["f32", "f16"])
def test_dropout_equals_the_composite_draw(dtype, tol, variant):
    """dropout_p in the tiled kernels draws dropout()'s mask for the (B, H, L, S) probabilities:
    under one seed, output and the gradients of q, k, v equal softmax -> dropout -> matmul on wgpu
    and the CPU's tiled kernel, and the generator ends where the separate ops leave it. L, S off
    the tiles and the Philox blocks of four (rows straddle blocks)."""
    B, H, L, S = 2, 3, 75, (75 if variant == "causal" else 131)
    q, k, v, g = inputs(B, H, L, S, 32, 24, seed=31)
    kw = {"causal": variant == "causal", "mask": mask_for("float_ls", B, H, L, S, seed=32) if variant == "mask" else None}
    half = dtype if dtype != st.float32 else None
    got, after = seeded(fused, q, k, v, g, "wgpu", 0.3, dtype=half, **kw)
    want, after_composite = seeded(composite, q, k, v, g, "wgpu", 0.3, dtype=half, **kw)
    assert_close(got, want, f"composite {variant}", tol=tol)
    np.testing.assert_array_equal(after, after_composite)
    if dtype == st.float32:
        cpu, after_cpu = seeded(fused, q, k, v, g, "cpu", 0.3, **kw)
        assert_close(got, cpu, f"cpu {variant}")
        np.testing.assert_array_equal(after, after_cpu)


def test_dropout_mask_is_dropouts_element_for_element():
    """With v the identity the output is the dropped probabilities themselves: its zeros are
    exactly where dropout() on the materialised (B, H, L, S) probabilities puts them (the same
    Philox block and lane for every element), and its nonzeros are those probabilities times
    1 / (1 - p)."""
    B, H, L, S = 2, 3, 37, 70
    rng = np.random.default_rng(41)
    q = (0.1 * rng.standard_normal((B, H, L, 16))).astype(np.float32)  # no probability underflows
    k = (0.1 * rng.standard_normal((B, H, S, 16))).astype(np.float32)
    v = np.broadcast_to(np.eye(S, dtype=np.float32), (B, H, S, S)).copy()
    st.manual_seed(12)
    out = to_np(F.scaled_dot_product_attention(*(st.tensor(a, device="wgpu") for a in (q, k, v)), dropout_p=0.4))
    st.manual_seed(12)
    s = st.tensor(q, device="wgpu") @ st.tensor(k, device="wgpu").transpose(-2, -1) * 0.25
    want = to_np(F.dropout(F.softmax(s, -1), 0.4, True))
    np.testing.assert_array_equal(out == 0, want == 0)
    assert 0.3 < (out == 0).mean() < 0.5
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-7)


def test_dropout_in_a_training_multihead_attention_matches_the_cpu():
    """MultiheadAttention(dropout=0.2) in train mode with need_weights=False takes the dropout
    kernels: the same seed drops the same probabilities on wgpu and the CPU."""
    st.manual_seed(9)
    mha = st.nn.MultiheadAttention(128, 2, dropout=0.2, batch_first=True)
    mha.train()
    x = np.random.default_rng(9).standard_normal((2, 67, 128)).astype(np.float32)
    res = []
    for dev in ("cpu", "wgpu"):
        m = mha.to(dev)
        xi = leaf(x, dev)
        st.manual_seed(10)
        y, _ = m(xi, xi, xi, need_weights=False, is_causal=True)
        y.sum().backward()
        res.append([to_np(y), to_np(xi.grad)])
    for a, b in zip(*res):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-4)


_MASKED_PEAK_SCRIPT = r"""
import json
import numpy as np
import spiraltorch as st
import spiraltorch.nn.functional as F
peaks = {}
for T in (256, 512):
    rng = np.random.default_rng(T)
    ins = [st.tensor(rng.standard_normal((1, 4, T, 32)).astype(np.float32), device="wgpu") for _ in range(3)]
    mask = st.tensor(np.triu(np.full((T, T), -np.inf, dtype=np.float32), 1), device="wgpu")
    for t in ins:
        t.requires_grad = True
    st.wgpu.synchronize()
    base = st.wgpu.memory_allocated()
    st.wgpu.reset_peak_memory_stats()
    F.scaled_dot_product_attention(*ins, attn_mask=mask, dropout_p=0.1).sum().backward()
    st.wgpu.synchronize()
    peaks[T] = st.wgpu.max_memory_allocated() - base
    assert all(t.grad is not None for t in ins)
print(json.dumps(peaks))
"""


def test_masked_dropout_memory_grows_linearly_in_t():
    """Forward + backward with an (L, S) float mask (allocated before the measurement) and
    dropout_p = 0.1, 4 heads, d = 32: the peak doubles from T = 256 to 512 and stays below one
    (B, H, L, S) float32 score buffer, so neither scores, probabilities nor a dropout mask were
    materialised; the composite's (SPIRALTORCH_WGPU_FLASH=0) grows quadratically."""
    def masked_peaks(**env):
        r = run_python(_MASKED_PEAK_SCRIPT, **env)
        assert r.returncode == 0, r.stderr
        return {int(t): p for t, p in json.loads(r.stdout.strip().splitlines()[-1]).items()}

    tiled = masked_peaks()
    assert tiled[512] <= 2.2 * tiled[256], tiled
    assert tiled[512] < 4 * 512 * 512 * 4, tiled
    composite = masked_peaks(SPIRALTORCH_WGPU_FLASH="0")
    assert composite[512] > 2.8 * composite[256], composite
    assert composite[512] > 4 * 512 * 512 * 4, composite
