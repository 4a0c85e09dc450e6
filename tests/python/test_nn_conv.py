"""Convolution and pooling against torch.nn.functional, finite differences, modules, errors."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import spiraltorch as st
import spiraltorch.nn as nn
from conftest import tensor_on

torch = pytest.importorskip("torch")
F = torch.nn.functional


def _np(t):
    return t.detach().cpu().numpy()


def _tol(dtype):
    return dict(rtol=1e-4, atol=1e-4) if dtype == np.float32 else dict(rtol=1e-10, atol=1e-10)


def _compare(st_fn, torch_fn, arrays, dtype, grad=True, seed=0, device="cpu"):
    """Runs both functions on the same data (ours on ``device``) and compares outputs and input gradients."""
    rng = np.random.default_rng(seed)
    s_in = [None if a is None else tensor_on(a.astype(dtype), device, requires_grad=grad) for a in arrays]
    t_in = [None if a is None else torch.tensor(a.astype(dtype), requires_grad=grad) for a in arrays]
    s_out = st_fn(*s_in)
    t_out = torch_fn(*t_in)
    assert tuple(s_out.shape) == tuple(t_out.shape)
    np.testing.assert_allclose(_np(s_out), t_out.detach().numpy(), **_tol(dtype))
    if grad:
        gy = rng.standard_normal(tuple(t_out.shape)).astype(dtype)
        (s_out * tensor_on(gy, device)).sum().backward()
        t_out.backward(torch.tensor(gy))
        for s, t in zip(s_in, t_in):
            if s is None:
                continue
            np.testing.assert_allclose(_np(s.grad), t.grad.numpy(), **_tol(dtype))


CONV2D_CASES = [
    # N, C, O, (H, W), (kh, kw), kwargs
    (1, 1, 1, (5, 5), (3, 3), {}),
    (2, 3, 4, (7, 6), (3, 3), {}),
    (2, 3, 4, (8, 8), (3, 3), dict(padding=1)),
    (3, 4, 6, (9, 8), (3, 3), dict(stride=2, padding=1)),
    (2, 4, 6, (7, 9), (3, 2), dict(stride=(2, 1), padding=(1, 0))),
    (2, 4, 6, (9, 9), (3, 3), dict(dilation=2, padding=2)),
    (2, 4, 6, (7, 9), (3, 3), dict(padding=(1, 2), dilation=(2, 1), groups=2)),
    (2, 4, 4, (6, 6), (3, 3), dict(padding=1, groups=4)),  # depthwise
    (2, 4, 8, (6, 6), (3, 3), dict(padding=1, groups=4)),  # depthwise multiplier 2
    (3, 4, 4, (9, 8), (3, 2), dict(stride=(2, 3), padding=(1, 1), dilation=(2, 1), groups=4)),  # strided depthwise
    (2, 4, 6, (5, 5), (1, 1), {}),  # 1x1 direct path
    (2, 4, 8, (5, 5), (1, 1), dict(groups=2)),  # grouped 1x1
    (3, 4, 6, (6, 7), (1, 1), dict(stride=2)),  # strided 1x1 (im2col path)
    (2, 4, 6, (5, 5), (1, 1), dict(padding=1)),  # padded 1x1
    (1, 3, 5, (4, 10), (2, 5), dict(stride=(1, 3), padding=(1, 2))),
    (2, 3, 2, (5, 5), (5, 5), {}),  # kernel covers the input
    (2, 2, 3, (3, 3), (3, 3), dict(padding=3, stride=3)),
    (2, 3, 4, (7, 6), (3, 3), dict(padding="same")),
    (2, 3, 4, (7, 6), (2, 4), dict(padding="same", dilation=(2, 1))),
    (2, 3, 4, (7, 6), (3, 3), dict(padding="valid")),
]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("case", CONV2D_CASES, ids=[str(i) for i in range(len(CONV2D_CASES))])
def test_conv2d_matches_torch(case, bias, dtype, device):
    n, c, o, (h, w), (kh, kw), kwargs = case
    groups = kwargs.get("groups", 1)
    rng = np.random.default_rng(hash((n, c, o, h, w)) % 2**32)
    x = rng.standard_normal((n, c, h, w))
    wt = rng.standard_normal((o, c // groups, kh, kw))
    b = rng.standard_normal(o) if bias else None
    _compare(lambda x, w, b: nn.conv2d(x, w, b, **kwargs),
             lambda x, w, b: F.conv2d(x, w, b, **kwargs), [x, wt, b], dtype, device=device)


def test_conv2d_unbatched_and_noncontiguous(device):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((3, 6, 5))
    w = rng.standard_normal((4, 3, 3, 3))
    _compare(lambda x, w: nn.conv2d(x, w, padding=1), lambda x, w: F.conv2d(x, w, padding=1), [x, w], np.float64,
             device=device)
    # A transposed (non-contiguous) input.
    xs = tensor_on(rng.standard_normal((2, 3, 5, 6)), device=device)
    xt = torch.tensor(_np(xs))
    ws = tensor_on(w, device=device)
    np.testing.assert_allclose(_np(nn.conv2d(xs.transpose(2, 3), ws)),
                               F.conv2d(xt.transpose(2, 3), torch.tensor(w)).numpy(), rtol=1e-10, atol=1e-10)


def test_conv2d_large_batch_float32(device):
    rng = np.random.default_rng(2)
    x = rng.standard_normal((16, 8, 12, 12))
    w = rng.standard_normal((16, 8, 3, 3)) * 0.1
    b = rng.standard_normal(16)
    _compare(lambda x, w, b: nn.conv2d(x, w, b, padding=1, stride=1),
             lambda x, w, b: F.conv2d(x, w, b, padding=1), [x, w, b], np.float32, device=device)


CONV1D_CASES = [
    (1, 1, 1, 5, 3, {}),
    (2, 3, 4, 10, 3, dict(padding=1)),
    (3, 4, 6, 11, 3, dict(stride=2, padding=2)),
    (2, 4, 6, 12, 3, dict(dilation=3, padding=1, groups=2)),
    (2, 4, 4, 9, 5, dict(groups=4, padding="same")),
    (2, 4, 6, 9, 1, {}),
]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("case", CONV1D_CASES, ids=[str(i) for i in range(len(CONV1D_CASES))])
def test_conv1d_matches_torch(case, dtype, device):
    n, c, o, length, k, kwargs = case
    groups = kwargs.get("groups", 1)
    rng = np.random.default_rng(length)
    x = rng.standard_normal((n, c, length))
    w = rng.standard_normal((o, c // groups, k))
    b = rng.standard_normal(o)
    _compare(lambda x, w, b: nn.conv1d(x, w, b, **kwargs), lambda x, w, b: F.conv1d(x, w, b, **kwargs),
             [x, w, b], dtype, device=device)


def test_conv1d_unbatched(device):
    rng = np.random.default_rng(3)
    x = rng.standard_normal((3, 8))
    w = rng.standard_normal((2, 3, 3))
    _compare(lambda x, w: nn.conv1d(x, w, padding=1), lambda x, w: F.conv1d(x, w, padding=1), [x, w], np.float64,
             device=device)


def _finite_difference_check(fn, arrays, eps=1e-6, tol=1e-6, device="cpu"):
    tensors = [tensor_on(a, device, requires_grad=True) for a in arrays]
    out = fn(*tensors)
    rng = np.random.default_rng(0)
    gy = rng.standard_normal(tuple(out.shape))
    (out * tensor_on(gy, device)).sum().backward()
    for i, a in enumerate(arrays):
        analytic = _np(tensors[i].grad)
        numeric = np.zeros_like(a)
        for idx in itertools.product(*[range(s) for s in a.shape]):
            plus = [x.copy() for x in arrays]
            minus = [x.copy() for x in arrays]
            plus[i][idx] += eps
            minus[i][idx] -= eps
            fp = (_np(fn(*[tensor_on(x, device) for x in plus])) * gy).sum()
            fm = (_np(fn(*[tensor_on(x, device) for x in minus])) * gy).sum()
            numeric[idx] = (fp - fm) / (2 * eps)
        np.testing.assert_allclose(analytic, numeric, rtol=tol, atol=tol)


@pytest.mark.parametrize("kwargs", [dict(), dict(stride=2, padding=1), dict(dilation=2, padding=1, groups=2),
                                    dict(stride=2, padding=1, groups=2, out=4)])
def test_conv2d_finite_differences(kwargs, device):
    kwargs = dict(kwargs)
    out = kwargs.pop("out", 2)
    rng = np.random.default_rng(4)
    x = rng.standard_normal((2, 2, 5, 4))
    w = rng.standard_normal((out, 2 // kwargs.get("groups", 1), 2, 3))
    b = rng.standard_normal(out)
    _finite_difference_check(lambda x, w, b: nn.conv2d(x, w, b, **kwargs), [x, w, b], device=device)


def test_depthwise_finite_differences(device):
    rng = np.random.default_rng(12)
    x = rng.standard_normal((2, 3, 5, 4))
    w = rng.standard_normal((3, 1, 3, 2))
    b = rng.standard_normal(3)
    _finite_difference_check(lambda x, w, b: nn.conv2d(x, w, b, stride=(2, 1), padding=1, dilation=(1, 2), groups=3),
                             [x, w, b], device=device)


def test_conv1d_finite_differences(device):
    rng = np.random.default_rng(5)
    x = rng.standard_normal((2, 2, 7))
    w = rng.standard_normal((3, 2, 3))
    b = rng.standard_normal(3)
    _finite_difference_check(lambda x, w, b: nn.conv1d(x, w, b, stride=2, padding=1), [x, w, b], device=device)


@pytest.mark.parametrize("fn", [
    lambda x: nn.max_pool2d(x, 2),
    lambda x: nn.max_pool2d(x, 3, 2, 1),
    lambda x: nn.avg_pool2d(x, 3, 2, 1),
    lambda x: nn.avg_pool2d(x, 3, 2, 1, count_include_pad=False),
    lambda x: nn.adaptive_avg_pool2d(x, (2, 3)),
])
def test_pool_finite_differences(fn, device):
    rng = np.random.default_rng(6)
    x = rng.permutation(np.arange(2 * 2 * 5 * 6, dtype=np.float64)).reshape(2, 2, 5, 6) * 0.1  # distinct values
    _finite_difference_check(fn, [x], eps=1e-4, device=device)


POOL_CASES = [
    ((2, 3, 8, 8), dict(kernel_size=2)),
    ((2, 3, 9, 7), dict(kernel_size=3, stride=2)),
    ((2, 3, 9, 7), dict(kernel_size=3, stride=2, padding=1)),
    ((1, 2, 10, 9), dict(kernel_size=(3, 2), stride=(2, 1), padding=(1, 1))),
    ((2, 3, 9, 9), dict(kernel_size=3, stride=2, ceil_mode=True)),
    ((2, 3, 10, 10), dict(kernel_size=3, stride=3, padding=1, ceil_mode=True)),
    ((3, 7, 7), dict(kernel_size=2)),  # unbatched
]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("case", POOL_CASES, ids=[str(i) for i in range(len(POOL_CASES))])
def test_max_pool2d_matches_torch(case, dtype, device):
    shape, kwargs = case
    x = np.random.default_rng(7).standard_normal(shape)
    _compare(lambda x: nn.max_pool2d(x, **kwargs), lambda x: F.max_pool2d(x, **kwargs), [x], dtype, device=device)


@pytest.mark.parametrize("dilation", [2, (1, 2)])
def test_max_pool2d_dilation_and_indices(dilation, device):
    x = np.random.default_rng(8).standard_normal((2, 3, 11, 10))
    s_out, s_idx = nn.max_pool2d(tensor_on(x, device=device), 3, 2, 1, dilation=dilation, return_indices=True)
    t_out, t_idx = F.max_pool2d(torch.tensor(x), 3, 2, 1, dilation=dilation, return_indices=True)
    np.testing.assert_allclose(_np(s_out), t_out.numpy())
    np.testing.assert_array_equal(_np(s_idx), t_idx.numpy())
    assert s_idx.dtype == st.int64
    _compare(lambda x: nn.max_pool2d(x, 3, 2, 1, dilation=dilation),
             lambda x: F.max_pool2d(x, 3, 2, 1, dilation=dilation), [x], np.float64, device=device)


AVG_CASES = POOL_CASES + [
    ((2, 3, 9, 7), dict(kernel_size=3, stride=2, padding=1, count_include_pad=False)),
    ((2, 3, 10, 10), dict(kernel_size=3, stride=3, padding=1, ceil_mode=True, count_include_pad=False)),
    ((2, 3, 10, 10), dict(kernel_size=3, stride=3, padding=1, ceil_mode=True)),
    ((2, 3, 8, 8), dict(kernel_size=3, padding=1, divisor_override=5)),
]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("case", AVG_CASES, ids=[str(i) for i in range(len(AVG_CASES))])
def test_avg_pool2d_matches_torch(case, dtype, device):
    shape, kwargs = case
    x = np.random.default_rng(9).standard_normal(shape)
    _compare(lambda x: nn.avg_pool2d(x, **kwargs), lambda x: F.avg_pool2d(x, **kwargs), [x], dtype, device=device)


@pytest.mark.parametrize("out", [(1, 1), (2, 3), (3, 3), (5, 7), 4, (None, 2)])
def test_adaptive_avg_pool2d_matches_torch(out, device):
    x = np.random.default_rng(10).standard_normal((2, 3, 7, 9))
    _compare(lambda x: nn.adaptive_avg_pool2d(x, out), lambda x: F.adaptive_avg_pool2d(x, out), [x], np.float64,
             device=device)


def test_max_pool2d_nan_propagates(device):
    x = np.zeros((1, 1, 4, 4))
    x[0, 0, 1, 1] = np.nan
    out = _np(nn.max_pool2d(tensor_on(x, device=device), 2))
    ref = F.max_pool2d(torch.tensor(x), 2).numpy()
    np.testing.assert_array_equal(np.isnan(out), np.isnan(ref))


# ---- modules ----

def test_conv2d_module_parameters_and_init(device):
    st.manual_seed(0)
    m = nn.Conv2d(4, 6, 3, stride=2, padding=1, groups=2)
    assert tuple(m.weight.shape) == (6, 2, 3, 3)
    assert tuple(m.bias.shape) == (6,)
    assert m.kernel_size == (3, 3) and m.stride == (2, 2) and m.padding == (1, 1) and m.groups == 2
    assert [k for k, _ in m.named_parameters()] == ["weight", "bias"]
    bound = 1 / np.sqrt(2 * 3 * 3)
    w = m.weight.detach().numpy()
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.5 * bound
    assert np.abs(m.bias.detach().numpy()).max() <= bound
    x = np.random.default_rng(11).standard_normal((2, 4, 7, 7)).astype(np.float32)
    ref = F.conv2d(torch.tensor(x), torch.tensor(w), torch.tensor(m.bias.detach().numpy()), stride=2, padding=1,
                   groups=2)
    m.to(device)
    y = m(tensor_on(x, device=device))
    np.testing.assert_allclose(_np(y), ref.numpy(), rtol=1e-5, atol=1e-5)
    y.sum().backward()
    assert tuple(m.weight.grad.shape) == (6, 2, 3, 3)


def test_conv_modules_tuple_args_bias_false_and_names():
    m = nn.Conv2d(3, 5, (3, 2), stride=(2, 1), padding=(1, 0), dilation=(1, 2), bias=False, name="stem")
    assert m.bias is None
    assert m.kernel_size == (3, 2) and m.dilation == (1, 2)
    assert [k for k, _ in m.named_parameters()] == ["stem::weight"]
    y = m(st.randn(2, 3, 8, 8))
    assert tuple(y.shape) == (2, 5, 4, 6)
    c1 = nn.Conv1d(4, 8, 3, padding=1, groups=2)
    assert tuple(c1.weight.shape) == (8, 2, 3)
    assert tuple(c1(st.randn(2, 4, 10)).shape) == (2, 8, 10)
    same = nn.Conv2d(3, 4, 3, padding="same")
    assert same.padding == "same"
    assert tuple(same(st.randn(1, 3, 5, 6)).shape) == (1, 4, 5, 6)


def test_conv_module_in_sequential_and_state_dict(device):
    model = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.MaxPool2d(2), nn.Conv2d(4, 2, 3), nn.AvgPool2d(2))
    keys = list(model.state_dict().keys())
    assert keys == ["0::weight", "0::bias", "2::weight", "2::bias"]
    model.to(device)
    out = model(st.randn(3, 1, 12, 12, device=device))
    assert tuple(out.shape) == (3, 2, 2, 2)
    out.sum().backward()
    assert all(p.grad is not None for p in model.parameters())


def test_pool_modules_match_functional(device):
    x = st.randn(2, 3, 9, 9, device=device)
    np.testing.assert_array_equal(_np(nn.MaxPool2d(3, 2, 1)(x)), _np(nn.max_pool2d(x, 3, 2, 1)))
    np.testing.assert_array_equal(_np(nn.AvgPool2d(2)(x)), _np(nn.avg_pool2d(x, 2)))
    np.testing.assert_array_equal(_np(nn.AdaptiveAvgPool2d((1, 1))(x)), _np(nn.adaptive_avg_pool2d(x, 1)))
    assert nn.MaxPool2d(2).stride == (2, 2)


def test_functional_module_reexports():
    import spiraltorch.nn.functional as sf

    for name in ["conv1d", "conv2d", "max_pool2d", "avg_pool2d", "adaptive_avg_pool2d"]:
        assert getattr(sf, name) is getattr(st._core.nn, name)


def test_conv_no_grad_records_nothing():
    w = st.randn(2, 1, 3, 3, requires_grad=True)
    with st.no_grad():
        y = nn.conv2d(st.randn(1, 1, 5, 5), w)
    assert not y.requires_grad


# ---- errors ----

def test_conv2d_channel_mismatch_names_shapes():
    with pytest.raises(st.ShapeError) as e:
        nn.conv2d(st.randn(2, 3, 8, 8), st.randn(4, 5, 3, 3))
    assert "(2, 3, 8, 8)" in str(e.value) and "(4, 5, 3, 3)" in str(e.value)
    with pytest.raises(st.ShapeError, match=r"\(1, 4, 6\)"):
        nn.conv1d(st.randn(1, 4, 6), st.randn(2, 3, 3))
    with pytest.raises(st.ShapeError, match="Conv2d"):
        nn.Conv2d(3, 4, 3)(st.randn(1, 2, 8, 8))


def test_conv_errors():
    with pytest.raises(st.ShapeError, match="4-d"):
        nn.conv2d(st.randn(8, 8), st.randn(4, 3, 3, 3))
    with pytest.raises(st.ShapeError, match="smaller than the effective kernel"):
        nn.conv2d(st.randn(1, 3, 2, 2), st.randn(4, 3, 3, 3))
    with pytest.raises(st.ShapeError, match="bias"):
        nn.conv2d(st.randn(1, 3, 5, 5), st.randn(4, 3, 3, 3), st.randn(3))
    with pytest.raises(st.DtypeError):
        nn.conv2d(st.randn(1, 3, 5, 5), st.randn(4, 3, 3, 3, dtype=st.float64))
    with pytest.raises(st.DtypeError):
        nn.conv2d(st.ones(1, 3, 5, 5, dtype=st.int64), st.ones(4, 3, 3, 3, dtype=st.int64))
    with pytest.raises(ValueError, match="groups"):
        nn.Conv2d(3, 4, 3, groups=2)
    with pytest.raises(ValueError, match="strided"):
        nn.conv2d(st.randn(1, 3, 5, 5), st.randn(4, 3, 3, 3), stride=2, padding="same")
    with pytest.raises(ValueError, match="stride"):
        nn.conv2d(st.randn(1, 3, 5, 5), st.randn(4, 3, 3, 3), stride=0)
    with pytest.raises(ValueError, match="half the kernel"):
        nn.max_pool2d(st.randn(1, 1, 5, 5), 2, padding=2)
    with pytest.raises(st.ShapeError, match="too small"):
        nn.max_pool2d(st.randn(1, 1, 2, 2), 3)
    with pytest.raises(st.ShapeError):
        nn.avg_pool2d(st.randn(5, 5), 2)
