"""Reductions, matmul and softmax against NumPy (and PyTorch where installed)."""

import numpy as np
import pytest

import spiraltorch as st
from conftest import (
    FLOAT_DTYPES,
    NUMERIC_DTYPES,
    assert_close,
    needs_torch,
    noncontig,
    np_dtype,
    rand_array,
    st_tensor,
    tensor_on,
    to_np,
)

RED_SHAPES = [(), (1,), (7,), (3, 4), (2, 3, 5), (4, 1, 3, 2), (1000,), (33, 65)]


def _dims_for(ndim):
    out = [None]
    if ndim >= 1:
        out += [0, -1]
    if ndim >= 2:
        out += [(0, 1), 1, (-1, 0)]
    if ndim >= 3:
        out += [(0, 2), (1, 2), (0, 1, 2)]
    return out


def _cases():
    for shape in RED_SHAPES:
        for dim in _dims_for(len(shape)):
            for keepdim in (False, True):
                yield shape, dim, keepdim


CASES = list(_cases())


def _np_axis(dim):
    return dim if dim is None or isinstance(dim, int) else tuple(dim)


@pytest.mark.parametrize("dtype", NUMERIC_DTYPES, ids=str)
@pytest.mark.parametrize("shape,dim,keepdim", CASES, ids=str)
def test_sum(shape, dim, keepdim, dtype, device):
    a = rand_array(shape, np_dtype(dtype), seed=1)
    kw = {} if dim is None else {"dim": dim}
    out = st_tensor(a, device=device).sum(keepdim=keepdim, **kw)
    expected = np.sum(a, axis=_np_axis(dim), keepdims=keepdim)
    # PyTorch: integer sums accumulate in int64
    expected = expected.astype(np.int64 if dtype in (st.int32, st.int64) else np_dtype(dtype))
    assert_close(out, expected, rtol=1e-5 if dtype == st.float32 else 1e-12, atol=1e-4 if dtype == st.float32 else 1e-12)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
@pytest.mark.parametrize("shape,dim,keepdim", CASES, ids=str)
def test_mean(shape, dim, keepdim, dtype, device):
    a = rand_array(shape, np_dtype(dtype), seed=2)
    kw = {} if dim is None else {"dim": dim}
    out = st.mean(st_tensor(a, device=device), keepdim=keepdim, **kw)
    expected = np.mean(a.astype(np.float64), axis=_np_axis(dim), keepdims=keepdim).astype(np_dtype(dtype))
    assert_close(out, expected, rtol=1e-5 if dtype == st.float32 else 1e-12, atol=1e-6 if dtype == st.float32 else 1e-12)


@pytest.mark.parametrize("dtype", NUMERIC_DTYPES, ids=str)
@pytest.mark.parametrize("shape,dim,keepdim", CASES, ids=str)
def test_amax_amin(shape, dim, keepdim, dtype, device):
    a = rand_array(shape, np_dtype(dtype), seed=3)
    kw = {} if dim is None else {"dim": dim}
    assert_close(st_tensor(a, device=device).amax(keepdim=keepdim, **kw),
                 np.amax(a, axis=_np_axis(dim), keepdims=keepdim))
    assert_close(st.amin(st_tensor(a, device=device), keepdim=keepdim, **kw),
                 np.amin(a, axis=_np_axis(dim), keepdims=keepdim))


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
@pytest.mark.parametrize("shape", [(67, 300), (300, 67), (3, 130, 33)])
def test_amax_amin_nan_and_inf_along_each_dim(shape, dtype, device):
    """Extremes along every dim (the CPU's row path and its column-block path, blocks of 128 rows
    and 256 columns with short edges): a NaN anywhere in a reduced line makes that result NaN,
    infinities win or lose as numbers; half types compared on their own values."""
    if dtype == "float64" and str(device).startswith("wgpu"):
        pytest.skip("wgpu has no float64 (WGSL)")
    g = np.random.default_rng(7)
    a = g.standard_normal(shape).astype(np.float32)
    flat = a.reshape(-1)
    flat[g.choice(flat.size, 5, replace=False)] = np.nan
    flat[g.choice(flat.size, 5, replace=False)] = np.inf
    flat[g.choice(flat.size, 5, replace=False)] = -np.inf
    x = st_tensor(a, device=device).to(getattr(st, dtype))
    ref = x.to(st.float32).to("cpu").numpy().astype(np.float64)  # the values the half type holds
    for dim in [None, *range(len(shape))]:
        kw = {} if dim is None else {"dim": dim}
        for name, fn in (("amax", np.max), ("amin", np.min)):
            got = getattr(x, name)(**kw).to(st.float32).to("cpu").numpy()
            np.testing.assert_array_equal(got, fn(ref, axis=dim).astype(np.float32), err_msg=f"{name} dim={dim}")


@pytest.mark.parametrize("dtype", NUMERIC_DTYPES, ids=str)
@pytest.mark.parametrize("shape,dim,keepdim", [c for c in CASES if np.prod(c[0], dtype=int) <= 64
                                                and (c[1] is None or isinstance(c[1], int))], ids=str)
def test_prod(shape, dim, keepdim, dtype, device):
    a = rand_array(shape, np_dtype(dtype), seed=4, low=0.5, high=1.5)
    if dtype in (st.int32, st.int64):
        a = (a % 3).astype(np_dtype(dtype))
    kw = {} if dim is None else {"dim": dim}
    out = st_tensor(a, device=device).prod(keepdim=keepdim, **kw)
    expected = np.prod(a, axis=_np_axis(dim), keepdims=keepdim)
    expected = expected.astype(np.int64 if dtype in (st.int32, st.int64) else np_dtype(dtype))
    assert_close(out, expected)


def _reduced_count(shape, dim):
    if dim is None:
        return int(np.prod(shape, dtype=int))
    return int(np.prod([shape[d] for d in np.atleast_1d(dim)], dtype=int))


@pytest.mark.parametrize("correction", [0, 1, 2])
@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
@pytest.mark.parametrize("shape,dim,keepdim", [c for c in CASES if _reduced_count(c[0], c[1]) > 2], ids=str)
def test_var_std(shape, dim, keepdim, dtype, correction, device):
    a = rand_array(shape, np_dtype(dtype), seed=5)
    kw = {} if dim is None else {"dim": dim}
    v = st.var(st_tensor(a, device=device), keepdim=keepdim, correction=correction, **kw)
    s = st_tensor(a, device=device).std(keepdim=keepdim, correction=correction, **kw)
    ax = _np_axis(dim)
    ev = np.var(a.astype(np.float64), axis=ax, ddof=correction, keepdims=keepdim).astype(np_dtype(dtype))
    es = np.std(a.astype(np.float64), axis=ax, ddof=correction, keepdims=keepdim).astype(np_dtype(dtype))
    tol = 1e-5 if dtype == st.float32 else 1e-12
    assert_close(v, ev, rtol=tol, atol=tol)
    assert_close(s, es, rtol=tol, atol=tol)


def test_var_unbiased_flag_and_default(device):
    a = rand_array((4, 6), np.float64, seed=6)
    t = st_tensor(a, device=device)
    assert_close(t.var(), np.var(a, ddof=1))
    assert_close(t.var(unbiased=False), np.var(a, ddof=0))
    assert_close(t.std(dim=1, unbiased=True), np.std(a, axis=1, ddof=1))
    assert_close(st.std(t, dim=0, unbiased=False, keepdim=True), np.std(a, axis=0, ddof=0, keepdims=True))


def test_var_of_single_element_is_nan(device):
    out = to_np(tensor_on([3.0], device=device).var())
    assert np.isnan(out)


def test_var_large_offset_is_numerically_stable(device):
    a = (1e6 + rand_array((10000,), np.float64, seed=7)).astype(np.float32)
    got = float(st_tensor(a, device=device).var())
    ref = float(np.var(a.astype(np.float64), ddof=1))
    assert abs(got - ref) / ref < 1e-2


@pytest.mark.parametrize("dtype", NUMERIC_DTYPES, ids=str)
@pytest.mark.parametrize("shape", [(7,), (3, 4), (2, 3, 5), (4, 1, 3, 2), (33, 65)], ids=str)
def test_max_min_with_dim(shape, dtype, device):
    a = rand_array(shape, np_dtype(dtype), seed=8)
    t = st_tensor(a, device=device)
    for dim in range(-len(shape), len(shape)):
        for keepdim in (False, True):
            r = t.max(dim=dim, keepdim=keepdim)
            values, indices = r
            assert r.values is values and r.indices is indices or (r.values.tolist() == values.tolist())
            assert indices.dtype == st.int64
            assert_close(values, np.max(a, axis=dim, keepdims=keepdim))
            # indices pick the maximum
            idx = to_np(indices)
            picked = np.take_along_axis(a, idx if keepdim else np.expand_dims(idx, dim), axis=dim)
            assert_close(picked if keepdim else np.squeeze(picked, dim), np.max(a, axis=dim, keepdims=keepdim))
            mv, mi = st.min(t, dim, keepdim)
            assert_close(mv, np.min(a, axis=dim, keepdims=keepdim))
            assert_close(mi, np.argmin(a, axis=dim, keepdims=keepdim).astype(np.int64))
            assert_close(t.argmax(dim=dim, keepdim=keepdim), np.argmax(a, axis=dim, keepdims=keepdim).astype(np.int64))
            assert_close(st.argmin(t, dim=dim, keepdim=keepdim),
                         np.argmin(a, axis=dim, keepdims=keepdim).astype(np.int64))


def test_max_min_ties_return_first_index(device):
    a = np.array([[1.0, 3.0, 3.0, 0.0], [2.0, 2.0, 2.0, 2.0]], dtype=np.float32)
    t = st_tensor(a, device=device)
    assert t.max(dim=1).indices.tolist() == [1, 0]
    assert t.argmax(dim=1).tolist() == [1, 0]
    assert t.min(dim=1).indices.tolist() == [3, 0]
    assert int(t.argmax()) == 1
    assert int(t.argmin()) == 3


def test_full_max_min_argmax(device):
    a = rand_array((5, 7), np.float32, seed=9)
    t = st_tensor(a, device=device)
    assert_close(t.max(), np.max(a))
    assert_close(st.min(t), np.min(a))
    assert t.argmax().tolist() == int(np.argmax(a))
    assert st.argmin(t).tolist() == int(np.argmin(a))
    assert t.max().ndim == 0


@pytest.mark.parametrize("kind", ["transpose", "slice"])
def test_reductions_noncontiguous(kind, device):
    a = rand_array((6, 10), np.float64, seed=10)
    v = noncontig(a, kind, device=device)
    assert_close(v.sum(), np.sum(a))
    assert_close(v.sum(dim=0), np.sum(a, axis=0))
    assert_close(v.sum(dim=1, keepdim=True), np.sum(a, axis=1, keepdims=True))
    assert_close(v.mean(dim=0), np.mean(a, axis=0))
    assert_close(v.amax(dim=1), np.amax(a, axis=1))
    assert_close(v.prod(dim=0), np.prod(a, axis=0))
    assert_close(v.var(dim=1), np.var(a, axis=1, ddof=1))
    assert_close(v.max(dim=0).indices, np.argmax(a, axis=0).astype(np.int64))
    assert_close(st.logsumexp(v, dim=1), np.log(np.sum(np.exp(a), axis=1)))
    assert_close(v.norm(), np.linalg.norm(a))
    # a permuted 3-d view
    b = rand_array((3, 4, 5), np.float64, seed=11)
    p = st_tensor(b, device=device).permute(2, 0, 1)
    assert_close(p.sum(dim=(0, 2)), np.transpose(b, (2, 0, 1)).sum(axis=(0, 2)))


def test_empty_reductions(device):
    e = st.zeros(0, 3, device=device)
    assert_close(e.sum(), np.float32(0))
    assert_close(e.sum(dim=0), np.zeros(3, np.float32))
    assert_close(e.sum(dim=1), np.zeros(0, np.float32))
    assert_close(e.prod(dim=0), np.ones(3, np.float32))
    assert_close(st.prod(e), np.float32(1))
    assert np.isnan(to_np(e.mean()))
    assert_close(e.amax(dim=1), np.zeros(0, np.float32))
    assert bool(st.all(e)) is True
    assert bool(st.any(e)) is False
    assert_close(st.zeros(0, dtype=st.int64, device=device).sum(), np.int64(0))


def test_empty_max_raises():
    with pytest.raises((st.SpiralError, ValueError, IndexError, RuntimeError)):
        st.zeros(0, 3).amax()
    with pytest.raises((st.SpiralError, ValueError, IndexError, RuntimeError)):
        st.zeros(0, 3).max(dim=0)
    with pytest.raises((st.SpiralError, ValueError, IndexError, RuntimeError)):
        st.zeros(0).argmax()


def test_sum_dtype_argument_and_bool_sum(device):
    b = tensor_on([True, False, True, True], device=device)
    s = b.sum()
    assert s.dtype == st.int64 and s.tolist() == 3
    i = tensor_on([1, 2, 3], dtype=st.int32, device=device)
    assert i.sum().dtype == st.int64
    f = st.sum(i, dtype=st.float64)
    assert f.dtype == st.float64 and f.tolist() == 6.0
    big = tensor_on([2**31 - 1, 2**31 - 1], dtype=st.int32, device=device)
    assert big.sum().tolist() == 2 * (2**31 - 1)


def test_sum_float32_accumulates_accurately(device):
    a = np.full(1_000_000, 0.1, dtype=np.float32)
    got = float(st_tensor(a, device=device).sum())
    assert abs(got - 100000.0) < 1.0  # naive float32 accumulation is off by ~1000


@pytest.mark.parametrize("shape,dims", [((3, 4), (1,)), ((3, 4), (0, 1)), ((2, 3, 5), (0, 2)), ((7,), (0,))], ids=str)
def test_logsumexp(shape, dims, device):
    a = rand_array(shape, np.float64, seed=12, low=-50, high=50)
    for keepdim in (False, True):
        m = np.max(a, axis=dims, keepdims=True)
        ref = np.log(np.sum(np.exp(a - m), axis=dims, keepdims=True)) + m
        if not keepdim:
            ref = np.squeeze(ref, axis=dims)
        assert_close(st.logsumexp(st_tensor(a, device=device), dim=dims, keepdim=keepdim), ref)


def test_logsumexp_large_values_do_not_overflow(device):
    x = tensor_on([1000.0, 1000.0], dtype=st.float32, device=device)
    assert_close(st.logsumexp(x, dim=0), np.float32(1000 + np.log(2)))
    x = tensor_on([-np.inf, -np.inf], device=device)
    assert to_np(st.logsumexp(x, dim=0)) == -np.inf


@pytest.mark.parametrize("p", [1, 2, 3, float("inf"), 0.5])
def test_norm(p, device):
    a = rand_array((4, 5), np.float64, seed=13)
    flat = a.reshape(-1)
    if p == float("inf"):
        ref = np.max(np.abs(flat))
        ref_dim = np.max(np.abs(a), axis=1)
    else:
        ref = np.sum(np.abs(flat) ** p) ** (1 / p)
        ref_dim = np.sum(np.abs(a) ** p, axis=1) ** (1 / p)
    assert_close(st_tensor(a, device=device).norm(p=p), ref)
    assert_close(st.norm(st_tensor(a, device=device), p=p, dim=1), ref_dim)
    assert_close(st_tensor(a, device=device).norm(p=p, dim=1, keepdim=True), ref_dim[:, None])


def test_norm_fro(device):
    a = rand_array((4, 5), np.float32, seed=14)
    assert_close(st_tensor(a, device=device).norm(p="fro"), np.float32(np.linalg.norm(a)))


def test_all_any(device):
    assert bool(tensor_on([True, True], device=device).all()) is True
    assert bool(tensor_on([True, False], device=device).all()) is False
    assert bool(tensor_on([0.0, 0.0, 1.0], device=device).any()) is True
    assert bool(tensor_on([0, 0], device=device).any()) is False
    assert st.all(tensor_on([1, 2], device=device)).dtype == st.bool
    a = rand_array((40, 40), np.float32, seed=15)
    assert bool((st_tensor(a, device=device) < 3).all()) is True
    assert bool((noncontig(a, device=device) > 1.9).any()) == bool((a > 1.9).any())


@pytest.mark.parametrize("dim", [0, 1, -1, (0, 2)])
@pytest.mark.parametrize("keepdim", [False, True])
def test_all_any_along_dims_match_numpy(dim, keepdim, device):
    x = np.random.default_rng(3).integers(0, 3, size=(4, 5, 6)).astype(np.float32)
    x[1] = 1.0  # a slice that is all true
    t = tensor_on(x, device=device)
    for name in ("all", "any"):
        want = getattr(np, name)(x != 0, axis=dim, keepdims=keepdim)
        got = getattr(t, name)(dim, keepdim=keepdim)
        assert got.dtype == st.bool and tuple(got.shape) == want.shape
        np.testing.assert_array_equal(got.cpu().numpy(), want)
        np.testing.assert_array_equal(getattr(st, name)(t, dim=dim, keepdim=keepdim).cpu().numpy(), want)
    with pytest.raises(IndexError, match="any"):
        t.any(3)


# ---------------------------------------------------------------------------
# softmax
# ---------------------------------------------------------------------------


def _np_softmax(a, axis):
    e = np.exp(a - np.max(a, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
@pytest.mark.parametrize("shape", [(5,), (3, 4), (2, 3, 5), (4, 1, 3), (7, 300)], ids=str)
def test_softmax_log_softmax(shape, dtype, device):
    a = rand_array(shape, np_dtype(dtype), seed=16, low=-10, high=10)
    tol = 1e-5 if dtype == st.float32 else 1e-12
    for dim in range(-len(shape), len(shape)):
        ref = _np_softmax(a.astype(np.float64), dim).astype(np_dtype(dtype))
        assert_close(st.softmax(st_tensor(a, device=device), dim=dim), ref, rtol=tol, atol=tol)
        assert_close(st_tensor(a, device=device).log_softmax(dim),
                     np.log(ref.astype(np.float64)).astype(np_dtype(dtype)),
                     rtol=tol, atol=tol * 10)


def test_softmax_noncontiguous_and_extreme_values(device):
    a = rand_array((6, 5), np.float64, seed=17, low=-5, high=5)
    assert_close(st.softmax(noncontig(a, device=device), dim=0), _np_softmax(a, 0))
    assert_close(st.softmax(noncontig(a, "slice", device=device), dim=1), _np_softmax(a, 1))
    x = tensor_on([[1000.0, 0.0, -1000.0]], device=device)
    assert_close(st.softmax(x, dim=1), np.array([[1.0, 0.0, 0.0]], dtype=np.float32))
    ls = to_np(st.log_softmax(x, dim=1))
    np.testing.assert_allclose(ls, [[0.0, -1000.0, -2000.0]], rtol=1e-6)
    with_inf = tensor_on([[0.0, -np.inf, 0.0]], device=device)
    assert_close(st.softmax(with_inf, dim=1), np.array([[0.5, 0.0, 0.5]], dtype=np.float32))


def test_softmax_of_empty_and_0d(device):
    assert st.softmax(st.zeros(0, 3, device=device), dim=1).shape == (0, 3)
    assert st.softmax(st.zeros(3, 0, device=device), dim=1).shape == (3, 0)
    assert_close(st.softmax(tensor_on(3.0, device=device), dim=0), np.float32(1.0))


# ---------------------------------------------------------------------------
# matmul
# ---------------------------------------------------------------------------

MATMUL_SHAPES = [
    ((3,), (3,)),
    ((2, 3), (3,)),
    ((3,), (3, 4)),
    ((2, 3), (3, 4)),
    ((1, 1), (1, 1)),
    ((5, 3, 4), (4, 2)),
    ((4,), (5, 4, 2)),
    ((5, 3, 4), (4,)),
    ((2, 1, 3, 4), (5, 4, 6)),
    ((3, 1, 2, 3), (1, 4, 3, 2)),
    ((0, 3), (3, 4)),
    ((2, 0), (0, 4)),
    ((2, 3), (3, 0)),
    ((64, 65), (65, 33)),
]


@pytest.mark.parametrize("dtype", NUMERIC_DTYPES, ids=str)
@pytest.mark.parametrize("sa,sb", MATMUL_SHAPES, ids=str)
def test_matmul(sa, sb, dtype, device):
    a = rand_array(sa, np_dtype(dtype), seed=18)
    b = rand_array(sb, np_dtype(dtype), seed=19)
    ref = np.matmul(a.astype(np.float64), b.astype(np.float64)).astype(np_dtype(dtype))
    tol = 1e-4 if dtype == st.float32 else 1e-12
    assert_close(st.matmul(st_tensor(a, device=device), st_tensor(b, device=device)), ref, rtol=tol, atol=tol)
    assert_close(st_tensor(a, device=device) @ st_tensor(b, device=device), ref, rtol=tol, atol=tol)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
def test_matmul_noncontiguous_operands(dtype, device):
    a = rand_array((7, 5), np_dtype(dtype), seed=20)
    b = rand_array((5, 6), np_dtype(dtype), seed=21)
    tol = 1e-5 if dtype == st.float32 else 1e-12
    assert_close(noncontig(a, device=device) @ noncontig(b, device=device), a @ b, rtol=tol, atol=tol)
    assert_close(noncontig(a, "slice", device=device) @ noncontig(b, "slice", device=device), a @ b, rtol=tol, atol=tol)
    c = rand_array((3, 7, 5), np_dtype(dtype), seed=22)
    tc = st_tensor(np.ascontiguousarray(c.transpose(1, 0, 2)), device=device).transpose(0, 1)
    assert_close(tc @ st_tensor(b, device=device), c @ b, rtol=tol, atol=tol)
    # broadcast via expand (stride 0)
    e = st_tensor(a, device=device).unsqueeze(0).expand(4, 7, 5)
    assert_close(e @ st_tensor(b, device=device), np.broadcast_to(a @ b, (4, 7, 6)), rtol=tol, atol=tol)


def test_matmul_mixed_dtypes_refused_like_torch(device):
    # PyTorch refuses int64 @ float64 ("expected m1 and m2 to have the same dtype").
    a = tensor_on([[1, 2], [3, 4]], device=device)
    b = tensor_on([[0.5, 0.0], [0.0, 2.0]], dtype=st.float64, device=device)
    with pytest.raises(st.DtypeError):
        a @ b
    out = a.double() @ b
    assert out.dtype == st.float64
    assert out.tolist() == [[0.5, 4.0], [1.5, 8.0]]


def test_matmul_0d_raises():
    with pytest.raises(st.ShapeError):
        st.matmul(st.tensor(1.0), st.tensor([1.0]))


def test_bmm_and_mm(device):
    a = rand_array((4, 2, 3), np.float64, seed=23)
    b = rand_array((4, 3, 5), np.float64, seed=24)
    assert_close(st.bmm(st_tensor(a, device=device), st_tensor(b, device=device)), a @ b)
    assert_close(st_tensor(a[0], device=device).mm(st_tensor(b[0], device=device)), a[0] @ b[0])
    with pytest.raises(st.ShapeError):
        st.mm(st_tensor(a, device=device), st_tensor(b, device=device))
    with pytest.raises(st.ShapeError):
        st.bmm(st_tensor(a[0], device=device), st_tensor(b[0], device=device))


def test_matmul_threads_deterministic():
    a = rand_array((200, 300), np.float32, seed=25)
    b = rand_array((300, 100), np.float32, seed=26)
    st.set_num_threads(1)
    r1 = to_np(st_tensor(a) @ st_tensor(b))
    s1 = to_np(st_tensor(a).sum(dim=0))
    st.set_num_threads(2)
    r2 = to_np(st_tensor(a) @ st_tensor(b))
    s2 = to_np(st_tensor(a).sum(dim=0))
    np.testing.assert_allclose(r1, r2, rtol=1e-5, atol=1e-4)
    np.testing.assert_allclose(s1, s2, rtol=1e-6, atol=1e-6)


# ---------------------------------------------------------------------------
# against PyTorch
# ---------------------------------------------------------------------------


@needs_torch
@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
def test_reductions_match_torch(dtype, device):
    import torch

    a = rand_array((4, 5, 6), np_dtype(dtype), seed=27)
    ta = torch.from_numpy(a.copy())
    t = st_tensor(a, device=device)
    tol = 1e-5 if dtype == st.float32 else 1e-12
    for dim in (0, 1, 2, -1, (0, 2)):
        assert_close(t.sum(dim=dim), ta.sum(dim=dim).numpy(), rtol=tol, atol=tol * 10)
        assert_close(t.mean(dim=dim, keepdim=True), ta.mean(dim=dim, keepdim=True).numpy(), rtol=tol, atol=tol)
        assert_close(t.var(dim=dim), ta.var(dim=dim).numpy(), rtol=tol, atol=tol)
        assert_close(t.std(dim=dim, correction=0), ta.std(dim=dim, correction=0).numpy(), rtol=tol, atol=tol)
        assert_close(t.amax(dim=dim), ta.amax(dim=dim).numpy())
        assert_close(st.logsumexp(t, dim=dim), torch.logsumexp(ta, dim=dim).numpy(), rtol=tol, atol=tol)
        assert_close(t.norm(dim=dim), ta.norm(dim=dim).numpy(), rtol=tol, atol=tol)
    for dim in (0, 1, 2):
        sv, si = t.max(dim=dim)
        tv, ti = ta.max(dim=dim)
        assert_close(sv, tv.numpy())
        assert_close(si, ti.numpy())
        assert_close(t.prod(dim=dim), ta.prod(dim=dim).numpy(), rtol=tol, atol=tol)
        assert_close(st.softmax(t, dim), torch.softmax(ta, dim).numpy(), rtol=tol, atol=tol)
        assert_close(st.log_softmax(t, dim), torch.log_softmax(ta, dim).numpy(), rtol=tol, atol=tol)


@needs_torch
@pytest.mark.parametrize("sa,sb", MATMUL_SHAPES, ids=str)
def test_matmul_matches_torch(sa, sb, device):
    import torch

    a = rand_array(sa, np.float64, seed=28)
    b = rand_array(sb, np.float64, seed=29)
    ref = torch.matmul(torch.from_numpy(a), torch.from_numpy(b)).numpy()
    assert_close(st.matmul(st_tensor(a, device=device), st_tensor(b, device=device)), ref, rtol=1e-12, atol=1e-12)
