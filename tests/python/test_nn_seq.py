"""LSTM, GRU, MultiheadAttention, scaled_dot_product_attention and
TransformerEncoderLayer against PyTorch (copied weights) and finite differences."""

from __future__ import annotations

import numpy as np
import pytest

import spiraltorch as st
from conftest import gradcheck, to_np

nn = st.nn

DT = {"float32": (st.float32, np.float32, 2e-5), "float64": (st.float64, np.float64, 1e-10)}


# ---------------------------------------------------------------------------- helpers


def torch_key(k):
    return k.replace("::", ".")


def st_key(k):
    return "::".join(k.rsplit(".", 1)) if "." in k else k


def copy_from_torch(sm, tm):
    sd = {st_key(k): v.detach().cpu().numpy() for k, v in tm.state_dict().items()}
    assert set(sd) == set(sm.state_dict()), (sorted(sd), sorted(sm.state_dict()))
    sm.load_state_dict(sd)


def make_pair(st_cls, torch_cls, dtype, args, kwargs, torch_kwargs=None):
    torch = pytest.importorskip("torch")
    stdt, npdt, _ = DT[dtype]
    tm = torch_cls(*args, **(torch_kwargs if torch_kwargs is not None else kwargs))
    tm = tm.to(torch.float64 if npdt == np.float64 else torch.float32)
    sm = st_cls(*args, **kwargs)
    sm.to(stdt)
    copy_from_torch(sm, tm)
    return sm, tm


def pair_inputs(arr, npdt, requires_grad=True):
    torch = pytest.importorskip("torch")
    a = np.asarray(arr, dtype=npdt)
    s = st.tensor(a, dtype=st.float64 if npdt == np.float64 else st.float32, requires_grad=requires_grad)
    t = torch.tensor(a, requires_grad=requires_grad)
    return s, t


def close(s, t, tol):
    assert tuple(s.shape) == tuple(t.shape), (tuple(s.shape), tuple(t.shape))
    np.testing.assert_allclose(to_np(s).astype(np.float64), t.detach().cpu().numpy().astype(np.float64),
                               rtol=tol, atol=tol)


def backward_pair(s_outs, t_outs, seed=0):
    """Backpropagates sum(out * w) with the same random w through both graphs."""
    torch = pytest.importorskip("torch")
    g = np.random.default_rng(seed + 99)
    sl = tl = None
    for s, t in zip(s_outs, t_outs):
        w = g.uniform(0.5, 1.5, size=tuple(t.shape))
        ws = st.tensor(w.astype(to_np(s).dtype))
        wt = torch.tensor(w, dtype=t.dtype)
        a, b = (s * ws).sum(), (t * wt).sum()
        sl = a if sl is None else sl + a
        tl = b if tl is None else tl + b
    sl.backward()
    tl.backward()


def compare_param_grads(sm, tm, tol):
    tgrads = {k: p.grad for k, p in tm.named_parameters()}
    for k, p in sm.named_parameters():
        tg = tgrads[torch_key(k)]
        assert p.grad is not None, k
        close(p.grad, tg, tol)


# ---------------------------------------------------------------------------- RNNs


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("num_layers", [1, 2])
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("batch_first", [True, False])
@pytest.mark.parametrize("with_h0", [False, True])
def test_lstm_matches_torch(dtype, num_layers, bias, batch_first, with_h0):
    torch = pytest.importorskip("torch")
    _, npdt, tol = DT[dtype]
    B, T, I, H = 3, 5, 4, 6
    sm, tm = make_pair(nn.LSTM, torch.nn.LSTM, dtype, (I, H),
                       dict(num_layers=num_layers, bias=bias, batch_first=batch_first))
    g = np.random.default_rng(1)
    xs, xt = pair_inputs(g.normal(size=(B, T, I) if batch_first else (T, B, I)), npdt)
    if with_h0:
        h0s, h0t = pair_inputs(g.normal(size=(num_layers, B, H)), npdt)
        c0s, c0t = pair_inputs(g.normal(size=(num_layers, B, H)), npdt)
        so, (sh, sc) = sm(xs, (h0s, c0s))
        to, (th, tc) = tm(xt, (h0t, c0t))
    else:
        so, (sh, sc) = sm(xs)
        to, (th, tc) = tm(xt)
    for s, t in ((so, to), (sh, th), (sc, tc)):
        close(s, t, tol)
    backward_pair([so, sh, sc], [to, th, tc])
    close(xs.grad, xt.grad, tol)
    if with_h0:
        close(h0s.grad, h0t.grad, tol)
        close(c0s.grad, c0t.grad, tol)
    compare_param_grads(sm, tm, tol)


@pytest.mark.parametrize("kind", ["LSTM", "GRU"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("num_layers", [1, 2])
@pytest.mark.parametrize("batch_first", [True, False])
@pytest.mark.parametrize("with_h0", [False, True])
def test_bidirectional_rnn_matches_torch(kind, dtype, num_layers, batch_first, with_h0):
    """bidirectional=True: the same parameter names and order as torch's (``*_reverse``), output
    (..., 2 * hidden) forward then backward, states (num_layers * 2, batch, hidden), and the
    gradients of input, states and every parameter, with copied weights."""
    torch = pytest.importorskip("torch")
    _, npdt, tol = DT[dtype]
    B, T, I, H = 3, 5, 4, 6
    sm, tm = make_pair(getattr(nn, kind), getattr(torch.nn, kind), dtype, (I, H),
                       dict(num_layers=num_layers, batch_first=batch_first, bidirectional=True))
    assert [k for k, _ in sm.named_parameters()] == [st_key(k) for k, _ in tm.named_parameters()]
    assert sm.bidirectional and "bidirectional=True" in repr(sm)
    g = np.random.default_rng(3)
    xs, xt = pair_inputs(g.normal(size=(B, T, I) if batch_first else (T, B, I)), npdt)
    states = [pair_inputs(g.normal(size=(2 * num_layers, B, H)), npdt) for _ in range(2 if kind == "LSTM" else 1)]
    if kind == "LSTM":
        so, (sh, sc) = sm(xs, (states[0][0], states[1][0])) if with_h0 else sm(xs)
        to, (th, tc) = tm(xt, (states[0][1], states[1][1])) if with_h0 else tm(xt)
        s_outs, t_outs = [so, sh, sc], [to, th, tc]
    else:
        so, sh = sm(xs, states[0][0]) if with_h0 else sm(xs)
        to, th = tm(xt, states[0][1]) if with_h0 else tm(xt)
        s_outs, t_outs = [so, sh], [to, th]
    assert so.shape[-1] == 2 * H and sh.shape == (2 * num_layers, B, H)
    for s, t in zip(s_outs, t_outs):
        close(s, t, tol)
    backward_pair(s_outs, t_outs)
    close(xs.grad, xt.grad, tol)
    if with_h0:
        for s, t in states:
            close(s.grad, t.grad, tol)
    compare_param_grads(sm, tm, tol)


@pytest.mark.parametrize("nonlinearity", ["tanh", "relu"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("num_layers", [1, 2])
@pytest.mark.parametrize("bidirectional", [False, True], ids=["uni", "bi"])
@pytest.mark.parametrize("batch_first", [True, False])
def test_elman_rnn_matches_torch(nonlinearity, dtype, num_layers, bidirectional, batch_first):
    """nn.RNN (Elman) with copied weights: outputs, h_n and the gradients of input, h0 and every
    parameter equal torch.nn.RNN's, for tanh and relu, stacked and bidirectional."""
    torch = pytest.importorskip("torch")
    _, npdt, tol = DT[dtype]
    B, T, I, H = 3, 6, 4, 5
    kw = dict(num_layers=num_layers, nonlinearity=nonlinearity, batch_first=batch_first, bidirectional=bidirectional)
    sm, tm = make_pair(nn.RNN, torch.nn.RNN, dtype, (I, H), kw)
    assert sm.nonlinearity == nonlinearity and sm.bidirectional == bidirectional
    dirs = 2 if bidirectional else 1
    g = np.random.default_rng(6)
    xs, xt = pair_inputs(g.normal(size=(B, T, I) if batch_first else (T, B, I)), npdt)
    h0s, h0t = pair_inputs(g.normal(size=(num_layers * dirs, B, H)), npdt)
    so, sh = sm(xs, h0s)
    to, th = tm(xt, h0t)
    close(so, to, tol)
    close(sh, th, tol)
    backward_pair([so, sh], [to, th])
    close(xs.grad, xt.grad, tol)
    close(h0s.grad, h0t.grad, tol)
    compare_param_grads(sm, tm, tol)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("num_layers", [1, 2])
@pytest.mark.parametrize("bidirectional", [False, True], ids=["uni", "bi"])
def test_lstm_with_projection_matches_torch(dtype, num_layers, bidirectional):
    """proj_size: weight_hr_l{k} in torch's order, h and the output with proj_size features, c with
    hidden_size, and every gradient equal to torch.nn.LSTM(proj_size=...) with copied weights."""
    torch = pytest.importorskip("torch")
    _, npdt, tol = DT[dtype]
    B, T, I, H, P = 3, 5, 4, 6, 3
    sm, tm = make_pair(nn.LSTM, torch.nn.LSTM, dtype, (I, H),
                       dict(num_layers=num_layers, batch_first=True, bidirectional=bidirectional, proj_size=P))
    assert [k for k, _ in sm.named_parameters()] == [st_key(k) for k, _ in tm.named_parameters()]
    assert sm.proj_size == P and "proj_size=3" in repr(sm)
    dirs = 2 if bidirectional else 1
    g = np.random.default_rng(7)
    xs, xt = pair_inputs(g.normal(size=(B, T, I)), npdt)
    h0s, h0t = pair_inputs(g.normal(size=(num_layers * dirs, B, P)), npdt)
    c0s, c0t = pair_inputs(g.normal(size=(num_layers * dirs, B, H)), npdt)
    so, (sh, sc) = sm(xs, (h0s, c0s))
    to, (th, tc) = tm(xt, (h0t, c0t))
    assert so.shape[-1] == dirs * P and sh.shape[-1] == P and sc.shape[-1] == H
    for s_, t_ in ((so, to), (sh, th), (sc, tc)):
        close(s_, t_, tol)
    backward_pair([so, sh, sc], [to, th, tc])
    for s_, t_ in ((xs, xt), (h0s, h0t), (c0s, c0t)):
        close(s_.grad, t_.grad, tol)
    compare_param_grads(sm, tm, tol)
    with pytest.raises(st.SpiralValueError, match="proj_size must be 0, or in \\[1, hidden_size\\)"):
        nn.LSTM(I, H, proj_size=H)


def test_elman_rnn_repr_errors_and_unbatched():
    rnn = nn.RNN(3, 4, num_layers=2, nonlinearity="relu")
    assert repr(rnn) == "RNN(3, 4, num_layers=2, nonlinearity='relu', batch_first=False)"
    with pytest.raises(st.SpiralValueError, match="nonlinearity must be 'tanh' or 'relu', got 'gelu'"):
        nn.RNN(3, 4, nonlinearity="gelu")
    out, h = nn.RNN(3, 4)(st.randn(7, 3))
    assert out.shape == (7, 4) and h.shape == (1, 4)


def test_bidirectional_rnn_unbatched_dropout_and_errors():
    """Unbatched input gives (seq, 2H) and (2L, H) states; dropout between layers acts in training
    only; a wrongly shaped h0 names the bidirectional shape."""
    torch = pytest.importorskip("torch")
    sm, tm = make_pair(nn.GRU, torch.nn.GRU, "float64", (3, 4), dict(num_layers=2, bidirectional=True))
    x = np.random.default_rng(4).normal(size=(6, 3))
    so, sh = sm(st.tensor(x))
    to, th = tm(torch.tensor(x))
    close(so, to, 1e-10)
    close(sh, th, 1e-10)
    drop = nn.LSTM(3, 4, num_layers=2, dropout=0.5, bidirectional=True)
    xs = st.tensor(np.random.default_rng(5).normal(size=(2, 7, 3)).astype(np.float32))
    drop.eval()
    a, b = to_np(drop(xs)[0]), to_np(drop(xs)[0])
    np.testing.assert_array_equal(a, b)
    drop.train()
    st.manual_seed(1)
    assert not np.allclose(to_np(drop(xs)[0]), a)
    with pytest.raises(st.ShapeError, match=r"\(4, 7, 4\)"):
        drop(xs, (st.zeros(2, 2, 4), st.zeros(2, 2, 4)))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("num_layers", [1, 3])
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("batch_first", [True, False])
@pytest.mark.parametrize("with_h0", [False, True])
def test_gru_matches_torch(dtype, num_layers, bias, batch_first, with_h0):
    torch = pytest.importorskip("torch")
    _, npdt, tol = DT[dtype]
    B, T, I, H = 2, 6, 3, 5
    sm, tm = make_pair(nn.GRU, torch.nn.GRU, dtype, (I, H),
                       dict(num_layers=num_layers, bias=bias, batch_first=batch_first))
    g = np.random.default_rng(2)
    xs, xt = pair_inputs(g.normal(size=(B, T, I) if batch_first else (T, B, I)), npdt)
    if with_h0:
        h0s, h0t = pair_inputs(g.normal(size=(num_layers, B, H)), npdt)
        so, sh = sm(xs, h0s)
        to, th = tm(xt, h0t)
    else:
        so, sh = sm(xs)
        to, th = tm(xt)
    close(so, to, tol)
    close(sh, th, tol)
    backward_pair([so, sh], [to, th])
    close(xs.grad, xt.grad, tol)
    if with_h0:
        close(h0s.grad, h0t.grad, tol)
    compare_param_grads(sm, tm, tol)


@pytest.mark.parametrize("kind", ["LSTM", "GRU"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("hidden", [72, 130])
def test_rnn_wide_hidden_matches_torch(kind, dtype, hidden):
    """Hidden sizes wide enough that the CPU recurrence splits the hidden units over threads (slices
    of 16, the last one short); float32 through the loop recurrence, not oneDNN."""
    torch = pytest.importorskip("torch")
    from conftest import native_backend
    _, npdt, tol = DT[dtype]
    tol = max(tol, 1e-4) if dtype == "float32" else tol
    B, T, I = 8, 4, 5
    sm, tm = make_pair(getattr(nn, kind), getattr(torch.nn, kind), dtype, (I, hidden),
                       dict(num_layers=2, batch_first=False))
    g = np.random.default_rng(hidden)
    xs, xt = pair_inputs(g.normal(size=(T, B, I)), npdt)
    h0 = g.normal(size=(2, B, hidden))
    with native_backend("rnn", "loop"):
        if kind == "LSTM":
            c0 = g.normal(size=(2, B, hidden))
            (h0s, h0t), (c0s, c0t) = pair_inputs(h0, npdt), pair_inputs(c0, npdt)
            so, (sh, sc) = sm(xs, (h0s, c0s))
            to, (th, tc) = tm(xt, (h0t, c0t))
            pairs = [(so, to), (sh, th), (sc, tc)]
        else:
            h0s, h0t = pair_inputs(h0, npdt)
            so, sh = sm(xs, h0s)
            to, th = tm(xt, h0t)
            pairs = [(so, to), (sh, th)]
        for s, t in pairs:
            close(s, t, tol)
        backward_pair([p[0] for p in pairs], [p[1] for p in pairs])
    close(xs.grad, xt.grad, tol)
    close(h0s.grad, h0t.grad, tol)
    if kind == "LSTM":
        close(c0s.grad, c0t.grad, tol)
    compare_param_grads(sm, tm, tol)


@pytest.mark.parametrize("kind", ["LSTM", "GRU"])
def test_rnn_unbatched_and_only_output_loss(kind):
    torch = pytest.importorskip("torch")
    sm, tm = make_pair(getattr(nn, kind), getattr(torch.nn, kind), "float64", (3, 4), dict(num_layers=2))
    g = np.random.default_rng(3)
    xs, xt = pair_inputs(g.normal(size=(7, 3)), np.float64)
    so, sr = sm(xs)
    to, tr = tm(xt)
    close(so, to, 1e-10)
    if kind == "LSTM":
        close(sr[0], tr[0], 1e-10)
        close(sr[1], tr[1], 1e-10)
    else:
        close(sr, tr, 1e-10)
    backward_pair([so], [to])  # loss on the output only: h_n/c_n branches carry no gradient
    close(xs.grad, xt.grad, 1e-10)
    compare_param_grads(sm, tm, 1e-10)


def test_rnn_params_init_and_attrs():
    m = nn.LSTM(10, 16, num_layers=2, name="enc")
    keys = list(m.state_dict())
    assert keys == [f"enc::{p}_l{k}" for k in range(2) for p in ("weight_ih", "weight_hh", "bias_ih", "bias_hh")]
    assert tuple(m.weight_ih_l0.shape) == (64, 10)
    assert tuple(m.weight_hh_l1.shape) == (64, 16)
    assert m.batch_first is False  # PyTorch's default: (seq, batch, feature)
    bound = 1 / np.sqrt(16)
    for _, p in m.named_parameters():
        a = to_np(p)
        assert np.all(np.abs(a) <= bound) and a.std() > bound / 4
    g = nn.GRU(4, 8)
    assert tuple(g.weight_ih_l0.shape) == (24, 4) and tuple(g.bias_hh_l0.shape) == (24,)
    with pytest.raises(AttributeError):
        g.weight_ih_l1


def test_rnn_in_sequential_and_errors():
    seq = nn.Sequential(nn.LSTM(3, 5), nn.Linear(5, 2))
    y = seq(st.randn(2, 4, 3))
    assert tuple(y.shape) == (2, 4, 2)
    m = nn.GRU(3, 5)
    with pytest.raises(ValueError):
        m(st.randn(2, 4, 7))
    with pytest.raises(ValueError):
        m(st.randn(2, 4, 3), st.randn(2, 2, 5))


def test_rnn_double_backward_refused():
    m = nn.GRU(2, 3)
    x = st.randn(1, 2, 2, requires_grad=True)
    out, _ = m(x)
    with pytest.raises(RuntimeError):
        st.autograd.grad([out.sum()], [x], create_graph=True)


def test_rnn_half_precision_runs():
    m = nn.LSTM(3, 4, batch_first=True)
    m.to(st.bfloat16)
    out, (h, c) = m(st.randn(2, 5, 3).to(st.bfloat16))
    assert out.dtype == st.bfloat16 and tuple(h.shape) == (1, 2, 4)


def test_rnn_dropout_between_layers_train_only():
    m = nn.LSTM(3, 8, num_layers=2, dropout=0.5)
    x = st.randn(2, 5, 3)
    m.eval()
    a, _ = m(x)
    b, _ = m(x)
    np.testing.assert_array_equal(to_np(a), to_np(b))
    m.train()
    c, _ = m(x)
    assert not np.allclose(to_np(a), to_np(c))


def _set_params(mod, names, tensors):
    for n, t in zip(names, tensors):
        mod.register_parameter(n, t)


@pytest.mark.parametrize("kind", ["LSTM", "GRU"])
def test_rnn_finite_differences(kind):
    st.manual_seed(0)
    m = getattr(nn, kind)(2, 3, num_layers=2, batch_first=True)
    m.to(st.float64)
    names = [k for k, _ in m.named_parameters()]
    params = [to_np(p) for _, p in m.named_parameters()]
    g = np.random.default_rng(5)
    x = g.normal(size=(2, 3, 2))
    h0 = g.normal(size=(2, 2, 3))
    c0 = g.normal(size=(2, 2, 3))

    def fn(x, h0, c0, *ps):
        _set_params(m, names, ps)
        if kind == "LSTM":
            o, (h, c) = m(x, (h0, c0))
            return o, h, c
        o, h = m(x, h0)
        return o, h

    gradcheck(fn, x, h0, c0, *params, atol=1e-6, rtol=1e-5,
              check_grad_of=None if kind == "LSTM" else [0, 1] + list(range(3, 3 + len(params))))


# ---------------------------------------------------------------------------- attention


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("mask", [None, "bool", "float", "causal"])
def test_sdpa_matches_torch(dtype, mask):
    torch = pytest.importorskip("torch")
    _, npdt, tol = DT[dtype]
    g = np.random.default_rng(7)
    qs, qt = pair_inputs(g.normal(size=(2, 3, 5, 4)), npdt)
    ks, kt = pair_inputs(g.normal(size=(2, 3, 6, 4)), npdt)
    vs, vt = pair_inputs(g.normal(size=(2, 3, 6, 8)), npdt)
    kw_s, kw_t = {}, {}
    if mask == "bool":
        mb = g.random((5, 6)) > 0.3
        mb[:, 0] = True
        kw_s["attn_mask"] = st.tensor(mb)
        kw_t["attn_mask"] = torch.tensor(mb)
    elif mask == "float":
        mf = g.normal(size=(2, 1, 5, 6)).astype(npdt)
        kw_s["attn_mask"] = st.tensor(mf)
        kw_t["attn_mask"] = torch.tensor(mf)
    elif mask == "causal":
        kw_s["is_causal"] = kw_t["is_causal"] = True
    so = nn.scaled_dot_product_attention(qs, ks, vs, **kw_s)
    to = torch.nn.functional.scaled_dot_product_attention(qt, kt, vt, **kw_t)
    close(so, to, tol)
    backward_pair([so], [to])
    for s, t in ((qs, qt), (ks, kt), (vs, vt)):
        close(s.grad, t.grad, tol)


def test_sdpa_scale_and_errors():
    torch = pytest.importorskip("torch")
    g = np.random.default_rng(8)
    qs, qt = pair_inputs(g.normal(size=(4, 3)), np.float64)
    so = nn.scaled_dot_product_attention(qs, qs, qs, scale=0.3)
    to = torch.nn.functional.scaled_dot_product_attention(qt, qt, qt, scale=0.3)
    close(so, to, 1e-10)
    with pytest.raises(ValueError):
        nn.scaled_dot_product_attention(qs, qs, qs, attn_mask=st.ones(4, 4), is_causal=True)
    with pytest.raises(ValueError):
        nn.scaled_dot_product_attention(qs, st.randn(4, 2, dtype=st.float64), qs)


MHA_CASES = [
    # (self/cross, attn_mask kind, key padding kind, batch_first, need_weights, average)
    ("self", None, None, True, True, True),
    ("self", "causal_bool", None, True, True, True),
    ("self", "causal_float", None, True, True, False),
    ("self", None, "bool", True, True, True),
    ("self", "causal_bool", "bool", False, True, True),
    ("self", "3d_float", "float", True, False, True),
    ("kv", None, "bool", True, True, True),
    ("cross", "bool", None, True, True, True),
    ("cross", None, None, False, True, False),
]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("case", MHA_CASES)
def test_mha_matches_torch(dtype, case):
    torch = pytest.importorskip("torch")
    kind, am, kpm, batch_first, need_weights, avg = case
    _, npdt, tol = DT[dtype]
    B, L, S, E, h = 2, 5, 5 if kind == "self" else 4, 8, 2
    sm, tm = make_pair(nn.MultiheadAttention, torch.nn.MultiheadAttention, dtype, (E, h),
                       dict(batch_first=batch_first))
    g = np.random.default_rng(11)

    def shp(n):
        return (B, n, E) if batch_first else (n, B, E)

    qs, qt = pair_inputs(g.normal(size=shp(L)), npdt)
    if kind == "self":
        ks, kt, vs, vt = qs, qt, qs, qt
    elif kind == "kv":
        ks, kt = pair_inputs(g.normal(size=shp(S)), npdt)
        vs, vt = ks, kt
    else:
        ks, kt = pair_inputs(g.normal(size=shp(S)), npdt)
        vs, vt = pair_inputs(g.normal(size=shp(S)), npdt)
    kw_s, kw_t = dict(need_weights=need_weights, average_attn_weights=avg), dict(need_weights=need_weights,
                                                                                  average_attn_weights=avg)
    if am == "causal_bool":
        m = np.triu(np.ones((L, S), dtype=bool), 1)
        kw_s["attn_mask"], kw_t["attn_mask"] = st.tensor(m), torch.tensor(m)
    elif am == "causal_float":
        m = np.triu(np.full((L, S), -np.inf), 1).astype(npdt)
        kw_s["attn_mask"], kw_t["attn_mask"] = st.tensor(m), torch.tensor(m)
    elif am == "bool":
        m = g.random((L, S)) > 0.6
        m[:, 0] = False
        kw_s["attn_mask"], kw_t["attn_mask"] = st.tensor(m), torch.tensor(m)
    elif am == "3d_float":
        m = g.normal(size=(B * h, L, S)).astype(npdt)
        kw_s["attn_mask"], kw_t["attn_mask"] = st.tensor(m), torch.tensor(m)
    if kpm == "bool":
        m = np.zeros((B, S), dtype=bool)
        m[0, -2:] = True
        kw_s["key_padding_mask"], kw_t["key_padding_mask"] = st.tensor(m), torch.tensor(m)
    elif kpm == "float":
        m = g.normal(size=(B, S)).astype(npdt)
        kw_s["key_padding_mask"], kw_t["key_padding_mask"] = st.tensor(m), torch.tensor(m)
    so, sw = sm(qs, ks, vs, **kw_s)
    to, tw = tm(qt, kt, vt, **kw_t)
    close(so, to, tol)
    if need_weights:
        close(sw, tw, tol)
    else:
        assert sw is None
    outs_s, outs_t = [so], [to]
    if need_weights:
        outs_s.append(sw)
        outs_t.append(tw)
    backward_pair(outs_s, outs_t)
    close(qs.grad, qt.grad, tol)
    if kind != "self":
        close(ks.grad, kt.grad, tol)
    if kind == "cross":
        close(vs.grad, vt.grad, tol)
    compare_param_grads(sm, tm, tol)


def test_mha_is_causal_builds_mask_and_keys():
    torch = pytest.importorskip("torch")
    sm, tm = make_pair(nn.MultiheadAttention, torch.nn.MultiheadAttention, "float64", (8, 4),
                       dict(batch_first=True))
    assert list(sm.state_dict()) == ["in_proj_weight", "in_proj_bias", "out_proj::weight", "out_proj::bias"]
    g = np.random.default_rng(12)
    xs, xt = pair_inputs(g.normal(size=(2, 6, 8)), np.float64)
    so, _ = sm(xs, xs, xs, is_causal=True)
    mask = torch.nn.Transformer.generate_square_subsequent_mask(6, dtype=torch.float64)
    to, _ = tm(xt, xt, xt, attn_mask=mask, is_causal=True)
    close(so, to, 1e-10)
    close(nn.generate_square_subsequent_mask(6, dtype=st.float64), mask, 0)
    # unbatched
    us, ut = pair_inputs(g.normal(size=(5, 8)), np.float64)
    so, sw = sm(us, us, us)
    to, tw = tm(ut, ut, ut)
    close(so, to, 1e-10)
    close(sw, tw, 1e-10)
    # the one-tensor forward (Sequential) is self-attention
    close(nn.Sequential(sm)(us), to, 1e-10)


def test_mha_init_like_torch():
    m = nn.MultiheadAttention(16, 4)
    np.testing.assert_array_equal(to_np(m.in_proj_bias), 0)
    np.testing.assert_array_equal(to_np(m.out_proj.bias), 0)
    w = to_np(m.in_proj_weight)
    assert w.shape == (48, 16) and np.abs(w).max() <= np.sqrt(6 / 64)
    with pytest.raises(ValueError):
        nn.MultiheadAttention(10, 3)


def test_mha_finite_differences():
    st.manual_seed(3)
    m = nn.MultiheadAttention(4, 2, batch_first=True)
    m.to(st.float64)
    names = ["in_proj_weight", "in_proj_bias"]
    params = [to_np(m.in_proj_weight), to_np(m.in_proj_bias)]
    g = np.random.default_rng(13)
    q, k, v = g.normal(size=(2, 3, 4)), g.normal(size=(2, 2, 4)), g.normal(size=(2, 2, 4))
    kpm = st.tensor(np.array([[False, False], [False, True]]))

    def fn(q, k, v, w, b):
        _set_params(m, names, [w, b])
        o, wts = m(q, k, v, key_padding_mask=kpm)
        return o, wts

    gradcheck(fn, q, k, v, *params, atol=1e-6, rtol=1e-5)


# ---------------------------------------------------------------------------- transformer


TEL_CASES = [
    ("relu", False, None, None),
    ("gelu", False, "causal", None),
    ("relu", True, None, "bool"),
    ("gelu", True, "causal", "bool"),
    ("relu", False, "float", "bool"),
]


@pytest.mark.filterwarnings("ignore:Support for mismatched")
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("case", TEL_CASES)
@pytest.mark.parametrize("batch_first", [True, False])
def test_transformer_encoder_layer_matches_torch(dtype, case, batch_first):
    torch = pytest.importorskip("torch")
    activation, norm_first, mask, kpm = case
    _, npdt, tol = DT[dtype]
    B, S, D, h, F = 2, 5, 8, 2, 16
    kw = dict(dim_feedforward=F, dropout=0.0, activation=activation, batch_first=batch_first, norm_first=norm_first)
    sm, tm = make_pair(nn.TransformerEncoderLayer, torch.nn.TransformerEncoderLayer, dtype, (D, h), kw)
    g = np.random.default_rng(21)
    xs, xt = pair_inputs(g.normal(size=(B, S, D) if batch_first else (S, B, D)), npdt)
    kw_s, kw_t = {}, {}
    if mask == "causal":
        kw_s["is_causal"] = True  # no explicit mask needed here
        kw_t["src_mask"] = torch.nn.Transformer.generate_square_subsequent_mask(S, dtype=xt.dtype)
        kw_t["is_causal"] = True
    elif mask == "float":
        m = g.normal(size=(S, S)).astype(npdt)
        kw_s["src_mask"], kw_t["src_mask"] = st.tensor(m), torch.tensor(m)
    if kpm == "bool":
        m = np.zeros((B, S), dtype=bool)
        m[1, -2:] = True
        kw_s["src_key_padding_mask"] = st.tensor(m)
        kw_t["src_key_padding_mask"] = torch.tensor(m)
        if mask == "causal":  # torch wants matching mask types
            kw_t["src_mask"] = torch.triu(torch.ones(S, S, dtype=torch.bool), 1)
    so = sm(xs, **kw_s)
    to = tm(xt, **kw_t)
    close(so, to, tol)
    backward_pair([so], [to])
    close(xs.grad, xt.grad, tol)
    compare_param_grads(sm, tm, tol)


def test_transformer_encoder_layer_structure():
    m = nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, name="enc")
    keys = list(m.state_dict())
    assert keys == ["enc.self_attn::in_proj_weight", "enc.self_attn::in_proj_bias",
                    "enc.self_attn.out_proj::weight", "enc.self_attn.out_proj::bias",
                    "enc.linear1::weight", "enc.linear1::bias", "enc.linear2::weight", "enc.linear2::bias",
                    "enc.norm1::weight", "enc.norm1::bias", "enc.norm2::weight", "enc.norm2::bias"]
    assert [n for n, _ in m.named_children()] == ["self_attn", "linear1", "dropout", "linear2", "norm1", "norm2",
                                                  "dropout1", "dropout2"]
    assert m.norm_first is False and m.activation == "relu"
    with pytest.raises(ValueError):
        nn.TransformerEncoderLayer(8, 2, activation="tanh")
    # train mode with dropout changes outputs; eval is deterministic
    x = st.randn(2, 4, 8)
    m.eval()
    np.testing.assert_array_equal(to_np(m(x)), to_np(m(x)))
    m.train()
    assert not np.allclose(to_np(m(x)), to_np(m(x)))
    # sits in a Sequential through the one-tensor forward
    y = nn.Sequential(nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0), nn.Linear(8, 3))(x)
    assert tuple(y.shape) == (2, 4, 3)


def test_transformer_causal_blocks_future():
    st.manual_seed(4)
    m = nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True)
    x = np.random.default_rng(0).normal(size=(1, 6, 8)).astype(np.float32)
    y1 = to_np(m(st.tensor(x), is_causal=True))
    x2 = x.copy()
    x2[:, 4:] += 5.0
    y2 = to_np(m(st.tensor(x2), is_causal=True))
    np.testing.assert_allclose(y1[:, :4], y2[:, :4], atol=1e-6)
    assert not np.allclose(y1[:, 4:], y2[:, 4:])


def test_transformer_finite_differences():
    st.manual_seed(5)
    m = nn.TransformerEncoderLayer(4, 2, dim_feedforward=6, dropout=0.0, activation="gelu", norm_first=True, batch_first=True)
    m.to(st.float64)
    x = np.random.default_rng(9).normal(size=(2, 3, 4))
    lin_w = to_np(m.linear1.weight)

    def fn(x, w):
        m.linear1.register_parameter("weight", w)
        return m(x, is_causal=True)

    gradcheck(fn, x, lin_w, atol=1e-6, rtol=1e-5)


# ---------------------------------------------------------------------------- TransformerEncoder


@pytest.mark.filterwarnings("ignore:enable_nested_tensor")
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("with_norm", [False, True])
@pytest.mark.parametrize("mask", [None, "causal", "kpm"])
def test_transformer_encoder_matches_torch(dtype, with_norm, mask):
    torch = pytest.importorskip("torch")
    stdt, npdt, tol = DT[dtype]
    B, S, D, h, F, L = 2, 5, 8, 2, 16, 3
    torch.manual_seed(3)
    tl = torch.nn.TransformerEncoderLayer(D, h, F, dropout=0.0, batch_first=True, norm_first=True)
    tm = torch.nn.TransformerEncoder(tl, L, norm=torch.nn.LayerNorm(D) if with_norm else None,
                                     enable_nested_tensor=False)
    tm = tm.to(torch.float64 if npdt == np.float64 else torch.float32)
    for p in tm.parameters():  # the copies start equal in torch too: make them differ
        torch.nn.init.normal_(p, std=0.3)
    sl = nn.TransformerEncoderLayer(D, h, F, dropout=0.0, norm_first=True, batch_first=True)
    sm = nn.TransformerEncoder(sl, L, norm=nn.LayerNorm(D) if with_norm else None)
    sm.to(stdt)
    copy_from_torch(sm, tm)
    g = np.random.default_rng(2)
    xs, xt = pair_inputs(g.normal(size=(B, S, D)), npdt)
    kw_s, kw_t = {}, {}
    if mask == "causal":
        kw_s["is_causal"] = True
        kw_t["mask"] = torch.nn.Transformer.generate_square_subsequent_mask(S, dtype=xt.dtype)
        kw_t["is_causal"] = True
    elif mask == "kpm":
        m = np.zeros((B, S), dtype=bool)
        m[0, -2:] = True
        kw_s["src_key_padding_mask"], kw_t["src_key_padding_mask"] = st.tensor(m), torch.tensor(m)
    so, to = sm(xs, **kw_s), tm(xt, **kw_t)
    if mask == "kpm":  # torch leaves padded positions' rows as they come; compare the kept ones
        keep = ~np.asarray(m)
        np.testing.assert_allclose(to_np(so)[keep], to.detach().numpy()[keep], rtol=tol, atol=tol)
        return
    close(so, to, tol)
    backward_pair([so], [to])
    close(xs.grad, xt.grad, tol)
    compare_param_grads(sm, tm, tol)


def test_transformer_encoder_copies_are_independent():
    st.manual_seed(7)
    layer = nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True)
    enc = nn.TransformerEncoder(layer, 2, norm=nn.LayerNorm(8), name="enc")
    assert enc.num_layers == 2 and len(enc.layers) == 2
    keys = list(enc.state_dict())
    assert keys[0] == "enc.layers.0.self_attn::in_proj_weight"
    assert "enc.layers.1.linear2::bias" in keys and keys[-1] == "enc.norm::bias"
    # each copy starts with the layer's values, and owns them
    w0, w1 = enc.layers[0].linear1.weight, enc.layers[1].linear1.weight
    np.testing.assert_array_equal(to_np(w0), to_np(layer.linear1.weight))
    with st.no_grad():
        w0.mul_(2.0)
    np.testing.assert_array_equal(to_np(w1), to_np(layer.linear1.weight))
    assert len(list(enc.parameters())) == 2 * len(list(layer.parameters())) + 2
    # stacking = applying the layers in order, then the norm
    x = st.randn(2, 4, 8)
    y = x
    for lay in enc.layers:
        y = lay(y)
    np.testing.assert_allclose(to_np(enc(x)), to_np(enc.norm(y)), rtol=1e-6, atol=1e-6)
    c = layer.clone()
    np.testing.assert_array_equal(to_np(c.linear2.weight), to_np(layer.linear2.weight))
    assert "TransformerEncoder(num_layers=2, norm=LayerNorm" in repr(enc)
    with pytest.raises(ValueError, match="num_layers must be positive, got 0"):
        nn.TransformerEncoder(layer, 0)
    # it trains: one SGD step lowers a regression loss
    opt = st.optim.SGD(enc.parameters(), lr=0.05)
    tgt = st.randn(2, 4, 8)
    losses = []
    for _ in range(3):
        loss = ((enc(x) - tgt) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert losses[-1] < losses[0]
