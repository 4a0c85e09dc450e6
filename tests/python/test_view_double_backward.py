"""Second derivatives through slicing and select: their backward must itself be differentiable
(create_graph), as a gradient penalty through x[:, :k] or x[i] needs."""
import numpy as np
import pytest

import spiraltorch as st

torch = pytest.importorskip("torch")


def _both(fn, data):
    """Gradient of sum(d(fn(x))/dx ** 2) with respect to x in SpiralTorch and PyTorch (float64)."""
    results = []
    for lib in (st, torch):
        x = lib.tensor(data, dtype=lib.float64, requires_grad=True)
        y = fn(x)
        (g,) = lib.autograd.grad(y.sum(), [x], create_graph=True)
        (h,) = lib.autograd.grad((g * g).sum(), [x])
        results.append((np.asarray(g.detach().numpy()), np.asarray(h.numpy())))
    return results


@pytest.mark.parametrize("name,fn", [
    ("slice", lambda x: (x[:, 1:3] ** 3)),
    ("slice_step", lambda x: (x[:, ::2] ** 3) * 2.0),
    ("slice_step_offset", lambda x: x[1:, 1::3].sin() * x[1:, 1::3]),
    ("select", lambda x: x[1] ** 3),
    ("select_dim1", lambda x: x[:, 2].exp()),
    ("narrow", lambda x: x.narrow(1, 2, 3) ** 2 * x.narrow(1, 0, 3)),
])
def test_second_derivative_through_views_matches_torch(name, fn):
    data = np.random.default_rng(0).standard_normal((4, 7))
    (g_st, h_st), (g_t, h_t) = _both(fn, data)
    np.testing.assert_allclose(g_st, g_t, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(h_st, h_t, rtol=1e-12, atol=1e-12)
    assert np.abs(h_st).sum() > 0, f"{name}: the second derivative must not vanish"
