"""PyTorch tensor functions composed from native ops (spiraltorch/_torch_compat_ops.py): values against
torch (and NumPy) side by side on the same data, gradients against torch's autograd, errors by type."""

from __future__ import annotations

import numpy as np
import pytest

import spiraltorch as st

torch = pytest.importorskip("torch")

R = np.random.default_rng(0).standard_normal
NAN = float("nan")
INF = float("inf")


def pair(a, grad=False, dtype=None):
    a = np.asarray(a) if dtype is None else np.asarray(a, dtype=dtype)
    s, t = st.tensor(a), torch.tensor(a)
    if grad:
        s.requires_grad_(True)
        t.requires_grad_(True)
    return s, t


def close(s, t, tol=1e-10):
    if isinstance(t, (tuple, list)):
        assert len(s) == len(t)
        for a, b in zip(s, t):
            close(a, b, tol)
        return
    tn = t.detach().numpy() if isinstance(t, torch.Tensor) else np.asarray(t)
    sn = np.asarray(s.tolist()).reshape(tuple(s.shape)) if isinstance(s, st.Tensor) else np.asarray(s)
    assert sn.shape == tn.shape, (sn.shape, tn.shape)
    np.testing.assert_allclose(sn.astype(np.float64), tn.astype(np.float64), rtol=tol, atol=tol, equal_nan=True)


def grads(fs, ft, *arrays, tol=1e-9):
    """Values and input gradients of fs (spiraltorch) and ft (torch) under the same random weighting."""
    ps = [pair(a, grad=True) for a in arrays]
    ys, yt = fs(*[p[0] for p in ps]), ft(*[p[1] for p in ps])
    close(ys, yt, tol)
    w = R(tuple(yt.shape))
    (ys * st.tensor(w)).sum().backward()
    (yt * torch.tensor(w)).sum().backward()
    for s, t in ps:
        close(s.grad, t.grad, tol)


def same_dtype(s, t):
    assert str(s.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]


# ------------------------------------------------------------------ dimension shuffles


@pytest.mark.parametrize("src,dst", [(0, 2), (-1, 0), ((0, 1), (2, 0)), ([1], [-1])])
def test_movedim_moveaxis(src, dst):
    grads(lambda x: st.movedim(x, src, dst), lambda x: torch.movedim(x, src, dst), R((2, 3, 4)))
    s, t = pair(R((2, 3, 4)))
    close(st.moveaxis(s, src, dst), torch.moveaxis(t, src, dst))
    close(s.movedim(src, dst), t.movedim(src, dst))
    close(s.moveaxis(src, dst), t.moveaxis(src, dst))


def test_movedim_errors():
    s = st.zeros((2, 3))
    with pytest.raises(IndexError, match="movedim"):
        st.movedim(s, 2, 0)
    with pytest.raises(ValueError, match="movedim"):
        st.movedim(s, (0, 1), 0)
    with pytest.raises(ValueError, match="repeats"):
        st.movedim(s, (0, 0), (0, 1))


def test_swapaxes_swapdims_unbind():
    s, t = pair(R((2, 3, 4)))
    close(st.swapaxes(s, 0, 2), torch.swapaxes(t, 0, 2))
    close(st.swapdims(s, 1, -1), torch.swapdims(t, 1, -1))
    close(s.swapaxes(0, 1), t.swapaxes(0, 1))
    close(s.swapdims(0, 1), t.swapdims(0, 1))
    for d in (0, 1, -1):
        close(st.unbind(s, d), torch.unbind(t, d))
    close(s.unbind(), t.unbind())
    with pytest.raises(IndexError, match="unbind"):
        st.unbind(st.tensor(1.0))


@pytest.mark.parametrize("arg", [3, 4, 7, [1, 4], [2, 2, 5], [-2], [0, 10], st.tensor(2)])
def test_tensor_split(arg):
    s, t = pair(R((5, 2)))
    targ = torch.tensor(arg.item()) if isinstance(arg, st.Tensor) else arg
    close(st.tensor_split(s, arg), torch.tensor_split(t, targ))
    s2, t2 = pair(R((2, 7)))
    close(s2.tensor_split(arg, 1), t2.tensor_split(targ, 1))
    with pytest.raises(ValueError, match="tensor_split: number of sections"):
        st.tensor_split(s, 0)


def test_unflatten():
    s, t = pair(R((2, 12)))
    close(st.unflatten(s, 1, (3, 4)), torch.unflatten(t, 1, (3, 4)))
    close(s.unflatten(-1, (2, -1, 3)), t.unflatten(-1, (2, -1, 3)))
    with pytest.raises(ValueError, match=r"unflatten: sizes \(5, 2\) multiply to 10"):
        st.unflatten(s, 1, (5, 2))
    with pytest.raises(ValueError, match="only one"):
        st.unflatten(s, 1, (-1, -1))


def test_take_along_dim_values_and_gradient():
    a = R((3, 4))
    idx = np.argsort(a, axis=1)[:, :2]
    s, t = pair(a, grad=True)
    si, ti = st.tensor(idx), torch.tensor(idx)
    ys, yt = st.take_along_dim(s, si, 1), torch.take_along_dim(t, ti, 1)
    close(ys, yt)
    ys.sum().backward()
    yt.sum().backward()
    close(s.grad, t.grad)
    close(s.take_along_dim(si), t.take_along_dim(ti))  # flattened
    bi = np.array([[0], [2], [1]])  # broadcast over dim 1
    close(st.take_along_dim(st.tensor(a), st.tensor(bi), 0), torch.take_along_dim(torch.tensor(a), torch.tensor(bi), 0))
    with pytest.raises(TypeError, match="take_along_dim"):
        st.take_along_dim(st.tensor(a), st.tensor([[0.5]]), 0)


def test_clone_function():
    s, t = pair(R((2, 3)), grad=True)
    c = st.clone(s)
    close(c, torch.clone(t))
    (c * 2).sum().backward()
    close(s.grad, np.full((2, 3), 2.0))


# ------------------------------------------------------------------ products


def test_outer_kron_tensordot_trace_values_and_gradients():
    grads(st.outer, torch.outer, R(3), R(4))
    grads(lambda a, b: a.outer(b), lambda a, b: a.outer(b), R(2), R(5))
    for sa, sb in [((2, 3), (4, 5)), ((3,), (2, 2)), ((2, 1, 2), (3, 2)), ((2,), (3,))]:
        grads(st.kron, torch.kron, R(sa), R(sb))
    ia, ib = np.arange(6).reshape(2, 3), np.arange(4).reshape(2, 2)
    close(st.kron(st.tensor(ia), st.tensor(ib)), torch.kron(torch.tensor(ia), torch.tensor(ib)))
    close(st.kron(st.tensor(ia), st.tensor(ib)), np.kron(ia, ib))
    for sa, sb, dims in [((2, 3, 4), (3, 4, 5), 2), ((2, 3), (3, 2), 1), ((2, 3), (4,), 0),
                         ((3, 4, 5), (4, 3, 2), ([0, 1], [1, 0])), ((3, 4), (5, 3), ([0], [1]))]:
        grads(lambda a, b: st.tensordot(a, b, dims), lambda a, b: torch.tensordot(a, b, dims), R(sa), R(sb))
    close(st.tensordot(st.tensor(R((2, 3))), st.tensor(R((3, 2))), 1).shape, (2, 2))
    with pytest.raises(ValueError, match="tensordot: dim 1 of a"):
        st.tensordot(st.zeros((2, 3)), st.zeros((4, 5)), 1)
    for shape in [(3, 3), (2, 4), (5, 2)]:
        grads(st.trace, torch.trace, R(shape))
    si, ti = pair(np.arange(12).reshape(3, 4))
    close(st.trace(si), torch.trace(ti))
    same_dtype(st.trace(si), torch.trace(ti))
    with pytest.raises(ValueError, match=r"trace: expected a 2-D matrix, got shape \(3,\)"):
        st.trace(st.zeros(3))
    with pytest.raises(ValueError, match="outer"):
        st.outer(st.zeros((2, 2)), st.zeros(2))


@pytest.mark.parametrize("sa,sb,dim", [((3,), (3,), 0), ((4, 3), (4, 3), 1), ((3, 5), (3, 1), 0),
                                       ((2, 3, 4), (2, 3, 4), None), ((2, 4, 3), (1, 4, 3), -1)])
def test_cross(sa, sb, dim):
    kw = {} if dim is None else {"dim": dim}
    grads(lambda a, b: st.cross(a, b, **kw), lambda a, b: torch.cross(a, b, **({"dim": 1} if dim is None else kw)),
          R(sa), R(sb))
    a, b = R((4, 3)), R((4, 3))
    close(st.tensor(a).cross(st.tensor(b), dim=1), np.cross(a, b))
    with pytest.raises(ValueError, match="cross: dimension 0 of shape"):
        st.cross(st.zeros((4, 3)), st.zeros((4, 3)), dim=0)


# ------------------------------------------------------------------ scans


@pytest.mark.parametrize("n,dim,pre,app", [(1, -1, False, False), (2, -1, False, False), (1, 0, True, False),
                                           (3, 1, True, True), (0, 0, False, False), (7, -1, False, False)])
def test_diff(n, dim, pre, app):
    x = R((4, 5))
    p = R((4, 2)) if dim != 0 else R((1, 5))
    a = R((4, 1)) if dim != 0 else R((2, 5))
    ps, pt = (st.tensor(p), torch.tensor(p)) if pre else (None, None)
    as_, at = (st.tensor(a), torch.tensor(a)) if app else (None, None)
    grads(lambda v: st.diff(v, n, dim, ps, as_), lambda v: torch.diff(v, n, dim, pt, at), x)
    si, ti = pair(np.array([[1, 4, 9, 16], [2, 2, 7, 0]]))
    close(si.diff(dim=1), ti.diff(dim=1))
    sb, tb = pair(np.array([True, False, False, True]))
    close(st.diff(sb), torch.diff(tb))
    same_dtype(st.diff(sb), torch.diff(tb))


@pytest.mark.parametrize("shape,dim", [((7,), 0), ((3, 5), 1), ((4, 3), 0), ((2, 9, 2), 1), ((1,), 0), ((16,), 0)])
def test_cumprod_values_and_gradient(shape, dim):
    grads(lambda x: st.cumprod(x, dim), lambda x: torch.cumprod(x, dim), R(shape))
    x = R(shape)
    close(st.tensor(x).cumprod(dim), np.cumprod(x, axis=dim))


def test_cumprod_zeros_gradient_and_integers():
    for v in ([2.0, 0.0, 3.0, 4.0], [0.0, 0.0, 2.0, -1.0], [1.5, -2.0, 0.0, 0.5, 3.0, 0.0]):
        grads(lambda x: st.cumprod(x, 0), lambda x: torch.cumprod(x, 0), np.array(v))
    si, ti = pair(np.array([[1, 2, 3], [4, 0, -2]]))
    close(st.cumprod(si, 1), torch.cumprod(ti, 1))
    same_dtype(st.cumprod(si, 1), torch.cumprod(ti, 1))
    si, ti = pair(np.array([1, 2, 3], dtype=np.int32))
    same_dtype(st.cumprod(si, 0), torch.cumprod(ti, 0))
    with pytest.raises(IndexError, match="cumprod"):
        st.cumprod(st.zeros(3), 1)


@pytest.mark.parametrize("shape,dim", [((6,), 0), ((3, 5), 1), ((5, 3), 0), ((2, 11), -1)])
def test_logcumsumexp(shape, dim):
    grads(lambda x: st.logcumsumexp(x, dim), lambda x: torch.logcumsumexp(x, dim), R(shape) * 30)
    x = np.array([-INF, 1.0, -INF, 1000.0, -1000.0])
    close(st.logcumsumexp(st.tensor(x), 0), torch.logcumsumexp(torch.tensor(x), 0))
    s, t = pair(np.array([1, 2, 3]))
    close(s.logcumsumexp(0), t.float().logcumsumexp(0), 1e-6)


@pytest.mark.parametrize("fn", ["cummax", "cummin"])
def test_cummax_cummin(fn):
    for x, dim in [(R((3, 7)), 1), (R((6, 2)), 0), (np.array([1.0, 3.0, 3.0, 2.0, 5.0, 5.0, 0.0]), 0),
                   (np.array([2.0, NAN, 1.0, NAN, 3.0]), 0), (np.array([[3, 1, 3, 4, 1]]), 1)]:
        s, t = pair(x)
        vs, is_ = getattr(st, fn)(s, dim)
        vt, it = getattr(torch, fn)(t, dim)
        close(vs, vt)
        close(is_, it)
        same_dtype(vs, vt)
    grads(lambda x: getattr(st, fn)(x, 1).values, lambda x: getattr(torch, fn)(x, 1).values, R((3, 9)))
    close(getattr(st.tensor([1.0, 2.0]), fn)(0).indices, getattr(torch.tensor([1.0, 2.0]), fn)(0).indices)


def test_cummax_cummin_named_fields():
    s, t = pair(np.array([[2.0, 1.0, 4.0], [0.0, 3.0, 3.0]]))
    close(st.cummax(s, 1).values, torch.cummax(t, 1).values)
    close(st.cummin(s, 0).indices, torch.cummin(t, 0).indices)


# ------------------------------------------------------------------ statistics


@pytest.mark.parametrize("dim,correction,keepdim", [(None, 1, False), (1, 0, False), ((0, 2), 1, True), (-1, 2, False)])
def test_std_mean_var_mean(dim, correction, keepdim):
    s, t = pair(R((3, 4, 5)))
    close(st.std_mean(s, dim, correction=correction, keepdim=keepdim),
          torch.std_mean(t, dim, correction=correction, keepdim=keepdim))
    close(st.var_mean(s, dim, correction=correction, keepdim=keepdim),
          torch.var_mean(t, dim, correction=correction, keepdim=keepdim))


@pytest.mark.parametrize("shape,dim,keepdim", [((7,), None, False), ((4, 6), None, False), ((5, 4), 0, False),
                                               ((3, 6), 1, True), ((2, 3, 5), -1, False), ((1,), 0, False)])
def test_median_lower_rule_and_gradient(shape, dim, keepdim):
    x = R(shape)
    s, t = pair(x)
    if dim is None:
        close(st.median(s), torch.median(t))
        grads(st.median, torch.median, x)
    else:
        vs, is_ = st.median(s, dim, keepdim)
        vt, it = torch.median(t, dim, keepdim)
        close(vs, vt)
        close(is_, it)
        grads(lambda v: st.median(v, dim, keepdim).values, lambda v: torch.median(v, dim, keepdim).values, x)


def test_median_nan_and_nanmedian():
    x = np.array([[1.0, NAN, 3.0, 2.0], [4.0, 1.0, 2.0, 8.0], [NAN, NAN, NAN, NAN], [5.0, NAN, NAN, 0.0]])
    s, t = pair(x)
    close(st.median(s), torch.median(t))
    close(st.nanmedian(s), torch.nanmedian(t))
    close(st.median(s, 1).values, torch.median(t, 1).values)
    vs, is_ = st.nanmedian(s, 1)
    vt, it = torch.nanmedian(t, 1)
    close(vs, vt)
    close(is_[:2], it[:2])  # an all-NaN row's index is unspecified
    close(is_[3:], it[3:])
    si, ti = pair(np.array([[3, 1, 2, 2], [7, 5, 6, 9]]))
    close(si.median(1).values, ti.median(1).values)
    close(st.median(si), torch.median(ti))
    with pytest.raises(IndexError, match="median"):
        st.median(st.zeros(0))


@pytest.mark.parametrize("interp", ["linear", "lower", "higher", "midpoint", "nearest"])
@pytest.mark.parametrize("q", [0.5, 0.0, 1.0, 0.37, "tensor"])
@pytest.mark.parametrize("dim,keepdim", [(None, False), (1, False), (0, True), (None, True)])
def test_quantile_against_torch_and_numpy(interp, q, dim, keepdim):
    x = R((5, 6))
    s, t = pair(x)
    qs, qt = (st.tensor([0.1, 0.5, 0.75], dtype=st.float64), torch.tensor([0.1, 0.5, 0.75], dtype=torch.float64)) if q == "tensor" else (q, q)
    ys = st.quantile(s, qs, dim, keepdim, interpolation=interp)
    yt = torch.quantile(t, qt, dim, keepdim, interpolation=interp)
    close(ys, yt)
    if interp == "linear" and not keepdim:
        close(ys, np.quantile(x, [0.1, 0.5, 0.75] if q == "tensor" else q, axis=dim))


def test_quantile_gradient_nan_and_errors():
    grads(lambda v: st.quantile(v, 0.3, 1), lambda v: torch.quantile(v, 0.3, 1), R((4, 7)))
    grads(lambda v: st.quantile(v, st.tensor([0.2, 0.9], dtype=st.float64)), lambda v: torch.quantile(v, torch.tensor([0.2, 0.9],
          dtype=torch.float64)), R(9))
    x = np.array([[1.0, NAN, 3.0, 2.0, 7.0], [4.0, 1.0, 2.0, 8.0, 0.5], [NAN] * 5])
    s, t = pair(x)
    for q in (0.25, 0.5, 0.9):
        close(st.quantile(s, q, 1), torch.quantile(t, q, 1))
        close(st.nanquantile(s, q, 1), torch.nanquantile(t, q, 1))
        close(s.nanquantile(q), t.nanquantile(q))
    close(st.nanquantile(s, 0.4, 1)[:2], np.nanquantile(x[:2], 0.4, axis=1))
    s32, t32 = pair(R(10), dtype=np.float32)
    close(st.quantile(s32, 0.3), torch.quantile(t32, 0.3), 1e-6)
    with pytest.raises(ValueError, match=r"quantile: q values must be in the range \[0, 1\]"):
        st.quantile(s, 1.5)
    with pytest.raises(TypeError, match="quantile: input must be float32 or float64"):
        st.quantile(st.tensor([1, 2]), 0.5)
    with pytest.raises(ValueError, match="interpolation"):
        st.quantile(s, 0.5, interpolation="cubic")


def test_mode_kthvalue_aminmax():
    x = np.array([[1, 2, 2, 3, 3, 0], [5, 5, 4, 4, 4, 1], [7, 6, 5, 4, 3, 2]])
    s, t = pair(x)
    for dim in (1, 0, -1):
        vs, is_ = st.mode(s, dim)
        vt, it = torch.mode(t, dim)
        close(vs, vt)
        close(is_, it)
    vs, is_ = s.mode(1, keepdim=True)
    vt, it = t.mode(1, keepdim=True)
    close(vs, vt)
    close(is_, it)
    f = np.array([[0.5, 1.5, 0.5, 2.0], [3.0, 3.0, 1.0, 1.0]])
    grads(lambda v: st.mode(v, 1).values, lambda v: torch.mode(v, 1).values, f)
    y = R((4, 6))
    for k, dim, keepdim in [(1, 1, False), (3, 1, True), (4, 0, False), (6, -1, False)]:
        ss, tt = pair(y)
        vs, is_ = st.kthvalue(ss, k, dim, keepdim)
        vt, it = torch.kthvalue(tt, k, dim, keepdim)
        close(vs, vt)
        close(is_, it)
        grads(lambda v: st.kthvalue(v, k, dim, keepdim).values, lambda v: torch.kthvalue(v, k, dim, keepdim).values, y)
    with pytest.raises(IndexError, match="kthvalue: k=7 is out of range"):
        st.kthvalue(st.tensor(y), 7, 1)
    for dim, keepdim in [(None, False), (0, False), (1, True), (None, True)]:
        ss, tt = pair(y)
        ms, mt = st.aminmax(ss, dim=dim, keepdim=keepdim), torch.aminmax(tt, dim=dim, keepdim=keepdim)
        close(ms.min, mt.min)
        close(ms.max, mt.max)
    close(st.tensor(x).aminmax().max, torch.tensor(x).aminmax().max)


def test_count_nonzero():
    x = np.array([[0, 1, 2], [0, 0, 3]])
    s, t = pair(x)
    close(st.count_nonzero(s), torch.count_nonzero(t))
    close(st.count_nonzero(s, 0), torch.count_nonzero(t, 0))
    close(s.count_nonzero((0, 1)), t.count_nonzero((0, 1)))
    same_dtype(st.count_nonzero(s), torch.count_nonzero(t))
    close(st.count_nonzero(st.tensor([NAN, 0.0, -0.0, 1.0])), torch.count_nonzero(torch.tensor([NAN, 0.0, -0.0, 1.0])))


@pytest.mark.parametrize("fw,aw,correction", [(False, False, 1), (True, False, 1), (False, True, 0),
                                              (True, True, 1), (False, False, 0)])
def test_cov_corrcoef(fw, aw, correction):
    x = R((3, 8))
    f = np.array([1, 2, 1, 3, 1, 1, 2, 1])
    a = np.abs(R(8)) + 0.1
    kws = {"correction": correction, "fweights": st.tensor(f) if fw else None, "aweights": st.tensor(a) if aw else None}
    kwt = {"correction": correction, "fweights": torch.tensor(f) if fw else None,
           "aweights": torch.tensor(a) if aw else None}
    grads(lambda v: st.cov(v, **kws), lambda v: torch.cov(v, **kwt), x)
    close(st.cov(st.tensor(x), correction=correction), np.cov(x, ddof=correction))
    grads(st.corrcoef, torch.corrcoef, x)
    close(st.corrcoef(st.tensor(x)), np.corrcoef(x))
    close(st.cov(st.tensor(x[0])), torch.cov(torch.tensor(x[0])))
    si, ti = pair(np.array([[1, 2, 4], [3, 1, 0]]))
    close(si.cov(), ti.cov(), 1e-6)
    with pytest.raises(ValueError, match="cov: fweights cannot be negative"):
        st.cov(st.tensor(x), fweights=st.tensor(-f))
    with pytest.raises(ValueError, match="cov: expected a 1-D or 2-D input"):
        st.cov(st.zeros((2, 2, 2)))


# ------------------------------------------------------------------ elementwise


def test_nan_to_num():
    x = np.array([1.0, NAN, INF, -INF, -2.5])
    for kw in ({}, {"nan": 2.0}, {"nan": -1.0, "posinf": 9.0, "neginf": -9.0}):
        grads(lambda v: st.nan_to_num(v, **kw), lambda v: torch.nan_to_num(v, **kw), x)
        s32, t32 = pair(x, dtype=np.float32)
        close(st.nan_to_num(s32, **kw), torch.nan_to_num(t32, **kw))
        close(st.nan_to_num(st.tensor(x), **kw), np.nan_to_num(x, **kw))
    si, ti = pair(np.array([1, 2]))
    close(si.nan_to_num(), ti.nan_to_num())
    s = st.tensor(x)
    s.nan_to_num_()
    close(s, torch.nan_to_num(torch.tensor(x)))


def test_heaviside_hypot_fmod_frac():
    x = np.array([-1.5, 0.0, 2.0, 0.0, NAN])
    v = np.array([0.5, 0.25, 0.5, 1.0, 0.5])
    close(st.heaviside(st.tensor(x), st.tensor(v)), torch.heaviside(torch.tensor(x), torch.tensor(v)))
    close(st.tensor(x).heaviside(st.tensor(0.5, dtype=st.float64)), torch.tensor(x).heaviside(torch.tensor(0.5, dtype=torch.float64)))
    with pytest.raises(TypeError, match="heaviside"):
        st.heaviside(st.tensor(x), st.tensor([1], dtype=st.int64))
    grads(st.hypot, torch.hypot, R((3, 4)), R((1, 4)))
    a = np.array([3e30, 0.0, INF, -4.0, NAN, 1e-30])
    b = np.array([4e30, 0.0, 1.0, NAN, INF, 1e-30])
    s32 = st.hypot(st.tensor(a, dtype=st.float32), st.tensor(b, dtype=st.float32))
    t32 = torch.hypot(torch.tensor(a, dtype=torch.float32), torch.tensor(b, dtype=torch.float32))
    close(s32, t32, 1e-6)
    close(st.hypot(st.tensor(a), st.tensor(b)), np.hypot(a, b))
    num = np.array([-7.0, 7.0, -7.0, 7.0, 5.5, -5.5, 0.0])
    den = np.array([3.0, -3.0, -3.0, 3.0, 2.0, 2.0, 3.0])
    close(st.fmod(st.tensor(num), st.tensor(den)), torch.fmod(torch.tensor(num), torch.tensor(den)))
    close(st.fmod(st.tensor(num), st.tensor(den)), np.fmod(num, den))
    close(st.remainder(st.tensor(num), st.tensor(den)), torch.remainder(torch.tensor(num), torch.tensor(den)))
    close(st.fmod(st.tensor(num), 2.5), torch.fmod(torch.tensor(num), 2.5))
    ni, di = np.array([-7, 7, -7, 7, 6]), np.array([3, -3, -3, 3, 3])
    close(st.fmod(st.tensor(ni), st.tensor(di)), torch.fmod(torch.tensor(ni), torch.tensor(di)))
    with pytest.raises(ValueError, match="fmod: integer division by zero"):
        st.fmod(st.tensor(ni), 0)
    grads(st.fmod, torch.fmod, num[:6], den[:6])
    grads(st.frac, torch.frac, np.array([-2.75, -0.5, 0.0, 1.25, 3.0]))
    with pytest.raises(TypeError, match="frac"):
        st.frac(st.tensor([1, 2]))


def test_xlogy_logit_sinc():
    x = np.array([0.0, 0.0, 2.0, 1.5, 0.0, 3.0])
    y = np.array([0.0, 2.0, 3.0, 0.5, NAN, 0.0])
    x, y = np.concatenate([x, [0.0, 1.0]]), np.concatenate([y, [INF, INF]])
    close(st.xlogy(st.tensor(x), st.tensor(y)), torch.xlogy(torch.tensor(x), torch.tensor(y)))
    xs = np.array([0.0, 0.0, 2.0, 1.5])
    ys = np.array([2.0, 0.5, 3.0, 0.5])
    grads(st.xlogy, torch.xlogy, xs, ys)  # x = 0: gradient log(y) for x, 0 for y
    close(st.xlogy(2.0, st.tensor(ys)), torch.xlogy(2.0, torch.tensor(ys)))
    close(st.tensor(xs).xlogy(3.0), torch.tensor(xs).xlogy(3.0))
    close(st.xlogy(st.tensor([0, 1, 2]), st.tensor([2, 2, 2])), torch.xlogy(torch.tensor([0, 1, 2]),
                                                                              torch.tensor([2, 2, 2])), 1e-6)
    p = np.array([0.0, 1e-4, 0.3, 0.5, 0.99, 1.0])
    close(st.logit(st.tensor(p)), torch.logit(torch.tensor(p)))
    grads(lambda v: st.logit(v, 0.01), lambda v: torch.logit(v, 0.01), p[1:5].copy())
    grads(st.logit, torch.logit, p[1:5].copy())
    close(st.tensor(p).logit(1e-3), torch.tensor(p).logit(1e-3))
    z = np.array([0.0, 0.5, -1.0, 1.0, 2.3, -7.25, 1e-9])
    grads(st.sinc, torch.sinc, z)
    close(st.sinc(st.tensor(z)), np.sinc(z))
    close(st.sinc(st.tensor([0, 1, 2])), torch.sinc(torch.tensor([0, 1, 2])), 1e-6)


# ------------------------------------------------------------------ constructors


@pytest.mark.parametrize("k,dims", [(1, (0, 1)), (2, (0, 1)), (3, (0, 1)), (-1, (1, 0)), (4, (0, 1)), (5, (1, 2))])
def test_rot90(k, dims):
    grads(lambda v: st.rot90(v, k, dims), lambda v: torch.rot90(v, k, dims), R((2, 3, 4)))
    close(st.tensor(np.arange(6).reshape(2, 3)).rot90(k, (0, 1)), np.rot90(np.arange(6).reshape(2, 3), k, (0, 1)))


def test_block_diag_cartesian_prod_combinations():
    a, b, c = R((2, 3)), R(2), np.array(5.0)
    grads(st.block_diag, torch.block_diag, a, b, c)
    close(st.block_diag(st.tensor([[1, 2]]), st.tensor([3])), torch.block_diag(torch.tensor([[1, 2]]), torch.tensor([3])))
    with pytest.raises(ValueError, match="block_diag: input 0 has 3 dimensions"):
        st.block_diag(st.zeros((1, 1, 1)))
    x, y, z = [1, 2, 3], [4, 5], [6, 7]
    close(st.cartesian_prod(st.tensor(x), st.tensor(y), st.tensor(z)),
          torch.cartesian_prod(torch.tensor(x), torch.tensor(y), torch.tensor(z)))
    close(st.cartesian_prod(st.tensor(x)), torch.cartesian_prod(torch.tensor(x)))
    grads(lambda u, v: st.cartesian_prod(u, v), lambda u, v: torch.cartesian_prod(u, v), R(3), R(2))
    for r in (0, 1, 2, 3, 5):
        for rep in (False, True):
            s, t = pair(np.array([1.0, 2.0, 4.0, 8.0]))
            close(st.combinations(s, r, rep), torch.combinations(t, r, rep))
    grads(lambda v: st.combinations(v, 2), lambda v: torch.combinations(v, 2), R(4))


@pytest.mark.parametrize("row,col,offset", [(3, 3, 0), (4, 3, 1), (3, 5, -1), (0, 3, 0), (4, 4, 10), (5, 2, -3)])
def test_tril_triu_indices(row, col, offset):
    close(st.tril_indices(row, col, offset), torch.tril_indices(row, col, offset))
    close(st.triu_indices(row, col, offset), torch.triu_indices(row, col, offset))
    same_dtype(st.tril_indices(row, col, offset), torch.tril_indices(row, col, offset))
    assert st.tril_indices(row, col, offset, dtype=st.int32).dtype == st.int32


def test_logspace_and_as_tensor():
    for args in [(0, 3, 4), (-2.0, 2.0, 5, 2.0), (1, 1, 1), (0, 1, 0)]:
        close(st.logspace(*args), torch.logspace(*args), 1e-6)
        close(st.logspace(*args, dtype=st.float64), torch.logspace(*args, dtype=torch.float64))
    assert st.logspace(0, 1, 3).dtype == st.float32
    t = st.tensor([1.0, 2.0])
    assert st.as_tensor(t) is t
    assert st.as_tensor(t, dtype=st.float64).dtype == st.float64
    a = np.arange(3, dtype=np.float64)
    s = st.as_tensor(a)
    a[0] = 9.0  # shared with the array, as torch.as_tensor
    assert s.tolist() == [9.0, 1.0, 2.0]
    close(st.as_tensor([[1, 2], [3, 4]]), torch.as_tensor([[1, 2], [3, 4]]))
    assert st.as_tensor([1, 2], dtype=st.float32).dtype == st.float32


# ------------------------------------------------------------------ counting


@pytest.mark.parametrize("right", [False, True])
def test_bucketize_searchsorted(right):
    bnd = np.array([1.0, 3.0, 5.0, 7.0, 9.0])
    x = np.array([[0.0, 1.0, 3.0, 6.0], [9.0, 10.0, NAN, 5.0]])
    close(st.bucketize(st.tensor(x), st.tensor(bnd), right=right),
          torch.bucketize(torch.tensor(x), torch.tensor(bnd), right=right))
    close(st.bucketize(st.tensor([1, 5, 8]), st.tensor([2, 5, 7]), right=right),
          torch.bucketize(torch.tensor([1, 5, 8]), torch.tensor([2, 5, 7]), right=right))
    out = st.bucketize(st.tensor(x), st.tensor(bnd), out_int32=True, right=right)
    assert out.dtype == st.int32
    seq = np.array([[1.0, 3.0, 5.0, 7.0], [2.0, 4.0, 6.0, 8.0]])
    v = np.array([[3.0, 6.0, 9.0], [3.0, 6.0, 0.0]])
    side = "right" if right else "left"
    close(st.searchsorted(st.tensor(seq), st.tensor(v), right=right),
          torch.searchsorted(torch.tensor(seq), torch.tensor(v), right=right))
    close(st.searchsorted(st.tensor(seq), st.tensor(v), side=side),
          torch.searchsorted(torch.tensor(seq), torch.tensor(v), side=side))
    close(st.searchsorted(st.tensor(bnd), st.tensor(x), right=right), np.searchsorted(bnd, x, side=side))
    close(st.searchsorted(st.tensor(bnd), 5.0, right=right), torch.searchsorted(torch.tensor(bnd), 5.0, right=right))
    close(st.searchsorted(st.tensor([1, 3, 5, 6]), 5.5, right=right),
          torch.searchsorted(torch.tensor([1, 3, 5, 6]), 5.5, right=right))
    unsorted = np.array([5.0, 1.0, 9.0, 3.0])
    sorter = np.argsort(unsorted)
    close(st.searchsorted(st.tensor(unsorted), st.tensor([4.0, 9.0]), sorter=st.tensor(sorter), right=right),
          torch.searchsorted(torch.tensor(unsorted), torch.tensor([4.0, 9.0]), sorter=torch.tensor(sorter), right=right))


def test_searchsorted_errors():
    with pytest.raises(ValueError, match="side='left' and right=True"):
        st.searchsorted(st.tensor([1.0]), st.tensor([1.0]), right=True, side="left")
    with pytest.raises(ValueError, match="agree in every dim"):
        st.searchsorted(st.zeros((2, 3)), st.zeros((3, 1)))
    with pytest.raises(ValueError, match="bucketize: boundaries must be 1-D"):
        st.bucketize(st.zeros(3), st.zeros((2, 2)))


def test_bincount_histc():
    x = np.array([0, 3, 1, 3, 3, 7])
    w = R(6)
    close(st.bincount(st.tensor(x)), torch.bincount(torch.tensor(x)))
    close(st.bincount(st.tensor(x), minlength=10), torch.bincount(torch.tensor(x), minlength=10))
    close(st.bincount(st.tensor(x), st.tensor(w)), torch.bincount(torch.tensor(x), torch.tensor(w)))
    close(st.tensor(x).bincount(), np.bincount(x))
    same_dtype(st.bincount(st.tensor(x)), torch.bincount(torch.tensor(x)))
    same_dtype(st.bincount(st.tensor(x), st.tensor(w)), torch.bincount(torch.tensor(x), torch.tensor(w)))
    close(st.bincount(st.tensor(np.zeros(0, dtype=np.int64)), minlength=3), torch.bincount(torch.zeros(0, dtype=torch.int64), minlength=3))
    with pytest.raises(ValueError, match="bincount: input must be non-negative"):
        st.bincount(st.tensor([1, -1]))
    with pytest.raises(TypeError, match="bincount: input must be an integer tensor"):
        st.bincount(st.tensor([1.0]))
    y = R(200)
    for args in [(10,), (7, -1.0, 1.0), (5, 0.0, 0.0), (4, 2.0, 3.0)]:
        close(st.histc(st.tensor(y), *args), torch.histc(torch.tensor(y), *args))
        close(st.histc(st.tensor(y, dtype=st.float32), *args), torch.histc(torch.tensor(y, dtype=torch.float32), *args))
    close(st.tensor([1.0, 1.0]).histc(4), torch.tensor([1.0, 1.0]).histc(4))
    with pytest.raises(ValueError, match="histc: max"):
        st.histc(st.tensor(y), 5, 2.0, 1.0)


# ------------------------------------------------------------------ sampling


def test_bernoulli_poisson_randint_like():
    p = np.array([0.0, 0.2, 0.5, 0.9, 1.0] * 2000)
    st.manual_seed(0)
    b = st.bernoulli(st.tensor(p))
    bn = np.asarray(b.tolist()).reshape(2000, 5)
    assert set(np.unique(bn)) <= {0.0, 1.0}
    np.testing.assert_allclose(bn.mean(0), [0.0, 0.2, 0.5, 0.9, 1.0], atol=0.03)
    g1, g2 = st.Generator(), st.Generator()
    g1.manual_seed(5)
    g2.manual_seed(5)
    assert st.bernoulli(st.tensor(p), generator=g1).tolist() == st.bernoulli(st.tensor(p), generator=g2).tolist()
    assert st.tensor(p).bernoulli(0.5).dtype == st.float64
    with pytest.raises(ValueError, match=r"bernoulli: probabilities must be in \[0, 1\]"):
        st.bernoulli(st.tensor([1.5]))
    rates = np.array([0.0, 0.5, 3.0, 40.0, 900.0])
    r = st.poisson(st.tensor(np.repeat(rates[None], 3000, 0)))
    rn = np.asarray(r.tolist())
    assert np.all(rn == np.round(rn)) and rn[:, 0].max() == 0
    np.testing.assert_allclose(rn.mean(0), rates, rtol=0.04, atol=0.05)
    np.testing.assert_allclose(rn.var(0), rates, rtol=0.1, atol=0.05)
    with pytest.raises(ValueError, match="poisson: rates must be non-negative"):
        st.poisson(st.tensor([-1.0]))
    x = st.zeros((3, 400), dtype=st.int32)
    ri = st.randint_like(x, 5)
    assert ri.dtype == st.int32 and tuple(ri.shape) == (3, 400)
    assert set(np.unique(np.asarray(ri.tolist()))) == {0, 1, 2, 3, 4}
    rf = st.randint_like(st.zeros(500), -2, 2)
    assert rf.dtype == st.float32 and set(np.unique(np.asarray(rf.tolist()))) == {-2.0, -1.0, 0.0, 1.0}
    with pytest.raises(ValueError, match="randint_like"):
        st.randint_like(x, 3, 3)


# ------------------------------------------------------------------ dtype and shape queries


def test_broadcast_shapes_and_tensors():
    for shapes in [((2, 1), (3,)), ((1,), (4, 1, 5), (2, 1)), ((), (3,)), (5, (2, 1))]:
        assert st.broadcast_shapes(*shapes) == tuple(torch.broadcast_shapes(*shapes))
    with pytest.raises(ValueError, match="broadcast_shapes"):
        st.broadcast_shapes((2,), (3,))
    a, b = R((3, 1)), R((1, 4))
    close(st.broadcast_tensors(st.tensor(a), st.tensor(b)), torch.broadcast_tensors(torch.tensor(a), torch.tensor(b)))


def test_dtype_queries():
    names = ["bool", "uint8", "int32", "int64", "float16", "bfloat16", "float32", "float64"]
    for x in names:
        for y in names:
            sx, sy, tx, ty = getattr(st, x), getattr(st, y), getattr(torch, x), getattr(torch, y)
            assert str(st.promote_types(sx, sy)).split(".")[-1] == str(torch.promote_types(tx, ty)).split(".")[-1], (x, y)
            assert st.can_cast(sx, sy) == torch.can_cast(tx, ty), (x, y)
    cases = [(st.tensor([1]), 1.5, torch.tensor([1]), 1.5), (st.tensor([1], dtype=st.int32), 5,
             torch.tensor([1], dtype=torch.int32), 5), (st.tensor([True]), 2, torch.tensor([True]), 2),
             (st.tensor([1.0]), st.tensor(2.0, dtype=st.float64), torch.tensor([1.0]), torch.tensor(2.0, dtype=torch.float64)),
             (st.tensor([1], dtype=st.uint8), st.tensor([1], dtype=st.int32), torch.tensor([1], dtype=torch.uint8),
              torch.tensor([1], dtype=torch.int32)), (st.tensor([True]), st.tensor([False]), torch.tensor([True]),
                                                        torch.tensor([False])), (1, 2.5, 1, 2.5)]
    for a, b, c, d in cases:
        assert str(st.result_type(a, b)).split(".")[-1] == str(torch.result_type(c, d)).split(".")[-1], (a, b)
    with pytest.raises(TypeError, match="promote_types"):
        st.promote_types("float32", st.float32)
    s = st.zeros((2, 3))
    assert st.is_tensor(s) and not st.is_tensor(np.zeros(2)) and not st.is_tensor([1])
    assert st.is_floating_point(s) and not st.is_floating_point(st.tensor([1]))
    assert st.is_complex(s) is False and s.is_complex() is False
    assert st.numel(s) == 6 == torch.numel(torch.zeros(2, 3))
    assert st.get_default_dtype() == st.float32


def test_in_place_variants_and_failure_leaves_input_unchanged():
    x = np.array([[0.5, -1.5, 2.0], [3.0, 0.25, -0.75]])
    for name, args in [("cumprod_", (1,)), ("hypot_", (torch.tensor(2.0, dtype=torch.float64),)), ("frac_", ()),
                       ("sinc_", ()), ("logit_", (0.1,)), ("fmod_", (1.25,)), ("xlogy_", (3.0,))]:
        s, t = st.tensor(x), torch.tensor(x)
        sargs = tuple(st.tensor(a.item(), dtype=st.float64) if isinstance(a, torch.Tensor) else a for a in args)
        assert getattr(s, name)(*sargs) is s
        getattr(t, name)(*args)
        close(s, t)
    si = st.tensor([5, -3, 7])
    with pytest.raises(ValueError, match="fmod"):
        si.fmod_(0)
    assert si.tolist() == [5, -3, 7]
