"""st.AutogradTensor, the original spiraltorch's 2-D autograd tensor: accumulation over repeated
backward calls, its ops and intermediate gradients, receipts and errors."""

import numpy as np
import pytest

import spiraltorch as st


def test_autograd_tensor_accumulates_like_the_original():
    x = st.AutogradTensor(st.Tensor(1, 1, [2.0]))
    loss = x.hadamard(x)
    loss.backward()
    loss.backward()
    assert x.grad().tolist() == [[8.0]]  # 2 * 2x, twice
    assert loss.operation_name() == "hadamard" and x.operation_name() == "leaf"


def test_autograd_tensor_ops_and_intermediate_gradients():
    rng = np.random.default_rng(1)
    a = st.AutogradTensor.variable(st.tensor(rng.standard_normal((2, 3))))
    b = st.AutogradTensor.variable(st.tensor(rng.standard_normal((3, 2))))
    c = st.AutogradTensor.constant(st.tensor(rng.standard_normal((2, 2))))
    h = (a @ b).sub(c)
    loss = h.mean_squared_error(st.AutogradTensor.constant(st.zeros(2, 2, dtype=st.float64)))
    receipt = loss.backward()
    an, bn, cn = a.value().numpy(), b.value().numpy(), c.value().numpy()
    hn = an @ bn - cn
    np.testing.assert_allclose(h.grad().numpy(), 2 * hn / 4, rtol=1e-10)
    np.testing.assert_allclose(a.grad().numpy(), (2 * hn / 4) @ bn.T, rtol=1e-10)
    np.testing.assert_allclose(b.grad().numpy(), an.T @ (2 * hn / 4), rtol=1e-10)
    assert c.grad() is None
    assert receipt["leaf_count"] == 4 and receipt["trainable_leaf_count"] == 2
    assert loss.graph_summary()["max_depth"] >= 3
    assert loss.item() == pytest.approx(float((hn ** 2).mean()))
    vjp = loss.vector_jacobian_product(a)
    np.testing.assert_allclose(vjp.numpy(), a.grad().numpy(), rtol=1e-10)  # one backward so far
    loss.zero_grad_graph()
    assert a.grad() is None and h.grad() is None
    s = a.scale(3.0).transpose().sum()
    s.backward()
    assert a.grad().tolist() == [[3.0] * 3] * 2
    assert a.dot(a).item() == pytest.approx(float((an ** 2).sum()))


def test_autograd_tensor_errors():
    x = st.AutogradTensor(st.ones(2, 2))
    with pytest.raises(ValueError, match="explicit output gradient"):
        x.add(x).backward()
    with pytest.raises(st.ShapeError, match="differ"):
        x.add(st.AutogradTensor(st.ones(1, 2)))
    with pytest.raises(ValueError, match="non-finite"):
        st.AutogradTensor(st.tensor([[float("inf")]]))
    y = x.add(x)
    y.backward(st.ones(2, 2))
    assert x.grad().tolist() == [[2.0, 2.0], [2.0, 2.0]]
    assert st.AutogradTensor(st.ones(1, 1)).detach().requires_grad() is False
