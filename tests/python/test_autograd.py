"""Gradients of every differentiable op against central finite differences (float64)
and PyTorch, plus the semantics of backward / autograd.grad / no_grad."""

import numpy as np
import pytest

import spiraltorch as st
from conftest import gradcheck, needs_torch, rand_array, st_tensor, tensor_on, to_np, torch_compare


def R(shape, seed=0, low=-2.0, high=2.0):
    return rand_array(shape, np.float64, seed=seed, low=low, high=high)


def away_from_zero(shape, seed=0, lo=0.2, hi=2.0):
    g = np.random.default_rng(seed)
    return g.uniform(lo, hi, size=shape) * g.choice([-1.0, 1.0], size=shape)


def distinct(shape, seed=0):
    """Values well separated from each other (max/min/sort/topk have unique winners)."""
    g = np.random.default_rng(seed)
    n = int(np.prod(shape, dtype=int))
    return (g.permutation(n).astype(np.float64) * 0.37 - n * 0.15).reshape(shape)


# ---------------------------------------------------------------------------
# binary ops with broadcasting
# ---------------------------------------------------------------------------

BIN_SHAPES = [((3, 4), (3, 4)), ((3, 1), (1, 4)), ((4,), (2, 3, 4)), ((), (2, 3)), ((2, 3), ()), ((2, 1, 3), (4, 1))]


@pytest.mark.parametrize("sa,sb", BIN_SHAPES, ids=str)
@pytest.mark.parametrize("op", ["add", "sub", "mul", "div", "pow", "maximum", "minimum", "atan2", "add_alpha"])
def test_binary_grad(op, sa, sb, device):
    a = R(sa, seed=1)
    b = R(sb, seed=2)
    fns = {
        "add": lambda x, y: x + y,
        "sub": lambda x, y: x - y,
        "mul": lambda x, y: x * y,
        "div": lambda x, y: x / y,
        "pow": lambda x, y: x ** y,
        "maximum": st.maximum,
        "minimum": st.minimum,
        "atan2": st.atan2,
        "add_alpha": lambda x, y: st.add(x, y, alpha=-1.5),
    }
    if op == "div":
        b = away_from_zero(sb, seed=2)
    if op == "pow":
        a = np.abs(a) + 0.3
    if op in ("maximum", "minimum"):
        b = b + 0.05  # avoid exact ties
    gradcheck(fns[op], a, b, device=device)


def test_scalar_operand_grads(device):
    x = np.abs(R((3, 4), seed=3)) + 0.5
    gradcheck(lambda t: t * 2.5 - 1.0, x, device=device)
    gradcheck(lambda t: 3.0 - t, x, device=device)
    gradcheck(lambda t: 2.0 / t, x, device=device)
    gradcheck(lambda t: t / 4.0, x, device=device)
    gradcheck(lambda t: t ** 3, x, device=device)
    gradcheck(lambda t: t ** 0.5, x, device=device)
    gradcheck(lambda t: t ** -2, x, device=device)
    gradcheck(lambda t: 2.0 ** t, x, device=device)
    gradcheck(lambda t: -t + t * t, x, device=device)


def test_same_tensor_used_twice_accumulates(device):
    x = R((5,), seed=4)
    gradcheck(lambda t: t * t + t, x, device=device)
    t = tensor_on(x, dtype=st.float64, requires_grad=True, device=device)
    (t * t + t).sum().backward()
    np.testing.assert_allclose(to_np(t.grad), 2 * x + 1, rtol=1e-14)


# ---------------------------------------------------------------------------
# unary ops
# ---------------------------------------------------------------------------

UNARY_GRAD = {
    "neg": (st.neg, (-2, 2)),
    "abs": (st.abs, None),
    "exp": (st.exp, (-2, 2)),
    "log": (st.log, (0.2, 3)),
    "log1p": (st.log1p, (-0.5, 3)),
    "expm1": (st.expm1, (-2, 2)),
    "sqrt": (st.sqrt, (0.2, 3)),
    "rsqrt": (st.rsqrt, (0.2, 3)),
    "square": (st.square, (-2, 2)),
    "reciprocal": (st.reciprocal, None),
    "sin": (st.sin, (-3, 3)),
    "cos": (st.cos, (-3, 3)),
    "tan": (st.tan, (-1.2, 1.2)),
    "tanh": (st.tanh, (-2, 2)),
    "atanh": (st.atanh, (-0.8, 0.8)),
    "sigmoid": (st.sigmoid, (-4, 4)),
    "erf": (st.erf, (-2, 2)),
    "relu": (st.relu, None),
    "gelu": (st.gelu, (-3, 3)),
    "gelu_tanh": (lambda t: st.gelu(t, approximate="tanh"), (-3, 3)),
    "silu": (st.silu, (-4, 4)),
    "softplus": (lambda t: st.softplus(t, beta=1.5, threshold=3.0), None),
    "leaky_relu": (lambda t: st.leaky_relu(t, 0.2), None),
    "elu": (lambda t: st.elu(t, 0.8), None),
    "clamp": (lambda t: st.clamp(t, -0.5, 0.7), None),
    "clamp_min": (lambda t: t.clamp(min=0.1), None),
}


@pytest.mark.parametrize("shape", [(), (2, 5)], ids=str)
@pytest.mark.parametrize("name", list(UNARY_GRAD))
def test_unary_grad(name, shape, device):
    fn, dom = UNARY_GRAD[name]
    x = away_from_zero(shape, seed=5) if dom is None else R(shape, seed=5, low=dom[0], high=dom[1])
    if name.startswith("clamp"):
        x = np.where(np.abs(x + 0.5) < 0.05, x + 0.1, x)
        x = np.where(np.abs(x - 0.7) < 0.05, x + 0.1, x)
        x = np.where(np.abs(x - 0.1) < 0.05, x + 0.1, x)
    if name == "softplus":
        x = x * 2.5  # cross the threshold both ways
        x = np.where(np.abs(x * 1.5 - 3.0) < 0.05, x + 0.2, x)
    gradcheck(fn, x, device=device)


def test_where_masked_fill_grads(device):
    c = rand_array((3, 4), np.bool_, seed=6)
    a = R((3, 4), seed=7)
    b = R((4,), seed=8)
    gradcheck(lambda x, y: st.where(st_tensor(c, device=device), x, y), a, b, device=device)
    gradcheck(lambda x: st.masked_fill(x, st_tensor(c, device=device), 3.0), a, device=device)
    gradcheck(lambda x: st.where(st_tensor(c, device=device), x, 0.0) * 2, a, device=device)


def test_cast_grad_flows_back_to_float32(device):
    x = tensor_on([1.0, 2.0, 3.0], requires_grad=True, device=device)
    y = (x.double() * tensor_on([1.0, 2.0, 3.0], dtype=st.float64, device=device)).sum()
    y.backward()
    assert x.grad.dtype == st.float32
    assert x.grad.tolist() == [1.0, 2.0, 3.0]


# ---------------------------------------------------------------------------
# reductions
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("dim,keepdim", [(None, False), (0, False), (1, True), ((0, 2), False), ((0, 2), True),
                                         (-1, False)], ids=str)
@pytest.mark.parametrize("op", ["sum", "mean", "var", "std", "var0", "amax", "amin", "logsumexp", "norm1", "norm2",
                                "norm3", "norminf"])
def test_reduction_grad(op, dim, keepdim, device):
    x = distinct((2, 3, 4), seed=9) / 5.0
    kw = {} if dim is None else {"dim": dim}
    fns = {
        "sum": lambda t: t.sum(keepdim=keepdim, **kw),
        "mean": lambda t: t.mean(keepdim=keepdim, **kw),
        "var": lambda t: t.var(keepdim=keepdim, **kw),
        "std": lambda t: t.std(keepdim=keepdim, **kw),
        "var0": lambda t: st.var(t, correction=0, keepdim=keepdim, **kw),
        "amax": lambda t: t.amax(keepdim=keepdim, **kw),
        "amin": lambda t: t.amin(keepdim=keepdim, **kw),
        "logsumexp": lambda t: st.logsumexp(t, dim=dim if dim is not None else (0, 1, 2), keepdim=keepdim),
        "norm1": lambda t: t.norm(p=1, keepdim=keepdim, **kw),
        "norm2": lambda t: t.norm(keepdim=keepdim, **kw),
        "norm3": lambda t: t.norm(p=3, keepdim=keepdim, **kw),
        "norminf": lambda t: t.norm(p=float("inf"), keepdim=keepdim, **kw),
    }
    gradcheck(fns[op], x, device=device)


def test_amax_ties_split_gradient_evenly(device):
    # PyTorch's amax distributes the gradient evenly among tied maxima
    x = tensor_on([1.0, 3.0, 3.0, 2.0], dtype=st.float64, requires_grad=True, device=device)
    x.amax().backward()
    assert x.grad.tolist() == [0.0, 0.5, 0.5, 0.0]


def test_broadcasting_reduction_in_backward(device):
    # gradient of a (3,1) + (1,4) -> reduced back to each input's shape
    gradcheck(lambda a, b: ((a + b) * (a - b)).sum(dim=0, keepdim=True), R((3, 1), 10), R((1, 4), 11), device=device)
    gradcheck(lambda a, b: (a * b).mean(dim=-1), R((5,), 12), R((2, 3, 5), 13), device=device)
    gradcheck(lambda a, b: (a / b).sum(), R((2, 1, 3), 14), away_from_zero((4, 1), 15), device=device)


@pytest.mark.parametrize("case", ["no_zero", "one_zero", "two_zeros", "dim_one_zero", "dim_two_zeros"])
def test_prod_grad_with_zeros(case, device):
    x = R((3, 4), seed=16, low=0.5, high=1.5)
    if case in ("one_zero", "dim_one_zero"):
        x[1, 2] = 0.0
    if case in ("two_zeros", "dim_two_zeros"):
        x[1, 2] = 0.0
        x[1, 3] = 0.0
        x[0, 0] = 0.0
    if case.startswith("dim"):
        for d in (0, 1):
            gradcheck(lambda t: t.prod(dim=d), x, device=device)
            gradcheck(lambda t: t.prod(dim=d, keepdim=True), x, device=device)
    else:
        g = gradcheck(lambda t: t.prod(), x, device=device)[0]
        assert np.all(np.isfinite(g))


def test_prod_grad_exact_values_with_zero(device):
    x = tensor_on([2.0, 0.0, 3.0], dtype=st.float64, requires_grad=True, device=device)
    x.prod().backward()
    assert x.grad.tolist() == [0.0, 6.0, 0.0]


@pytest.mark.parametrize("which", ["max", "min"])
@pytest.mark.parametrize("dim,keepdim", [(0, False), (1, True), (-1, False), (2, True)], ids=str)
def test_max_min_dim_grad(which, dim, keepdim, device):
    x = distinct((2, 3, 4), seed=17)
    gradcheck(lambda t: getattr(t, which)(dim=dim, keepdim=keepdim).values, x, device=device)
    gradcheck(lambda t: getattr(st, which)(t), x, device=device)


@pytest.mark.parametrize("dim", [0, 1, -1])
@pytest.mark.parametrize("fn", ["softmax", "log_softmax"])
def test_softmax_grad(fn, dim, device):
    x = R((3, 5), seed=18, low=-3, high=3)
    gradcheck(lambda t: getattr(st, fn)(t, dim), x, device=device)
    gradcheck(lambda t: getattr(st, fn)(t.T, dim), x, device=device)  # non-contiguous input


def test_row_softmax_grad(device):
    gradcheck(lambda t: t.row_softmax(), R((3, 4), seed=19), device=device)


# ---------------------------------------------------------------------------
# matmul
# ---------------------------------------------------------------------------

MM_SHAPES = [((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 4)), ((2, 3), (3, 4)), ((4, 2, 3), (3, 2)), ((3,), (2, 3, 4)),
             ((2, 1, 2, 3), (3, 3, 2)), ((3, 1, 2, 3), (1, 2, 3, 2))]


@pytest.mark.parametrize("sa,sb", MM_SHAPES, ids=str)
def test_matmul_grad(sa, sb, device):
    gradcheck(st.matmul, R(sa, seed=20), R(sb, seed=21), device=device)


def test_matmul_grad_noncontiguous_and_bmm(device):
    gradcheck(lambda a, b: a.T @ b.T, R((3, 2), 22), R((4, 3), 23), device=device)
    gradcheck(st.bmm, R((2, 2, 3), 24), R((2, 3, 2), 25), device=device)
    # the seed's backend= keyword: "cpu" on host tensors; tensors already on a GPU run there with "auto"
    backend = "cpu" if device == "cpu" else "auto"
    gradcheck(lambda a, b: a.matmul(b, backend=backend), R((2, 3), 26), R((3, 2), 27), device=device)


# ---------------------------------------------------------------------------
# views and indexing ops
# ---------------------------------------------------------------------------

# fn(t, d): d is the test's device, for the index tensors
VIEW_FNS = {
    "reshape": lambda t, d: t.reshape(4, 6),
    "view": lambda t, d: t.view(6, 4),
    "transpose": lambda t, d: t.transpose(0, 2),
    "permute": lambda t, d: t.permute(1, 2, 0),
    "T": lambda t, d: t.T,
    "slice": lambda t, d: t[:, 1:3, ::2],
    "getitem_int": lambda t, d: t[1, :, 2],
    "getitem_none": lambda t, d: t[None, ..., 1],
    "select": lambda t, d: t.select(1, -1),
    "narrow": lambda t, d: t.narrow(2, 1, 2),
    "expand": lambda t, d: t[:, :1, :].expand(2, 5, 4),
    "squeeze_unsqueeze": lambda t, d: t.unsqueeze(1).squeeze(1),
    "flatten": lambda t, d: t.flatten(1),
    "contiguous": lambda t, d: t.transpose(0, 1).contiguous(),
    "clone": lambda t, d: t.clone(),
    "adv_index_repeat": lambda t, d: t[tensor_on([1, 1, 0], d)],
    "adv_index_dim1": lambda t, d: t[:, tensor_on([2, 0, 2], d)],
    "bool_mask": lambda t, d: t[t > 0],
    "tril": lambda t, d: st.tril(t, 1),
    "triu": lambda t, d: st.triu(t, -1),
}


@pytest.mark.parametrize("name", list(VIEW_FNS))
def test_view_and_indexing_grads(name, device):
    gradcheck(lambda t: VIEW_FNS[name](t, device), R((2, 3, 4), seed=28), device=device)


def test_cat_stack_split_chunk_grads(device):
    a, b, c = R((2, 3), 29), R((2, 1), 30), R((2, 3), 31)
    gradcheck(lambda x, y: st.cat([x, y, x], dim=1), a, b, device=device)
    gradcheck(lambda x, y: st.stack([x, y], dim=1), a, c, device=device)
    gradcheck(lambda x, y: st.stack([x, y], dim=-1), a, c, device=device)
    gradcheck(lambda x: st.split(x, 2, dim=1), a, device=device)
    gradcheck(lambda x: st.split(x, [1, 2], dim=1)[1], a, device=device)
    gradcheck(lambda x: st.chunk(x, 2, dim=0)[0] * 3, a, device=device)


def test_gather_scatter_index_select_grads(device):
    x = R((3, 4), 32)
    idx = tensor_on([[0, 1, 1, 3], [2, 2, 0, 0]], device=device)
    gradcheck(lambda t: st.gather(t, 1, idx), x, device=device)
    gradcheck(lambda t: st.gather(t, 0, tensor_on([[2, 0, 1, 1], [2, 2, 2, 2]], device=device)), x, device=device)
    sidx = tensor_on([[0, 1, 2, 0], [2, 2, 2, 1]], device=device)
    gradcheck(lambda t, s: st.scatter_add(t, 0, sidx, s), x, R((2, 4), 33), device=device)
    gradcheck(lambda t: st.index_select(t, 0, tensor_on([2, 0, 2], device=device)), x, device=device)
    gradcheck(lambda t: st.index_select(t, 1, tensor_on([3, 3, 1], device=device)), x, device=device)
    gradcheck(lambda t: st.masked_select(t, tensor_on([True, False, True, True], device=device)), x, device=device)


def test_topk_sort_cumsum_grads(device):
    x = distinct((3, 5), 34)
    gradcheck(lambda t: st.topk(t, 2, dim=1).values, x, device=device)
    gradcheck(lambda t: st.topk(t, 2, dim=0, largest=False).values, x, device=device)
    gradcheck(lambda t: st.sort(t, dim=1, descending=True).values, x, device=device)
    gradcheck(lambda t: st.cumsum(t, 1), x, device=device)
    gradcheck(lambda t: st.cumsum(t, 0), x, device=device)


def test_composite_mlp_grad(device):
    def mlp(x, w1, b1, w2):
        h = st.tanh(x @ w1 + b1)
        return st.log_softmax(h @ w2, dim=1).sum(dim=1).mean()

    gradcheck(mlp, R((4, 3), 35), R((3, 5), 36), R((5,), 37), R((5, 2), 38), device=device)


# ---------------------------------------------------------------------------
# against PyTorch (forward + backward)
# ---------------------------------------------------------------------------


@needs_torch
def test_grads_match_torch(device):
    import torch

    torch_compare(lambda a, b: (a * b + a / (b * b + 1)).sum(dim=1), lambda a, b: (a * b + a / (b * b + 1)).sum(dim=1),
                  R((3, 4), 40), R((4,), 41), device=device)
    torch_compare(lambda a, b: st.matmul(a, b).softmax(-1), lambda a, b: torch.matmul(a, b).softmax(-1),
                  R((2, 1, 3, 4), 42), R((5, 4, 2), 43), device=device)
    torch_compare(lambda a: (a.var(dim=0), a.std(dim=1, keepdim=True)),
                  lambda a: (a.var(dim=0), a.std(dim=1, keepdim=True)), R((4, 5), 44), device=device)
    torch_compare(lambda a: a.prod(dim=1), lambda a: a.prod(dim=1), np.array([[1.0, 0.0, 2.0], [0.0, 0.0, 3.0]]),
                  device=device)
    torch_compare(lambda a: a.max(dim=1).values + a.amin(dim=0).sum(), lambda a: a.max(dim=1).values + a.amin(dim=0).sum(),
                  distinct((3, 4), 45), device=device)
    torch_compare(lambda a: st.log_softmax(a, 0), lambda a: torch.log_softmax(a, 0), R((4, 3), 46), device=device)
    torch_compare(lambda a: st.gelu(a) + st.silu(a) + st.elu(a) + st.softplus(a),
                  lambda a: (torch.nn.functional.gelu(a) + torch.nn.functional.silu(a) + torch.nn.functional.elu(a)
                             + torch.nn.functional.softplus(a)), R((3, 5), 47), device=device)
    torch_compare(lambda a: st.topk(a, 2).values.cumsum(1), lambda a: torch.topk(a, 2).values.cumsum(1),
                  distinct((3, 5), 48), device=device)
    torch_compare(lambda a, b: st.cat([a, b], 0).norm(dim=0), lambda a, b: torch.cat([a, b], 0).norm(dim=0),
                  R((2, 3), 49), R((1, 3), 50), device=device)
    torch_compare(lambda a: st.logsumexp(a, dim=1), lambda a: torch.logsumexp(a, dim=1), R((3, 4), 51), device=device)
    torch_compare(lambda a: st.amax(tensor_on([[1.0, 1.0]], dtype=st.float64, device=device) * a, dim=1),
                  lambda a: torch.amax(torch.tensor([[1.0, 1.0]], dtype=torch.float64) * a, dim=1),
                  np.array([[2.0, 2.0], [1.0, 3.0]]), device=device)


@needs_torch
def test_double_backward_matches_torch(device):
    import torch

    xs = R((4,), 52)
    x = tensor_on(xs, dtype=st.float64, requires_grad=True, device=device)
    (gx,) = st.autograd.grad((x ** 3 * st.sin(x)).sum(), x, create_graph=True)
    (ggx,) = st.autograd.grad(gx.sum(), x)
    tx = torch.tensor(xs, requires_grad=True)
    (tg,) = torch.autograd.grad((tx ** 3 * torch.sin(tx)).sum(), tx, create_graph=True)
    (tgg,) = torch.autograd.grad(tg.sum(), tx)
    np.testing.assert_allclose(to_np(gx), tg.detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(to_np(ggx), tgg.numpy(), rtol=1e-12)


# ---------------------------------------------------------------------------
# engine semantics
# ---------------------------------------------------------------------------


def test_grad_accumulates_and_can_be_reset(device):
    x = tensor_on([1.0, 2.0, 3.0], requires_grad=True, device=device)
    (x * x).sum().backward()
    assert x.grad.tolist() == [2.0, 4.0, 6.0]
    (x * 3).sum().backward()
    assert x.grad.tolist() == [5.0, 7.0, 9.0]
    x.grad = None
    assert x.grad is None
    x.sum().backward()
    assert x.grad.tolist() == [1.0, 1.0, 1.0]
    x.grad.zero_()
    assert x.grad.tolist() == [0.0, 0.0, 0.0]


def test_retain_graph_allows_second_backward(device):
    x = tensor_on([1.0, 2.0], requires_grad=True, device=device)
    y = (x.exp() * x).sum()
    y.backward(retain_graph=True)
    first = to_np(x.grad)
    y.backward()
    np.testing.assert_allclose(to_np(x.grad), 2 * first, rtol=1e-6)


def test_backward_twice_without_retain_graph_raises():
    x = st.tensor([1.0, 2.0], requires_grad=True)
    y = (x * x).sum()
    y.backward()
    with pytest.raises(st.SpiralError):
        y.backward()


def test_non_scalar_backward_needs_gradient(device):
    x = tensor_on([1.0, 2.0], requires_grad=True, device=device)
    y = x * 3
    with pytest.raises(st.SpiralError):
        y.backward()
    y.backward(tensor_on([1.0, 10.0], device=device))
    assert x.grad.tolist() == [3.0, 30.0]


def test_backward_gradient_shape_checked():
    x = st.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(st.ShapeError):
        (x * 3).backward(st.tensor([1.0, 2.0, 3.0]))


def test_requires_grad_propagation_and_leaves():
    x = st.tensor([1.0, 2.0], requires_grad=True)
    c = st.tensor([3.0, 4.0])
    y = x * c
    assert x.is_leaf and c.is_leaf and not y.is_leaf
    assert y.requires_grad and not c.requires_grad
    assert y.grad_fn is not None and x.grad_fn is None
    assert (c * 2).grad_fn is None
    z = (x > 1)
    assert not z.requires_grad
    assert not x.argmax().requires_grad
    assert x.detach().requires_grad is False
    assert x.detach().is_leaf


def test_integer_tensors_cannot_require_grad():
    with pytest.raises(st.SpiralError):
        st.tensor([1, 2]).requires_grad_(True)


def test_no_grad_variants():
    x = st.tensor([1.0, 2.0], requires_grad=True)
    with st.no_grad():
        y = x * 2
        assert not st.is_grad_enabled()
        with st.enable_grad():
            w = x * 2
    assert st.is_grad_enabled()
    assert not y.requires_grad and y.grad_fn is None
    assert w.requires_grad

    @st.no_grad()
    def f(t):
        return t * 3

    assert not f(x).requires_grad
    with st.set_grad_enabled(False):
        assert not (x + 1).requires_grad
    with st.set_grad_enabled(True):
        assert (x + 1).requires_grad
    # exceptions restore the mode
    with pytest.raises(ZeroDivisionError):
        with st.no_grad():
            1 / 0
    assert st.is_grad_enabled()


def test_autograd_grad_does_not_touch_dot_grad(device):
    x = tensor_on([1.0, 2.0, 3.0], dtype=st.float64, requires_grad=True, device=device)
    w = tensor_on([0.5], dtype=st.float64, requires_grad=True, device=device)
    y = (x * x * w).sum()
    gx, gw = st.autograd.grad(y, [x, w])
    assert x.grad is None and w.grad is None
    assert gx.tolist() == [1.0, 2.0, 3.0]
    assert gw.tolist() == [14.0]


def test_autograd_grad_unused_and_grad_outputs(device):
    x = tensor_on([1.0, 2.0], requires_grad=True, device=device)
    u = tensor_on([5.0], requires_grad=True, device=device)
    y = x * 2
    with pytest.raises(st.SpiralError):
        st.autograd.grad(y.sum(), [x, u], retain_graph=True)
    gx, gu = st.autograd.grad(y.sum(), [x, u], allow_unused=True, retain_graph=True)
    assert gu is None and gx.tolist() == [2.0, 2.0]
    (g,) = st.autograd.grad(y, x, grad_outputs=tensor_on([1.0, -1.0], device=device))
    assert g.tolist() == [2.0, -2.0]


def test_autograd_backward_many(device):
    x = tensor_on([1.0, 2.0], requires_grad=True, device=device)
    st.autograd.backward([(x * 2).sum(), (x * x).sum()])
    assert x.grad.tolist() == [4.0, 6.0]


def test_detach_shares_storage_and_blocks_grad(device):
    x = tensor_on([1.0, 2.0], requires_grad=True, device=device)
    d = x.detach()
    d[0] = 10.0
    assert x.tolist()[0] == 10.0
    y = (x * d).sum()
    y.backward()
    assert x.grad.tolist() == [10.0, 2.0]


def test_retain_grad_on_non_leaf(device):
    x = tensor_on([1.0, 2.0], requires_grad=True, device=device)
    h = x * 3
    h.retain_grad()
    (h * h).sum().backward()
    assert h.grad.tolist() == [6.0, 12.0]
    assert x.grad.tolist() == [18.0, 36.0]


def test_inplace_on_nonleaf_is_tracked(device):
    x = tensor_on([1.0, 2.0, 3.0], dtype=st.float64, requires_grad=True, device=device)
    y = x * 2
    y.add_(1.0)
    y.mul_(tensor_on([1.0, 2.0, 3.0], dtype=st.float64, device=device))
    y.sum().backward()
    assert x.grad.tolist() == [2.0, 4.0, 6.0]


def test_inplace_on_saved_tensor_detected(device):
    x = tensor_on([1.0, 2.0], requires_grad=True, device=device)
    y = x.exp()  # saves its output
    z = y * 1.0
    y.add_(1.0)
    with pytest.raises(st.SpiralError):
        (z.sum() + y.sum()).backward()
    x2 = tensor_on([1.0, 2.0], requires_grad=True, device=device)
    a = x2 * 2
    b = a * a  # saves a
    a.mul_(3)
    with pytest.raises(st.SpiralError):
        b.sum().backward()


def test_grad_through_setitem_on_clone(device):
    x = tensor_on([1.0, 2.0, 3.0], dtype=st.float64, requires_grad=True, device=device)
    y = x.clone()
    y[1] = 0.0
    (y * tensor_on([1.0, 2.0, 3.0], dtype=st.float64, device=device)).sum().backward()
    assert x.grad.tolist() == [1.0, 0.0, 3.0]


def test_float32_grads_have_float32_dtype(device):
    x = tensor_on([[1.0, 2.0], [3.0, 4.0]], requires_grad=True, device=device)
    b = tensor_on([1.0, 1.0], requires_grad=True, device=device)
    ((x @ x + b) ** 2).mean().backward()
    assert x.grad.dtype == st.float32 and b.grad.dtype == st.float32
    assert x.grad.shape == (2, 2) and b.grad.shape == (2,)


def test_norm_and_std_grads_at_zero_are_zero_like_torch(device):
    x = tensor_on([0.0, 0.0], dtype=st.float64, requires_grad=True, device=device)
    x.norm().backward()
    assert x.grad.tolist() == [0.0, 0.0]
    y = tensor_on([[0.0, 0.0], [3.0, 4.0]], dtype=st.float64, requires_grad=True, device=device)
    y.norm(dim=1).sum().backward()
    np.testing.assert_allclose(to_np(y.grad), [[0.0, 0.0], [0.6, 0.8]], rtol=1e-14)
    c = tensor_on([1.5, 1.5, 1.5], dtype=st.float64, requires_grad=True, device=device)
    c.std().backward()
    assert c.grad.tolist() == [0.0, 0.0, 0.0]


@needs_torch
@pytest.mark.parametrize("fn", [
    "norm", "std", "var",
    "softmax", "prod", "logsumexp",
])
def test_double_backward_reductions_match_torch(fn, device):
    import torch

    xs = R((5,), 60) + 0.1
    calls = {
        "norm": lambda t: t.norm(),
        "std": lambda t: t.std(),
        "var": lambda t: t.var(),
        "softmax": lambda t: (t.softmax(0) * t).sum(),
        "prod": lambda t: t.prod(),
        "logsumexp": lambda t: st.logsumexp(t, dim=0) if isinstance(t, st.Tensor) else torch.logsumexp(t, dim=0),
    }
    x = tensor_on(xs, dtype=st.float64, requires_grad=True, device=device)
    (g,) = st.autograd.grad(calls[fn](x), x, create_graph=True)
    (gg,) = st.autograd.grad((g * g).sum(), x)
    tx = torch.tensor(xs, requires_grad=True)
    (tg,) = torch.autograd.grad(calls[fn](tx), tx, create_graph=True)
    (tgg,) = torch.autograd.grad((tg * tg).sum(), tx)
    np.testing.assert_allclose(to_np(g), tg.detach().numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(to_np(gg), tgg.numpy(), rtol=1e-9, atol=1e-12)


def test_inplace_through_views_matches_torch(device):
    torch = pytest.importorskip("torch")
    xs = np.arange(1.0, 13.0).reshape(3, 4)
    ws = np.linspace(-1.0, 1.0, 12).reshape(3, 4)

    def run(lib, tensor):
        x = tensor(xs, requires_grad=True)
        v = tensor(np.array([5.0, 6.0, 7.0, 8.0]), requires_grad=True)
        y = x * 2
        y[1] = v * v           # copy through a select view
        y[:, 2:].mul_(3.0)     # in-place op through a slice view
        y[0, 0] = 0.0          # fill through a view of a view
        (y * tensor(ws)).sum().backward()
        return x.grad, v.grad

    sx, sv = run(st, lambda a, requires_grad=False: tensor_on(a, device, dtype=st.float64, requires_grad=requires_grad))
    tx, tv = run(torch, lambda a, requires_grad=False: torch.tensor(a, dtype=torch.float64, requires_grad=requires_grad))
    np.testing.assert_allclose(to_np(sx), tx.numpy(), rtol=1e-12)
    np.testing.assert_allclose(to_np(sv), tv.numpy(), rtol=1e-12)


def test_write_with_history_into_view_of_plain_tensor_matches_torch(device):
    # The written-to tensor has no history of its own: the write gives it one (CopySlices),
    # through a slice, a column, a view of a view and copy_.
    torch = pytest.importorskip("torch")
    ws = np.linspace(-1.0, 1.0, 12).reshape(3, 4)

    def run(lib, tensor):
        w = tensor(np.array([0.5, -1.5, 2.0]), requires_grad=True)
        buf = lib.zeros(3, 4, dtype=lib.float64)
        if lib is st:
            buf = buf.to(device)
        buf[0, 1:4] = w * 2
        buf[:, 0] = w.exp()
        buf.t()[3][1:].copy_(w[1:] * w[0])
        assert buf.requires_grad and not buf.is_leaf
        (buf * tensor(ws) * buf).sum().backward()
        return w.grad

    sg = run(st, lambda a, requires_grad=False: tensor_on(a, device, dtype=st.float64, requires_grad=requires_grad))
    tg = run(torch, lambda a, requires_grad=False: torch.tensor(a, dtype=torch.float64, requires_grad=requires_grad))
    np.testing.assert_allclose(to_np(sg), tg.numpy(), rtol=1e-12)


def test_write_without_history_into_view_leaves_tensor_plain(device):
    buf = st.zeros(2, 3, device=device)
    buf[1] = st.ones(3, device=device)
    assert not buf.requires_grad and buf.is_leaf
    with st.no_grad():
        w = st.ones(3, device=device, requires_grad=True)
        buf[0] = w * 2
    assert not buf.requires_grad


def test_inplace_on_view_of_leaf_is_refused():
    x = st.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(st.SpiralError, match="view of a leaf"):
        x[0] = 3.0


def test_first_gradients_are_taken_without_aliasing_each_other(device):
    # A leaf's first gradient is the backward's own result when nothing else refers to it (no copy);
    # a gradient shared by two leaves (an add's backward hands the same tensor to both), a user's
    # seed gradient and a retained non-leaf gradient are copied, so later accumulation stays separate.
    a = tensor_on([1.0, 2.0, 3.0], requires_grad=True, device=device)
    b = tensor_on([4.0, 5.0, 6.0], requires_grad=True, device=device)
    (a + b).sum().backward()
    (a * 2.0).sum().backward()  # accumulates into a.grad only
    np.testing.assert_array_equal(to_np(a.grad), [3.0, 3.0, 3.0])
    np.testing.assert_array_equal(to_np(b.grad), [1.0, 1.0, 1.0])

    seed = tensor_on([1.0, 1.0, 1.0], device=device)
    c = tensor_on([1.0, 1.0, 1.0], requires_grad=True, device=device)
    c.backward(seed)
    c.backward(seed)
    np.testing.assert_array_equal(to_np(seed), [1.0, 1.0, 1.0])
    np.testing.assert_array_equal(to_np(c.grad), [2.0, 2.0, 2.0])

    d = tensor_on([1.0, 2.0], requires_grad=True, device=device)
    h = d * 3.0
    h.retain_grad()
    (h + d).sum().backward()  # h's gradient flows on to d: the two .grad buffers stay apart
    (d * 5.0).sum().backward()
    np.testing.assert_array_equal(to_np(h.grad), [1.0, 1.0])
    np.testing.assert_array_equal(to_np(d.grad), [9.0, 9.0])


def test_transposed_weight_gradient_arrives_contiguous_and_exact(device):
    rng = np.random.default_rng(5)
    x_np, w_np = rng.standard_normal((4, 3)), rng.standard_normal((5, 3))
    w = tensor_on(w_np, dtype=st.float64, requires_grad=True, device=device)
    x = tensor_on(x_np, dtype=st.float64, device=device)
    (x @ w.t()).sum().backward()
    assert w.grad.is_contiguous()
    np.testing.assert_allclose(to_np(w.grad), np.ones((4, 5)).T @ x_np, rtol=1e-12)
    (x @ w.t()).sum().backward()
    np.testing.assert_allclose(to_np(w.grad), 2 * np.ones((4, 5)).T @ x_np, rtol=1e-12)
