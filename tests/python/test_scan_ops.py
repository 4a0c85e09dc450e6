"""The scans (cumprod, logcumsumexp, cummax, cummin), flip, roll and poisson as native ops
(src/ops/scan.cpp, reorder.cpp, sampling.cpp): values and float64 gradients against PyTorch on every
device the build has (wgpu computes in float32), and Poisson draws whose moments match the rates."""

import numpy as np
import pytest
import torch

import spiraltorch as st

HAVE_WGPU = st.wgpu.is_available()
DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.skipif(not st.cuda.is_available(), reason="no CUDA")),
           pytest.param("wgpu", marks=pytest.mark.skipif(not HAVE_WGPU, reason="no wgpu adapter"))]


def _data(dtype):
    a = np.random.default_rng(3).standard_normal((3, 5, 4)).astype(dtype)
    a[0, 2, 1] = a[1, 0, 3] = a[1, 3, 3] = 0  # zeros for cumprod's gradient
    a[2, 1, 2] = a[2, 3, 2]  # a tie for cummax/cummin
    return a


def _host(t):
    return np.array(t.to("cpu").tolist())


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_values_and_indices_match_torch(device, dim):
    dtype = np.float32 if device == "wgpu" else np.float64
    a = _data(dtype)
    x, t = st.tensor(a.tolist(), dtype=st.float32 if dtype == np.float32 else st.float64).to(device), torch.tensor(a)
    tol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(_host(st.cumprod(x, dim)), torch.cumprod(t, dim).numpy(), rtol=tol, atol=tol)
    np.testing.assert_allclose(_host(x.logcumsumexp(dim)), torch.logcumsumexp(t, dim).numpy(), rtol=tol, atol=tol)
    for ours, theirs in ((st.cummax, torch.cummax), (st.cummin, torch.cummin)):
        v, i = ours(x, dim)
        tv, ti = theirs(t, dim)
        np.testing.assert_array_equal(_host(v), tv.numpy())
        np.testing.assert_array_equal(_host(i), ti.numpy())
    np.testing.assert_array_equal(_host(x.flip(dim)), torch.flip(t, [dim]).numpy())
    np.testing.assert_array_equal(_host(st.flip(x, [0, 2])), torch.flip(t, [0, 2]).numpy())
    np.testing.assert_array_equal(_host(x.roll(-2, dim)), torch.roll(t, -2, dim).numpy())
    np.testing.assert_array_equal(_host(st.roll(x, (1, 7), (0, 2))), torch.roll(t, (1, 7), (0, 2)).numpy())
    np.testing.assert_array_equal(_host(st.roll(x, 3)), torch.roll(t, 3).numpy())
    assert st.cumprod(x, dim).device == device and x.flip(dim).device == device


@pytest.mark.parametrize("device", DEVICES[:2])
@pytest.mark.parametrize("dim", [0, 2])
def test_float64_gradients_match_torch(device, dim):
    a = _data(np.float64)
    w = np.random.default_rng(4).standard_normal(a.shape)
    cases = [(lambda z: st.cumprod(z, dim), lambda z: torch.cumprod(z, dim)),
             (lambda z: st.logcumsumexp(z, dim), lambda z: torch.logcumsumexp(z, dim)),
             (lambda z: st.cummax(z, dim)[0], lambda z: torch.cummax(z, dim)[0]),
             (lambda z: st.cummin(z, dim)[0], lambda z: torch.cummin(z, dim)[0]),
             (lambda z: st.flip(z, [dim, 1]), lambda z: torch.flip(z, [dim, 1])),
             (lambda z: st.roll(z, 2, dim), lambda z: torch.roll(z, 2, dim))]
    for ours, theirs in cases:
        x = st.tensor(a.tolist(), dtype=st.float64, device=device, requires_grad=True)
        t = torch.tensor(a, requires_grad=True)
        (ours(x) * st.tensor(w.tolist(), dtype=st.float64, device=device)).sum().backward()
        (theirs(t) * torch.tensor(w)).sum().backward()
        np.testing.assert_allclose(_host(x.grad), t.grad.numpy(), rtol=1e-10, atol=1e-12)


def test_cumprod_in_place_and_integer_accumulation():
    x = st.tensor([[1.0, 2.0, 0.5], [3.0, 0.0, 2.0]])
    assert x.cumprod_(1) is x
    assert x.tolist() == [[1.0, 2.0, 1.0], [3.0, 0.0, 0.0]]
    y = st.cumprod(st.tensor([2, 3, 4], dtype=st.int32), 0)
    assert y.dtype == st.int64 and y.tolist() == [2, 6, 24]


@pytest.mark.parametrize("device", DEVICES)
def test_poisson_moments_and_generator(device):
    gen = st.Generator().manual_seed(11)
    for rate in (0.4, 6.0, 25.0, 900.0):
        draws = _host(st.poisson(st.full((20000,), rate, device=device), generator=gen))
        assert (draws == np.floor(draws)).all() and (draws >= 0).all()
        assert abs(draws.mean() - rate) < 6 * np.sqrt(rate / draws.size)
        assert abs(draws.var() - rate) < 6 * np.sqrt((2 * rate * rate + rate) / draws.size)
    rates = st.tensor([0.0, 2.5, 40.0]).to(device)
    assert _host(st.poisson(rates, st.Generator().manual_seed(5))).tolist() == _host(st.poisson(rates, st.Generator().manual_seed(5))).tolist()
    with pytest.raises(ValueError, match="non-negative"):
        st.poisson(st.tensor([1.0, -1.0]).to(device))
