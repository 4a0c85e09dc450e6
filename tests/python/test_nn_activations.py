"""PyTorch's other activation layers (LeakyReLU ... Softmin) and the normalisation layers
(GroupNorm, RMSNorm, CosineSimilarity, PairwiseDistance) with their functional forms, against
torch.nn side by side: values and gradients in float32 and float64, kinks and edge values, errors."""

from __future__ import annotations

import numpy as np
import pytest

import spiraltorch as st
import spiraltorch.nn as nn
import spiraltorch.nn.functional as F
from conftest import same_device

torch = pytest.importorskip("torch")
TF = torch.nn.functional

DTYPES = [("float32", np.float32, 2e-5), ("float64", np.float64, 1e-10)]


# ---------------------------------------------------------------- helpers

def edge_values(npdt):
    """Random values plus the kinks and thresholds of the layers below and large |x|."""
    rng = np.random.default_rng(0)
    special = [0.0, -0.0, 1.0, -1.0, 3.0, -3.0, 6.0, 0.5, 0.1, 20.0, 25.0, -25.0, 60.0, -60.0, 1e-8, -1e-8]
    x = np.concatenate([rng.uniform(-5, 5, 24), special]).astype(npdt)
    return x.reshape(4, 10)


def compare(st_fn, torch_fn, x, tol, device="cpu", grad=True):
    """Forward values of st_fn(x) and torch_fn(x) in x's dtype, then the input gradients of
    sum(out * w)."""
    xs = st.tensor(x).to(device).requires_grad_(grad)
    xt = torch.tensor(x, requires_grad=grad)
    ys, yt = st_fn(xs), torch_fn(xt)
    assert same_device(ys, device), f"output on {ys.device}, expected {device}"
    assert ys.dtype == getattr(st, str(yt.dtype).split(".")[1])
    np.testing.assert_allclose(ys.detach().cpu().numpy(), yt.detach().numpy(), rtol=tol, atol=tol)
    if not grad:
        return
    w = np.random.default_rng(1).uniform(0.5, 1.5, tuple(yt.shape)).astype(x.dtype)
    (ys * st.tensor(w).to(device)).sum().backward()
    (yt * torch.tensor(w)).sum().backward()
    np.testing.assert_allclose(xs.grad.cpu().numpy(), xt.grad.numpy(), rtol=tol, atol=tol)


def copy_from_torch(mod, tmod):
    """Loads a torch module's parameters into ours (torch 'weight' -> our 'weight')."""
    mod.load_state_dict({k: v.detach().numpy() for k, v in tmod.state_dict().items()})


# (our module, torch module, our function, torch function)
POINTWISE = [
    ("LeakyReLU", lambda: nn.LeakyReLU(), lambda: torch.nn.LeakyReLU(), F.leaky_relu, TF.leaky_relu),
    ("LeakyReLU(0.2)", lambda: nn.LeakyReLU(0.2), lambda: torch.nn.LeakyReLU(0.2),
     lambda x: F.leaky_relu(x, negative_slope=0.2), lambda x: TF.leaky_relu(x, negative_slope=0.2)),
    ("ELU", lambda: nn.ELU(alpha=0.7), lambda: torch.nn.ELU(alpha=0.7),
     lambda x: F.elu(x, alpha=0.7), lambda x: TF.elu(x, alpha=0.7)),
    ("SELU", lambda: nn.SELU(), lambda: torch.nn.SELU(), F.selu, TF.selu),
    ("CELU", lambda: nn.CELU(alpha=1.5), lambda: torch.nn.CELU(alpha=1.5),
     lambda x: F.celu(x, alpha=1.5), lambda x: TF.celu(x, alpha=1.5)),
    ("Softplus", lambda: nn.Softplus(), lambda: torch.nn.Softplus(), F.softplus, TF.softplus),
    ("Softplus(2, 10)", lambda: nn.Softplus(beta=2.0, threshold=10.0), lambda: torch.nn.Softplus(2.0, 10.0),
     lambda x: F.softplus(x, beta=2.0, threshold=10.0), lambda x: TF.softplus(x, beta=2.0, threshold=10.0)),
    ("Mish", lambda: nn.Mish(), lambda: torch.nn.Mish(), F.mish, TF.mish),
    ("Hardswish", lambda: nn.Hardswish(), lambda: torch.nn.Hardswish(), F.hardswish, TF.hardswish),
    ("Hardsigmoid", lambda: nn.Hardsigmoid(), lambda: torch.nn.Hardsigmoid(), F.hardsigmoid, TF.hardsigmoid),
    ("Hardtanh", lambda: nn.Hardtanh(), lambda: torch.nn.Hardtanh(), F.hardtanh, TF.hardtanh),
    ("Hardtanh(-3, 6)", lambda: nn.Hardtanh(min_val=-3.0, max_val=6.0), lambda: torch.nn.Hardtanh(-3.0, 6.0),
     lambda x: F.hardtanh(x, -3.0, 6.0), lambda x: TF.hardtanh(x, -3.0, 6.0)),
    ("ReLU6", lambda: nn.ReLU6(), lambda: torch.nn.ReLU6(), F.relu6, TF.relu6),
    ("LogSigmoid", lambda: nn.LogSigmoid(), lambda: torch.nn.LogSigmoid(), F.logsigmoid, TF.logsigmoid),
    ("Softsign", lambda: nn.Softsign(), lambda: torch.nn.Softsign(), F.softsign, TF.softsign),
    ("Tanhshrink", lambda: nn.Tanhshrink(), lambda: torch.nn.Tanhshrink(), F.tanhshrink, TF.tanhshrink),
    ("Threshold", lambda: nn.Threshold(0.5, -2.0), lambda: torch.nn.Threshold(0.5, -2.0),
     lambda x: F.threshold(x, 0.5, -2.0), lambda x: TF.threshold(x, 0.5, -2.0)),
    ("Threshold(0.1, 20)", lambda: nn.Threshold(threshold=0.1, value=20.0), lambda: torch.nn.Threshold(0.1, 20.0),
     lambda x: F.threshold(x, threshold=0.1, value=20.0), lambda x: TF.threshold(x, 0.1, 20.0)),
    ("GLU", lambda: nn.GLU(), lambda: torch.nn.GLU(), F.glu, TF.glu),
    ("GLU(0)", lambda: nn.GLU(dim=0), lambda: torch.nn.GLU(dim=0),
     lambda x: F.glu(x, dim=0), lambda x: TF.glu(x, dim=0)),
    ("LogSoftmax", lambda: nn.LogSoftmax(dim=1), lambda: torch.nn.LogSoftmax(dim=1),
     lambda x: F.log_softmax(x, dim=1), lambda x: TF.log_softmax(x, dim=1)),
    ("Softmin", lambda: nn.Softmin(dim=1), lambda: torch.nn.Softmin(dim=1),
     lambda x: F.softmin(x, dim=1), lambda x: TF.softmin(x, dim=1)),
    ("Softmin(0)", lambda: nn.Softmin(0), lambda: torch.nn.Softmin(0),
     lambda x: F.softmin(x, 0), lambda x: TF.softmin(x, 0)),
]


# ---------------------------------------------------------------- activations

@pytest.mark.parametrize("case", POINTWISE, ids=[c[0] for c in POINTWISE])
@pytest.mark.parametrize("name,npdt,tol", DTYPES, ids=[d[0] for d in DTYPES])
def test_activation_modules_and_functions_match_torch(case, name, npdt, tol, device):
    _, ours, theirs, f_ours, f_theirs = case
    if case[0] == "Hardsigmoid":
        # torch's float64 hardsigmoid backward multiplies by the float32 constant 1.0f / 6.0f
        tol = max(tol, 1e-7)
    x = edge_values(npdt)
    compare(ours().to(device), theirs(), x, tol, device)
    compare(f_ours, f_theirs, x, tol, device)
    # another shape: 3-D, and 1-D
    x3 = np.random.default_rng(3).normal(0, 3, (2, 4, 6)).astype(npdt)
    compare(ours().to(device), theirs(), x3, tol, device)
    x1 = np.linspace(-7, 7, 8).astype(npdt)
    if case[0] not in ("LogSoftmax", "Softmin"):  # dim=1 needs two dims
        compare(f_ours, f_theirs, x1, tol, device)


def test_activation_reprs_match_torch():
    pairs = [
        (nn.LeakyReLU(), torch.nn.LeakyReLU()), (nn.ELU(), torch.nn.ELU()), (nn.SELU(), torch.nn.SELU()),
        (nn.CELU(alpha=2.0), torch.nn.CELU(alpha=2.0)), (nn.Softplus(), torch.nn.Softplus()),
        (nn.Mish(), torch.nn.Mish()), (nn.Hardswish(), torch.nn.Hardswish()),
        (nn.Hardsigmoid(), torch.nn.Hardsigmoid()), (nn.Hardtanh(), torch.nn.Hardtanh()),
        (nn.ReLU6(), torch.nn.ReLU6()), (nn.LogSigmoid(), torch.nn.LogSigmoid()),
        (nn.Softsign(), torch.nn.Softsign()), (nn.Tanhshrink(), torch.nn.Tanhshrink()),
        (nn.Threshold(0.1, 20.0), torch.nn.Threshold(0.1, 20.0)), (nn.PReLU(3), torch.nn.PReLU(3)),
        (nn.GLU(), torch.nn.GLU()), (nn.LogSoftmax(dim=1), torch.nn.LogSoftmax(dim=1)),
        (nn.Softmin(dim=1), torch.nn.Softmin(dim=1)),
        (nn.RMSNorm(4), torch.nn.RMSNorm(4)), (nn.RMSNorm([3, 4], eps=1e-6), torch.nn.RMSNorm([3, 4], eps=1e-6)),
        (nn.CosineSimilarity(), torch.nn.CosineSimilarity()), (nn.PairwiseDistance(), torch.nn.PairwiseDistance()),
    ]
    for ours, theirs in pairs:
        assert repr(ours) == repr(theirs)
    for kwargs in ({}, {"affine": False}, {"bias": False}, {"eps": 1e-3}):
        assert repr(nn.GroupNorm(2, 4, **kwargs)) == repr(torch.nn.GroupNorm(2, 4, **kwargs))
    seq = nn.Sequential(nn.Linear(3, 4), nn.Hardswish(), nn.GroupNorm(2, 4))
    assert "(1): Hardswish()" in repr(seq) and "(2): GroupNorm(2, 4" in repr(seq)


def test_activation_attributes():
    assert nn.LeakyReLU(0.2).negative_slope == 0.2
    assert nn.ELU(0.5).alpha == 0.5 and nn.CELU(0.3).alpha == 0.3
    sp = nn.Softplus(beta=2.0, threshold=5.0)
    assert (sp.beta, sp.threshold) == (2.0, 5.0)
    ht = nn.Hardtanh(-2.0, 3.0)
    assert (ht.min_val, ht.max_val) == (-2.0, 3.0)
    th = nn.Threshold(0.1, 20.0)
    assert (th.threshold, th.value) == (0.1, 20.0)
    assert nn.GLU(1).dim == 1 and nn.LogSoftmax(0).dim == 0 and nn.Softmin(2).dim == 2
    assert nn.PReLU(4).num_parameters == 4


def test_gradients_at_kinks_match_torch():
    """Exactly at the kinks (0, +-3, the hardtanh bounds, the threshold) the gradients are torch's."""
    x = np.array([-3.0, -1.0, 0.0, 1.0, 3.0, 6.0, 0.5], dtype=np.float64)
    for f_ours, f_theirs in [(F.relu6, TF.relu6), (F.hardtanh, TF.hardtanh), (F.hardswish, TF.hardswish),
                             (F.hardsigmoid, TF.hardsigmoid), (F.leaky_relu, TF.leaky_relu),
                             (F.elu, TF.elu), (F.selu, TF.selu), (F.celu, TF.celu),
                             (lambda t: F.threshold(t, 0.5, 9.0), lambda t: TF.threshold(t, 0.5, 9.0)),
                             (F.softsign, TF.softsign), (F.mish, TF.mish), (F.logsigmoid, TF.logsigmoid)]:
        compare(f_ours, f_theirs, x, 1e-7)  # a wrong kink convention is off by O(1)


def test_large_inputs_stay_finite():
    x = np.array([-1000.0, -100.0, -30.0, 30.0, 100.0, 1000.0], dtype=np.float32)
    for f_ours, f_theirs in [(F.softplus, TF.softplus), (F.logsigmoid, TF.logsigmoid), (F.mish, TF.mish),
                             (F.selu, TF.selu), (F.celu, TF.celu), (F.softsign, TF.softsign)]:
        compare(f_ours, f_theirs, x, 1e-6)
        assert np.isfinite(f_ours(st.tensor(x)).numpy()).all()


def test_nan_propagates_like_torch():
    x = np.array([np.nan, 0.5, -2.0], dtype=np.float32)
    for f_ours, f_theirs in [(F.hardtanh, TF.hardtanh), (F.relu6, TF.relu6),
                             (lambda t: F.threshold(t, 0.0, 1.0), lambda t: TF.threshold(t, 0.0, 1.0)),
                             (F.hardsigmoid, TF.hardsigmoid), (F.softsign, TF.softsign)]:
        np.testing.assert_array_equal(f_ours(st.tensor(x)).numpy(), f_theirs(torch.tensor(x)).numpy())


@pytest.mark.parametrize("name,npdt,tol", DTYPES, ids=[d[0] for d in DTYPES])
@pytest.mark.parametrize("num_parameters", [1, 3])
def test_prelu_matches_torch_with_weight_gradient(name, npdt, tol, num_parameters, device):
    tmod = torch.nn.PReLU(num_parameters, init=0.25).to(getattr(torch, name))
    with torch.no_grad():
        tmod.weight.copy_(torch.tensor(np.linspace(-0.5, 0.8, num_parameters)))
    mod = nn.PReLU(num_parameters=num_parameters, init=0.25)
    assert [k for k, _ in mod.named_parameters()] == ["weight"]
    mod.to(getattr(st, name))
    copy_from_torch(mod, tmod)
    mod.to(device)
    x = np.random.default_rng(4).normal(0, 2, (2, 3, 5)).astype(npdt)
    x[0, 0, :2] = 0.0
    xs, xt = st.tensor(x).to(device).requires_grad_(True), torch.tensor(x, requires_grad=True)
    ys, yt = mod(xs), tmod(xt)
    np.testing.assert_allclose(ys.detach().cpu().numpy(), yt.detach().numpy(), rtol=tol, atol=tol)
    (ys * ys).sum().backward()
    (yt * yt).sum().backward()
    np.testing.assert_allclose(xs.grad.cpu().numpy(), xt.grad.numpy(), rtol=tol, atol=tol)
    np.testing.assert_allclose(mod.weight.grad.cpu().numpy(), tmod.weight.grad.numpy(), rtol=tol * 10, atol=tol * 10)
    # the functional form with an explicit weight
    w = np.array([0.1, -0.2, 0.3][:num_parameters], dtype=npdt)
    np.testing.assert_allclose(F.prelu(st.tensor(x), st.tensor(w)).numpy(),
                               TF.prelu(torch.tensor(x), torch.tensor(w)).numpy(), rtol=tol, atol=tol)


def test_activation_layers_train_inside_sequential():
    st.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 6), nn.PReLU(), nn.Linear(6, 4), nn.Mish(), nn.GroupNorm(2, 4),
                          nn.Hardswish(), nn.Linear(4, 1))
    assert "1::weight" in dict(model.named_parameters())
    x = st.randn(8, 4)
    out = model(x)
    assert tuple(out.shape) == (8, 1)
    out.sum().backward()
    assert model.state_dict()["1::weight"].shape == (1,)
    grads = [p.grad for p in model.parameters()]
    assert all(g is not None for g in grads)


def test_inplace_false_keeps_the_input():
    """inplace=True writes into the input (tests/python/test_inplace_layers.py); False leaves it."""
    x = st.tensor([-1.0, 2.0])
    for cls in (nn.LeakyReLU, nn.ELU, nn.SELU, nn.CELU, nn.Mish, nn.Hardswish, nn.Hardsigmoid, nn.Hardtanh, nn.ReLU6):
        cls(inplace=False)(x)
    assert x.tolist() == [-1.0, 2.0]


def test_activation_errors():
    with pytest.raises(st.ShapeError, match="glu: dimension 1 .* has size 3"):
        F.glu(st.randn(2, 3), dim=1)
    with pytest.raises(st.ShapeError, match="size 5"):
        nn.GLU()(st.randn(5))
    with pytest.raises(ValueError, match="CELU: alpha must be nonzero"):
        nn.CELU(alpha=0.0)
    with pytest.raises(ValueError, match="celu: alpha"):
        F.celu(st.randn(2), alpha=0.0)
    with pytest.raises(ValueError, match="min_val"):
        nn.Hardtanh(1.0, -1.0)
    with pytest.raises(ValueError, match="num_parameters"):
        nn.PReLU(0)
    with pytest.raises(st.ShapeError, match="prelu: weight has 3 elements .* 4 channels"):
        nn.PReLU(3)(st.randn(2, 4))
    with pytest.raises(st.DtypeError, match="prelu: weight dtype float32"):
        F.prelu(st.randn(2, 3).double(), st.tensor([0.1]))
    with pytest.raises(st.DtypeError, match="selu: expected a floating-point input"):
        F.selu(st.tensor([1, 2]))
    with pytest.raises((st.ShapeError, IndexError)):
        nn.LogSoftmax(dim=3)(st.randn(2, 3))


# ---------------------------------------------------------------- normalisation

@pytest.mark.parametrize("name,npdt,tol", DTYPES, ids=[d[0] for d in DTYPES])
@pytest.mark.parametrize("shape,groups", [((2, 6), 3), ((3, 6, 5), 2), ((2, 4, 3, 3), 4), ((2, 4, 3, 3), 1)])
def test_group_norm_matches_torch(name, npdt, tol, shape, groups, device):
    c = shape[1]
    tmod = torch.nn.GroupNorm(groups, c).to(getattr(torch, name))
    rng = np.random.default_rng(5)
    with torch.no_grad():
        tmod.weight.copy_(torch.tensor(rng.normal(1, 0.5, c)))
        tmod.bias.copy_(torch.tensor(rng.normal(0, 0.5, c)))
    mod = nn.GroupNorm(groups, c)
    assert [k for k, _ in mod.named_parameters()] == ["weight", "bias"]
    mod.to(getattr(st, name))
    copy_from_torch(mod, tmod)
    mod.to(device)
    x = rng.normal(2, 3, shape).astype(npdt)
    xs, xt = st.tensor(x).to(device).requires_grad_(True), torch.tensor(x, requires_grad=True)
    ys, yt = mod(xs), tmod(xt)
    assert same_device(ys, device)
    tol = tol * 10
    np.testing.assert_allclose(ys.detach().cpu().numpy(), yt.detach().numpy(), rtol=tol, atol=tol)
    w = rng.uniform(0.5, 1.5, shape).astype(npdt)
    (ys * st.tensor(w).to(device)).sum().backward()
    (yt * torch.tensor(w)).sum().backward()
    np.testing.assert_allclose(xs.grad.cpu().numpy(), xt.grad.numpy(), rtol=tol * 10, atol=tol * 10)
    np.testing.assert_allclose(mod.weight.grad.cpu().numpy(), tmod.weight.grad.numpy(), rtol=tol * 10, atol=tol * 10)
    np.testing.assert_allclose(mod.bias.grad.cpu().numpy(), tmod.bias.grad.numpy(), rtol=tol * 10, atol=tol * 10)
    # the functional form, without and with affine parameters, and a non-default eps
    compare(lambda t: F.group_norm(t, groups), lambda t: TF.group_norm(t, groups), x, tol * 10, device)
    wa = rng.normal(size=c).astype(npdt)
    compare(lambda t: F.group_norm(t, groups, weight=st.tensor(wa).to(device), eps=1e-3),
            lambda t: TF.group_norm(t, groups, weight=torch.tensor(wa), eps=1e-3), x, tol * 10, device)


def test_group_norm_options_and_errors():
    assert nn.GroupNorm(2, 4, affine=False).weight is None
    gn = nn.GroupNorm(2, 4, bias=False)
    assert gn.bias is None and [k for k, _ in gn.named_parameters()] == ["weight"]
    assert (gn.num_groups, gn.num_channels, gn.eps, gn.affine) == (2, 4, 1e-5, True)
    with pytest.raises(ValueError, match="num_channels=6 must be divisible by num_groups=4"):
        nn.GroupNorm(4, 6)
    with pytest.raises(st.ShapeError, match=r"GroupNorm\(2, 4\): expected an input of shape \(N, 4, \*\)"):
        nn.GroupNorm(2, 4)(st.randn(2, 6))
    with pytest.raises(st.ShapeError, match="6 channels, not divisible by num_groups=4"):
        F.group_norm(st.randn(2, 6, 3), 4)
    with pytest.raises(st.ShapeError, match="weight of shape"):
        F.group_norm(st.randn(2, 6, 3), 2, weight=st.ones(4))


@pytest.mark.parametrize("name,npdt,tol", DTYPES, ids=[d[0] for d in DTYPES])
@pytest.mark.parametrize("norm_shape,eps", [(5, None), ((3, 5), None), ((5,), 1e-3)])
def test_rms_norm_matches_torch(name, npdt, tol, norm_shape, eps, device):
    tmod = torch.nn.RMSNorm(norm_shape, eps=eps).to(getattr(torch, name))
    rng = np.random.default_rng(6)
    with torch.no_grad():
        tmod.weight.copy_(torch.tensor(rng.normal(1, 0.5, tuple(tmod.weight.shape))))
    mod = nn.RMSNorm(norm_shape, eps=eps)
    assert mod.eps == eps and mod.normalized_shape == tuple(tmod.normalized_shape)
    mod.to(getattr(st, name))
    copy_from_torch(mod, tmod)
    mod.to(device)
    x = rng.normal(0, 2, (2, 3, 5)).astype(npdt)
    x[0, 0] = 0.0  # a zero row: eps alone keeps it finite
    xs, xt = st.tensor(x).to(device).requires_grad_(True), torch.tensor(x, requires_grad=True)
    ys, yt = mod(xs), tmod(xt)
    np.testing.assert_allclose(ys.detach().cpu().numpy(), yt.detach().numpy(), rtol=tol * 10, atol=tol * 10)
    (ys * ys.detach()).sum().backward()
    (yt * yt.detach()).sum().backward()
    np.testing.assert_allclose(xs.grad.cpu().numpy(), xt.grad.numpy(), rtol=tol * 100, atol=tol * 100)
    np.testing.assert_allclose(mod.weight.grad.cpu().numpy(), tmod.weight.grad.numpy(), rtol=tol * 100,
                               atol=tol * 100)
    compare(lambda t: F.rms_norm(t, norm_shape, eps=eps), lambda t: TF.rms_norm(t, tmod.normalized_shape, eps=eps),
            x[1:], tol * 10, device)


def test_rms_norm_options_and_errors():
    assert nn.RMSNorm(4, elementwise_affine=False).weight is None
    assert nn.RMSNorm(4).elementwise_affine
    with pytest.raises(st.ShapeError, match=r"RMSNorm\(\(4,\)\): input of shape \(2, 3\)"):
        nn.RMSNorm(4)(st.randn(2, 3))
    with pytest.raises(st.ShapeError, match="rms_norm: weight of shape"):
        F.rms_norm(st.randn(2, 3), 3, weight=st.ones(2))
    with pytest.raises(ValueError, match="normalized_shape must be positive"):
        nn.RMSNorm(0)


@pytest.mark.parametrize("name,npdt,tol", DTYPES, ids=[d[0] for d in DTYPES])
@pytest.mark.parametrize("p,dim", [(2.0, 1), (1.0, -1), (3.0, 0)])
def test_normalize_matches_torch(name, npdt, tol, p, dim, device):
    x = np.random.default_rng(7).normal(0, 2, (3, 4, 5)).astype(npdt)
    compare(lambda t: F.normalize(t, p=p, dim=dim), lambda t: TF.normalize(t, p=p, dim=dim), x, tol * 10, device)
    # a tiny row: the eps clamp is active
    x2 = np.array([[1e-14, -2e-14], [3.0, 4.0]], dtype=npdt)
    compare(lambda t: F.normalize(t, eps=1e-12), lambda t: TF.normalize(t, eps=1e-12), x2, tol * 10, device)


@pytest.mark.parametrize("name,npdt,tol", DTYPES, ids=[d[0] for d in DTYPES])
def test_cosine_similarity_matches_torch(name, npdt, tol, device):
    rng = np.random.default_rng(8)
    a = rng.normal(size=(4, 6)).astype(npdt)
    b = rng.normal(size=(1, 6)).astype(npdt)
    a[1] = 1e-10  # below eps: torch clamps the norm's value but keeps its gradient
    for dim in (1, -1):
        compare(lambda t: F.cosine_similarity(t, st.tensor(b).to(device), dim=dim),
                lambda t: TF.cosine_similarity(t, torch.tensor(b), dim=dim), a, tol * 100, device)
        compare(lambda t: nn.CosineSimilarity(dim=dim)(st.tensor(a).to(device), t),
                lambda t: torch.nn.CosineSimilarity(dim=dim)(torch.tensor(a), t), np.repeat(b, 4, 0), tol * 100,
                device)
    a3 = rng.normal(size=(2, 3, 4)).astype(npdt)
    b3 = rng.normal(size=(2, 3, 4)).astype(npdt)
    compare(lambda t: nn.CosineSimilarity(dim=0, eps=1e-6)(t, st.tensor(b3).to(device)),
            lambda t: torch.nn.CosineSimilarity(dim=0, eps=1e-6)(t, torch.tensor(b3)), a3, tol * 100, device)
    cs = nn.CosineSimilarity(dim=2, eps=1e-3)
    assert (cs.dim, cs.eps) == (2, 1e-3)
    with pytest.raises(st.DtypeError, match="two tensors"):
        nn.Sequential(cs)(st.randn(2, 3))


@pytest.mark.parametrize("keepdim", [False, True])
def test_pairwise_distance_module_matches_torch(keepdim, device):
    rng = np.random.default_rng(9)
    a = rng.normal(size=(4, 5))
    b = rng.normal(size=(4, 5))
    for p in (1.0, 2.0, 3.0):
        compare(lambda t: nn.PairwiseDistance(p=p, keepdim=keepdim)(t, st.tensor(b).to(device)),
                lambda t: torch.nn.PairwiseDistance(p=p, keepdim=keepdim)(t, torch.tensor(b)), a, 1e-10, device)
        compare(lambda t: F.pairwise_distance(t, st.tensor(b).to(device), p=p, keepdim=keepdim),
                lambda t: TF.pairwise_distance(t, torch.tensor(b), p=p, keepdim=keepdim), a, 1e-10, device)
    pd = nn.PairwiseDistance(p=1.0, eps=1e-3, keepdim=True)
    assert (pd.norm, pd.eps, pd.keepdim) == (1.0, 1e-3, True)


def test_normalisation_state_dicts_load_from_torch():
    # PyTorch's weights come seeded (conftest): unseeded, a group of nearly equal values (variance
    # near eps) now and then amplified float32 rounding past the tolerance. The reference is
    # PyTorch's module in float64.
    tseq = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.GroupNorm(2, 4), torch.nn.PReLU(4),
                               torch.nn.RMSNorm(4))
    seq = nn.Sequential(nn.Linear(4, 4), nn.GroupNorm(2, 4), nn.PReLU(4), nn.RMSNorm(4))
    state = {}
    for k, v in tseq.state_dict().items():
        head, _, entry = k.rpartition(".")
        state[f"{head}::{entry}"] = v.detach().numpy() + 0.1
    seq.load_state_dict(state)
    with torch.no_grad():
        for k, v in tseq.state_dict().items():
            v.add_(0.1)
    x = np.random.default_rng(10).normal(size=(3, 4)).astype(np.float32)
    want = tseq.double()(torch.tensor(x, dtype=torch.float64)).detach().numpy()
    np.testing.assert_allclose(seq(st.tensor(x)).detach().numpy(), want, rtol=1e-5, atol=1e-5)
