"""inplace=True on PyTorch's elementwise layers and their functional forms: the input holds the
result afterwards, gradients through it equal PyTorch's, leaves that require grad are refused
as in PyTorch, reprs say inplace=True like torch's."""

import numpy as np
import pytest

import spiraltorch as st
import spiraltorch.nn.functional as F

torch = pytest.importorskip("torch")

LAYERS = [("ReLU", ()), ("SiLU", ()), ("LeakyReLU", (0.2,)), ("ELU", (0.7,)), ("CELU", (1.3,)), ("SELU", ()),
          ("Hardswish", ()), ("Hardsigmoid", ()), ("Hardtanh", (-0.5, 0.8)), ("ReLU6", ()), ("Mish", ()),
          ("Threshold", (0.1, -2.0))]


@pytest.mark.parametrize("name,args", LAYERS)
def test_layers_write_into_their_input_with_torchs_gradients(name, args):
    x0 = np.random.default_rng(0).standard_normal((3, 4)) * 4
    sm, tm = getattr(st.nn, name)(*args, inplace=True), getattr(torch.nn, name)(*args, inplace=True)
    assert repr(sm) == repr(tm)
    assert sm.inplace is True
    sx, tx = st.tensor(x0).requires_grad_(True), torch.tensor(x0, requires_grad=True)
    sy, ty = sx * 1.5, tx * 1.5
    so, to = sm(sy), tm(ty)
    # The input tensor now holds the result.
    np.testing.assert_allclose(sy.detach().numpy(), ty.detach().numpy(), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(so.detach().numpy(), sy.detach().numpy(), rtol=0, atol=0)
    w = np.cos(np.arange(12.0)).reshape(3, 4)
    (so * st.tensor(w)).sum().backward()
    (to * torch.tensor(w)).sum().backward()
    # PyTorch's CELU and Hardsigmoid backward round 1/alpha and 1/6 to float32 in float64 (ours are
    # exp(x / alpha) and 1/6 to 1e-16).
    tol = 1e-7 if name in ("CELU", "Hardsigmoid") else 1e-10
    np.testing.assert_allclose(sx.grad.numpy(), tx.grad.numpy(), rtol=tol, atol=1e-12)


def test_out_of_place_by_default_and_leaves_refused():
    x = st.randn(4)
    before = x.numpy().copy()
    st.nn.ReLU()(x)
    np.testing.assert_array_equal(x.numpy(), before)
    with pytest.raises(st.SpiralError, match="ReLU: a leaf tensor that requires grad is being used in an in-place"):
        st.nn.ReLU(inplace=True)(st.randn(3, requires_grad=True))
    with st.no_grad():  # allowed without a graph, as in PyTorch
        leaf = st.randn(3, requires_grad=True)
        st.nn.ReLU(inplace=True)(leaf)
        assert float(leaf.min()) >= 0


@pytest.mark.parametrize("name,args", [("relu", ()), ("silu", ()), ("leaky_relu", (0.3,)), ("elu", (0.5,)),
                                       ("selu", ()), ("celu", (1.5,)), ("mish", ()), ("hardswish", ()),
                                       ("hardsigmoid", ()), ("hardtanh", (-0.3, 0.4)), ("relu6", ()),
                                       ("threshold", (0.2, 5.0))])
def test_functional_inplace(name, args):
    x0 = np.linspace(-7, 7, 15)
    sx, tx = st.tensor(x0), torch.tensor(x0)
    getattr(F, name)(sx, *args, inplace=True)
    getattr(torch.nn.functional, name)(tx, *args, inplace=True)
    np.testing.assert_allclose(sx.numpy(), tx.numpy(), rtol=1e-12, atol=1e-12)


def test_dropout_inplace():
    st.manual_seed(0)
    d = st.nn.Dropout(0.5, inplace=True)
    assert repr(d) == "Dropout(p=0.5, inplace=True)" and d.inplace
    x = st.ones(1000)
    y = d(x)
    np.testing.assert_array_equal(x.numpy(), y.numpy())
    assert set(np.unique(x.numpy())) <= {0.0, 2.0} and 0.4 < (x.numpy() == 0).mean() < 0.6
    d.eval()
    z = st.ones(5)
    assert d(z).numpy().tolist() == [1.0] * 5
    assert st.nn.Dropout(0.2, "named").name == "named"  # the earlier positional name still works


@pytest.mark.parametrize("name,shape", [("Dropout1d", (4, 6, 5)), ("Dropout2d", (4, 6, 3, 3))])
def test_channel_dropout_inplace(name, shape):
    st.manual_seed(1)
    d = getattr(st.nn, name)(0.5, inplace=True)
    assert repr(d) == repr(getattr(torch.nn, name)(0.5, inplace=True)) and d.inplace
    x = st.ones(*shape)
    y = d(x)
    np.testing.assert_array_equal(x.numpy(), y.numpy())
    assert set(np.unique(x.numpy())) == {0.0, 2.0}
    assert getattr(st.nn, name)(0.3, "named").name == "named"
