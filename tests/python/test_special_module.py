"""st.special against torch.special, name by name, and its errors."""

import numpy as np
import pytest

import spiraltorch as st

torch = pytest.importorskip("torch")

X = np.linspace(-3, 3, 25)


@pytest.mark.parametrize("name", ["expit", "exp2", "gammaln", "digamma", "psi", "entr", "sinc", "erf", "log1p",
                                  "expm1"])
def test_unary(name):
    x = X + (4 if name == "log1p" else 0)
    got = getattr(st.special, name)(st.tensor(x)).numpy()
    want = getattr(torch.special, name)(torch.tensor(x)).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_with_arguments():
    s, t = st.tensor(X), torch.tensor(X)
    s3, t3 = st.tensor(X + 3.5), torch.tensor(X + 3.5)
    pairs = [
        (st.special.multigammaln(st.tensor(X + 5), 3), torch.special.multigammaln(torch.tensor(X + 5), 3)),
        (st.special.xlog1py(s, s3), torch.special.xlog1py(t, t3)),
        (st.special.xlogy(s, s3), torch.special.xlogy(t, t3)),
        (st.special.logit(st.tensor(X / 8 + 0.5), 1e-3), torch.special.logit(torch.tensor(X / 8 + 0.5), 1e-3)),
        (st.special.round(s * 1.2345, decimals=2), torch.special.round(t * 1.2345, decimals=2)),
        (st.special.round(s * 1.2345), torch.special.round(t * 1.2345)),
        (st.special.logsumexp(st.tensor(X.reshape(5, 5)), 1), torch.special.logsumexp(torch.tensor(X.reshape(5, 5)), 1)),
        (st.special.softmax(st.tensor(X.reshape(5, 5)), 0), torch.special.softmax(torch.tensor(X.reshape(5, 5)), 0)),
        (st.special.log_softmax(st.tensor(X.reshape(5, 5)), 1, dtype=st.float32),
         torch.special.log_softmax(torch.tensor(X.reshape(5, 5)), 1, dtype=torch.float32)),
    ]
    for got, want in pairs:
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6, atol=1e-12)
    np.testing.assert_array_equal(st.special.entr(st.tensor([0.0, -1.0])).numpy(), [0.0, -np.inf])
    # The aliases by name: psi is digamma, gammaln lgamma, expit sigmoid, exp2 2 ** x.
    np.testing.assert_allclose(st.special.psi(s3).numpy(), st.digamma(s3).numpy())
    np.testing.assert_allclose(st.special.gammaln(s3).numpy(), st.lgamma(s3).numpy())
    np.testing.assert_allclose(st.special.expit(s).numpy(), st.sigmoid(s).numpy())
    np.testing.assert_allclose(st.special.exp2(st.tensor([3.0, -1.0])).numpy(), [8.0, 0.5], rtol=1e-15)
    with pytest.raises(ValueError, match=r"multigammaln: all elements must be greater than \(p-1\)/2 = 1.0"):
        st.special.multigammaln(st.tensor([0.5, 3.0]), 3)
