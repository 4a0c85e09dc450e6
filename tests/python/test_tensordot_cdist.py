"""tensordot, cdist and meshgrid, C++ composites (src/ops/products.cpp, distance.cpp, grids.cpp) bound in
python/src: values equal torch's in float64, gradients against float64 central differences, errors
naming the op and the shapes."""

from __future__ import annotations

import numpy as np
import pytest

import spiraltorch as st

torch = pytest.importorskip("torch")

R = np.random.default_rng(1).standard_normal


def arr(t):
    return np.asarray(t.tolist(), dtype=np.float64).reshape(tuple(t.shape))


def fd_check(f, *arrays, eps=1e-6, tol=1e-6):
    """Autograd's gradient of sum(f * w) against central differences, for each float64 input."""
    leaves = [st.tensor(a).requires_grad_(True) for a in arrays]
    out = f(*leaves)
    w = R(tuple(out.shape))
    (out * st.tensor(w)).sum().backward()
    for k, a in enumerate(arrays):
        num = np.zeros_like(a)
        for idx in np.ndindex(a.shape):
            vals = []
            for step in (eps, -eps):
                b = [x.copy() for x in arrays]
                b[k][idx] += step
                vals.append(float((arr(f(*[st.tensor(x) for x in b])) * w).sum()))
            num[idx] = (vals[0] - vals[1]) / (2 * eps)
        np.testing.assert_allclose(arr(leaves[k].grad), num, atol=tol, rtol=tol)


@pytest.mark.parametrize("sa,sb,dims", [((2, 3, 4), (3, 4, 2), 2), ((2, 3), (3, 2), 1), ((2, 3), (4,), 0),
                                        ((2, 3, 4), (4, 2, 3), ([1, 2], [2, 0])), ((3, 4), (4, 3), ([0], [1]))])
def test_tensordot_values_and_gradient(sa, sb, dims):
    a, b = R(sa), R(sb)
    out = st.tensordot(st.tensor(a), st.tensor(b), dims)
    np.testing.assert_allclose(arr(out), torch.tensordot(torch.tensor(a), torch.tensor(b), dims).numpy(), atol=1e-12)
    fd_check(lambda x, y: st.tensordot(x, y, dims), a, b)


def test_tensordot_errors():
    with pytest.raises(st.ShapeError, match=r"tensordot: dim 1 of a \(2, 3\) has size 3 but dim 0 of b \(4, 5\)"):
        st.tensordot(st.zeros((2, 3)), st.zeros((4, 5)), 1)
    with pytest.raises(ValueError, match="tensordot: dims=3 must be between 0 and 2"):
        st.tensordot(st.zeros((2, 3)), st.zeros((3, 2)), 3)
    with pytest.raises(ValueError, match="tensordot: 2 dims of a paired with 1 dims of b"):
        st.tensordot(st.zeros((2, 3)), st.zeros((3, 2)), ([0, 1], [0]))


@pytest.mark.parametrize("p", [2.0, 1.0, 3.0, 0.5, float("inf"), 0.0])
def test_cdist_values_and_gradient(p):
    a, b = R((2, 4, 3)), R((2, 5, 3))
    out = st.cdist(st.tensor(a), st.tensor(b), p)
    np.testing.assert_allclose(arr(out), torch.cdist(torch.tensor(a), torch.tensor(b), p).numpy(), atol=1e-12)
    if p not in (0.0,):
        fd_check(lambda x, y: st.cdist(x, y, p), a[0], b[0])


def test_cdist_errors():
    with pytest.raises(st.ShapeError, match=r"cdist: expected \(\.\.\., P, M\) and \(\.\.\., R, M\), got \(3, 2\)"):
        st.cdist(st.zeros((3, 2)), st.zeros((3, 4)))
    with pytest.raises(ValueError, match="cdist: p must be non-negative"):
        st.cdist(st.zeros((3, 2)), st.zeros((3, 2)), -1.0)


@pytest.mark.parametrize("indexing", ["ij", "xy"])
def test_meshgrid_values_views_and_gradient(indexing):
    xs = [R(3), R(2), R(4)]
    got = st.meshgrid(*[st.tensor(x) for x in xs], indexing=indexing)
    want = torch.meshgrid(*[torch.tensor(x) for x in xs], indexing=indexing)
    assert isinstance(got, tuple) and len(got) == 3
    for g, t in zip(got, want):
        np.testing.assert_array_equal(arr(g), t.numpy())
    as_list = st.meshgrid([st.tensor(x) for x in xs[:2]], indexing=indexing)
    for g, t in zip(as_list, torch.meshgrid(*[torch.tensor(x) for x in xs[:2]], indexing=indexing)):
        np.testing.assert_array_equal(arr(g), t.numpy())
    fd_check(lambda a, b: st.meshgrid(a, b, indexing=indexing)[0] * st.meshgrid(a, b, indexing=indexing)[1],
             xs[0], xs[1])
    with pytest.raises(ValueError, match="meshgrid: indexing must be 'ij' or 'xy', got 'yx'"):
        st.meshgrid(st.zeros(2), indexing="yx")
    with pytest.raises(st.ShapeError, match=r"meshgrid: expects 0-D or 1-D tensors, got shape \(2, 2\)"):
        st.meshgrid(st.zeros((2, 2)))
