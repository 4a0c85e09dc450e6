"""Losses against torch.nn equivalents: values, gradients, reductions, finite differences."""

from __future__ import annotations

import math

import numpy as np
import pytest

import spiraltorch as st
from conftest import tensor_on

nn = st.nn
REDUCTIONS = ["mean", "sum", "none"]


def arr(t):
    return np.asarray(t.tolist(), dtype=np.float64)


def leaf(a, dtype=st.float64, device="cpu"):
    return tensor_on(np.asarray(a), device, dtype=dtype, requires_grad=True)


def tleaf(torch, a):
    return torch.tensor(np.asarray(a), dtype=torch.float64, requires_grad=True)


def backward(loss):
    if loss.dim() == 0:
        loss.backward()
    else:
        loss.sum().backward()


def check_pair(torch, st_fn, torch_fn, inputs, grad_idx=(0,), rtol=1e-9, atol=1e-10, device="cpu"):
    """inputs: list of numpy arrays (float) or ("int", array) for index targets. SpiralTorch
    runs on ``device``, PyTorch on the host."""
    s_args, t_args = [], []
    for i, a in enumerate(inputs):
        if isinstance(a, tuple) and a[0] == "int":
            s_args.append(tensor_on(a[1].tolist(), device, dtype=st.int64))
            t_args.append(torch.tensor(a[1], dtype=torch.int64))
        else:
            rg = i in grad_idx
            s_args.append(leaf(a, device=device) if rg else tensor_on(a, device, dtype=st.float64))
            t_args.append(tleaf(torch, a) if rg else torch.tensor(a, dtype=torch.float64))
    ls = st_fn(*s_args)
    lt = torch_fn(*t_args)
    assert tuple(ls.shape) == tuple(lt.shape)
    assert ls.device.split(":")[0] == str(device).split(":")[0], f"loss is on {ls.device}, expected {device}"
    np.testing.assert_allclose(arr(ls), lt.detach().numpy(), rtol=rtol, atol=atol)
    backward(ls)
    backward(lt)
    for i in grad_idx:
        np.testing.assert_allclose(arr(s_args[i].grad), t_args[i].grad.numpy(), rtol=1e-7, atol=1e-9)


rng = np.random.default_rng(0)


def randn(*shape):
    return rng.standard_normal(shape)


def rand(*shape):
    return rng.random(shape)


# ---------------------------------------------------------------- point-wise losses


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_mse_l1_huber(reduction, device):
    torch = pytest.importorskip("torch")
    F = torch.nn.functional
    p, t = randn(4, 3), randn(4, 3)
    check_pair(torch, lambda a, b: nn.mse_loss(a, b, reduction=reduction),
               lambda a, b: F.mse_loss(a, b, reduction=reduction), [p, t], grad_idx=(0, 1), device=device)
    check_pair(torch, lambda a, b: nn.l1_loss(a, b, reduction=reduction),
               lambda a, b: F.l1_loss(a, b, reduction=reduction), [p, t], grad_idx=(0, 1), device=device)
    check_pair(torch, lambda a, b: nn.huber_loss(a, b, reduction=reduction, delta=0.7),
               lambda a, b: F.huber_loss(a, b, reduction=reduction, delta=0.7), [p, t], grad_idx=(0, 1), device=device)
    # module forms
    check_pair(torch, nn.MSELoss(reduction=reduction), torch.nn.MSELoss(reduction=reduction), [p, t], device=device)
    check_pair(torch, nn.L1Loss(reduction=reduction), torch.nn.L1Loss(reduction=reduction), [p, t], device=device)
    check_pair(torch, nn.HuberLoss(reduction=reduction, delta=0.5),
               torch.nn.HuberLoss(reduction=reduction, delta=0.5), [p, t], device=device)


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_bce_with_logits(reduction, device):
    torch = pytest.importorskip("torch")
    F = torch.nn.functional
    x, t = randn(5, 3) * 4, rand(5, 3)
    check_pair(torch, lambda a, b: nn.binary_cross_entropy_with_logits(a, b, reduction=reduction),
               lambda a, b: F.binary_cross_entropy_with_logits(a, b, reduction=reduction), [x, t], grad_idx=(0, 1),
               device=device)
    pw, w = rand(3) * 3, rand(5, 3)
    check_pair(torch,
               lambda a, b: nn.BCEWithLogits(weight=tensor_on(w, device=device),
                                             pos_weight=tensor_on(pw, device=device), reduction=reduction)(a, b),
               lambda a, b: torch.nn.BCEWithLogitsLoss(weight=torch.tensor(w), pos_weight=torch.tensor(pw),
                                                       reduction=reduction)(a, b),
               [x, t], grad_idx=(0, 1), device=device)


def test_bce_with_logits_is_stable(device):
    torch = pytest.importorskip("torch")
    x = np.array([[-1000.0, 1000.0, 0.0, 80.0]])
    t = np.array([[1.0, 0.0, 0.5, 1.0]])
    check_pair(torch, nn.BCEWithLogitsLoss(), torch.nn.BCEWithLogitsLoss(), [x, t], device=device)
    assert nn.BCEWithLogitsLoss is nn.BCEWithLogits


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("curvature", [-1.0, -2.5])
def test_hyperbolic_cross_entropy(reduction, curvature, device):
    torch = pytest.importorskip("torch")
    F = torch.nn.functional
    s = math.sqrt(-curvature)
    x, t = randn(4, 3), rand(4, 3)
    check_pair(torch, nn.HyperbolicCrossEntropy(curvature, reduction=reduction),
               lambda a, b: F.binary_cross_entropy_with_logits(s * a, b, reduction=reduction), [x, t], device=device)
    check_pair(torch, lambda a, b: nn.hyperbolic_cross_entropy(a, b, curvature=curvature, reduction=reduction),
               lambda a, b: F.binary_cross_entropy_with_logits(s * a, b, reduction=reduction), [x, t], device=device)


def test_hyperbolic_cross_entropy_api():
    assert nn.CrossEntropy is nn.HyperbolicCrossEntropy
    loss = nn.CrossEntropy()
    assert loss.curvature == -1.0
    assert "not class indices" in nn.HyperbolicCrossEntropy.__doc__
    with pytest.raises(ValueError):
        nn.HyperbolicCrossEntropy(0.5)
    with pytest.raises(ValueError):
        nn.HyperbolicCrossEntropy(float("nan"))


# ---------------------------------------------------------------- cross-entropy


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("smoothing", [0.0, 0.2])
@pytest.mark.parametrize("weighted", [False, True])
def test_cross_entropy_indices(reduction, smoothing, weighted, device):
    torch = pytest.importorskip("torch")
    F = torch.nn.functional
    x = randn(6, 5) * 2
    y = np.array([0, 4, 2, -100, 1, 4])
    w = rand(5) + 0.5 if weighted else None
    sw = tensor_on(w, device=device) if weighted else None
    tw = torch.tensor(w) if weighted else None
    check_pair(torch,
               lambda a, b: nn.cross_entropy(a, b, weight=sw, reduction=reduction, label_smoothing=smoothing),
               lambda a, b: F.cross_entropy(a, b, weight=tw, reduction=reduction, label_smoothing=smoothing),
               [x, ("int", y)], device=device)
    check_pair(torch,
               nn.CrossEntropyLoss(weight=sw, reduction=reduction, label_smoothing=smoothing, ignore_index=2),
               torch.nn.CrossEntropyLoss(weight=tw, reduction=reduction, label_smoothing=smoothing, ignore_index=2),
               [x, ("int", np.array([0, 4, 2, 3, 1, 4]))], device=device)


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_cross_entropy_spatial_and_unbatched(reduction, device):
    torch = pytest.importorskip("torch")
    F = torch.nn.functional
    x = randn(2, 4, 3, 2)
    y = rng.integers(0, 4, size=(2, 3, 2))
    check_pair(torch, lambda a, b: nn.cross_entropy(a, b, reduction=reduction, label_smoothing=0.1),
               lambda a, b: F.cross_entropy(a, b, reduction=reduction, label_smoothing=0.1), [x, ("int", y)],
               device=device)
    xu = randn(5)
    check_pair(torch, lambda a, b: nn.cross_entropy(a, b, reduction=reduction),
               lambda a, b: F.cross_entropy(a, b, reduction=reduction), [xu, ("int", np.array(3))], device=device)


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_cross_entropy_probabilities(reduction, device):
    torch = pytest.importorskip("torch")
    F = torch.nn.functional
    x = randn(4, 3, 2)
    t = rand(4, 3, 2)
    t = t / t.sum(axis=1, keepdims=True)
    w = rand(3) + 0.5
    check_pair(torch,
               lambda a, b: nn.cross_entropy(a, b, weight=tensor_on(w, device=device), reduction=reduction,
                                             label_smoothing=0.1),
               lambda a, b: F.cross_entropy(a, b, weight=torch.tensor(w), reduction=reduction, label_smoothing=0.1),
               [x, t], grad_idx=(0, 1), device=device)


def test_cross_entropy_float32_and_errors(device):
    torch = pytest.importorskip("torch")
    x = randn(8, 10).astype(np.float32)
    y = rng.integers(0, 10, size=8)
    xs = tensor_on(x, requires_grad=True, device=device)
    xt = torch.tensor(x, requires_grad=True)
    ls = nn.CategoricalCrossEntropy()(xs, tensor_on(y.tolist(), device=device))
    lt = torch.nn.functional.cross_entropy(xt, torch.tensor(y))
    ls.backward()
    lt.backward()
    assert ls.dtype == st.float32 and ls.dim() == 0
    np.testing.assert_allclose(ls.item(), lt.item(), rtol=1e-5)
    np.testing.assert_allclose(arr(xs.grad), xt.grad.numpy(), rtol=1e-4, atol=1e-6)
    with pytest.raises(IndexError):
        nn.cross_entropy(xs, tensor_on([10] * 8, device=device))
    with pytest.raises(ValueError):
        nn.cross_entropy(xs, tensor_on([0] * 7, device=device))
    with pytest.raises(ValueError):
        nn.CrossEntropyLoss(reduction="avg")
    assert nn.SoftmaxCrossEntropy is nn.CategoricalCrossEntropy


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_nll_loss(reduction, device):
    torch = pytest.importorskip("torch")
    F = torch.nn.functional
    x = randn(5, 4)
    y = np.array([0, 3, -100, 1, 2])
    w = rand(4) + 0.1
    check_pair(torch, lambda a, b: nn.nll_loss(a, b, reduction=reduction),
               lambda a, b: F.nll_loss(a, b, reduction=reduction), [x, ("int", y)], device=device)
    check_pair(torch, nn.NLLLoss(weight=tensor_on(w, device=device), reduction=reduction),
               torch.nn.NLLLoss(weight=torch.tensor(w), reduction=reduction), [x, ("int", y)], device=device)


def test_log_softmax_nll_matches_cross_entropy(device):
    x = leaf(randn(3, 4), device=device)
    y = tensor_on([1, 0, 3], device=device)
    a = nn.cross_entropy(x, y).item()
    b = nn.nll_loss(st.log_softmax(x, 1), y).item()
    assert abs(a - b) < 1e-12


# ---------------------------------------------------------------- focal, contrastive, triplet


def torch_focal(torch, inputs, targets, alpha, gamma, reduction):
    F = torch.nn.functional
    p = torch.sigmoid(inputs)
    ce = F.binary_cross_entropy_with_logits(inputs, targets, reduction="none")
    p_t = p * targets + (1 - p) * (1 - targets)
    loss = ce * ((1 - p_t) ** gamma)
    if alpha >= 0:
        loss = (alpha * targets + (1 - alpha) * (1 - targets)) * loss
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    return loss


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("alpha,gamma", [(0.25, 2.0), (-1.0, 1.5), (0.6, 0.0)])
def test_focal_loss(reduction, alpha, gamma, device):
    torch = pytest.importorskip("torch")
    x = randn(6, 2) * 2
    t = (rand(6, 2) > 0.5).astype(np.float64)
    check_pair(torch, nn.FocalLoss(alpha, gamma, reduction=reduction),
               lambda a, b: torch_focal(torch, a, b, alpha, gamma, reduction), [x, t], device=device)
    check_pair(torch, lambda a, b: nn.sigmoid_focal_loss(a, b, alpha, gamma, reduction=reduction),
               lambda a, b: torch_focal(torch, a, b, alpha, gamma, reduction), [x, t], device=device)


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_contrastive_loss(reduction, device):
    torch = pytest.importorskip("torch")
    x1, x2 = randn(6, 4) * 0.5, randn(6, 4) * 0.5
    y = np.array([1.0, 0.0, 1.0, 0.0, 0.0, 1.0])

    def ref(a, b, yy):
        d = torch.sqrt(((a - b) ** 2).sum(-1))
        loss = yy * d**2 + (1 - yy) * torch.clamp(1.5 - d, min=0) ** 2
        return {"mean": loss.mean(), "sum": loss.sum(), "none": loss}[reduction]

    check_pair(torch, nn.ContrastiveLoss(margin=1.5, reduction=reduction), ref, [x1, x2, y], grad_idx=(0, 1),
               device=device)
    # precomputed distances
    d = rand(6) * 2
    check_pair(torch, nn.ContrastiveLoss(margin=1.5, reduction=reduction),
               lambda dd, yy: {"mean": torch.mean, "sum": torch.sum, "none": lambda v: v}[reduction](
                   yy * dd**2 + (1 - yy) * torch.clamp(1.5 - dd, min=0) ** 2), [d, y], device=device)


def test_contrastive_identical_pair_has_finite_grad(device):
    x1 = leaf(np.ones((2, 3)), device=device)
    x2 = tensor_on(np.ones((2, 3)), dtype=st.float64, device=device)
    loss = nn.ContrastiveLoss()(x1, x2, tensor_on([1.0, 0.0], dtype=st.float64, device=device))
    loss.backward()
    assert np.isfinite(arr(x1.grad)).all()
    assert abs(loss.item() - 0.5) < 1e-12


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("p,swap", [(2.0, False), (1.0, True), (3.0, False)])
def test_triplet_loss(reduction, p, swap, device):
    torch = pytest.importorskip("torch")
    a, pos, neg = randn(5, 4), randn(5, 4), randn(5, 4)
    check_pair(torch, nn.TripletLoss(margin=0.8, p=p, swap=swap, reduction=reduction),
               torch.nn.TripletMarginLoss(margin=0.8, p=p, swap=swap, reduction=reduction),
               [a, pos, neg], grad_idx=(0, 1, 2), device=device)
    assert nn.TripletMarginLoss is nn.TripletLoss
    with pytest.raises(TypeError):
        nn.TripletLoss()(tensor_on(a, device=device), tensor_on(pos, device=device))


# ---------------------------------------------------------------- finite differences and API


def finite_difference(fn, x, eps=1e-6):
    g = np.zeros_like(x)
    it = np.nditer(x, flags=["multi_index"])
    for _ in it:
        i = it.multi_index
        xp, xm = x.copy(), x.copy()
        xp[i] += eps
        xm[i] -= eps
        g[i] = (fn(xp) - fn(xm)) / (2 * eps)
    return g


# fn(x, d): the loss of x; its constant operands are built on the test's device d.
def _c(v, d, dtype=None):
    return tensor_on(v, d, dtype=dtype)


FD_CASES = {
    "mse": (lambda x, d: nn.MSELoss()(x, _c(np.linspace(-1, 1, 6).reshape(2, 3), d)), (2, 3)),
    "huber": (lambda x, d: nn.HuberLoss(delta=0.3)(x, _c(np.zeros((2, 3)), d)), (2, 3)),
    "bce": (lambda x, d: nn.BCEWithLogits(pos_weight=_c([2.0, 0.5, 1.0], d, st.float64))(
        x, _c(np.full((2, 3), 0.3), d)), (2, 3)),
    "hce": (lambda x, d: nn.HyperbolicCrossEntropy(-3.0)(x, _c(np.full((2, 3), 0.7), d)), (2, 3)),
    "ce": (lambda x, d: nn.CrossEntropyLoss(label_smoothing=0.1, weight=_c([1.0, 2.0, 0.5], d, st.float64))(
        x, _c([2, 0], d)), (2, 3)),
    "nll": (lambda x, d: nn.NLLLoss()(x, _c([1, 2], d)), (2, 3)),
    "focal": (lambda x, d: nn.FocalLoss()(x, _c(np.array([[1.0, 0, 1], [0, 0, 1]]), d)), (2, 3)),
    "contrastive": (lambda x, d: nn.ContrastiveLoss(margin=2.0)(x, _c(np.ones((2, 3)) * 0.1, d),
                                                                _c([1.0, 0.0], d, st.float64)), (2, 3)),
    "triplet": (lambda x, d: nn.TripletLoss(margin=3.0)(x, _c(np.ones((2, 3)), d), _c(-np.ones((2, 3)), d)),
                (2, 3)),
}


@pytest.mark.parametrize("case", sorted(FD_CASES))
def test_finite_differences_float64(case, device):
    fn, shape = FD_CASES[case]
    x0 = np.random.default_rng(1).standard_normal(shape)
    x = leaf(x0, device=device)
    loss = fn(x, device)
    loss.backward()
    numeric = finite_difference(lambda v: fn(tensor_on(v, device, dtype=st.float64), device).item(), x0)
    np.testing.assert_allclose(arr(x.grad), numeric, rtol=1e-5, atol=1e-7)


def test_losses_return_0d_and_backprop_through_model(device):
    st.manual_seed(0)
    model = nn.Linear(3, 2).to(device)
    x = st.randn(4, 3, device=device)
    loss = nn.MSELoss()(model(x), st.zeros(4, 2, device=device))
    assert loss.dim() == 0
    loss.backward()
    assert model.weight.grad is not None
    with pytest.raises(TypeError):
        nn.MSELoss()(x)


def test_nonfinite_loss_is_returned_as_is(device):
    x = tensor_on([[float("nan"), 1.0]], requires_grad=True, device=device)
    loss = nn.MSELoss()(x, st.zeros(1, 2, device=device))
    assert math.isnan(loss.item())
    inf = nn.L1Loss()(tensor_on([float("inf")], device=device), tensor_on([0.0], device=device))
    assert math.isinf(inf.item())


@pytest.mark.parametrize("loss", ["mse_loss", "l1_loss", "huber_loss", "binary_cross_entropy_with_logits",
                                  "hyperbolic_cross_entropy"])
def test_pointwise_losses_refuse_the_same_inputs_on_every_device(loss, device):
    # The host kernel and the device path check alike: no silent broadcasting of the target,
    # integer predictions refused, an oversized pos_weight refused.
    f = getattr(nn, loss)
    with pytest.raises(st.ShapeError, match=rf"{loss}: prediction shape \(2, 3\) and target shape \(3,\) differ"):
        f(st.zeros(2, 3, device=device), st.zeros(3, device=device))
    with pytest.raises(st.DtypeError, match=f"{loss}: prediction must be a floating tensor, got int64"):
        f(st.zeros(2, 3, device=device).to(st.int64), st.zeros(2, 3, device=device))
    if loss == "binary_cross_entropy_with_logits":
        with pytest.raises(st.ShapeError, match=r"weight of shape \(1, 2, 3\) has more dims"):
            f(st.zeros(2, 3, device=device), st.zeros(2, 3, device=device),
              pos_weight=st.ones(1, 2, 3, device=device))


def test_shape_mismatch_and_reduction_errors():
    with pytest.raises(ValueError):
        nn.mse_loss(st.zeros(2, 3), st.zeros(3, 2))
    with pytest.raises(ValueError):
        nn.MSELoss(reduction="bogus")
    assert nn.MSELoss(reduction="sum").reduction == "sum"
