"""nn.functional.feed_forward (a transformer's feed-forward block, linear(act(linear(x))), one node
on CUDA with GELU in cuBLASLt's epilogues) and TransformerEncoderLayer/TransformerDecoderLayer with
activation='gelu_tanh': against PyTorch in float64 on the CPU (outputs and every gradient), the
argument errors, double backward; on CUDA the fused node against the float64 composite for float32,
bfloat16 and float16, autocast's float32 master gradients, shapes the epilogue declines and
create_graph through the fused node."""

from __future__ import annotations

import functools

import numpy as np
import pytest

import spiraltorch as st
from conftest import HAVE_CUDA, CUDA_SKIP_REASON, to_np

F = st.nn.functional
ACTIVATIONS = ["relu", "gelu", "gelu_tanh"]


def _operands(seed, shape, k, hidden, n, bias=True):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape + (k,))
    w1 = rng.standard_normal((hidden, k)) / np.sqrt(k)
    b1 = rng.standard_normal(hidden) if bias else None
    w2 = rng.standard_normal((n, hidden)) / np.sqrt(hidden)
    b2 = rng.standard_normal(n) if bias else None
    g = rng.standard_normal(shape + (n,))
    return [x, w1, b1, w2, b2], g


def _torch_reference(values, g, activation):
    torch = pytest.importorskip("torch")
    ts = [None if v is None else torch.tensor(v, requires_grad=True) for v in values]
    x, w1, b1, w2, b2 = ts
    a = torch.nn.functional.linear(x, w1, b1)
    u = torch.relu(a) if activation == "relu" else torch.nn.functional.gelu(
        a, approximate="tanh" if activation == "gelu_tanh" else "none")
    y = torch.nn.functional.linear(u, w2, b2)
    y.backward(torch.tensor(g))
    return y.detach().numpy(), [None if t is None else t.grad.numpy() for t in ts]


@pytest.mark.parametrize("bias", [True, False], ids=["bias", "no_bias"])
@pytest.mark.parametrize("activation", ACTIVATIONS)
def test_feed_forward_matches_torch_float64(activation, bias):
    values, g = _operands(1, (2, 3), 8, 16, 6, bias)
    want_y, want_grads = _torch_reference(values, g, activation)
    ins = [None if v is None else st.tensor(v).requires_grad_(True) for v in values]
    y = F.feed_forward(ins[0], ins[1], ins[2], ins[3], ins[4], activation=activation)
    assert y.dtype == st.float64 and tuple(y.shape) == (2, 3, 6)
    np.testing.assert_allclose(to_np(y), want_y, rtol=1e-12, atol=1e-12)
    y.backward(st.tensor(g))
    for t, want in zip(ins, want_grads):
        if t is not None:
            np.testing.assert_allclose(to_np(t.grad), want, rtol=1e-10, atol=1e-10)


def test_feed_forward_default_activation_is_gelu_tanh():
    values, _ = _operands(2, (4,), 8, 16, 8)
    x, w1, b1, w2, b2 = (st.tensor(v) for v in values)
    want = F.linear(F.gelu(F.linear(x, w1, b1), approximate="tanh"), w2, b2)
    np.testing.assert_allclose(to_np(F.feed_forward(x, w1, b1, w2, b2)), to_np(want), rtol=1e-14, atol=1e-14)


def test_feed_forward_errors_name_the_values():
    values, _ = _operands(3, (4,), 8, 16, 6)
    x, w1, b1, w2, b2 = (st.tensor(v) for v in values)
    with pytest.raises(ValueError, match=r"feed_forward: activation should be 'relu', 'gelu' or 'gelu_tanh', "
                                         r"got 'swish'"):
        F.feed_forward(x, w1, b1, w2, b2, activation="swish")
    with pytest.raises(st.ShapeError, match=r"feed_forward: input of shape \(4, 7\) does not match weight1"):
        F.feed_forward(st.zeros(4, 7, dtype=st.float64), w1, b1, w2, b2)
    with pytest.raises(st.ShapeError, match=r"weight2 of shape \(6, 15\) does not take weight1's 16 hidden"):
        F.feed_forward(x, w1, b1, st.zeros(6, 15, dtype=st.float64), b2)
    with pytest.raises(st.ShapeError, match=r"bias1 of shape \(15,\), expected \(16,\)"):
        F.feed_forward(x, w1, st.zeros(15, dtype=st.float64), w2, b2)
    with pytest.raises(st.ShapeError, match=r"bias2 of shape \(5,\), expected \(6,\)"):
        F.feed_forward(x, w1, b1, w2, st.zeros(5, dtype=st.float64))
    with pytest.raises(st.ShapeError, match=r"weight1 and weight2 must be 2-D"):
        F.feed_forward(x, st.zeros(16, dtype=st.float64), b1, w2, b2)


def test_feed_forward_double_backward_float64():
    """create_graph: the gradient of sum(dx^2) with respect to weight1 against finite differences."""
    values, g = _operands(4, (3,), 4, 8, 5)
    x, w1, b1, w2, b2 = (st.tensor(v) for v in values)
    gs = st.tensor(g)

    def penalty(w1v):
        xs = x.detach().clone().requires_grad_(True)
        y = F.feed_forward(xs, w1v, b1, w2, b2)
        (dx,) = st.autograd.grad([y], [xs], [gs], create_graph=True)
        return (dx * dx).sum()

    w1s = w1.detach().clone().requires_grad_(True)
    (got,) = st.autograd.grad([penalty(w1s)], [w1s])
    base = values[1]
    want = np.zeros_like(base)
    eps = 1e-6
    for idx in np.ndindex(*base.shape):
        hi, lo = base.copy(), base.copy()
        hi[idx] += eps
        lo[idx] -= eps
        want[idx] = (penalty(st.tensor(hi)).item() - penalty(st.tensor(lo)).item()) / (2 * eps)
    np.testing.assert_allclose(to_np(got), want, rtol=1e-6, atol=1e-7)


def _st_key(k):
    return "::".join(k.rsplit(".", 1)) if "." in k else k


@pytest.mark.parametrize("layer", ["encoder", "decoder"])
def test_transformer_layer_gelu_tanh_matches_torch(layer):
    """PyTorch takes GELU's tanh approximation as a callable; here it is activation='gelu_tanh'."""
    torch = pytest.importorskip("torch")
    D, heads, FF = 8, 2, 16
    kw = dict(dim_feedforward=FF, dropout=0.0, batch_first=True, norm_first=True)
    tcls = torch.nn.TransformerEncoderLayer if layer == "encoder" else torch.nn.TransformerDecoderLayer
    scls = st.nn.TransformerEncoderLayer if layer == "encoder" else st.nn.TransformerDecoderLayer
    tm = tcls(D, heads, activation=functools.partial(torch.nn.functional.gelu, approximate="tanh"), **kw).double()
    sm = scls(D, heads, activation="gelu_tanh", **kw)
    assert sm.activation == "gelu_tanh" and "gelu_tanh" in repr(sm)
    sm.to(st.float64)
    sm.load_state_dict({_st_key(k): v.detach().numpy() for k, v in tm.state_dict().items()})
    rng = np.random.default_rng(5)
    x, mem = rng.standard_normal((2, 5, D)), rng.standard_normal((2, 4, D))
    xs, xt = st.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    if layer == "encoder":
        so, to = sm(xs), tm(xt)
    else:
        so, to = sm(xs, st.tensor(mem)), tm(xt, torch.tensor(mem))
    np.testing.assert_allclose(to_np(so), to.detach().numpy(), rtol=1e-10, atol=1e-10)
    so.sum().backward()
    to.sum().backward()
    np.testing.assert_allclose(to_np(xs.grad), xt.grad.numpy(), rtol=1e-10, atol=1e-10)
    tgrads = dict(tm.named_parameters())
    for k, p in sm.named_parameters():
        np.testing.assert_allclose(to_np(p.grad), tgrads[k.replace("::", ".")].grad.numpy(), rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("make,name", [
    (lambda: "gelu_tanh", "gelu_tanh"),
    (lambda: F.relu, "relu"),
    (lambda: st.nn.ReLU(), "relu"),
    (lambda: F.gelu, "gelu"),
    (lambda: st.nn.GELU(), "gelu"),
    (lambda: st.nn.GELU(approximate="tanh"), "gelu_tanh"),
    (lambda: functools.partial(F.gelu, approximate="tanh"), "gelu_tanh"),
    (lambda: functools.partial(F.gelu, approximate="none"), "gelu"),
], ids=["str", "F.relu", "nn.ReLU", "F.gelu", "nn.GELU", "nn.GELU_tanh", "partial_tanh", "partial_none"])
def test_transformer_layers_take_pytorchs_callable_activations(make, name):
    """PyTorch programs pass the activation as a callable; the layers name what it computes."""
    assert st.nn.TransformerEncoderLayer(8, 2, 16, activation=make()).activation == name
    assert st.nn.TransformerDecoderLayer(8, 2, 16, activation=make()).activation == name
    model = st.nn.Transformer(8, 2, 1, 1, 16, activation=make())
    assert model.encoder.layers[0].activation == name and model.decoder.layers[0].activation == name


def test_transformer_layer_refuses_other_callables():
    with pytest.raises(TypeError, match=r"TransformerEncoderLayer: activation must be 'relu', 'gelu', 'gelu_tanh', "
                                        r"nn.ReLU\(\), .* got <function"):
        st.nn.TransformerEncoderLayer(8, 2, 16, activation=lambda x: x)
    with pytest.raises(TypeError, match=r"TransformerDecoderLayer: activation must be .* got SiLU"):
        st.nn.TransformerDecoderLayer(8, 2, 16, activation=st.nn.SiLU())
    with pytest.raises(TypeError, match=r"Transformer: activation must be"):
        st.nn.Transformer(8, 2, 1, 1, 16, activation=functools.partial(F.gelu, approximate="tanh", extra=1))


def test_transformer_layer_rejects_unknown_activation():
    with pytest.raises(ValueError, match=r"TransformerEncoderLayer: activation should be 'relu', 'gelu' or "
                                         r"'gelu_tanh', got 'tanh'"):
        st.nn.TransformerEncoderLayer(8, 2, 16, activation="tanh")


def test_transformer_layer_with_dropout_and_hooks_keeps_the_modules():
    """Active dropout (or a hook on linear1) runs the block through its modules: the hook sees it."""
    st.manual_seed(0)
    layer = st.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, activation="gelu_tanh", batch_first=True)
    seen = []
    layer.linear1.register_forward_hook(lambda m, inp, out: seen.append(tuple(out.shape)))
    layer(st.randn(2, 3, 8))
    assert seen == [(2, 3, 16)]


# ---- CUDA: the fused node ----
cuda = pytest.mark.skipif(not HAVE_CUDA, reason=CUDA_SKIP_REASON)
TOL = {"float32": 1e-5, "bfloat16": 3e-2, "float16": 4e-3}


def _composite_float64(values, g):
    ins = [None if v is None else st.tensor(v.astype(np.float64)).requires_grad_(True) for v in values]
    y = F.linear(F.gelu(F.linear(ins[0], ins[1], ins[2]), approximate="tanh"), ins[3], ins[4])
    y.backward(st.tensor(g.astype(np.float64)))
    return to_np(y), [None if t is None else to_np(t.grad) for t in ins]


def _close(got, want, dtype, what):
    err = np.abs(got - want).max() / max(np.abs(want).max(), 1.0)
    assert err < TOL[dtype], f"{what}: {err:.2e}"


@cuda
@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "float16"])
@pytest.mark.parametrize("case", ["bias", "no_bias", "declined"])
def test_cuda_feed_forward_matches_float64(dtype, case):
    # "declined": hidden 20 is no multiple of 8 (the epilogue's auxiliary matrix), so the composite runs
    hidden = 20 if case == "declined" else 96
    values, g = _operands(6, (3, 7), 64, hidden, 48, bias=case != "no_bias")
    values = [None if v is None else v.astype(np.float32) for v in values]
    rv = [None if v is None else to_np(st.tensor(v).to(getattr(st, dtype)).to(st.float32)) for v in values]
    want_y, want_grads = _composite_float64(rv, to_np(st.tensor(g.astype(np.float32)).to(getattr(st, dtype))
                                                     .to(st.float32)))
    dt = getattr(st, dtype)
    tf32 = st.cuda.allow_tf32()
    st.cuda.set_allow_tf32(False)
    try:
        ins = [None if v is None else st.tensor(v).to(dt).cuda().requires_grad_(True) for v in values]
        y = F.feed_forward(*ins)
        assert y.dtype == dt and tuple(y.shape) == (3, 7, 48)
        y.backward(st.tensor(g.astype(np.float32)).to(dt).cuda())
    finally:
        st.cuda.set_allow_tf32(tf32)
    _close(to_np(y.to(st.float32)), want_y, dtype, "output")
    for name, t, want in zip(("dx", "dw1", "db1", "dw2", "db2"), ins, want_grads):
        if t is not None:
            assert t.grad.dtype == dt
            _close(to_np(t.grad.to(st.float32)), want, dtype, name)


@cuda
@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_cuda_autocast_feed_forward_gives_float32_master_gradients(dtype):
    """Under autocast the float32 weights are the fused node's inputs: their gradients are float32
    and equal the float64 composite of the rounded operands within the half type's rounding of the
    intermediate activations."""
    values, g = _operands(8, (4, 9), 64, 128, 64)
    values = [v.astype(np.float32) for v in values]
    dt = getattr(st, dtype)
    params = [st.tensor(v).cuda().requires_grad_(True) for v in values[1:]]
    with st.autocast("cuda", dtype=dt):
        y = F.feed_forward(st.tensor(values[0]).cuda(), *params)
    assert y.dtype == dt
    gs = st.tensor(g.astype(np.float32)).to(dt)
    y.backward(gs.cuda())
    rv = [to_np(st.tensor(v).to(dt).to(st.float32)) for v in values]
    want_y, want_grads = _composite_float64(rv, to_np(gs.to(st.float32)))
    _close(to_np(y.to(st.float32)), want_y, dtype, "output")
    for name, p, want in zip(("dw1", "db1", "dw2", "db2"), params, want_grads[1:]):
        assert p.grad.dtype == st.float32, name
        _close(to_np(p.grad), want, dtype, name)


@cuda
def test_cuda_feed_forward_create_graph_matches_the_composite():
    values, g = _operands(9, (5,), 32, 64, 16)
    values = [v.astype(np.float32) for v in values]
    tf32 = st.cuda.allow_tf32()
    st.cuda.set_allow_tf32(False)
    try:
        results = []
        for fused in (True, False):
            ins = [st.tensor(v).cuda().requires_grad_(True) for v in values]
            if fused:
                y = F.feed_forward(*ins)
            else:
                y = F.linear(F.gelu(F.linear(ins[0], ins[1], ins[2]), approximate="tanh"), ins[3], ins[4])
            (dx,) = st.autograd.grad([y], [ins[0]], [st.tensor(g.astype(np.float32)).cuda()], create_graph=True)
            (dw1,) = st.autograd.grad([(dx * dx).sum()], [ins[1]])
            results.append((to_np(dx), to_np(dw1)))
    finally:
        st.cuda.set_allow_tf32(tf32)
    for got, want in zip(*results):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


@cuda
def test_cuda_transformer_layer_gelu_tanh_trains_like_the_cpu():
    """A pre-norm encoder layer with activation='gelu_tanh' (the fused block on CUDA) gives the CPU
    layer's output and parameter gradients (float32, TF32 off)."""
    st.manual_seed(3)
    cpu = st.nn.TransformerEncoderLayer(64, 4, 128, dropout=0.0, activation="gelu_tanh", batch_first=True,
                                        norm_first=True)
    gpu = st.nn.TransformerEncoderLayer(64, 4, 128, dropout=0.0, activation="gelu_tanh", batch_first=True,
                                        norm_first=True)
    gpu.load_state_dict(cpu.state_dict())
    gpu.cuda()
    x = np.random.default_rng(1).standard_normal((2, 16, 64)).astype(np.float32)
    tf32 = st.cuda.allow_tf32()
    st.cuda.set_allow_tf32(False)
    try:
        yc, yg = cpu(st.tensor(x)), gpu(st.tensor(x).cuda())
        yc.square().sum().backward()
        yg.square().sum().backward()
    finally:
        st.cuda.set_allow_tf32(tf32)
    np.testing.assert_allclose(to_np(yg), to_np(yc), rtol=1e-4, atol=1e-4)
    grads = dict(gpu.named_parameters())
    for k, p in cpu.named_parameters():
        np.testing.assert_allclose(to_np(grads[k].grad), to_np(p.grad), rtol=1e-3, atol=1e-3, err_msg=k)
