"""Elementwise binary and unary ops against NumPy (and PyTorch where installed)."""

import math

import numpy as np
import pytest

import spiraltorch as st
from conftest import (
    BROADCAST_PAIRS,
    FLOAT_DTYPES,
    NUMERIC_DTYPES,
    SHAPES,
    assert_close,
    needs_torch,
    noncontig,
    np_dtype,
    rand_array,
    st_tensor,
    tensor_on,
    to_np,
)

# ---------------------------------------------------------------------------
# binary ops
# ---------------------------------------------------------------------------

ARITH = {
    "add": (lambda a, b: a + b, np.add),
    "sub": (lambda a, b: a - b, np.subtract),
    "mul": (lambda a, b: a * b, np.multiply),
    "maximum": (st.maximum, np.maximum),
    "minimum": (st.minimum, np.minimum),
}
COMPARE = {
    "eq": (lambda a, b: a == b, np.equal),
    "ne": (lambda a, b: a != b, np.not_equal),
    "lt": (lambda a, b: a < b, np.less),
    "le": (lambda a, b: a <= b, np.less_equal),
    "gt": (lambda a, b: a > b, np.greater),
    "ge": (lambda a, b: a >= b, np.greater_equal),
}


@pytest.mark.parametrize("dtype", NUMERIC_DTYPES, ids=str)
@pytest.mark.parametrize("shapes", BROADCAST_PAIRS, ids=str)
@pytest.mark.parametrize("op", list(ARITH), ids=str)
def test_arith_broadcast(op, shapes, dtype, device):
    sfn, nfn = ARITH[op]
    a = rand_array(shapes[0], np_dtype(dtype), seed=1)
    b = rand_array(shapes[1], np_dtype(dtype), seed=2)
    out = sfn(st_tensor(a, device=device), st_tensor(b, device=device))
    assert_close(out, nfn(a, b))


@pytest.mark.parametrize("dtype", NUMERIC_DTYPES, ids=str)
@pytest.mark.parametrize("shapes", BROADCAST_PAIRS, ids=str)
@pytest.mark.parametrize("op", list(COMPARE), ids=str)
def test_compare_broadcast(op, shapes, dtype, device):
    sfn, nfn = COMPARE[op]
    a = rand_array(shapes[0], np_dtype(dtype), seed=1, low=-2, high=2)
    b = rand_array(shapes[1], np_dtype(dtype), seed=2, low=-2, high=2)
    if dtype in FLOAT_DTYPES:  # make equality actually happen
        a = np.round(a)
        b = np.round(b)
    out = sfn(st_tensor(a, device=device), st_tensor(b, device=device))
    assert out.dtype == st.bool
    assert_close(out, nfn(a, b))


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
@pytest.mark.parametrize("shapes", BROADCAST_PAIRS, ids=str)
def test_div_float(shapes, dtype, device):
    a = rand_array(shapes[0], np_dtype(dtype), seed=1)
    b = rand_array(shapes[1], np_dtype(dtype), seed=2, low=0.5, high=3.0)
    assert_close(st_tensor(a, device=device) / st_tensor(b, device=device), a / b)
    assert_close(st.div(st_tensor(a, device=device), st_tensor(b, device=device)), a / b)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
@pytest.mark.parametrize("shapes", BROADCAST_PAIRS[:8], ids=str)
def test_pow_atan2(shapes, dtype, device):
    a = rand_array(shapes[0], np_dtype(dtype), seed=1, low=0.1, high=3.0)
    b = rand_array(shapes[1], np_dtype(dtype), seed=2, low=-2.0, high=2.0)
    assert_close(st_tensor(a, device=device) ** st_tensor(b, device=device), np.power(a, b),
                 rtol=1e-5 if dtype == st.float32 else 1e-12)
    assert_close(st.pow(st_tensor(a, device=device), st_tensor(b, device=device)), np.power(a, b),
                 rtol=1e-5 if dtype == st.float32 else 1e-12)
    assert_close(st.atan2(st_tensor(b, device=device), st_tensor(a, device=device)), np.arctan2(b, a),
                 rtol=1e-5 if dtype == st.float32 else 1e-12)


def test_int_true_division_gives_float32(device):
    a = np.array([7, -7, 3, 0], dtype=np.int64)
    b = np.array([2, 2, -4, 5], dtype=np.int64)
    out = st_tensor(a, device=device) / st_tensor(b, device=device)
    assert out.dtype == st.float32
    assert_close(out, (a / b).astype(np.float32))


@pytest.mark.parametrize("dtype", NUMERIC_DTYPES, ids=str)
def test_floor_divide_and_remainder_follow_python_sign_rules(dtype, device):
    a = np.array([7, -7, 7, -7, 0, 5, -5, 9], dtype=np_dtype(dtype))
    b = np.array([2, 2, -2, -2, 3, 5, 3, -4], dtype=np_dtype(dtype))
    assert_close(st_tensor(a, device=device) // st_tensor(b, device=device), np.floor_divide(a, b))
    assert_close(st.floor_divide(st_tensor(a, device=device), st_tensor(b, device=device)), np.floor_divide(a, b))
    assert_close(st_tensor(a, device=device) % st_tensor(b, device=device), np.remainder(a, b))
    assert_close(st.remainder(st_tensor(a, device=device), st_tensor(b, device=device)), np.remainder(a, b))


def test_float_remainder_fractional(device):
    a = np.array([5.5, -5.5, 5.5, -5.5, 0.25], dtype=np.float64)
    b = np.array([2.0, 2.0, -2.0, -2.0, 0.1], dtype=np.float64)
    assert_close(st_tensor(a, device=device) % st_tensor(b, device=device), np.remainder(a, b))
    assert_close(st_tensor(a, device=device) // st_tensor(b, device=device), np.floor_divide(a, b))


@pytest.mark.parametrize("dtype", NUMERIC_DTYPES, ids=str)
@pytest.mark.parametrize("kind", ["transpose", "slice"])
@pytest.mark.parametrize("op", ["add", "sub", "mul", "maximum"])
def test_binary_noncontiguous(op, kind, dtype, device):
    sfn, nfn = ARITH[op]
    a = rand_array((5, 6), np_dtype(dtype), seed=3)
    b = rand_array((5, 6), np_dtype(dtype), seed=4)
    assert_close(sfn(noncontig(a, kind, device=device), noncontig(b, kind, device=device)), nfn(a, b))
    assert_close(sfn(noncontig(a, kind, device=device), st_tensor(b, device=device)), nfn(a, b))
    # non-contiguous broadcast against a row
    row = rand_array((6,), np_dtype(dtype), seed=5)
    assert_close(sfn(noncontig(a, kind, device=device), st_tensor(row, device=device)), nfn(a, row))


def test_binary_on_expanded_view(device):
    a = rand_array((3, 1), np.float32, seed=1)
    b = rand_array((3, 4), np.float32, seed=2)
    ea = st_tensor(a, device=device).expand(3, 4)
    assert_close(ea + st_tensor(b, device=device), a + b)
    assert_close(ea * st_tensor(b, device=device).T.T, a * b)


def test_binary_large_crosses_parallel_threshold(device):
    a = rand_array((513, 257), np.float32, seed=1)
    b = rand_array((257,), np.float32, seed=2)
    assert_close(st_tensor(a, device=device) * st_tensor(b, device=device) + st_tensor(a, device=device), a * b + a)
    assert_close(noncontig(a, device=device) - st_tensor(b, device=device), a - b)


# ---------------------------------------------------------------------------
# scalars and type promotion
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", NUMERIC_DTYPES, ids=str)
def test_scalar_operands(dtype, device):
    a = rand_array((3, 4), np_dtype(dtype), seed=6)
    t = st_tensor(a, device=device)
    nd = np_dtype(dtype)
    assert_close(t + 2, (a + nd(2)).astype(nd))
    assert_close(2 + t, (a + nd(2)).astype(nd))
    assert_close(t - 3, (a - nd(3)).astype(nd))
    assert_close(3 - t, (nd(3) - a).astype(nd))
    assert_close(t * 4, (a * nd(4)).astype(nd))
    assert_close(4 * t, (a * nd(4)).astype(nd))
    assert_close(t ** 2, (a ** 2).astype(nd))
    assert_close(-t, -a)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
def test_scalar_float_ops_keep_dtype(dtype, device):
    a = rand_array((4, 3), np_dtype(dtype), seed=7, low=0.5, high=2)
    t = st_tensor(a, device=device)
    nd = np_dtype(dtype)
    assert_close(t / 2.5, (a / nd(2.5)).astype(nd))
    assert_close(2.5 / t, (nd(2.5) / a).astype(nd))
    assert_close(t + 0.5, (a + nd(0.5)).astype(nd))
    assert_close(2.0 ** t, np.power(nd(2.0), a).astype(nd), rtol=1e-5 if dtype == st.float32 else 1e-12)
    assert_close(t ** 0.5, np.sqrt(a), rtol=1e-5 if dtype == st.float32 else 1e-12)
    assert_close(t ** -1, 1 / a, rtol=1e-5 if dtype == st.float32 else 1e-12)


PROMOTION = [
    # (left dtype, right dtype, result dtype) for tensor-tensor ops (PyTorch rules)
    (st.int32, st.int64, st.int64),
    (st.int64, st.int32, st.int64),
    (st.float32, st.float64, st.float64),
    (st.int64, st.float32, st.float32),
    (st.int32, st.float64, st.float64),
    (st.bool, st.int32, st.int32),
    (st.bool, st.float32, st.float32),
    (st.uint8, st.int32, st.int32),
    (st.uint8, st.bool, st.uint8),
    (st.bool, st.bool, st.bool),
]


@pytest.mark.parametrize("lhs,rhs,res", PROMOTION, ids=str)
def test_tensor_tensor_promotion(lhs, rhs, res, device):
    a = tensor_on([[1, 0, 1]], dtype=lhs, device=device)
    b = tensor_on([[1], [0]], dtype=rhs, device=device)
    out = a + b
    assert out.dtype == res
    assert out.shape == (2, 3)
    expected = (np.array([[1, 0, 1]]) + np.array([[1], [0]])) if res != st.bool else np.array([[1, 1, 1], [1, 0, 1]])
    assert_close(out.to(st.float64), expected.astype(np.float64))


@pytest.mark.parametrize("lhs,rhs,res", PROMOTION[:5], ids=str)
def test_zero_dim_tensors_promote_like_pytorch(lhs, rhs, res, device):
    # a 0-d tensor of a higher category still wins; of the same category it doesn't.
    a = tensor_on([1, 2], dtype=lhs, device=device)
    b = tensor_on(3, dtype=rhs, device=device)
    out = a * b
    is_float = lambda d: d in (st.float32, st.float64)  # noqa: E731
    if is_float(lhs) == is_float(rhs):
        assert out.dtype == lhs
    else:
        assert out.dtype == (rhs if is_float(rhs) else lhs)
    assert out.tolist() == [3, 6]


def test_scalar_promotion_rules(device):
    i = tensor_on([1, 2, 3], device=device)
    assert i.dtype == st.int64
    assert (i + 1.5).dtype == st.float32
    assert_close(i + 1.5, np.array([2.5, 3.5, 4.5], dtype=np.float32))
    assert (i * 2).dtype == st.int64
    assert (i / 2).dtype == st.float32
    assert (i + True).dtype == st.int64
    i32 = tensor_on([1, 2], dtype=st.int32, device=device)
    assert (i32 + 5).dtype == st.int32
    assert (i32 + 2.0).dtype == st.float32
    f64 = tensor_on([1.0], dtype=st.float64, device=device)
    assert (f64 + 1.0).dtype == st.float64
    assert (f64 * 3).dtype == st.float64
    f32 = tensor_on([1.0], device=device)
    assert (f32 + 1e300 * 0).dtype == st.float32
    b = tensor_on([True, False], device=device)
    assert (b + 1).dtype == st.int64
    assert (b + 1.0).dtype == st.float32
    assert (b * 2).tolist() == [2, 0]
    u8 = tensor_on([200, 10], dtype=st.uint8, device=device)
    assert (u8 + 1).dtype == st.uint8


def test_bool_logical_ops(device):
    a = np.array([True, True, False, False])
    b = np.array([True, False, True, False])
    ta, tb = st_tensor(a, device=device), st_tensor(b, device=device)
    assert_close(ta & tb, a & b)
    assert_close(ta | tb, a | b)
    assert_close(ta ^ tb, a ^ b)
    assert_close(~ta, ~a)
    assert_close(st.logical_and(ta, tb), a & b)
    assert_close(st.logical_or(ta, tb), a | b)
    assert_close(st.logical_xor(ta, tb), a ^ b)
    assert_close(st.logical_not(ta), ~a)
    # logical ops on numbers: nonzero is true
    x = tensor_on([0.0, 1.5, -2.0, 0.0], device=device)
    y = tensor_on([3, 0, 1, 0], device=device)
    assert_close(st.logical_and(x, y), np.array([False, False, True, False]))
    assert_close(st.logical_or(x, y), np.array([True, True, True, False]))
    assert_close(st.logical_not(x), np.array([True, False, False, True]))


def test_comparison_with_scalars_and_mixed_dtypes(device):
    t = tensor_on([1, 2, 3], device=device)
    assert (t == 2).tolist() == [False, True, False]
    assert (t > 1.5).tolist() == [False, True, True]
    assert (t <= 2).tolist() == [True, True, False]
    f = tensor_on([1.0, 2.5, 3.0], dtype=st.float64, device=device)
    assert (f == t).tolist() == [True, False, True]
    assert (f < t).tolist() == [False, False, False]
    assert (t >= f).tolist() == [True, False, True]


def test_binary_with_python_list_operand():
    t = st.tensor([[1.0, 2.0], [3.0, 4.0]])
    assert_close(t + [10.0, 20.0], np.array([[11, 22], [13, 24]], dtype=np.float32))
    assert_close([1.0, 1.0] - t, np.array([[0, -1], [-2, -3]], dtype=np.float32))


def test_alpha_argument(device):
    a = rand_array((3, 4), np.float64, seed=1)
    b = rand_array((4,), np.float64, seed=2)
    assert_close(st.add(st_tensor(a, device=device), st_tensor(b, device=device), alpha=2.5), a + 2.5 * b)
    assert_close(st.sub(st_tensor(a, device=device), st_tensor(b, device=device), alpha=-3), a + 3 * b)
    assert_close(st_tensor(a, device=device).add(st_tensor(b, device=device), alpha=0.5), a + 0.5 * b)


def test_integer_overflow_wraps_like_numpy(device):
    a = np.array([2**31 - 1, -(2**31)], dtype=np.int32)
    assert_close(st_tensor(a, device=device) + tensor_on([1, -1], dtype=st.int32, device=device),
                 a + np.array([1, -1], dtype=np.int32))


def test_division_by_zero_float(device):
    a = np.array([1.0, -1.0, 0.0], dtype=np.float32)
    out = to_np(st_tensor(a, device=device) / tensor_on([0.0, 0.0, 0.0], device=device))
    assert out[0] == np.inf and out[1] == -np.inf and np.isnan(out[2])


# ---------------------------------------------------------------------------
# unary ops
# ---------------------------------------------------------------------------


def _np_gelu(x):
    from math import erf

    return 0.5 * x * (1 + np.vectorize(erf, otypes=[np.float64])(x / math.sqrt(2)))


def _np_erf(x):
    return np.vectorize(math.erf, otypes=[np.float64])(x).astype(x.dtype)


UNARY = {
    # name: (numpy reference, (low, high) domain)
    "neg": (np.negative, (-3, 3)),
    "abs": (np.abs, (-3, 3)),
    "sign": (np.sign, (-3, 3)),
    "exp": (np.exp, (-3, 3)),
    "log": (np.log, (0.1, 5)),
    "log1p": (np.log1p, (-0.5, 5)),
    "expm1": (np.expm1, (-2, 2)),
    "sqrt": (np.sqrt, (0.0, 5)),
    "rsqrt": (lambda x: 1 / np.sqrt(x), (0.1, 5)),
    "square": (np.square, (-3, 3)),
    "reciprocal": (lambda x: 1 / x, (0.5, 3)),
    "sin": (np.sin, (-4, 4)),
    "cos": (np.cos, (-4, 4)),
    "tan": (np.tan, (-1.2, 1.2)),
    "tanh": (np.tanh, (-4, 4)),
    "atanh": (np.arctanh, (-0.9, 0.9)),
    "sigmoid": (lambda x: 1 / (1 + np.exp(-x)), (-8, 8)),
    "erf": (_np_erf, (-3, 3)),
    "relu": (lambda x: np.maximum(x, 0), (-3, 3)),
    "silu": (lambda x: x / (1 + np.exp(-x)), (-6, 6)),
    "gelu": (_np_gelu, (-4, 4)),
    "floor": (np.floor, (-5, 5)),
    "ceil": (np.ceil, (-5, 5)),
    "round": (np.round, (-5, 5)),
    "trunc": (np.trunc, (-5, 5)),
}


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("name", list(UNARY), ids=str)
def test_unary_float(name, shape, dtype, device):
    ref, (lo, hi) = UNARY[name]
    a = rand_array(shape, np_dtype(dtype), seed=11, low=lo, high=hi)
    expected = ref(a.astype(np.float64)).astype(np_dtype(dtype))
    tol = 1e-5 if dtype == st.float32 else 1e-12
    assert_close(getattr(st, name)(st_tensor(a, device=device)), expected, rtol=tol, atol=tol)
    assert_close(getattr(st_tensor(a, device=device), name)(), expected, rtol=tol, atol=tol)


@pytest.mark.parametrize("name", ["exp", "sin", "sqrt", "abs", "sigmoid", "tanh", "relu", "neg"])
@pytest.mark.parametrize("kind", ["transpose", "slice"])
def test_unary_noncontiguous(name, kind, device):
    ref, (lo, hi) = UNARY[name]
    a = rand_array((6, 9), np.float64, seed=12, low=lo, high=hi)
    assert_close(getattr(st, name)(noncontig(a, kind, device=device)), ref(a))


def test_round_half_to_even(device):
    a = np.array([0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 2.4999], dtype=np.float64)
    assert_close(st.round(st_tensor(a, device=device)), np.round(a))


@pytest.mark.parametrize("dtype", [st.int32, st.int64], ids=str)
def test_unary_integer_dtypes(dtype, device):
    a = np.array([-3, -1, 0, 2, 5], dtype=np_dtype(dtype))
    t = st_tensor(a, device=device)
    assert_close(st.neg(t), -a)
    assert_close(st.abs(t), np.abs(a))
    assert_close(st.sign(t), np.sign(a))
    assert_close(st.square(t), np.square(a))
    assert_close(st.relu(t), np.maximum(a, 0))
    # float-valued functions of ints give float32, as in PyTorch
    e = st.exp(t)
    assert e.dtype == st.float32
    assert_close(e, np.exp(a.astype(np.float32)))
    s = st.sqrt(st.abs(t))
    assert s.dtype == st.float32
    assert_close(s, np.sqrt(np.abs(a)).astype(np.float32))


def test_isnan_isinf_isfinite(device):
    a = np.array([1.0, np.nan, np.inf, -np.inf, 0.0, -2.5], dtype=np.float32)
    t = st_tensor(a, device=device)
    assert_close(st.isnan(t), np.isnan(a))
    assert_close(st.isinf(t), np.isinf(a))
    assert_close(st.isfinite(t), np.isfinite(a))
    i = tensor_on([1, 2], device=device)
    assert st.isnan(i).tolist() == [False, False]
    assert st.isfinite(i).tolist() == [True, True]


def test_nan_propagation_in_max_and_relu(device):
    a = tensor_on([np.nan, 1.0, -1.0], device=device)
    b = tensor_on([0.0, np.nan, 0.0], device=device)
    assert np.array_equal(to_np(st.maximum(a, b)), np.maximum(to_np(a), to_np(b)), equal_nan=True)
    assert np.array_equal(to_np(st.minimum(a, b)), np.minimum(to_np(a), to_np(b)), equal_nan=True)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
def test_parametrised_activations(dtype, device):
    a = rand_array((4, 7), np_dtype(dtype), seed=13, low=-30, high=30)
    x = st_tensor(a, device=device)
    d = a.astype(np.float64)
    tol = 1e-5 if dtype == st.float32 else 1e-12
    assert_close(st.leaky_relu(x, 0.2), np.where(d > 0, d, 0.2 * d).astype(a.dtype), rtol=tol, atol=tol)
    assert_close(st.elu(x, 1.5), np.where(d > 0, d, 1.5 * np.expm1(d)).astype(a.dtype), rtol=tol, atol=tol)
    sp = np.where(2 * d > 20, d, np.log1p(np.exp(2 * d)) / 2)
    assert_close(st.softplus(x, beta=2.0, threshold=20.0), sp.astype(a.dtype), rtol=tol, atol=tol)
    sp1 = np.where(d > 20, d, np.log1p(np.exp(d)))
    assert_close(st.softplus(x), sp1.astype(a.dtype), rtol=tol, atol=tol)
    gt = 0.5 * d * (1 + np.tanh(math.sqrt(2 / math.pi) * (d + 0.044715 * d ** 3)))
    assert_close(st.gelu(x, approximate="tanh"), gt.astype(a.dtype), rtol=tol, atol=tol)


def test_sigmoid_extremes_are_stable(device):
    x = tensor_on([-1000.0, -50.0, 0.0, 50.0, 1000.0], dtype=st.float64, device=device)
    out = to_np(st.sigmoid(x))
    assert np.all(np.isfinite(out))
    np.testing.assert_allclose(out, [0.0, 1.9287498479639178e-22, 0.5, 1.0, 1.0], rtol=1e-12, atol=0)


@pytest.mark.parametrize("dtype", NUMERIC_DTYPES, ids=str)
def test_clamp(dtype, device):
    a = rand_array((5, 6), np_dtype(dtype), seed=14, low=-5, high=5)
    t = st_tensor(a, device=device)
    assert_close(st.clamp(t, -1, 2), np.clip(a, -1, 2))
    assert_close(t.clamp(min=0), np.clip(a, 0, None))
    assert_close(t.clip(max=1), np.clip(a, None, 1))
    assert_close(st.clamp(noncontig(a, device=device), -2, 3), np.clip(a, -2, 3))


def test_where_and_masked_fill(device):
    c = rand_array((3, 4), np.bool_, seed=15)
    a = rand_array((3, 4), np.float32, seed=16)
    b = rand_array((4,), np.float32, seed=17)
    row = np.array([True, False, True, False])
    tc, ta, tb, trow = (st_tensor(v, device=device) for v in (c, a, b, row))
    assert_close(st.where(tc, ta, tb), np.where(c, a, b))
    assert_close(st.where(tc, ta, 0.0), np.where(c, a, np.float32(0)))
    assert_close(ta.where(tc, tb), np.where(c, a, b))
    # condition broadcasts too
    assert_close(st.where(trow, ta, tb), np.where(row, a, b))
    # dtype promotion between branches
    out = st.where(tc, tensor_on([1, 2, 3, 4], device), tensor_on(0.5, device, dtype=st.float64))
    assert out.dtype in (st.float64, st.float32)
    assert_close(out.to(st.float64), np.where(c, np.array([1, 2, 3, 4.0]), 0.5))
    assert_close(st.masked_fill(ta, tc, -7.0), np.where(c, np.float32(-7), a))
    assert_close(ta.masked_fill(trow, 1.0), np.where(row, np.float32(1), a))


@pytest.mark.parametrize("src", [st.float32, st.float64, st.int32, st.int64, st.bool, st.uint8], ids=str)
@pytest.mark.parametrize("dst", [st.float32, st.float64, st.int32, st.int64, st.bool, st.uint8], ids=str)
def test_cast(src, dst, device):
    base = np.array([0, 1, 2, 7, 100, 0, 3], dtype=np.float64)
    if src == st.bool:
        base = base != 0
    a = base.astype(np_dtype(src))
    out = st_tensor(a, device=device).to(dst)
    assert out.dtype == dst
    assert_close(out, a.astype(np_dtype(dst)))


def test_float_to_int_truncates_toward_zero(device):
    a = np.array([1.7, -1.7, 2.5, -0.2], dtype=np.float32)
    assert st_tensor(a, device=device).to(st.int64).tolist() == [1, -1, 2, 0]
    assert st_tensor(a, device=device).long().tolist() == [1, -1, 2, 0]
    assert st_tensor(a, device=device).bool().tolist() == [True, True, True, True]


def test_float16_roundtrip(device):
    a = np.array([0.1, 1.5, -2.25, 65504.0], dtype=np.float32)
    h = st_tensor(a, device=device).half()
    assert h.dtype == st.float16
    assert_close(h.float(), a.astype(np.float16).astype(np.float32))
    bf = st_tensor(a, device=device).bfloat16()
    assert bf.dtype == st.bfloat16
    back = to_np(bf.float())
    np.testing.assert_allclose(back[:3], a[:3], rtol=1e-2)


# ---------------------------------------------------------------------------
# in-place ops
# ---------------------------------------------------------------------------


def test_inplace_arith_and_version(device):
    a = rand_array((3, 4), np.float64, seed=18)
    b = rand_array((4,), np.float64, seed=19)
    t = st_tensor(a, device=device)
    v0 = t._version()
    t.add_(st_tensor(b, device=device))
    t.mul_(2.0)
    t.sub_(st_tensor(b, device=device), alpha=0.5)
    t.div_(tensor_on(4.0, dtype=st.float64, device=device))
    expected = ((a + b) * 2 - 0.5 * b) / 4
    assert_close(t, expected)
    assert t._version() > v0
    t += 1
    t -= st_tensor(b, device=device)
    t *= 3
    t /= 2
    assert_close(t, (expected + 1 - b) * 3 / 2)


def test_inplace_on_views_write_through(device):
    base = st.zeros(4, 5, device=device)
    col = base[:, 1]
    col.fill_(3.0)
    row = base[2]
    row.add_(st.ones(5, device=device))
    base.T[4].mul_(0)  # a view of column 4
    base[1:3, 2:4] = 7.0
    expected = np.zeros((4, 5), dtype=np.float32)
    expected[:, 1] = 3
    expected[2] += 1
    expected[:, 4] = 0
    expected[1:3, 2:4] = 7
    assert_close(base, expected)
    base.zero_()
    assert to_np(base).sum() == 0


def test_inplace_clamp_masked_fill_copy(device):
    a = rand_array((4, 4), np.float32, seed=20, low=-3, high=3)
    t = st_tensor(a, device=device)
    t.clamp_(-1, 1)
    assert_close(t, np.clip(a, -1, 1))
    m = a > 0
    t.masked_fill_(st_tensor(m, device=device), 9.0)
    assert_close(t, np.where(m, np.float32(9), np.clip(a, -1, 1)))
    src = rand_array((4,), np.float64, seed=21)
    t.copy_(st_tensor(src, device=device))  # broadcast + cast
    assert_close(t, np.broadcast_to(src.astype(np.float32), (4, 4)))
    tt = st.zeros(3, 2, device=device)
    tt.T.copy_(tensor_on([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], device=device))
    assert tt.tolist() == [[1.0, 4.0], [2.0, 5.0], [3.0, 6.0]]


def test_copy_across_devices(device):
    # copy_ takes a source on another device, like PyTorch: values, broadcast and dtype cast.
    t = st.zeros(2, 3, device=device)
    t.copy_(st.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], dtype=st.float64))  # host source
    assert_close(t, np.array([[1, 2, 3], [4, 5, 6]], np.float32))
    t.copy_(st.tensor([7, 8, 9]))  # broadcast int64 -> float32
    assert_close(t, np.array([[7, 8, 9], [7, 8, 9]], np.float32))
    t.T.copy_(st.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]))  # into a strided view
    assert_close(t, np.array([[1, 3, 5], [2, 4, 6]], np.float32))
    h = st.zeros(3, dtype=st.float64)
    h.copy_(tensor_on([1.5, 2.5, 3.5], device=device))  # device source into a host tensor
    assert h.device == "cpu" and h.tolist() == [1.5, 2.5, 3.5]
    # With history, the gradient goes back to the source on its own device.
    src = st.tensor([1.0, 2.0, 3.0], dtype=st.float64, requires_grad=True)
    dst = st.zeros(3, dtype=st.float64, device=device)
    dst.copy_(src * 2)
    (dst * tensor_on([1.0, 10.0, 100.0], dtype=st.float64, device=device)).sum().backward()
    assert src.grad.device == "cpu"
    np.testing.assert_allclose(to_np(src.grad), [2.0, 20.0, 200.0])


def test_inplace_int_keeps_dtype(device):
    t = tensor_on([1, 2, 3], device=device)
    t.add_(tensor_on([1, 1, 1], device=device))
    t.mul_(2)
    assert t.dtype == st.int64
    assert t.tolist() == [4, 6, 8]


# ---------------------------------------------------------------------------
# against PyTorch
# ---------------------------------------------------------------------------

TORCH_UNARY = ["exp", "log", "log1p", "expm1", "sqrt", "rsqrt", "sin", "cos", "tan", "tanh", "sigmoid", "erf",
               "relu", "silu", "abs", "neg", "reciprocal", "square", "atanh"]


@needs_torch
@pytest.mark.parametrize("name", TORCH_UNARY)
@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
def test_unary_matches_torch(name, dtype, device):
    import torch

    lo, hi = UNARY[name][1]
    a = rand_array((3, 17), np_dtype(dtype), seed=22, low=lo, high=hi)
    fn = getattr(torch, name, None) or getattr(torch.nn.functional, name)
    expected = fn(torch.from_numpy(a.copy())).numpy()
    tol = 2e-6 if dtype == st.float32 else 1e-13
    assert_close(getattr(st, name)(st_tensor(a, device=device)), expected, rtol=tol, atol=tol)


@needs_torch
@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
def test_activations_match_torch(dtype, device):
    import torch
    import torch.nn.functional as F

    a = rand_array((5, 11), np_dtype(dtype), seed=23, low=-25, high=25)
    ta = torch.from_numpy(a.copy())
    x = st_tensor(a, device=device)
    tol = 2e-6 if dtype == st.float32 else 1e-13
    assert_close(st.gelu(x), F.gelu(ta).numpy(), rtol=tol, atol=tol)
    assert_close(st.gelu(x, approximate="tanh"), F.gelu(ta, approximate="tanh").numpy(), rtol=tol, atol=tol)
    assert_close(st.softplus(x, beta=0.5, threshold=5.0), F.softplus(ta, beta=0.5, threshold=5.0).numpy(),
                 rtol=tol, atol=tol)
    assert_close(st.leaky_relu(x, 0.1), F.leaky_relu(ta, 0.1).numpy(), rtol=tol, atol=tol)
    assert_close(st.elu(x, 0.7), F.elu(ta, 0.7).numpy(), rtol=tol, atol=tol)


@needs_torch
@pytest.mark.parametrize("lhs,rhs", [(st.int32, st.int64), (st.float32, st.float64), (st.int64, st.float32),
                                     (st.bool, st.int32), (st.uint8, st.int32), (st.bool, st.float64)], ids=str)
def test_promotion_matches_torch(lhs, rhs, device):
    import torch

    tname = lambda d: getattr(torch, d.name)  # noqa: E731
    for op in ("__add__", "__mul__", "__sub__"):
        if op == "__sub__" and st.bool in (lhs, rhs):
            continue
        s = getattr(tensor_on([1, 0], dtype=lhs, device=device), op)(tensor_on([1, 1], dtype=rhs, device=device))
        t = getattr(torch.tensor([1, 0], dtype=tname(lhs)), op)(torch.tensor([1, 1], dtype=tname(rhs)))
        assert s.dtype.name == str(t.dtype).replace("torch.", "")
        assert s.tolist() == t.tolist()
    for scalar in (2, 2.5, True):
        s = tensor_on([1, 0], dtype=lhs, device=device) * scalar
        t = torch.tensor([1, 0], dtype=tname(lhs)) * scalar
        assert s.dtype.name == str(t.dtype).replace("torch.", "")
