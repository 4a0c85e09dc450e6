"""nn.utils.rnn (pad_sequence, pack_padded_sequence, pad_packed_sequence, pack_sequence,
unpack_sequence, unpad_sequence) and LSTM/GRU over a PackedSequence, against torch: the packed
layout, outputs, h_n (c_n) at each sequence's own last step, and gradients, in float64."""

import numpy as np
import pytest

from conftest import needs_torch, st

from spiraltorch.nn.utils import rnn


def _copy(sm, tm):
    sm.load_state_dict({("::".join(k.rsplit(".", 1))): v.detach().numpy() for k, v in tm.state_dict().items()})


@needs_torch
@pytest.mark.parametrize("kind", ["LSTM", "GRU", "RNN"])
@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("layers", [1, 2])
@pytest.mark.parametrize("enforce_sorted", [False, True])
@pytest.mark.parametrize("bidirectional", [False, True], ids=["uni", "bi"])
def test_packed_rnn_matches_torch(kind, batch_first, layers, enforce_sorted, bidirectional):
    import torch
    from torch.nn.utils.rnn import pack_padded_sequence as tpack, pad_packed_sequence as tunpack

    rng = np.random.default_rng(layers)
    # A 2-layer LSTM projects h to 2 features (proj_size): its h0 and outputs then have 2, c0 still 4.
    proj = {"proj_size": 2} if kind == "LSTM" and layers == 2 else {}
    tm = getattr(torch.nn, kind)(3, 4, num_layers=layers, batch_first=batch_first, bidirectional=bidirectional,
                                 **proj).double()
    sm = getattr(st.nn, kind)(3, 4, num_layers=layers, batch_first=batch_first, bidirectional=bidirectional, **proj)
    sm.to(st.float64)
    _copy(sm, tm)
    lens = [5, 5, 3, 2] if enforce_sorted else [3, 5, 2, 5]
    x = rng.standard_normal((4, 5, 3) if batch_first else (5, 4, 3))
    tx, sx = torch.tensor(x, requires_grad=True), st.tensor(x, requires_grad=True)
    states = layers * (2 if bidirectional else 1)
    h0 = rng.standard_normal((states, 4, proj.get("proj_size", 4)))
    c0 = rng.standard_normal((states, 4, 4))
    targs = (torch.tensor(h0),) if kind != "LSTM" else ((torch.tensor(h0), torch.tensor(c0)),)
    sargs = (st.tensor(h0),) if kind != "LSTM" else ((st.tensor(h0), st.tensor(c0)),)
    tp = tpack(tx, lens, batch_first=batch_first, enforce_sorted=enforce_sorted)
    sp = rnn.pack_padded_sequence(sx, lens, batch_first=batch_first, enforce_sorted=enforce_sorted)
    assert isinstance(sp, rnn.PackedSequence) and tp.batch_sizes.tolist() == sp.batch_sizes.tolist()
    np.testing.assert_allclose(sp.data.detach().numpy(), tp.data.detach().numpy())
    to, th = tm(tp, *targs)
    so, sh = sm(sp, *sargs)
    assert isinstance(so, rnn.PackedSequence)
    tpad, tl = tunpack(to, batch_first=batch_first, total_length=6)
    spad, sl = rnn.pad_packed_sequence(so, batch_first=batch_first, total_length=6)
    assert tl.tolist() == sl.tolist() and tuple(spad.shape) == tuple(tpad.shape)
    np.testing.assert_allclose(spad.detach().numpy(), tpad.detach().numpy(), atol=1e-12)
    t_states = (th,) if kind != "LSTM" else th
    s_states = (sh,) if kind != "LSTM" else sh
    for a, b in zip(s_states, t_states):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), atol=1e-12)
    (tpad.sum() + sum(t.square().sum() for t in t_states)).backward()
    (spad.sum() + sum(t.square().sum() for t in s_states)).backward()
    np.testing.assert_allclose(sx.grad.numpy(), tx.grad.numpy(), atol=1e-10)
    for (sk, sp_), (tk, tp_) in zip(sm.named_parameters(), tm.named_parameters()):
        np.testing.assert_allclose(sp_.grad.numpy(), tp_.grad.numpy(), atol=1e-10, err_msg=tk)


@needs_torch
def test_pad_pack_unpack_helpers_match_torch():
    import torch
    from torch.nn.utils import rnn as trnn

    rng = np.random.default_rng(0)
    seqs = [rng.standard_normal((n, 2)) for n in (4, 2, 3)]
    for batch_first in (False, True):
        for side in ("right", "left"):
            a = rnn.pad_sequence([st.tensor(s) for s in seqs], batch_first=batch_first, padding_value=-1.0,
                             padding_side=side)
            b = trnn.pad_sequence([torch.tensor(s) for s in seqs], batch_first=batch_first, padding_value=-1.0,
                                  padding_side=side)
            np.testing.assert_allclose(a.numpy(), b.numpy())
    packed = rnn.pack_sequence([st.tensor(s) for s in seqs], enforce_sorted=False)
    tpacked = trnn.pack_sequence([torch.tensor(s) for s in seqs], enforce_sorted=False)
    assert packed.batch_sizes.tolist() == tpacked.batch_sizes.tolist()
    assert packed.sorted_indices.tolist() == tpacked.sorted_indices.tolist()
    for got, want in zip(rnn.unpack_sequence(packed), seqs):
        np.testing.assert_allclose(got.numpy(), want)
    padded = rnn.pad_sequence([st.tensor(s) for s in seqs], batch_first=True)
    for got, want in zip(rnn.unpad_sequence(padded, [4, 2, 3], batch_first=True), seqs):
        np.testing.assert_allclose(got.numpy(), want)


def test_invert_permutation():
    perm = st.tensor([2, 0, 1])
    assert rnn.invert_permutation(perm).tolist() == [1, 2, 0] and rnn.invert_permutation(None) is None


def test_packing_errors_name_the_problem():
    x = st.zeros(4, 2, 3)
    with pytest.raises(ValueError, match="sorted in decreasing order"):
        rnn.pack_padded_sequence(x, [2, 3])
    with pytest.raises(st.ShapeError, match="exceeds the padded length"):
        rnn.pack_padded_sequence(x, [5, 3])
    with pytest.raises(st.ShapeError, match="3 lengths for a batch of 2"):
        rnn.pack_padded_sequence(x, [3, 2, 1])
    with pytest.raises(ValueError, match="positive"):
        rnn.pack_padded_sequence(x, [3, 0])
