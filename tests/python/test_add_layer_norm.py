"""spiraltorch.nn.functional.add_layer_norm (the transformer's residual add + dropout + layer norm):
on the CPU and wgpu (backends without the fused kernel) its single autograd node, which runs the
composite's kernels, against the composite it is defined by (same dropout draws, values, gradients
and create_graph second derivatives), its errors, and
TransformerEncoderLayer/TransformerDecoderLayer routing their residual adds through it (hooks on a
norm still see their call). On CUDA the fused kernels (one pass each way) against a float64 CPU
reference for float32, bfloat16, float16 and float32 residual + bfloat16 delta (autocast's case), with
dropout drawing the numbers the CPU draws, register and plain row kernels, h's own gradient and
create_graph."""

from __future__ import annotations

import numpy as np
import pytest

import spiraltorch as st
from conftest import HAVE_CUDA, CUDA_SKIP_REASON, to_np

F = st.nn.functional


def composite(x, d, shape, w, b, eps, p, training):
    h = x + F.dropout(d, p, training)
    return h, F.layer_norm(h, shape, w, b, eps)


def test_cpu_equals_composite_with_the_same_draws_and_gradients():
    st.manual_seed(0)
    leaves = [st.randn(3, 7, 32, dtype=st.float64) for _ in range(2)] + [st.randn(32, dtype=st.float64)
                                                                        for _ in range(2)]
    gz, gh = st.randn(3, 7, 32, dtype=st.float64), st.randn(3, 7, 32, dtype=st.float64)
    results = []
    for fn in (F.add_layer_norm, composite):
        ins = [t.detach().requires_grad_(True) for t in leaves]
        st.manual_seed(123)
        h, z = fn(ins[0], ins[1], [32], ins[2], ins[3], 1e-5, 0.3, True)
        ((z * gz).sum() + (h * gh).sum()).backward()
        results.append([to_np(h), to_np(z)] + [to_np(t.grad) for t in ins])
    for got, want in zip(*results):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    # dropout really dropped: h - x is 0 or d / 0.7
    diff, d = results[0][0] - to_np(leaves[0]), to_np(leaves[1])
    kept = diff != 0
    assert 0.15 < 1 - kept.mean() < 0.45
    np.testing.assert_allclose(diff[kept], d[kept] / 0.7, rtol=1e-12)


@pytest.mark.parametrize("p", [0.0, 0.3], ids=["no-dropout", "dropout"])
def test_cpu_create_graph_second_derivatives_equal_the_composite(p):
    """create_graph through the fused node (h read as the node's own output) gives the composite's
    second derivatives into the residual, delta and weight (float64)."""
    st.manual_seed(8)
    leaves = [st.randn(5, 16, dtype=st.float64) for _ in range(2)] + [st.randn(16, dtype=st.float64)]
    g = st.randn(5, 16, dtype=st.float64)
    results = []
    for fn in (F.add_layer_norm, composite):
        x, d, w = (t.detach().requires_grad_(True) for t in leaves)
        st.manual_seed(11)
        h, z = fn(x, d, [16], w, None, 1e-5, p, True)
        (dd,) = st.autograd.grad([(z * g).sum() + (h * h).sum()], [d], create_graph=True)
        results.append([to_np(dd)] + [to_np(t) for t in st.autograd.grad([(dd ** 2).sum()], [x, d, w])])
    for got, want in zip(*results):
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)


@pytest.mark.skipif(not st.wgpu.is_available(), reason="wgpu not available: " + st.wgpu.unavailable_reason())
def test_wgpu_single_node_equals_the_cpu_with_the_same_draws():
    """wgpu has no fused add_layer_norm kernel: the op layer runs its add, dropout_mask and
    layer_norm entries behind the one node; h, the output and every gradient equal the CPU's
    (same Philox draws) in float32."""
    rng = np.random.default_rng(3)
    arrays = [rng.standard_normal(s).astype(np.float32) for s in [(4, 9, 48), (4, 9, 48), (48,), (48,)]]
    gz, gh = (rng.standard_normal((4, 9, 48)).astype(np.float32) for _ in range(2))
    results = []
    for dev in ("cpu", "wgpu"):
        ins = [st.tensor(a, device=dev).requires_grad_(True) for a in arrays]
        st.manual_seed(5)
        h, z = F.add_layer_norm(ins[0], ins[1], [48], ins[2], ins[3], 1e-5, 0.25, True)
        assert h.grad_fn == z.grad_fn == "AddLayerNormBackward", dev
        ((z * st.tensor(gz, device=dev)).sum() + (h * st.tensor(gh, device=dev)).sum()).backward()
        results.append([to_np(h), to_np(z)] + [to_np(t.grad) for t in ins])
    for got, want in zip(*results):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
    dropped = results[1][0] == arrays[0]
    assert 0.1 < dropped.mean() < 0.4


def test_out_dtype_and_no_delta_on_the_cpu():
    """out_dtype casts the normalised output (the composite then .to); delta=None is layer_norm alone."""
    st.manual_seed(1)
    x, d, w = st.randn(4, 16), st.randn(4, 16), st.randn(16)
    h, z = F.add_layer_norm(x, d, [16], w, None, 1e-5, out_dtype=st.bfloat16)
    assert h.dtype == st.float32 and z.dtype == st.bfloat16
    np.testing.assert_array_equal(to_np(z.to(st.float32)),
                                  to_np(F.layer_norm(x + d, [16], w).to(st.bfloat16).to(st.float32)))
    h, z = F.add_layer_norm(x, None, [16], w)
    assert h is x or np.array_equal(to_np(h), to_np(x))
    np.testing.assert_allclose(to_np(z), to_np(F.layer_norm(x, [16], w)), rtol=1e-6, atol=1e-6)


def test_errors_name_the_operation_and_values():
    x = st.randn(2, 8)
    with pytest.raises(st.ShapeError, match=r"add_layer_norm: residual of shape \(2, 8\) and delta of shape \(2, 4\)"):
        F.add_layer_norm(x, st.randn(2, 4), [8])
    with pytest.raises(ValueError, match=r"add_layer_norm: dropout probability p must lie in \[0, 1\], got 2"):
        F.add_layer_norm(x, x, [8], p=2.0)
    with pytest.raises(st.ShapeError, match=r"add_layer_norm: weight of shape \(3,\)"):
        F.add_layer_norm(x, x, [8], st.ones(3))
    with pytest.raises(st.DtypeError, match=r"add_layer_norm: out_dtype must be a floating dtype, got int64"):
        F.add_layer_norm(x, x, [8], out_dtype=st.int64)


@pytest.mark.parametrize("norm_first", [True, False], ids=["pre-norm", "post-norm"])
def test_encoder_layer_hooks_on_a_norm_still_fire(norm_first):
    """A forward hook on norm2 makes the layer call norm2 itself (the composite); the output is the
    same as without the hook."""
    st.manual_seed(2)
    layer = st.nn.TransformerEncoderLayer(16, 2, 32, dropout=0.0, batch_first=True, norm_first=norm_first)
    x = st.randn(2, 5, 16)
    plain = to_np(layer(x))
    seen = []
    layer.norm2.register_forward_hook(lambda mod, args, out: seen.append(tuple(out.shape)))
    hooked = to_np(layer(x))
    assert seen == [(2, 5, 16)]
    np.testing.assert_allclose(hooked, plain, rtol=1e-5, atol=1e-6)


def test_decoder_layer_equals_its_layers_by_hand():
    st.manual_seed(4)
    layer = st.nn.TransformerDecoderLayer(16, 2, 32, dropout=0.0, batch_first=True, norm_first=True)
    tgt, mem = st.randn(2, 5, 16), st.randn(2, 6, 16)
    got = to_np(layer(tgt, mem))
    x = tgt
    z = layer.norm1(x)
    x = x + layer.self_attn(z, z, z, need_weights=False)[0]
    z = layer.norm2(x)
    x = x + layer.multihead_attn(z, mem, mem, need_weights=False)[0]
    z = layer.norm3(x)
    x = x + layer.linear2(F.relu(layer.linear1(z)))
    np.testing.assert_allclose(got, to_np(x), rtol=1e-5, atol=1e-5)


def encoder_by_hand(enc, x, mask=None, is_causal=False):
    """TransformerEncoder's definition: its layers one after another, then its norm."""
    for layer in enc.layers:
        x = layer(x, src_mask=mask, is_causal=is_causal)
    return enc.norm(x) if enc.norm is not None else x


@pytest.mark.parametrize("with_norm", [True, False], ids=["final-norm", "no-norm"])
@pytest.mark.parametrize("p", [0.0, 0.2], ids=["no-dropout", "dropout"])
def test_pre_norm_encoder_chains_its_layers_like_the_layers_by_hand(with_norm, p):
    """A pre-norm TransformerEncoder without hooks runs its layers as one chain of residual branches
    (layer i's last add fused with layer i + 1's norm1, the last with the stack's norm): values,
    dropout draws and every parameter's gradient equal the layers called one by one (float64)."""
    st.manual_seed(5)
    layer = st.nn.TransformerEncoderLayer(16, 2, 32, dropout=p, activation="gelu", batch_first=True,
                                          norm_first=True).to(st.float64)
    enc = st.nn.TransformerEncoder(layer, 3, norm=st.nn.LayerNorm(16).to(st.float64) if with_norm else None)
    x = st.randn(2, 5, 16, dtype=st.float64)
    g = st.randn(2, 5, 16, dtype=st.float64)
    outs, grads = [], []
    for fn in (lambda: enc(x, is_causal=True), lambda: encoder_by_hand(enc, x, is_causal=True)):
        enc.zero_grad()
        st.manual_seed(77)
        y = fn()
        (y * g).sum().backward()
        outs.append(to_np(y))
        grads.append({name: to_np(t.grad) for name, t in enc.named_parameters()})
    np.testing.assert_allclose(outs[0], outs[1], rtol=1e-12, atol=1e-12)
    assert grads[0].keys() == grads[1].keys() and len(grads[0]) == 3 * 12 + (2 if with_norm else 0)
    for name in grads[0]:
        np.testing.assert_allclose(grads[0][name], grads[1][name], rtol=1e-10, atol=1e-12, err_msg=name)


@pytest.mark.parametrize("kind", ["encoder", "decoder"])
def test_stack_copies_keep_dtype_and_requires_grad(kind):
    """The stacks' layer copies are what copy.deepcopy gives in PyTorch: same dtype, values and
    requires_grad flags (they were float32 copies of a float64 layer, every flag on)."""
    st.manual_seed(7)
    if kind == "encoder":
        layer = st.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0)
        make = st.nn.TransformerEncoder
    else:
        layer = st.nn.TransformerDecoderLayer(8, 2, 16, dropout=0.0)
        make = st.nn.TransformerDecoder
    layer = layer.to(st.float64)
    layer.linear1.weight.requires_grad_(False)
    layer.eval()
    stack = make(layer, 2)
    for copy in stack.layers:
        assert not copy.training and not copy.linear1.weight.requires_grad and copy.linear2.weight.requires_grad
        for (name, a), (_, b) in zip(layer.named_parameters(), copy.named_parameters()):
            assert b.dtype == st.float64, name
            np.testing.assert_array_equal(to_np(a), to_np(b), err_msg=name)


def test_encoder_with_a_hooked_layer_or_post_norm_calls_each_layer():
    """A hook on one layer (or post-norm layers) makes the stack call every layer itself: the hook
    fires once per call and the output is the chained one."""
    st.manual_seed(6)
    layer = st.nn.TransformerEncoderLayer(16, 2, 32, dropout=0.0, batch_first=True, norm_first=True)
    enc = st.nn.TransformerEncoder(layer, 2, norm=st.nn.LayerNorm(16))
    x = st.randn(2, 5, 16)
    chained = to_np(enc(x))
    seen = []
    enc.layers[1].register_forward_hook(lambda mod, args, out: seen.append(tuple(out.shape)))
    np.testing.assert_allclose(to_np(enc(x)), chained, rtol=1e-5, atol=1e-6)
    assert seen == [(2, 5, 16)]
    post = st.nn.TransformerEncoder(st.nn.TransformerEncoderLayer(16, 2, 32, dropout=0.0, norm_first=False), 2)
    np.testing.assert_allclose(to_np(post(x)), to_np(encoder_by_hand(post, x)), rtol=1e-6, atol=1e-6)


# ---------------------------------------------------------------- CUDA: the fused kernels

cuda = pytest.mark.skipif(not HAVE_CUDA, reason=CUDA_SKIP_REASON)
TOL = {"float32": 2e-5, "bfloat16": 2e-2, "float16": 3e-3, "mixed": 2e-5}


def exact(a, dtype):
    """Values every dtype holds exactly, so the float64 reference reads what the kernel reads."""
    return (np.round(a * 32) / 32).astype(np.float32)


@cuda
@pytest.mark.parametrize("kind", ["float32", "bfloat16", "float16", "mixed"])
@pytest.mark.parametrize("cols", [768, 300, 37], ids=["regs", "rows-300", "rows-37"])
@pytest.mark.parametrize("p", [0.0, 0.2], ids=["no-dropout", "dropout"])
def test_cuda_fused_matches_float64_cpu(kind, cols, p):
    rng = np.random.default_rng(cols)
    rows = 21
    x, d, gz, gh = (exact(rng.standard_normal((rows, cols)), kind) for _ in range(4))
    w, b = exact(1 + 0.3 * rng.standard_normal(cols), kind), exact(0.3 * rng.standard_normal(cols), kind)
    # float64 CPU reference: the composite, the same Philox draws
    ref = [st.tensor(a.astype(np.float64)).requires_grad_(True) for a in (x, d, w, b)]
    st.manual_seed(7)
    h, z = F.add_layer_norm(ref[0], ref[1], [cols], ref[2], ref[3], 1e-5, p, True)
    ((z * st.tensor(gz.astype(np.float64))).sum() + (h * st.tensor(gh.astype(np.float64))).sum()).backward()
    want = [to_np(h), to_np(z)] + [to_np(t.grad) for t in ref]

    xd = st.float32 if kind in ("float32", "mixed") else getattr(st, kind)
    dd = st.bfloat16 if kind == "mixed" else xd
    ins = [st.tensor(a).to(t).cuda().requires_grad_(True) for a, t in zip((x, d, w, b), (xd, dd, xd, xd))]
    st.manual_seed(7)
    h, z = F.add_layer_norm(ins[0], ins[1], [cols], ins[2], ins[3], 1e-5, p, True)
    assert h.dtype == xd and z.dtype == xd
    ((z * st.tensor(gz).to(xd).cuda()).sum() + (h * st.tensor(gh).to(xd).cuda()).sum()).backward()
    assert ins[1].grad.dtype == dd
    got = [h, z] + [t.grad for t in ins]
    tol = TOL[kind]
    for name, g, wv in zip(("h", "out", "dx", "ddelta", "dw", "db"), got, want):
        g = to_np(g.to(st.float32)).astype(np.float64)
        err = np.abs(g - wv).max() / max(np.abs(wv).max(), 1.0)
        # ddelta in bfloat16 (mixed) carries one bfloat16 rounding
        limit = 2e-2 if (kind == "mixed" and name == "ddelta") else tol
        assert err < limit, f"{name}: relative error {err:.2e}"


@cuda
def test_cuda_post_norm_only_normalised_output_and_create_graph():
    """Post-norm uses only the normalised output (h's gradient undefined); create_graph through the
    fused node gives the composite's second derivatives (the residual's and delta's through h, the
    node's own output)."""
    rng = np.random.default_rng(1)
    x, d, g = (rng.standard_normal((6, 64)).astype(np.float32) for _ in range(3))
    w = (1 + 0.2 * rng.standard_normal(64)).astype(np.float32)
    out = {}
    for dev in ("cpu", "cuda"):
        xs, ds = (st.tensor(a).to(dev).requires_grad_(True) for a in (x, d))
        ws = st.tensor(w).to(dev).requires_grad_(True)
        _, z = F.add_layer_norm(xs, ds, [64], ws, None, 1e-5)
        (dd,) = st.autograd.grad([z], [ds], [st.tensor(g).to(dev)], create_graph=True)
        # second derivatives into the weight and, through h, the residual and delta
        dw2, dx2, dd2 = st.autograd.grad([(dd ** 2).sum()], [ws, xs, ds])
        out[dev] = (to_np(dd), to_np(dw2), to_np(dx2), to_np(dd2))
    for a, b in zip(out["cuda"], out["cpu"]):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-4)


@cuda
def test_cuda_fused_node_does_not_keep_delta():
    """The composite's add keeps nothing for its backward; the fused node neither: once the caller
    drops delta, its memory is back (h, the normalised rows and the row statistics remain)."""
    x = st.randn(512, 1024).cuda().requires_grad_(True)
    nbytes = 512 * 1024 * 4
    before = st.cuda.memory_allocated()
    d = x * 2.0
    h, z = F.add_layer_norm(x, d, [1024])
    del d
    grown = st.cuda.memory_allocated() - before
    assert grown < 2 * nbytes + 65536, grown  # h and z; delta's 2 MiB returned
    (h.sum() + z.sum()).backward()
    np.testing.assert_allclose(to_np(x.grad), 3.0, rtol=0, atol=1e-4)  # d(h)/dx = 1 + 2; z's gradient sums to 0


@cuda
def test_cuda_gpt_block_under_autocast_matches_cpu_float32():
    """A pre-norm encoder layer under bf16 autocast on CUDA (float32 residual, bfloat16 branch
    outputs into the fused kernel) against the same layer in float32 on the CPU."""
    st.manual_seed(0)
    layer = st.nn.TransformerEncoderLayer(64, 4, 128, dropout=0.0, activation="gelu", batch_first=True,
                                          norm_first=True)
    x = st.randn(2, 16, 64)
    want = to_np(layer(x))
    layer = layer.cuda()
    with st.autocast("cuda", dtype=st.bfloat16):
        got = layer(x.cuda())
    assert got.dtype == st.float32
    np.testing.assert_allclose(to_np(got), want, rtol=5e-2, atol=5e-2)


@cuda
@pytest.mark.parametrize("with_delta", [True, False], ids=["add", "norm-only"])
def test_cuda_bfloat16_output_equals_the_float32_output_cast(with_delta):
    """Float32 rows normalised straight into bfloat16 (autocast's cast folded in) equal the float32
    output cast to bfloat16, element for element; the gradients from a bfloat16 output gradient equal
    the float32 path's fed the same gradient."""
    rng = np.random.default_rng(9)
    x, d = (rng.standard_normal((40, 768)).astype(np.float32) for _ in range(2))
    w, b = (1 + 0.2 * rng.standard_normal(768)).astype(np.float32), rng.standard_normal(768).astype(np.float32)
    g = exact(rng.standard_normal((40, 768)), "bfloat16")
    runs = {}
    for od in (None, st.bfloat16):
        ins = [st.tensor(a).cuda().requires_grad_(True) for a in (x, d, w, b)]
        _, z = F.add_layer_norm(ins[0], ins[1] if with_delta else None, [768], ins[2], ins[3], out_dtype=od)
        assert z.dtype == (od or st.float32)
        z.backward(st.tensor(g).cuda().to(z.dtype))
        runs[od] = [to_np(z.to(st.float32))] + [to_np(t.grad) if t.grad is not None else None for t in ins]
    want = runs[None]
    np.testing.assert_array_equal(runs[st.bfloat16][0], to_np(st.tensor(want[0]).to(st.bfloat16).to(st.float32)))
    for got, ref in zip(runs[st.bfloat16][1:], want[1:]):
        if ref is None:
            assert got is None
        else:
            np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-5)
