"""nn.TransformerDecoderLayer, nn.TransformerDecoder and nn.Transformer against PyTorch with copied
weights: outputs and every gradient in float64 (post- and pre-norm, relu/gelu, causal target masks,
key padding masks on target and memory), the children and state-dict keys, PyTorch's Xavier reset,
and a copy task that a small Transformer learns."""

from __future__ import annotations

import numpy as np
import pytest

import spiraltorch as st
from conftest import to_np

nn = st.nn
torch = pytest.importorskip("torch")


def _st_key(k):
    return "::".join(k.rsplit(".", 1)) if "." in k else k


def _copy_from_torch(sm, tm):
    sd = {_st_key(k): v.detach().cpu().numpy() for k, v in tm.state_dict().items()}
    assert set(sd) == set(sm.state_dict()), (sorted(set(sd) ^ set(sm.state_dict())))
    sm.load_state_dict(sd)


def _close(s, t, tol=1e-10):
    assert tuple(s.shape) == tuple(t.shape), (tuple(s.shape), tuple(t.shape))
    np.testing.assert_allclose(to_np(s), t.detach().numpy(), rtol=tol, atol=tol)


def _backward_and_compare(sm, tm, so, to, inputs):
    w = np.random.default_rng(7).uniform(0.5, 1.5, size=tuple(to.shape))
    (so * st.tensor(w)).sum().backward()
    (to * torch.tensor(w)).sum().backward()
    for s, t in inputs:
        _close(s.grad, t.grad)
    tgrads = {k: p.grad for k, p in tm.named_parameters()}
    for k, p in sm.named_parameters():
        _close(p.grad, tgrads[k.replace("::", ".")])


CASES = [("relu", False, None), ("gelu", True, "causal"), ("relu", False, "padding"), ("gelu", False, "causal")]


@pytest.mark.parametrize("activation,norm_first,masks", CASES)
def test_decoder_layer_matches_torch(activation, norm_first, masks):
    B, T, S, D, h, F = 2, 4, 5, 8, 2, 16
    kw = dict(dim_feedforward=F, dropout=0.0, activation=activation, batch_first=True, norm_first=norm_first)
    tm = torch.nn.TransformerDecoderLayer(D, h, **kw).double()
    sm = nn.TransformerDecoderLayer(D, h, **kw)
    sm.to(st.float64)
    _copy_from_torch(sm, tm)
    g = np.random.default_rng(3)
    tgt, mem = g.normal(size=(B, T, D)), g.normal(size=(B, S, D))
    st_tgt, st_mem = st.tensor(tgt, requires_grad=True), st.tensor(mem, requires_grad=True)
    t_tgt, t_mem = torch.tensor(tgt, requires_grad=True), torch.tensor(mem, requires_grad=True)
    kw_s, kw_t = {}, {}
    if masks == "causal":
        kw_s["tgt_is_causal"] = True
        kw_t["tgt_mask"] = torch.nn.Transformer.generate_square_subsequent_mask(T, dtype=torch.float64)
        kw_t["tgt_is_causal"] = True
    elif masks == "padding":
        tp, mp = np.zeros((B, T), dtype=bool), np.zeros((B, S), dtype=bool)
        tp[1, -1:] = True
        mp[0, -2:] = True
        kw_s.update(tgt_key_padding_mask=st.tensor(tp), memory_key_padding_mask=st.tensor(mp))
        kw_t.update(tgt_key_padding_mask=torch.tensor(tp), memory_key_padding_mask=torch.tensor(mp))
    so = sm(st_tgt, st_mem, **kw_s)
    to = tm(t_tgt, t_mem, **kw_t)
    _close(so, to)
    _backward_and_compare(sm, tm, so, to, [(st_tgt, t_tgt), (st_mem, t_mem)])


def test_decoder_stack_and_transformer_match_torch():
    B, T, S, D, h, F = 2, 3, 4, 8, 2, 12
    tl = torch.nn.TransformerDecoderLayer(D, h, F, dropout=0.0, batch_first=True)
    tm = torch.nn.TransformerDecoder(tl, 2, norm=torch.nn.LayerNorm(D)).double()
    sm = nn.TransformerDecoder(nn.TransformerDecoderLayer(D, h, F, dropout=0.0, batch_first=True), 2,
                               norm=nn.LayerNorm(D))
    sm.to(st.float64)
    _copy_from_torch(sm, tm)
    g = np.random.default_rng(4)
    tgt, mem = g.normal(size=(B, T, D)), g.normal(size=(B, S, D))
    _close(sm(st.tensor(tgt), st.tensor(mem), tgt_is_causal=True),
           tm(torch.tensor(tgt), torch.tensor(mem), tgt_is_causal=True,
              tgt_mask=torch.nn.Transformer.generate_square_subsequent_mask(T, dtype=torch.float64)))

    tt = torch.nn.Transformer(D, h, 2, 1, F, dropout=0.0, batch_first=True).double()
    ss = nn.Transformer(D, h, 2, 1, F, dropout=0.0, batch_first=True)
    ss.to(st.float64)
    _copy_from_torch(ss, tt)
    src = g.normal(size=(B, S, D))
    s_src, t_src = st.tensor(src, requires_grad=True), torch.tensor(src, requires_grad=True)
    s_tgt, t_tgt = st.tensor(tgt, requires_grad=True), torch.tensor(tgt, requires_grad=True)
    so = ss(s_src, s_tgt, tgt_mask=nn.Transformer.generate_square_subsequent_mask(T).double())
    to = tt(t_src, t_tgt, tgt_mask=torch.nn.Transformer.generate_square_subsequent_mask(T, dtype=torch.float64))
    _close(so, to)
    _backward_and_compare(ss, tt, so, to, [(s_src, t_src), (s_tgt, t_tgt)])


def test_structure_keys_and_reset():
    layer = nn.TransformerDecoderLayer(8, 2, 16)
    assert [n for n, _ in layer.named_children()] == [n for n, _ in torch.nn.TransformerDecoderLayer(
        8, 2, 16).named_children() if n != "activation"]
    model = nn.Transformer(8, 2, 1, 1, 16)
    tkeys = [_st_key(k) for k in torch.nn.Transformer(8, 2, 1, 1, 16).state_dict()]
    assert list(model.state_dict()) == tkeys
    w = model.encoder.layers[0].linear1.weight
    bound = np.sqrt(6.0 / (16 + 8))  # Xavier-uniform, not Linear's 1/sqrt(fan_in)
    assert float(w.abs().max()) <= bound and float(w.abs().max()) > 0.8 * bound
    assert "Transformer(d_model=8, nhead=2, num_encoder_layers=1, num_decoder_layers=1" in repr(model)
    assert "TransformerDecoder(num_layers=2" in repr(nn.TransformerDecoder(layer, 2))
    mask = nn.Transformer.generate_square_subsequent_mask(3)
    assert to_np(mask)[0, 1] == -np.inf and to_np(mask)[1, 0] == 0


def test_errors_name_the_layer():
    layer = nn.TransformerDecoderLayer(8, 2, 16)
    with pytest.raises(ValueError, match="TransformerDecoderLayer: forward needs the encoder's memory"):
        nn.Sequential(layer)(st.randn(1, 3, 8))
    with pytest.raises(ValueError, match="activation should be 'relu', 'gelu' or 'gelu_tanh', got 'tanh'"):
        nn.TransformerDecoderLayer(8, 2, activation="tanh")
    with pytest.raises(ValueError, match="num_layers must be positive"):
        nn.TransformerDecoder(layer, 0)
    model = nn.Transformer(8, 2, 1, 1, 16, batch_first=True)
    with pytest.raises(st.ShapeError, match=r"Transformer: the batch number of src \(2\) and tgt \(3\)"):
        model(st.randn(2, 4, 8), st.randn(3, 4, 8))
    with pytest.raises(st.ShapeError, match=r"equal to d_model \(8\)"):
        model(st.randn(2, 4, 6), st.randn(2, 4, 8))


def test_a_small_transformer_learns_to_copy():
    """Teacher-forced copy of 5-token sequences over a 6-symbol vocabulary (learned positions)."""
    st.manual_seed(0)
    V, D, L = 6, 32, 5
    emb, pos, out = nn.Embedding(V + 1, D), nn.Embedding(L, D), nn.Linear(D, V)
    model = nn.Transformer(D, 4, 1, 1, 64, dropout=0.0, batch_first=True)
    params = [p for m in (emb, pos, model, out) for p in m.parameters()]
    where = st.arange(L)
    opt = st.optim.Adam(params, lr=3e-3)
    g = np.random.default_rng(5)
    mask = nn.Transformer.generate_square_subsequent_mask(L)
    for step in range(200):
        seq = g.integers(0, V, size=(32, L))
        start = np.full((32, 1), V)  # begin-of-sequence symbol
        dec_in = np.concatenate([start, seq[:, :-1]], 1)
        logits = out(model(emb(st.tensor(seq)) + pos(where), emb(st.tensor(dec_in)) + pos(where), tgt_mask=mask))
        loss = st.nn.functional.cross_entropy(logits.reshape(-1, V), st.tensor(seq.reshape(-1)))
        opt.zero_grad()
        loss.backward()
        opt.step()
    assert float(loss) < 0.3, float(loss)
