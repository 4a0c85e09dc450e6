"""optim.LBFGS against torch.optim.LBFGS in float64: iterates, returned losses, closure-call and
iteration counts, with and without the strong-Wolfe line search and with a short history; several
parameter tensors (one without a gradient); state_dict round trips; errors."""

import warnings

import numpy as np
import pytest

import spiraltorch as st

torch = pytest.importorskip("torch")


def _rosenbrock(lib, line_search, history, steps=3, max_iter=20):
    x0 = np.array([-1.5, 2.0, 0.5, -0.7])
    x = st.tensor(x0).requires_grad_(True) if lib == "st" else torch.tensor(x0, requires_grad=True)
    cls = st.optim.LBFGS if lib == "st" else torch.optim.LBFGS
    opt = cls([x], lr=1, history_size=history, max_iter=max_iter, line_search_fn=line_search)

    def closure():
        opt.zero_grad()
        a, b = x[:-1], x[1:]
        loss = (100 * (b - a * a) ** 2 + (1 - a) ** 2).sum()
        loss.backward()
        return loss

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        losses = [float(opt.step(closure)) for _ in range(steps)]
    state = opt.state_dict()["state"][0]
    return x.detach().numpy().copy(), losses, int(state["func_evals"]), int(state["n_iter"])


@pytest.mark.parametrize("line_search", [None, "strong_wolfe"])
@pytest.mark.parametrize("history", [100, 3])
def test_rosenbrock_iterates_match_torch(line_search, history):
    x, losses, evals, iters = _rosenbrock("st", line_search, history)
    tx, tlosses, tevals, titers = _rosenbrock("torch", line_search, history)
    np.testing.assert_allclose(x, tx, rtol=0, atol=1e-12)
    np.testing.assert_allclose(losses, tlosses, rtol=1e-12)
    assert (evals, iters) == (tevals, titers)


def _regression(lib, line_search, state=None, steps=2):
    r = np.random.default_rng(0)
    a, y = r.standard_normal((30, 4)), r.standard_normal((30, 2))
    T = st if lib == "st" else torch
    w = T.tensor(np.zeros((4, 2))).requires_grad_(True)
    b = T.tensor(np.zeros(2)).requires_grad_(True)
    unused = T.tensor(np.ones(3)).requires_grad_(True)  # never gets a gradient
    cls = st.optim.LBFGS if lib == "st" else torch.optim.LBFGS
    opt = cls([w, unused, b], lr=0.5, max_iter=4, history_size=5, line_search_fn=line_search)
    if state is not None:
        w_v, b_v, sd = state
        with (st.no_grad() if lib == "st" else torch.no_grad()):
            w.copy_(T.tensor(w_v))
            b.copy_(T.tensor(b_v))
        opt.load_state_dict(sd)
    A, Y = T.tensor(a), T.tensor(y)

    def closure():
        opt.zero_grad()
        loss = ((A @ w + b - Y) ** 2).mean() + 0.01 * (w ** 2).sum()
        loss.backward()
        return loss

    for _ in range(steps):
        opt.step(closure)
    return w.detach().numpy().copy(), b.detach().numpy().copy(), opt.state_dict()


@pytest.mark.parametrize("line_search", [None, "strong_wolfe"])
def test_several_tensors_and_state_dict_round_trip(line_search):
    w, b, _ = _regression("st", line_search, steps=3)
    tw, tb, _ = _regression("torch", line_search, steps=3)
    np.testing.assert_allclose(w, tw, atol=1e-12)
    np.testing.assert_allclose(b, tb, atol=1e-12)
    # One step, save, a fresh optimizer loads the history and takes two more: as three in a row.
    w1, b1, sd = _regression("st", line_search, steps=1)
    w3, b3, _ = _regression("st", line_search, state=(w1, b1, sd), steps=2)
    np.testing.assert_allclose(w3, w, atol=1e-13)
    np.testing.assert_allclose(b3, b, atol=1e-13)
    assert {"d", "prev_flat_grad", "t", "H_diag", "n_iter", "func_evals"} <= set(sd["state"][0])


def test_converges_on_a_convex_problem_from_the_first_step():
    x = st.tensor(np.array([3.0, -2.0])).requires_grad_(True)
    opt = st.optim.LBFGS([x], line_search_fn="strong_wolfe")

    def closure():
        opt.zero_grad()
        loss = ((x - st.tensor(np.array([1.0, 0.5]))) ** 2 * st.tensor(np.array([1.0, 10.0]))).sum()
        loss.backward()
        return loss

    first = opt.step(closure)
    assert float(first) == pytest.approx(4 + 62.5)
    np.testing.assert_allclose(x.detach().numpy(), [1.0, 0.5], atol=1e-8)


def test_errors():
    x = st.zeros(2, requires_grad=True)
    opt = st.optim.LBFGS([x])
    with pytest.raises(ValueError, match="LBFGS: step\\(\\) needs a closure"):
        opt.step(None)
    with pytest.raises(ValueError, match="only 'strong_wolfe' is supported"):
        st.optim.LBFGS([x], line_search_fn="backtracking")
    with pytest.raises(ValueError, match="doesn't support per-parameter options"):
        st.optim.LBFGS([{"params": [x]}, {"params": [st.zeros(1, requires_grad=True)]}])
    with pytest.raises(ValueError, match="history_size must be at least 1"):
        st.optim.LBFGS([x], history_size=0)
