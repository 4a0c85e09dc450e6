"""lgamma and digamma against PyTorch (and SciPy's definitions): values over negative and positive
arguments in float64 to 1e-12, PyTorch's values at the poles and infinities, gradients (digamma and
trigamma) through autograd, float32 and integer inputs, the wgpu device."""

import numpy as np
import pytest

import spiraltorch as st

torch = pytest.importorskip("torch")

X = np.concatenate([np.linspace(-9.9, 30, 2001), [0.5, 1.0, 2.0, 1e-8, -1e-8, 171.5, 1e5, -0.5, -2.5]])
SPECIAL = np.array([0.0, -1.0, -2.0, np.inf, -np.inf, np.nan])


@pytest.mark.parametrize("name", ["lgamma", "digamma"])
def test_values_match_torch(name):
    got = getattr(st.tensor(X), name)().numpy()
    want = getattr(torch.tensor(X), name)().numpy()
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(getattr(st, name)(st.tensor(SPECIAL)).numpy(),
                                  getattr(torch, name)(torch.tensor(SPECIAL)).numpy())


@pytest.mark.parametrize("name", ["lgamma", "digamma"])
def test_gradients_match_torch(name):
    x = X[np.abs(X - np.round(X)) > 1e-3]  # away from the poles
    sx, tx = st.tensor(x).requires_grad_(True), torch.tensor(x, requires_grad=True)
    getattr(sx, name)().sum().backward()
    getattr(tx, name)().sum().backward()
    np.testing.assert_allclose(sx.grad.numpy(), tx.grad.numpy(), rtol=1e-9, atol=1e-9)


def test_float32_integers_and_devices():
    x = np.linspace(0.1, 20, 50).astype(np.float32)
    got = st.lgamma(st.tensor(x))
    assert got.dtype == st.float32
    np.testing.assert_allclose(got.numpy(), torch.lgamma(torch.tensor(x)).numpy(), rtol=1e-6, atol=1e-6)
    ints = st.digamma(st.tensor([1, 2, 3]))
    assert ints.dtype == st.float32
    np.testing.assert_allclose(ints.numpy(), [-0.5772157, 0.4227843, 0.9227843], rtol=1e-6)
    for dev in ("cuda", "wgpu"):
        if getattr(st, dev).is_available():
            y = st.lgamma(st.tensor(x).to(dev)).cpu().numpy()
            np.testing.assert_allclose(y, got.numpy(), rtol=1e-4, atol=1e-4)
    with pytest.raises(st.DtypeError, match="lgamma: expected a numeric input, got bool"):
        st.lgamma(st.tensor([True]))
