"""AlphaDropout / FeatureAlphaDropout (and F.alpha_dropout / F.feature_alpha_dropout): the two
values a constant input maps to equal PyTorch's, a standard normal input keeps mean 0 and
variance 1, whole channels share one draw, gradients are the kept scale, eval is the identity."""

import numpy as np
import pytest

import spiraltorch as st
import spiraltorch.nn.functional as F

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("p", [0.1, 0.5])
def test_values_match_torch(p):
    x = np.full(4000, 0.7)
    mine = np.unique(np.round(F.alpha_dropout(st.tensor(x), p, True).numpy(), 12))
    theirs = np.unique(np.round(torch.nn.functional.alpha_dropout(torch.tensor(x), p, True).numpy(), 12))
    np.testing.assert_allclose(mine, theirs, rtol=1e-12)
    assert len(mine) == 2


def test_statistics_channels_gradients_and_eval():
    st.manual_seed(0)
    x = st.randn(400000)
    y = st.nn.AlphaDropout(0.3)(x).numpy()
    assert abs(y.mean()) < 0.01 and abs(y.std() - 1) < 0.01
    f = st.nn.FeatureAlphaDropout(0.4)
    z = f(st.ones(8, 16, 5, 5)).numpy()
    assert (np.ptp(z.reshape(8, 16, 25), -1) == 0).all()  # one draw per (sample, channel)
    assert repr(f) == "FeatureAlphaDropout(p=0.4)" and isinstance(f, st.nn.AlphaDropout)
    v = st.randn(1000, dtype=st.float64).requires_grad_(True)
    F.alpha_dropout(v, 0.2, True).sum().backward()
    a = 1 / np.sqrt((1.7580993408473766 ** 2 * 0.2 + 1) * 0.8)
    assert set(np.round(np.unique(v.grad.numpy()), 12)) == {0.0, round(a, 12)}
    m = st.nn.AlphaDropout(0.5)
    m.eval()
    np.testing.assert_array_equal(m(x).numpy(), x.numpy())
    np.testing.assert_array_equal(F.feature_alpha_dropout(st.ones(2, 3, 4), 1.0, True).numpy(), 0)


def test_errors():
    with pytest.raises(ValueError, match=r"AlphaDropout: probability p must lie in \[0, 1\], got 1.5"):
        st.nn.AlphaDropout(1.5)
    with pytest.raises(st.ShapeError, match=r"feature_alpha_dropout: expected an input of shape \(N, C, \*\)"):
        F.feature_alpha_dropout(st.ones(3), 0.5, True)
    with pytest.raises(ValueError, match="inplace=True is not supported"):
        st.nn.FeatureAlphaDropout(0.5, inplace=True)
