"""nn.Embedding.from_pretrained (the given memory, freeze, padding_idx) and nn.ZeroPad1d against PyTorch."""

import numpy as np
import pytest

import spiraltorch as st

torch = pytest.importorskip("torch")


def test_from_pretrained_shares_memory_and_freezes():
    w = np.arange(12.0).reshape(4, 3)
    src = st.tensor(w)
    emb = st.nn.Embedding.from_pretrained(src)
    assert not emb.weight.requires_grad and not src.requires_grad
    idx = st.tensor([[3, 0], [1, 1]])
    np.testing.assert_array_equal(emb(idx).numpy(), torch.nn.Embedding.from_pretrained(torch.tensor(w))(
        torch.tensor([[3, 0], [1, 1]])).numpy())
    with st.no_grad():
        src[0, 0] = 100.0  # the weight is the given memory, as in PyTorch
    assert float(emb.weight[0, 0]) == 100.0
    trainable = st.nn.Embedding.from_pretrained(st.tensor(w), freeze=False, padding_idx=2)
    assert trainable.weight.requires_grad and trainable.padding_idx == 2
    assert float(trainable.weight[2].abs().sum()) > 0  # the padding row is kept as given
    trainable(st.tensor([2, 3])).sum().backward()
    np.testing.assert_array_equal(trainable.weight.grad.numpy()[:, 0], [0, 0, 0, 1])  # no gradient to padding
    with pytest.raises(st.ShapeError, match="Embedding.from_pretrained: embeddings must be 2-D"):
        st.nn.Embedding.from_pretrained(st.ones(3))
    with pytest.raises(ValueError, match="max_norm, scale_grad_by_freq and sparse are not supported"):
        st.nn.Embedding.from_pretrained(st.tensor(w), max_norm=1.0)


def test_zero_pad1d():
    x = np.arange(6.0).reshape(1, 2, 3)
    for pad in (2, (1, 3)):
        np.testing.assert_array_equal(st.nn.ZeroPad1d(pad)(st.tensor(x)).numpy(),
                                      torch.nn.ZeroPad1d(pad)(torch.tensor(x)).numpy())
    assert repr(st.nn.ZeroPad1d(2)) == repr(torch.nn.ZeroPad1d(2)) == "ZeroPad1d((2, 2))"
