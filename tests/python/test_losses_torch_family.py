"""torch.nn's remaining losses (src/nn/loss_{classification,regression,likelihood,metric}.cpp) against PyTorch side by side:
values and input gradients for every reduction in float32 and float64, modules, errors."""

from __future__ import annotations

import math

import numpy as np
import pytest

import spiraltorch as st

torch = pytest.importorskip("torch")
TF = torch.nn.functional
nn = st.nn
REDUCTIONS = ["mean", "sum", "none"]
DTYPES = [(st.float32, torch.float32, 1e-5), (st.float64, torch.float64, 1e-10)]

rng = np.random.default_rng(7)
pytestmark = pytest.mark.filterwarnings("ignore:reduction. 'mean' divides")


def arr(t) -> np.ndarray:
    return np.asarray(t.tolist(), dtype=np.float64)


def run_pair(st_fn, torch_fn, inputs, grad_idx, dtypes, tol):
    """inputs: numpy arrays; int64 arrays stay integer. Compares the loss and the gradients
    of the inputs in grad_idx (through sum() of the loss when it is not a scalar)."""
    sd, td = dtypes
    s_args, t_args = [], []
    for i, a in enumerate(inputs):
        if a.dtype == np.int64:
            s_args.append(st.tensor(a.tolist(), dtype=st.int64))
            t_args.append(torch.tensor(a))
            continue
        s_args.append(st.tensor(a.tolist(), dtype=sd, requires_grad=i in grad_idx))
        t_args.append(torch.tensor(a, dtype=td, requires_grad=i in grad_idx))
    ls, lt = st_fn(*s_args), torch_fn(*t_args)
    assert tuple(ls.shape) == tuple(lt.shape)
    np.testing.assert_allclose(arr(ls), lt.detach().double().numpy(), rtol=tol, atol=tol)
    (ls if ls.dim() == 0 else ls.sum()).backward()
    (lt if lt.dim() == 0 else lt.sum()).backward()
    for i in grad_idx:
        np.testing.assert_allclose(arr(s_args[i].grad), t_args[i].grad.double().numpy(), rtol=tol * 10, atol=tol * 10)


def probs(*shape):
    return rng.uniform(0.05, 0.95, size=shape)


def signs(*shape):
    return rng.choice([-1.0, 1.0], size=shape)


# (name, st functional(reduction) -> fn, torch functional(reduction) -> fn, inputs, grad_idx)
CASES = {
    "binary_cross_entropy": (
        lambda r: lambda x, t: nn.binary_cross_entropy(x, t, reduction=r),
        lambda r: lambda x, t: TF.binary_cross_entropy(x, t, reduction=r),
        lambda: [probs(4, 3), probs(4, 3)], (0, 1)),
    "binary_cross_entropy_weight": (
        lambda r: lambda x, t, w: nn.binary_cross_entropy(x, t, w, reduction=r),
        lambda r: lambda x, t, w: TF.binary_cross_entropy(x, t, w, reduction=r),
        lambda: [probs(4, 3), rng.integers(0, 2, (4, 3)).astype(float), rng.uniform(0.5, 2, (3,))], (0,)),
    "kl_div": (
        lambda r: lambda x, t: nn.kl_div(x, t, reduction=r),
        lambda r: lambda x, t: TF.kl_div(x, t, reduction=r),
        # torch's target gradient is NaN where target == 0 (ours is finite): input gradient only
        lambda: [np.log(probs(3, 5)), np.where(rng.random((3, 5)) < 0.2, 0.0, probs(3, 5))], (0,)),
    "kl_div_positive_target": (
        lambda r: lambda x, t: nn.kl_div(x, t, reduction=r),
        lambda r: lambda x, t: TF.kl_div(x, t, reduction=r),
        lambda: [np.log(probs(3, 5)), probs(3, 5)], (0, 1)),
    "kl_div_log_target": (
        lambda r: lambda x, t: nn.kl_div(x, t, reduction=r, log_target=True),
        lambda r: lambda x, t: TF.kl_div(x, t, reduction=r, log_target=True),
        lambda: [np.log(probs(3, 5)), np.log(probs(3, 5))], (0, 1)),
    "smooth_l1_loss": (
        lambda r: lambda x, t: nn.smooth_l1_loss(x, t, reduction=r, beta=0.5),
        lambda r: lambda x, t: TF.smooth_l1_loss(x, t, reduction=r, beta=0.5),
        lambda: [rng.normal(size=(4, 5)), rng.normal(size=(4, 5))], (0, 1)),
    "smooth_l1_loss_beta0": (
        lambda r: lambda x, t: nn.smooth_l1_loss(x, t, reduction=r, beta=0.0),
        lambda r: lambda x, t: TF.smooth_l1_loss(x, t, reduction=r, beta=0.0),
        lambda: [rng.normal(size=(6,)), rng.normal(size=(6,))], (0,)),
    "soft_margin_loss": (
        lambda r: lambda x, t: nn.soft_margin_loss(x, t, reduction=r),
        lambda r: lambda x, t: TF.soft_margin_loss(x, t, reduction=r),
        lambda: [rng.normal(size=(3, 4)) * 3, signs(3, 4)], (0,)),
    "margin_ranking_loss": (
        lambda r: lambda a, b, y: nn.margin_ranking_loss(a, b, y, 0.3, reduction=r),
        lambda r: lambda a, b, y: TF.margin_ranking_loss(a, b, y, 0.3, reduction=r),
        lambda: [rng.normal(size=(8,)), rng.normal(size=(8,)), signs(8)], (0, 1)),
    "hinge_embedding_loss": (
        lambda r: lambda x, y: nn.hinge_embedding_loss(x, y, 0.8, reduction=r),
        lambda r: lambda x, y: TF.hinge_embedding_loss(x, y, 0.8, reduction=r),
        lambda: [rng.uniform(0, 2, size=(4, 3)), signs(4, 3)], (0,)),
    "cosine_embedding_loss": (
        lambda r: lambda a, b, y: nn.cosine_embedding_loss(a, b, y, 0.2, reduction=r),
        lambda r: lambda a, b, y: TF.cosine_embedding_loss(a, b, y, 0.2, reduction=r),
        lambda: [rng.normal(size=(6, 4)), rng.normal(size=(6, 4)), signs(6)], (0, 1)),
    "poisson_nll_loss": (
        lambda r: lambda x, t: nn.poisson_nll_loss(x, t, reduction=r),
        lambda r: lambda x, t: TF.poisson_nll_loss(x, t, reduction=r),
        lambda: [rng.normal(size=(3, 4)), rng.poisson(2.0, (3, 4)).astype(float)], (0,)),
    "poisson_nll_loss_full_rates": (
        lambda r: lambda x, t: nn.poisson_nll_loss(x, t, False, True, eps=1e-6, reduction=r),
        lambda r: lambda x, t: TF.poisson_nll_loss(x, t, False, True, eps=1e-6, reduction=r),
        lambda: [rng.uniform(0.2, 4, (3, 4)), rng.poisson(2.0, (3, 4)).astype(float)], (0,)),
    "gaussian_nll_loss": (
        lambda r: lambda x, t, v: nn.gaussian_nll_loss(x, t, v, reduction=r),
        lambda r: lambda x, t, v: TF.gaussian_nll_loss(x, t, v, reduction=r),
        lambda: [rng.normal(size=(4, 3)), rng.normal(size=(4, 3)), rng.uniform(0.1, 2, (4, 3))], (0, 1, 2)),
    "gaussian_nll_loss_homoscedastic_full": (
        lambda r: lambda x, t, v: nn.gaussian_nll_loss(x, t, v, True, 0.3, reduction=r),
        lambda r: lambda x, t, v: TF.gaussian_nll_loss(x, t, v, True, 0.3, reduction=r),
        lambda: [rng.normal(size=(4, 3)), rng.normal(size=(4, 3)), rng.uniform(0.1, 2, (4,))], (0, 2)),
    "gaussian_nll_loss_size1": (
        lambda r: lambda x, t, v: nn.gaussian_nll_loss(x, t, v, reduction=r),
        lambda r: lambda x, t, v: TF.gaussian_nll_loss(x, t, v, reduction=r),
        lambda: [rng.normal(size=(2, 3, 4)), rng.normal(size=(2, 3, 4)), rng.uniform(0.1, 2, (2, 1, 4))], (0, 2)),
    "multilabel_soft_margin_loss": (
        lambda r: lambda x, t, w: nn.multilabel_soft_margin_loss(x, t, w, reduction=r),
        lambda r: lambda x, t, w: TF.multilabel_soft_margin_loss(x, t, w, reduction=r),
        lambda: [rng.normal(size=(5, 4)), rng.integers(0, 2, (5, 4)).astype(float), rng.uniform(0.5, 2, (4,))], (0,)),
    "multi_margin_loss": (
        lambda r: lambda x, t: nn.multi_margin_loss(x, t, reduction=r),
        lambda r: lambda x, t: TF.multi_margin_loss(x, t, reduction=r),
        lambda: [rng.normal(size=(6, 4)), rng.integers(0, 4, (6,))], (0,)),
    "multi_margin_loss_p2_weight": (
        lambda r: lambda x, t, w: nn.multi_margin_loss(x, t, 2, 0.7, w, reduction=r),
        lambda r: lambda x, t, w: TF.multi_margin_loss(x, t, 2, 0.7, w, reduction=r),
        lambda: [rng.normal(size=(6, 4)), rng.integers(0, 4, (6,)), rng.uniform(0.5, 2, (4,))], (0,)),
}


@pytest.mark.parametrize("dtypes", DTYPES, ids=["float32", "float64"])
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("case", sorted(CASES))
def test_functional_matches_torch(case, reduction, dtypes):
    st_f, torch_f, make, grad_idx = CASES[case]
    run_pair(st_f(reduction), torch_f(reduction), make(), grad_idx, dtypes[:2], dtypes[2])


@pytest.mark.parametrize("log_target", [False, True])
def test_kl_div_batchmean(log_target):
    x, t = np.log(probs(4, 5)), probs(4, 5)
    if log_target:
        t = np.log(t)
    run_pair(lambda a, b: nn.kl_div(a, b, reduction="batchmean", log_target=log_target),
             lambda a, b: TF.kl_div(a, b, reduction="batchmean", log_target=log_target),
             [x, t], (0,), (st.float64, torch.float64), 1e-10)


def test_unbatched_forms():
    run_pair(lambda a, b, y: nn.cosine_embedding_loss(a, b, y, reduction="none"),
             lambda a, b, y: TF.cosine_embedding_loss(a, b, y, reduction="none"),
             [rng.normal(size=(5,)), rng.normal(size=(5,)), np.array(-1.0)], (0, 1), (st.float64, torch.float64), 1e-10)
    run_pair(lambda x, t: nn.multi_margin_loss(x, t, reduction="none"),
             lambda x, t: TF.multi_margin_loss(x, t, reduction="none"),
             [rng.normal(size=(4,)), np.array(2, dtype=np.int64)], (0,), (st.float64, torch.float64), 1e-10)
    # var of a Python float, as torch allows
    x, t = rng.normal(size=(3, 2)), rng.normal(size=(3, 2))
    got = nn.gaussian_nll_loss(st.tensor(x.tolist(), dtype=st.float64), st.tensor(t.tolist(), dtype=st.float64), 0.5)
    want = TF.gaussian_nll_loss(torch.tensor(x), torch.tensor(t), 0.5)
    assert got.item() == pytest.approx(want.item(), rel=1e-12)


def test_bce_edges_match_torch():
    # logs clamp at -100 and the gradient stays finite at 0 and 1, like torch
    x, t = np.array([0.0, 1.0, 0.0, 1.0, 0.5]), np.array([1.0, 0.0, 0.0, 1.0, 0.5])
    run_pair(lambda a, b: nn.binary_cross_entropy(a, b, reduction="none"),
             lambda a, b: TF.binary_cross_entropy(a, b, reduction="none"), [x, t], (0,), (st.float64, torch.float64),
             1e-10)


def test_gaussian_var_clamp_keeps_identity_gradient():
    var = np.array([1e-9, 0.5, 2.0])
    run_pair(lambda a, b, v: nn.gaussian_nll_loss(a, b, v, eps=1e-3),
             lambda a, b, v: TF.gaussian_nll_loss(a, b, v, eps=1e-3),
             [rng.normal(size=(3,)), rng.normal(size=(3,)), var], (0, 2), (st.float64, torch.float64), 1e-10)


MODULES = [
    (lambda: nn.BCELoss(reduction="sum"), lambda: torch.nn.BCELoss(reduction="sum"), [probs(3, 2), probs(3, 2)]),
    (lambda: nn.KLDivLoss(reduction="batchmean"), lambda: torch.nn.KLDivLoss(reduction="batchmean"),
     [np.log(probs(3, 4)), probs(3, 4)]),
    (lambda: nn.SmoothL1Loss(beta=2.0), lambda: torch.nn.SmoothL1Loss(beta=2.0),
     [rng.normal(size=(5,)) * 3, rng.normal(size=(5,))]),
    (lambda: nn.SoftMarginLoss(), lambda: torch.nn.SoftMarginLoss(), [rng.normal(size=(5,)), signs(5)]),
    (lambda: nn.MarginRankingLoss(0.5), lambda: torch.nn.MarginRankingLoss(0.5),
     [rng.normal(size=(5,)), rng.normal(size=(5,)), signs(5)]),
    (lambda: nn.HingeEmbeddingLoss(2.0), lambda: torch.nn.HingeEmbeddingLoss(2.0),
     [rng.uniform(0, 3, (5,)), signs(5)]),
    (lambda: nn.CosineEmbeddingLoss(0.1), lambda: torch.nn.CosineEmbeddingLoss(0.1),
     [rng.normal(size=(4, 3)), rng.normal(size=(4, 3)), signs(4)]),
    (lambda: nn.PoissonNLLLoss(log_input=True, full=True), lambda: torch.nn.PoissonNLLLoss(log_input=True, full=True),
     [rng.normal(size=(4,)), rng.poisson(3.0, (4,)).astype(float)]),
    (lambda: nn.GaussianNLLLoss(full=True), lambda: torch.nn.GaussianNLLLoss(full=True),
     [rng.normal(size=(4, 2)), rng.normal(size=(4, 2)), rng.uniform(0.2, 1, (4, 1))]),
    (lambda: nn.MultiLabelSoftMarginLoss(), lambda: torch.nn.MultiLabelSoftMarginLoss(),
     [rng.normal(size=(3, 4)), rng.integers(0, 2, (3, 4)).astype(float)]),
    (lambda: nn.MultiMarginLoss(p=2, margin=0.5), lambda: torch.nn.MultiMarginLoss(p=2, margin=0.5),
     [rng.normal(size=(3, 4)), rng.integers(0, 4, (3,))]),
]


@pytest.mark.parametrize("i", range(len(MODULES)))
def test_modules_match_torch(i):
    make_st, make_torch, inputs = MODULES[i]
    m = make_st()
    assert isinstance(m, nn.Loss)
    run_pair(m, make_torch(), inputs, (0,), (st.float64, torch.float64), 1e-10)


def test_module_properties():
    w = st.tensor([1.0, 2.0])
    assert nn.BCELoss(w).weight is not None and nn.BCELoss().weight is None
    assert nn.BCELoss().reduction == "mean"
    k = nn.KLDivLoss(reduction="batchmean", log_target=True)
    assert k.reduction == "batchmean" and k.log_target
    assert nn.SmoothL1Loss(beta=0.25).beta == 0.25
    assert nn.SoftMarginLoss(reduction="sum").reduction == "sum"
    assert nn.MarginRankingLoss(0.5).margin == 0.5
    assert nn.HingeEmbeddingLoss().margin == 1.0
    assert nn.CosineEmbeddingLoss().margin == 0.0
    p = nn.PoissonNLLLoss(False, True, eps=1e-4)
    assert (p.log_input, p.full, p.eps) == (False, True, 1e-4)
    g = nn.GaussianNLLLoss(full=True, eps=1e-3)
    assert (g.full, g.eps) == (True, 1e-3)
    assert nn.MultiLabelSoftMarginLoss(w).weight is not None
    m = nn.MultiMarginLoss(2, 0.5, w)
    assert (m.p, m.margin, m.weight is not None) == (2, 0.5, True)


def test_three_tensor_modules_refuse_two():
    for m in (nn.MarginRankingLoss(), nn.CosineEmbeddingLoss(), nn.GaussianNLLLoss()):
        with pytest.raises(TypeError):
            m(st.tensor([1.0]), st.tensor([1.0]))


def test_targets_as_lists():
    got = nn.soft_margin_loss(st.tensor([0.5, -1.0]), [1.0, -1.0])
    want = TF.soft_margin_loss(torch.tensor([0.5, -1.0]), torch.tensor([1.0, -1.0]))
    assert got.item() == pytest.approx(want.item(), rel=1e-6)
    got = nn.MultiMarginLoss()(st.tensor([[0.1, 0.2, 0.4]]), [2])
    assert got.item() == pytest.approx(0.5, rel=1e-6)


def test_bad_reduction_strings():
    x, t = st.tensor([0.5]), st.tensor([1.0])
    with pytest.raises(ValueError, match="binary_cross_entropy: reduction must be 'mean', 'sum' or 'none', got 'avg'"):
        nn.binary_cross_entropy(x, t, reduction="avg")
    with pytest.raises(ValueError, match="kl_div: reduction must be 'mean', 'batchmean', 'sum' or 'none', got 'x'"):
        nn.kl_div(x, t, reduction="x")
    with pytest.raises(ValueError, match="KLDivLoss"):
        nn.KLDivLoss(reduction="x")
    with pytest.raises(ValueError, match="MultiMarginLoss"):
        nn.MultiMarginLoss(reduction="total")
    with pytest.raises(ValueError, match="smooth_l1_loss: reduction"):
        nn.smooth_l1_loss(x, t, reduction="")


def test_shape_errors_name_the_op_and_shapes():
    a, b = st.zeros((2, 3)), st.zeros((3, 2))
    with pytest.raises(st.ShapeError, match=r"binary_cross_entropy: input shape \(2, 3\) and target shape \(3, 2\)"):
        nn.binary_cross_entropy(a, b)
    with pytest.raises(st.ShapeError, match=r"smooth_l1_loss: input shape \(2, 3\)"):
        nn.smooth_l1_loss(a, b)
    with pytest.raises(st.ShapeError, match="soft_margin_loss"):
        nn.soft_margin_loss(a, b)
    with pytest.raises(st.ShapeError, match="kl_div"):
        nn.kl_div(a, b)
    with pytest.raises(st.ShapeError, match="margin_ranking_loss"):
        nn.margin_ranking_loss(st.zeros((3,)), st.zeros((3,)), st.zeros((3, 1)))
    with pytest.raises(st.ShapeError, match=r"cosine_embedding_loss: inputs \(2, 3\) and \(2, 3\) with target \(3,\)"):
        nn.cosine_embedding_loss(a, a, st.ones((3,)))
    with pytest.raises(st.ShapeError, match=r"gaussian_nll_loss: var of shape \(3, 2\) is of incorrect size"):
        nn.gaussian_nll_loss(a, a, st.ones((3, 2)))
    with pytest.raises(st.ShapeError, match="multilabel_soft_margin_loss"):
        nn.multilabel_soft_margin_loss(a, b)
    with pytest.raises(st.ShapeError, match=r"multi_margin_loss: weight must have shape \(3,\)"):
        nn.multi_margin_loss(a, st.tensor([0, 1], dtype=st.int64), weight=st.ones((2,)))
    with pytest.raises(st.ShapeError, match="binary_cross_entropy: weight of shape"):
        nn.binary_cross_entropy(st.zeros((3,)), st.zeros((3,)), st.ones((2, 3)))


def test_value_index_dtype_errors():
    with pytest.raises(ValueError, match=r"binary_cross_entropy: input values must lie in \[0, 1\], got min -0.5"):
        nn.binary_cross_entropy(st.tensor([-0.5, 0.5]), st.tensor([0.0, 1.0]))
    with pytest.raises(ValueError, match="gaussian_nll_loss: var has negative entries"):
        nn.gaussian_nll_loss(st.zeros((2,)), st.zeros((2,)), st.tensor([1.0, -1.0]))
    with pytest.raises(ValueError, match="smooth_l1_loss: beta must be >= 0"):
        nn.smooth_l1_loss(st.zeros((2,)), st.zeros((2,)), beta=-1.0)
    with pytest.raises(ValueError, match="only p == 1 and p == 2"):
        nn.multi_margin_loss(st.zeros((2, 3)), st.tensor([0, 1], dtype=st.int64), p=3)
    with pytest.raises(IndexError, match="multi_margin_loss: target 3 is out of range for 3 classes"):
        nn.multi_margin_loss(st.zeros((2, 3)), st.tensor([0, 3], dtype=st.int64))
    with pytest.raises(st.DtypeError, match="multi_margin_loss: target must hold integer class indices"):
        nn.multi_margin_loss(st.zeros((2, 3)), st.zeros((2,)))
    with pytest.raises(st.DtypeError, match="soft_margin_loss: input must be a floating tensor"):
        nn.soft_margin_loss(st.tensor([1, 2], dtype=st.int64), st.tensor([1.0, -1.0]))


def test_failing_call_leaves_inputs_untouched():
    x = st.tensor([0.2, 0.4], requires_grad=True)
    with pytest.raises(ValueError):
        nn.kl_div(x, st.tensor([0.1, 0.9]), reduction="avg")
    assert x.grad is None and x.tolist() == pytest.approx([0.2, 0.4])


def test_module_trains_with_optimizer_step():
    # a BCELoss on sigmoid outputs decreases under SGD, as with torch
    st.manual_seed(0)
    lin = nn.Linear(3, 1)
    x = st.tensor(rng.normal(size=(16, 3)).tolist())
    y = st.tensor((rng.random((16, 1)) > 0.5).astype(float).tolist())
    loss_fn = nn.BCELoss()
    first = None
    for _ in range(30):
        loss = loss_fn(nn.sigmoid(lin(x)), y)
        first = first if first is not None else loss.item()
        for p in lin.parameters():
            p.grad = None
        loss.backward()
        with st.no_grad():
            for p in lin.parameters():
                p.sub_(p.grad * 0.5)
    assert loss.item() < first and math.isfinite(loss.item())
