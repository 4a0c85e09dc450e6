"""spiraltorch.nn.init and spiraltorch.nn.utils against torch.nn.init / torch.nn.utils.

Deterministic results (gains, fans, bounds, eye/dirac patterns, gradient clipping,
parameter/vector conversion) are compared with PyTorch side by side; random initialisers are
checked statistically on large tensors against the theoretical moments.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import spiraltorch as st
import spiraltorch.nn.init as init
import spiraltorch.nn.utils as nn_utils


@pytest.fixture
def torch():
    """PyTorch for the side-by-side comparisons; the test is skipped without it."""
    return pytest.importorskip("torch")


@pytest.fixture(autouse=True)
def _seed():
    """A fixed seed per test, so the statistical checks do not depend on test order."""
    st.manual_seed(1234)
    yield


def _np(t: st.Tensor) -> np.ndarray:
    return np.asarray(t.detach().float().numpy() if t.dtype in (st.float16, st.bfloat16) else t.detach().numpy(), dtype=np.float64)


def _phi(x: float) -> float:
    return math.exp(-0.5 * x * x) / math.sqrt(2 * math.pi)


def _Phi(x: float) -> float:
    return 0.5 * (1.0 + math.erf(x / math.sqrt(2.0)))


def _trunc_moments(mean: float, std: float, a: float, b: float) -> tuple:
    alpha, beta = (a - mean) / std, (b - mean) / std
    z = _Phi(beta) - _Phi(alpha)
    m = mean + std * (_phi(alpha) - _phi(beta)) / z
    var = std**2 * (1 + (alpha * _phi(alpha) - beta * _phi(beta)) / z - ((_phi(alpha) - _phi(beta)) / z) ** 2)
    return m, math.sqrt(var)


# --------------------------------------------------------------------------- calculate_gain / fans
NONLINEARITIES = [
    ("linear", None), ("conv1d", None), ("conv2d", None), ("conv3d", None),
    ("conv_transpose1d", None), ("conv_transpose2d", None), ("conv_transpose3d", None),
    ("sigmoid", None), ("tanh", None), ("relu", None), ("selu", None),
    ("leaky_relu", None), ("leaky_relu", 0.2), ("leaky_relu", 1), ("leaky_relu", 0), ("leaky_relu", math.sqrt(5)),
]


@pytest.mark.parametrize("nonlinearity,param", NONLINEARITIES)
def test_calculate_gain_matches_torch(torch, nonlinearity, param):
    assert init.calculate_gain(nonlinearity, param) == pytest.approx(torch.nn.init.calculate_gain(nonlinearity, param), rel=1e-15)


def test_calculate_gain_errors():
    with pytest.raises(ValueError, match=r"calculate_gain: unsupported nonlinearity 'swish'"):
        init.calculate_gain("swish")
    with pytest.raises(ValueError, match=r"calculate_gain: negative_slope 'x' is not a valid number"):
        init.calculate_gain("leaky_relu", "x")
    with pytest.raises(ValueError, match=r"negative_slope True"):
        init.calculate_gain("leaky_relu", True)
    with pytest.raises(st.SpiralValueError):
        init.calculate_gain("gelu")


@pytest.mark.parametrize("shape", [(3, 4), (8, 3, 5), (16, 8, 3, 3), (4, 2, 3, 3, 3), (7, 1)])
def test_fan_in_and_fan_out_matches_torch(torch, shape):
    ours = init._calculate_fan_in_and_fan_out(st.zeros(*shape))
    assert ours == torch.nn.init._calculate_fan_in_and_fan_out(torch.zeros(*shape))
    assert all(isinstance(v, int) for v in ours)
    for mode in ("fan_in", "fan_out", "FAN_IN"):
        assert init._calculate_correct_fan(st.zeros(*shape), mode) == torch.nn.init._calculate_correct_fan(torch.zeros(*shape), mode)


@pytest.mark.parametrize("shape", [(5,), ()])
def test_fan_errors_on_fewer_than_two_dims(shape):
    t = st.zeros(*shape) if shape else st.tensor(1.0)
    with pytest.raises(ValueError, match=r"_calculate_fan_in_and_fan_out: .*fewer than 2 dimensions"):
        init._calculate_fan_in_and_fan_out(t)
    for fn in (init.xavier_uniform_, init.xavier_normal_, init.kaiming_uniform_, init.kaiming_normal_):
        with pytest.raises(ValueError, match=rf"{fn.__name__}: .*fewer than 2 dimensions"):
            fn(t)


def test_bad_mode_and_nonlinearity_errors():
    w = st.zeros(4, 5)
    for fn in (init.kaiming_uniform_, init.kaiming_normal_):
        with pytest.raises(ValueError, match=rf"{fn.__name__}: mode 'fan_avg' not supported"):
            fn(w, mode="fan_avg")
        with pytest.raises(ValueError, match=rf"{fn.__name__}: unsupported nonlinearity 'swish'"):
            fn(w, nonlinearity="swish")
    with pytest.raises(ValueError, match=r"_calculate_correct_fan: mode 'x' not supported"):
        init._calculate_correct_fan(w, "x")
    with pytest.raises(TypeError, match=r"xavier_uniform_: expected a spiraltorch.Tensor, got list"):
        init.xavier_uniform_([[1.0]])


# --------------------------------------------------------------------------- uniform / normal / constants
def test_uniform_and_normal_statistics_and_identity():
    w = st.zeros(400, 500, requires_grad=True)  # a leaf parameter: needs the internal no_grad
    assert init.uniform_(w, -2.0, 3.0) is w
    a = _np(w)
    assert a.min() >= -2.0 and a.max() <= 3.0 and a.max() - a.min() > 4.99
    assert a.mean() == pytest.approx(0.5, abs=0.02)
    assert a.std() == pytest.approx(5 / math.sqrt(12), rel=0.01)
    assert w.requires_grad and w.is_leaf and w.grad_fn is None

    assert init.normal_(w, 1.5, 0.5) is w
    a = _np(w)
    assert a.mean() == pytest.approx(1.5, abs=0.005)
    assert a.std() == pytest.approx(0.5, rel=0.01)
    assert w.requires_grad and w.is_leaf

    d = st.zeros(1000, dtype=st.float64)
    init.uniform_(d)
    assert d.dtype == st.float64 and 0.0 <= _np(d).min() and _np(d).max() < 1.0


def test_generator_makes_random_initialisers_reproducible():
    g = st.Generator()
    calls = [
        lambda t: init.uniform_(t, -1, 1, generator=g),
        lambda t: init.normal_(t, 0, 2, generator=g),
        lambda t: init.xavier_uniform_(t, generator=g),
        lambda t: init.xavier_normal_(t, generator=g),
        lambda t: init.kaiming_uniform_(t, generator=g),
        lambda t: init.kaiming_normal_(t, generator=g),
        lambda t: init.trunc_normal_(t, generator=g),
        lambda t: init.trunc_normal_(t, 0, 1, 1.5, 2.5, generator=g),
        lambda t: init.orthogonal_(t, generator=g),
        lambda t: init.sparse_(t, 0.5, generator=g),
    ]
    for call in calls:
        g.manual_seed(123)
        first = _np(call(st.zeros(16, 8)))
        g.manual_seed(123)
        second = _np(call(st.zeros(16, 8)))
        np.testing.assert_array_equal(first, second)
        g.manual_seed(124)
        assert not np.array_equal(first, _np(call(st.zeros(16, 8))))
    # with a generator the bounds still hold
    g.manual_seed(0)
    a = _np(init.uniform_(st.zeros(10000), 2.0, 2.5, generator=g))
    assert a.min() >= 2.0 and a.max() <= 2.5


def test_uniform_normal_argument_errors():
    with pytest.raises(ValueError, match=r"uniform_: expected a <= b, got a=1.0, b=0.0"):
        init.uniform_(st.zeros(3), 1.0, 0.0)
    with pytest.raises(ValueError, match=r"normal_: expected std >= 0, got std=-1.0"):
        init.normal_(st.zeros(3), 0.0, -1.0)
    with pytest.raises(ValueError, match=r"uniform_: expected a floating-point tensor, got dtype int64"):
        init.uniform_(st.zeros(3, dtype=st.int64))
    with pytest.raises(ValueError, match=r"kaiming_normal_: expected a floating-point tensor"):
        init.kaiming_normal_(st.zeros(3, 3, dtype=st.int32))


def test_constant_ones_zeros(torch):
    w = st.zeros(3, 4, requires_grad=True)
    assert init.constant_(w, 2.5) is w
    np.testing.assert_array_equal(_np(w), np.full((3, 4), 2.5))
    assert init.ones_(w) is w
    np.testing.assert_array_equal(_np(w), np.ones((3, 4)))
    assert init.zeros_(w) is w
    np.testing.assert_array_equal(_np(w), np.zeros((3, 4)))
    i = st.zeros(5, dtype=st.int64)
    init.constant_(i, 7)
    t = torch.zeros(5, dtype=torch.int64)
    torch.nn.init.constant_(t, 7)
    assert i.tolist() == t.tolist()


# --------------------------------------------------------------------------- xavier / kaiming
def _check_uniform_bound(a: np.ndarray, bound: float) -> None:
    assert np.abs(a).max() <= bound * (1 + 1e-6)
    assert np.abs(a).max() >= 0.99 * bound  # the range is actually used
    assert a.mean() == pytest.approx(0.0, abs=5 * bound / math.sqrt(3 * a.size))
    assert a.std() == pytest.approx(bound / math.sqrt(3.0), rel=0.015)


def _check_normal_std(a: np.ndarray, std: float) -> None:
    assert a.mean() == pytest.approx(0.0, abs=6 * std / math.sqrt(a.size))
    assert a.std() == pytest.approx(std, rel=0.015)


@pytest.mark.parametrize("shape,gain", [((256, 512), 1.0), ((512, 128), 2.0), ((64, 32, 3, 3), math.sqrt(2))])
def test_xavier_bounds_and_std_match_torch(torch, shape, gain):
    fan_in, fan_out = torch.nn.init._calculate_fan_in_and_fan_out(torch.zeros(*shape))
    torch_std = gain * math.sqrt(2.0 / (fan_in + fan_out))  # torch's formula
    torch_bound = math.sqrt(3.0) * torch_std

    w = st.zeros(*shape)
    assert init.xavier_uniform_(w, gain=gain) is w
    _check_uniform_bound(_np(w), torch_bound)
    tw = torch.nn.init.xavier_uniform_(torch.zeros(*shape), gain=gain).numpy()
    assert np.abs(_np(w)).max() == pytest.approx(np.abs(tw).max(), rel=0.01)
    assert _np(w).std() == pytest.approx(tw.std(), rel=0.03)

    assert init.xavier_normal_(w, gain=gain) is w
    _check_normal_std(_np(w), torch_std)
    tw = torch.nn.init.xavier_normal_(torch.zeros(*shape), gain=gain).numpy()
    assert _np(w).std() == pytest.approx(tw.std(), rel=0.03)


KAIMING_CASES = [
    ((256, 512), 0, "fan_in", "leaky_relu"),
    ((256, 512), math.sqrt(5), "fan_in", "leaky_relu"),  # nn.Linear's default
    ((512, 256), 0, "fan_out", "relu"),
    ((64, 32, 3, 3), 0.2, "fan_in", "leaky_relu"),
    ((64, 32, 3, 3), 0, "fan_out", "tanh"),
    ((512, 64, 5), 0, "fan_in", "linear"),
]


@pytest.mark.parametrize("shape,a,mode,nonlinearity", KAIMING_CASES)
def test_kaiming_bounds_and_std_match_torch(torch, shape, a, mode, nonlinearity):
    fan = torch.nn.init._calculate_correct_fan(torch.zeros(*shape), mode)
    torch_std = torch.nn.init.calculate_gain(nonlinearity, a) / math.sqrt(fan)
    torch_bound = math.sqrt(3.0) * torch_std

    w = st.zeros(*shape)
    assert init.kaiming_uniform_(w, a=a, mode=mode, nonlinearity=nonlinearity) is w
    _check_uniform_bound(_np(w), torch_bound)
    tw = torch.nn.init.kaiming_uniform_(torch.zeros(*shape), a=a, mode=mode, nonlinearity=nonlinearity).numpy()
    assert np.abs(_np(w)).max() == pytest.approx(np.abs(tw).max(), rel=0.01)

    assert init.kaiming_normal_(w, a=a, mode=mode, nonlinearity=nonlinearity) is w
    _check_normal_std(_np(w), torch_std)
    tw = torch.nn.init.kaiming_normal_(torch.zeros(*shape), a=a, mode=mode, nonlinearity=nonlinearity).numpy()
    assert _np(w).std() == pytest.approx(tw.std(), rel=0.03)


def test_kaiming_zero_element_is_a_noop_with_warning():
    w = st.zeros(0, 5)
    for fn in (init.kaiming_uniform_, init.kaiming_normal_):
        with pytest.warns(UserWarning, match="zero-element"):
            assert fn(w) is w


def test_initialisers_on_parameters_of_a_linear_layer():
    lin = st.nn.Linear(32, 16)
    w = lin.weight  # the native attribute gives a new handle per access, on the same storage
    assert init.xavier_uniform_(w) is w
    np.testing.assert_array_equal(_np(lin.weight), _np(w))
    init.zeros_(lin.bias)
    np.testing.assert_array_equal(_np(lin.bias), np.zeros(16))
    assert lin.weight.requires_grad and lin.weight.is_leaf
    bound = math.sqrt(6.0 / (32 + 16))
    assert np.abs(_np(lin.weight)).max() <= bound


# --------------------------------------------------------------------------- trunc_normal_
TRUNC_CASES = [
    (0.0, 1.0, -2.0, 2.0),  # normal-resampling branch (mass > 0.3)
    (0.5, 2.0, -1.0, 1.5),  # normal-resampling branch, off-centre
    (0.0, 1.0, 1.0, 3.0),  # uniform-proposal branch (mass 0.157)
    (0.0, 1.0, -0.1, 0.1),  # uniform-proposal branch, narrow
    (0.0, 0.02, -0.04, 0.04),  # the ViT-style call
    (0.0, 1.0, 2.5, 4.0),  # tail
]


@pytest.mark.parametrize("mean,std,a,b", TRUNC_CASES)
def test_trunc_normal_bounds_and_moments(mean, std, a, b):
    w = st.zeros(500, 400, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the tail case warns (mean more than 2 std from [a, b]), like torch
        assert init.trunc_normal_(w, mean, std, a, b) is w
    x = _np(w)
    assert x.min() >= a and x.max() <= b
    m, s = _trunc_moments(mean, std, a, b)
    assert x.mean() == pytest.approx(m, abs=6 * s / math.sqrt(x.size))
    assert x.std() == pytest.approx(s, rel=0.015)
    # the whole interval is used
    assert x.min() - a < 0.02 * (b - a) and b - x.max() < 0.05 * (b - a)


def test_trunc_normal_float64_and_half():
    d = st.zeros(100000, dtype=st.float64)
    init.trunc_normal_(d, 0.0, 1.0, -0.5, 0.25)
    x = _np(d)
    assert d.dtype == st.float64 and x.min() >= -0.5 and x.max() <= 0.25
    m, s = _trunc_moments(0.0, 1.0, -0.5, 0.25)
    assert x.mean() == pytest.approx(m, abs=6 * s / math.sqrt(x.size))
    for dt in (st.float16, st.bfloat16):
        h = st.zeros(20000, dtype=dt)
        init.trunc_normal_(h, 0.0, 1.0, -0.1, 0.1)
        lo = st.tensor(-0.1, dtype=dt).float().item()
        hi = st.tensor(0.1, dtype=dt).float().item()
        x = _np(h)
        assert h.dtype == dt and x.min() >= lo and x.max() <= hi


def test_trunc_normal_errors_and_warning():
    w = st.zeros(10)
    with pytest.raises(ValueError, match=r"trunc_normal_: expected std > 0, got std=0.0"):
        init.trunc_normal_(w, 0.0, 0.0)
    with pytest.raises(ValueError, match=r"trunc_normal_: expected a <= b.*a=2.0, b=-2.0"):
        init.trunc_normal_(w, 0.0, 1.0, 2.0, -2.0)
    with pytest.raises(ValueError, match=r"trunc_normal_: .*unbounded"), pytest.warns(UserWarning, match="more than 2 std"):
        init.trunc_normal_(w, 0.0, 1.0, 3.0, math.inf)
    with pytest.warns(UserWarning, match="more than 2 std"):
        init.trunc_normal_(w, 10.0, 1.0, -1.0, 1.0)
    assert _np(w).min() >= -1.0 and _np(w).max() <= 1.0
    # infinite bounds with most of the mass: plain normal
    init.trunc_normal_(w, 0.0, 1.0, -math.inf, math.inf)
    assert np.isfinite(_np(w)).all()
    # a == b: a constant
    init.trunc_normal_(w, 0.0, 1.0, 0.25, 0.25)
    np.testing.assert_array_equal(_np(w), np.full(10, 0.25))


# --------------------------------------------------------------------------- eye_ / dirac_ / orthogonal_ / sparse_
@pytest.mark.parametrize("shape", [(3, 5), (5, 3), (4, 4)])
def test_eye_matches_torch(torch, shape):
    w = st.zeros(*shape, requires_grad=True)
    assert init.eye_(w) is w
    np.testing.assert_array_equal(_np(w), torch.nn.init.eye_(torch.zeros(*shape)).numpy())
    d = st.zeros(*shape, dtype=st.float64)
    init.eye_(d)
    assert d.dtype == st.float64 and _np(d).trace() == min(shape)


def test_eye_errors():
    with pytest.raises(ValueError, match=r"eye_: only tensors with 2 dimensions are supported \(got shape \(2, 2, 2\)\)"):
        init.eye_(st.zeros(2, 2, 2))


@pytest.mark.parametrize("shape,groups", [((6, 3, 3, 3), 2), ((4, 4, 5), 1), ((2, 3, 3, 3, 3), 1), ((8, 2, 3, 3), 4), ((3, 5, 3), 1)])
def test_dirac_matches_torch(torch, shape, groups):
    w = st.ones(*shape, requires_grad=True)
    assert init.dirac_(w, groups) is w
    np.testing.assert_array_equal(_np(w), torch.nn.init.dirac_(torch.ones(*shape), groups).numpy())


def test_dirac_errors():
    with pytest.raises(ValueError, match=r"dirac_: only tensors with 3, 4, or 5 dimensions"):
        init.dirac_(st.zeros(3, 3))
    with pytest.raises(ValueError, match=r"dirac_: dim 0 \(size 6\) must be divisible by groups \(got groups=4\)"):
        init.dirac_(st.zeros(6, 3, 3), groups=4)


@pytest.mark.parametrize("shape,gain", [((10, 20), 1.0), ((20, 10), 1.0), ((16, 16), 2.0), ((8, 4, 3, 3), 1.0), ((1, 7), 0.5)])
def test_orthogonal(shape, gain):
    w = st.zeros(*shape, requires_grad=True)
    assert init.orthogonal_(w, gain=gain) is w
    rows = shape[0]
    m = _np(w).reshape(rows, -1) / gain
    if rows <= m.shape[1]:
        np.testing.assert_allclose(m @ m.T, np.eye(rows), atol=1e-5)
    else:
        np.testing.assert_allclose(m.T @ m, np.eye(m.shape[1]), atol=1e-5)
    d = st.zeros(*shape, dtype=st.float64)
    init.orthogonal_(d)
    md = _np(d).reshape(rows, -1)
    small = min(md.shape)
    prod = md @ md.T if rows <= md.shape[1] else md.T @ md
    np.testing.assert_allclose(prod, np.eye(small), atol=1e-12)


def test_orthogonal_errors():
    with pytest.raises(ValueError, match=r"orthogonal_: only tensors with 2 or more dimensions"):
        init.orthogonal_(st.zeros(5))
    assert init.orthogonal_(st.zeros(0, 3)).shape == (0, 3)


def test_sparse(torch):
    w = st.zeros(100, 300, requires_grad=True)
    assert init.sparse_(w, 0.3, std=0.5) is w
    x = _np(w)
    assert ((x == 0).sum(axis=0) == math.ceil(0.3 * 100)).all()
    assert x[x != 0].std() == pytest.approx(0.5, rel=0.03)
    t = torch.nn.init.sparse_(torch.zeros(100, 300), 0.3, std=0.5).numpy()
    assert ((x == 0).sum(axis=0) == (t == 0).sum(axis=0)).all()
    with pytest.raises(ValueError, match=r"sparse_: only tensors with 2 dimensions"):
        init.sparse_(st.zeros(3, 3, 3), 0.1)
    with pytest.raises(ValueError, match=r"sparse_: expected 0 <= sparsity <= 1, got 1.5"):
        init.sparse_(st.zeros(3, 3), 1.5)


# --------------------------------------------------------------------------- nn.utils: clipping
G1 = np.array([[1.0, -2.0, 0.0], [0.5, 3.0, -1.0]], dtype=np.float32)
G2 = np.array([0.0, 4.0, -0.25], dtype=np.float32)
G3 = np.array([[0.1, -0.3], [0.2, 0.05]], dtype=np.float32)


def _st_params(grads):
    params = []
    for g in grads:
        p = st.tensor(np.zeros_like(g), requires_grad=True)
        (p * st.tensor(g)).sum().backward()  # p.grad == g
        params.append(p)
    return params


def _torch_params(torch, grads):
    params = []
    for g in grads:
        p = torch.zeros(g.shape, requires_grad=True)
        p.grad = torch.tensor(g)
        params.append(p)
    return params


@pytest.mark.parametrize("norm_type", [2.0, 1.0, math.inf, "inf", 3, 0.5, 0.0, -math.inf])
@pytest.mark.parametrize("max_norm", [1.0, 100.0])
def test_clip_grad_norm_matches_torch(torch, norm_type, max_norm):
    grads = [G1, G2, G3]
    ours = _st_params(grads)
    theirs = _torch_params(torch, grads)
    total = nn_utils.clip_grad_norm_(ours, max_norm, norm_type=norm_type)
    total_t = torch.nn.utils.clip_grad_norm_(theirs, max_norm, norm_type=norm_type)
    assert isinstance(total, st.Tensor) and total.dim() == 0
    assert total.item() == pytest.approx(total_t.item(), rel=1e-6)
    for p, q in zip(ours, theirs):
        np.testing.assert_allclose(_np(p.grad), q.grad.numpy(), rtol=1e-6, atol=1e-7)


def test_clip_grad_norm_argument_forms(torch):
    # a single tensor, a generator, parameters without grad, foreach
    (p,) = _st_params([G1])
    (q,) = _torch_params(torch, [G1])
    total = nn_utils.clip_grad_norm_(p, 1.0, foreach=True)
    assert total.item() == pytest.approx(torch.nn.utils.clip_grad_norm_(q, 1.0).item(), rel=1e-6)
    np.testing.assert_allclose(_np(p.grad), q.grad.numpy(), rtol=1e-6)

    ours = _st_params([G1, G2]) + [st.zeros(3, requires_grad=True)]
    theirs = _torch_params(torch, [G1, G2]) + [torch.zeros(3, requires_grad=True)]
    total = nn_utils.clip_grad_norm_((x for x in ours), 0.5, norm_type=1)
    total_t = torch.nn.utils.clip_grad_norm_((x for x in theirs), 0.5, norm_type=1)
    assert total.item() == pytest.approx(total_t.item(), rel=1e-6)
    for a, b in zip(ours[:2], theirs[:2]):
        np.testing.assert_allclose(_np(a.grad), b.grad.numpy(), rtol=1e-6)
    assert ours[2].grad is None

    assert nn_utils.clip_grad_norm_([], 1.0).item() == 0.0
    assert nn_utils.clip_grad_norm_([st.zeros(2, requires_grad=True)], 1.0).item() == 0.0
    with pytest.warns(UserWarning, match="empty generator"):
        nn_utils.clip_grad_norm_((x for x in []), 1.0)


def test_clip_grad_norm_nonfinite():
    (p,) = _st_params([np.array([1.0, np.nan], dtype=np.float32)])
    with pytest.raises(RuntimeError, match="non-finite"):
        nn_utils.clip_grad_norm_(p, 1.0, error_if_nonfinite=True)
    assert math.isnan(nn_utils.clip_grad_norm_(p, 1.0).item())
    # order -inf too
    with pytest.raises(RuntimeError, match=r"clip_grad_norm_: the total norm of order -inf.* non-finite"):
        nn_utils.clip_grad_norm_(p, 1.0, norm_type=-math.inf, error_if_nonfinite=True)
    with pytest.raises(ValueError, match="non-finite"):
        nn_utils.get_total_norm([st.tensor([1.0, np.inf])], 2.0, error_if_nonfinite=True)
    with pytest.raises(ValueError, match=r"clip_grad_norm_: norm_type must be a number or 'inf', got 'two'"):
        nn_utils.clip_grad_norm_(p, 1.0, norm_type="two")


@pytest.mark.parametrize("norm_type", [2.0, 1.0, math.inf, 0.0, -math.inf, 3.0])
def test_get_total_norm_and_clip_grads_with_norm_match_torch(torch, norm_type):
    tensors = [st.tensor(g) for g in (G1, G2, G3)]
    total = nn_utils.get_total_norm(tensors, norm_type)
    total_t = torch.nn.utils.get_total_norm([torch.tensor(g) for g in (G1, G2, G3)], norm_type)
    assert total.item() == pytest.approx(total_t.item(), rel=1e-6)
    ours = _st_params([G1, G2, G3])
    theirs = _torch_params(torch, [G1, G2, G3])
    assert nn_utils.clip_grads_with_norm_(ours, 0.7, total) is None
    torch.nn.utils.clip_grads_with_norm_(theirs, 0.7, total_t)
    for p, q in zip(ours, theirs):
        np.testing.assert_allclose(_np(p.grad), q.grad.numpy(), rtol=1e-6, atol=1e-7)
    assert nn_utils.get_total_norm([]).item() == 0.0


@pytest.mark.parametrize("clip_value", [0.5, 2, 10.0])
def test_clip_grad_value_matches_torch(torch, clip_value):
    ours = _st_params([G1, G2, G3]) + [st.zeros(2, requires_grad=True)]
    theirs = _torch_params(torch, [G1, G2, G3])
    assert nn_utils.clip_grad_value_(ours, clip_value) is None
    torch.nn.utils.clip_grad_value_(theirs, clip_value)
    for p, q in zip(ours, theirs):
        np.testing.assert_array_equal(_np(p.grad), q.grad.numpy())
    (p,) = _st_params([G1])
    nn_utils.clip_grad_value_(p, 0.75, foreach=False)  # a single tensor
    np.testing.assert_array_equal(_np(p.grad), np.clip(G1, -0.75, 0.75))


# --------------------------------------------------------------------------- nn.utils: vectors
def test_parameters_to_vector_matches_torch_and_round_trips(torch):
    arrays = [np.arange(12, dtype=np.float32).reshape(3, 4), np.array([5.0, -1.0], dtype=np.float32), np.ones((2, 1, 2), dtype=np.float32)]
    params = [st.tensor(a, requires_grad=True) for a in arrays]
    vec = nn_utils.parameters_to_vector(params)
    vec_t = torch.nn.utils.parameters_to_vector([torch.tensor(a) for a in arrays])
    assert tuple(vec.shape) == (18,)
    np.testing.assert_array_equal(_np(vec), vec_t.numpy())

    # differentiable like torch's
    (vec * st.arange(18).float()).sum().backward()
    np.testing.assert_array_equal(_np(params[0].grad), np.arange(12).reshape(3, 4))

    new = st.tensor(np.linspace(-1, 1, 18, dtype=np.float32))
    assert nn_utils.vector_to_parameters(new, params) is None
    torch_params = [torch.zeros(a.shape) for a in arrays]
    torch.nn.utils.vector_to_parameters(torch.tensor(_np(new), dtype=torch.float32), torch_params)
    for p, q in zip(params, torch_params):
        np.testing.assert_array_equal(_np(p), q.numpy())
        assert p.requires_grad and p.is_leaf
    np.testing.assert_array_equal(_np(nn_utils.parameters_to_vector(params)), _np(new))

    # a module's parameters round-trip
    lin = st.nn.Linear(4, 3)
    v = nn_utils.parameters_to_vector(lin.parameters())
    assert v.numel() == 4 * 3 + 3
    nn_utils.vector_to_parameters(v * 2.0, lin.parameters())
    np.testing.assert_allclose(_np(nn_utils.parameters_to_vector(lin.parameters())), 2.0 * _np(v), rtol=1e-7)


def test_vector_conversion_errors():
    params = [st.zeros(2, 3), st.zeros(4)]
    with pytest.raises(TypeError, match=r"vector_to_parameters: expected spiraltorch.Tensor, but got: list"):
        nn_utils.vector_to_parameters([1.0] * 10, params)
    with pytest.raises(ValueError, match=r"vector_to_parameters: expected a 1-D vector, got shape \(2, 5\)"):
        nn_utils.vector_to_parameters(st.zeros(2, 5), params)
    with pytest.raises(ValueError, match=r"vector_to_parameters: the vector has 9 elements but the parameters need 10"):
        nn_utils.vector_to_parameters(st.zeros(9), params)
    nn_utils.vector_to_parameters(st.ones(12), params)  # a longer vector is accepted, as in torch
    assert _np(params[1]).tolist() == [1.0] * 4
    with pytest.raises(ValueError, match=r"parameters_to_vector: got no parameters"):
        nn_utils.parameters_to_vector([])
    with pytest.raises(TypeError, match=r"parameters_to_vector: expected spiraltorch.Tensor parameters, got list"):
        nn_utils.parameters_to_vector([[1.0]])
