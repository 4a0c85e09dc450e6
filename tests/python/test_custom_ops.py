"""spiraltorch.ops: the custom operator registry and autograd through registered operators."""

from __future__ import annotations

import numpy as np
import pytest

import spiraltorch as st
from conftest import gradcheck, tensor_on, to_np
from spiraltorch import ops


@pytest.fixture(autouse=True)
def clean_registry():
    before = set(ops.list_operators())
    yield
    for name in set(ops.list_operators()) - before:
        ops.unregister(name)


def test_seed_style_registration_and_describe():
    @ops.signature(2, 1)
    def forward(inputs):
        a, b = inputs
        return [a.add(b)]

    assert ops.unregister("py_add") is False
    ops.register("py_add", forward, description="python add operator", backends=["python"])
    a, b = st.Tensor(1, 2, [1.0, 2.0]), st.Tensor(1, 2, [0.5, 0.5])
    out = ops.execute("py_add", a, b, return_single=True)
    assert isinstance(out, st.Tensor) and out.tolist() == [[1.5, 2.5]]
    assert ops.describe("py_add") == "py_add(2 -> 1) | python add operator | backends: python"
    assert ops.metadata("py_add") == {"name": "py_add", "num_inputs": 2, "num_outputs": 1,
                                      "supports_inplace": False, "differentiable": False,
                                      "description": "python add operator", "backends": ["python"],
                                      "attributes": {}}
    assert "py_add" in ops.list_operators()
    assert ops.execute("py_add", [a, b])[0].tolist() == [[1.5, 2.5]]  # one list of inputs
    assert ops.execute("py_add", inputs=(a, b))[0].tolist() == [[1.5, 2.5]]
    assert ops.unregister("py_add") is True and "py_add" not in ops.list_operators()


def test_positional_form_attributes_and_errors():
    ops.register("twice", 1, 1, lambda xs: [xs[0] * 2], attributes={"k": "v"})
    assert ops.describe("twice") == "twice(1 -> 1) | backends: python | attrs: {'k': 'v'}"
    x = st.ones(3)
    with pytest.raises(ValueError, match="expected 1 inputs, got 2"):
        ops.execute("twice", x, x)
    with pytest.raises(ValueError, match="Operator 'twice' is already registered"):
        ops.register("twice", lambda xs: xs)
    ops.register("twice", lambda xs: [xs[0] * 3], replace=True)
    assert ops.execute("twice", x, return_single=True).tolist() == [3.0, 3.0, 3.0]
    with pytest.raises(TypeError, match="forward must be callable"):
        ops.register("bad", "not callable")
    with pytest.raises(ValueError, match="has a backward but differentiable=False"):
        ops.register("bad", lambda xs: xs, lambda *a: a, differentiable=False)
    with pytest.raises(ValueError, match="is differentiable but has no backward"):
        ops.register("bad", lambda xs: xs, differentiable=True)
    with pytest.raises(TypeError, match="attributes must map str to str"):
        ops.register("bad", lambda xs: xs, attributes={"k": 1})
    with pytest.raises(ValueError, match="no operator named 'missing'"):
        ops.execute("missing", x)
    with pytest.raises(TypeError, match="input 0 is a list"):
        ops.execute("twice", [[1.0]])
    with pytest.raises(TypeError, match="not both"):
        ops.execute("twice", x, inputs=[x])
    ops.register("broken", lambda xs: 1 / 0)
    with pytest.raises(ZeroDivisionError) as info:  # the callback's own error type survives
        ops.execute("broken", x)
    if hasattr(info.value, "__notes__"):
        assert "operator 'broken'" in info.value.__notes__[-1]
    ops.register("nothing", lambda xs: [])
    with pytest.raises(ValueError, match="forward returned no outputs"):
        ops.execute("nothing", x)


def _register_softsign():
    def forward(xs):
        x = xs[0]
        return x / (1 + x.abs())

    def backward(xs, ys, gs):
        d = 1 + xs[0].abs()
        return [gs[0] / (d * d)]

    ops.register("softsign", forward, backward, num_inputs=1, num_outputs=1, description="x / (1 + |x|)")


def test_gradients_flow_through_a_registered_operator(device):
    _register_softsign()
    x = tensor_on(np.linspace(-2.0, 2.0, 7), device=device, dtype=st.float64, requires_grad=True)
    y = ops.execute("softsign", x, return_single=True)
    assert y.requires_grad and "softsignBackward" in repr(y)
    np.testing.assert_allclose(to_np(y.detach()), np.linspace(-2, 2, 7) / (1 + np.abs(np.linspace(-2, 2, 7))))
    gradcheck(lambda t: ops.execute("softsign", t, return_single=True), x.detach(), device=device)
    with st.no_grad():
        assert not ops.execute("softsign", x, return_single=True).requires_grad


def test_multi_output_operator_backward_sums_per_output_contributions(device):
    def forward(xs):
        a, b = xs
        return [a * b, a + b]

    def backward(xs, ys, gs):
        a, b = xs
        g_prod, g_sum = gs
        return [g_prod * b + g_sum, g_prod * a + g_sum]

    ops.register("prod_sum", forward, backward, num_inputs=2, num_outputs=2)
    a = tensor_on([1.0, 2.0], device=device, dtype=st.float64, requires_grad=True)
    b = tensor_on([3.0, -1.0], device=device, dtype=st.float64, requires_grad=True)
    p, s = ops.execute("prod_sum", a, b)
    (p * 2 + s * 5).sum().backward()
    np.testing.assert_allclose(to_np(a.grad), [2 * 3 + 5, 2 * -1 + 5])
    np.testing.assert_allclose(to_np(b.grad), [2 * 1 + 5, 2 * 2 + 5])
    assert ops.backward("prod_sum", [a, b], [p, s], [st.ones_like(p), st.zeros_like(s)], return_single=False)[0] \
        .tolist() == b.detach().tolist()


def test_bad_backward_results_are_reported():
    ops.register("wrong_count", lambda xs: [xs[0] * 1], lambda xs, ys, gs: [gs[0], gs[0]])
    x = st.ones(2, requires_grad=True)
    y = ops.execute("wrong_count", x, return_single=True)
    with pytest.raises(ValueError, match="backward returned 2 gradients for 1 inputs"):
        y.sum().backward()
    ops.register("wrong_shape", lambda xs: [xs[0] * 1], lambda xs, ys, gs: [gs[0].sum()])
    y = ops.execute("wrong_shape", x, return_single=True)
    with pytest.raises(ValueError, match=r"gradient 0 has shape \(\), input 0 has \(2,\)"):
        y.sum().backward()
    ops.register("no_bwd", lambda xs: [xs[0] * 1])
    with pytest.raises(ValueError, match="operator has no backward"):
        ops.backward("no_bwd", [x], [x], [x])


def test_identity_forward_does_not_rewire_the_input():
    ops.register("ident", lambda xs: xs[0], lambda xs, ys, gs: [gs[0] * 3])
    x = st.ones(2, requires_grad=True)
    y = ops.execute("ident", x, return_single=True)
    assert x.is_leaf and y.data_ptr() != x.data_ptr()
    y.sum().backward()
    assert x.grad.tolist() == [3.0, 3.0]


def test_training_a_model_with_a_custom_activation():
    _register_softsign()
    st.manual_seed(0)
    lin1, lin2 = st.nn.Linear(2, 16), st.nn.Linear(16, 1)
    params = list(lin1.parameters()) + list(lin2.parameters())
    opt = st.optim.Adam(params, lr=0.05)
    x = st.tensor([[0.0, 0.0], [0.0, 1.0], [1.0, 0.0], [1.0, 1.0]])
    y = st.tensor([[0.0], [1.0], [1.0], [0.0]])  # XOR needs the nonlinearity
    for _ in range(300):
        opt.zero_grad()
        loss = st.nn.mse_loss(lin2(ops.execute("softsign", lin1(x), return_single=True)), y)
        loss.backward()
        opt.step()
    assert loss.item() < 0.02
