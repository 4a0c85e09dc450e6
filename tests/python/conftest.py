"""Shared helpers for the SpiralTorch Python test suite.

Everything here compares SpiralTorch against NumPy (always available) and, where
installed, PyTorch. Nothing in this file imports torch eagerly at module level in a
way that fails without it.
"""

from __future__ import annotations

import os
import sys

import numpy as np
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# A development tree (python/spiraltorch/_core*.so linked from a build dir) is tested in
# place; otherwise the installed package is.
_SRC_PKG = os.path.join(ROOT, "python", "spiraltorch")
_DEV_BUILD = any(f.startswith("_core") and f.endswith(".so") for f in os.listdir(_SRC_PKG))
PY_DIR = os.environ.get("SPIRALTORCH_TEST_PYDIR") or (os.path.join(ROOT, "python") if _DEV_BUILD else "")
if PY_DIR and PY_DIR not in sys.path:
    sys.path.insert(0, PY_DIR)

import spiraltorch as st  # noqa: E402

try:  # torch is optional: tests that need it are skipped without it
    import torch  # noqa: F401

    HAVE_TORCH = True
except Exception:  # pragma: no cover - depends on the environment
    torch = None
    HAVE_TORCH = False

needs_torch = pytest.mark.skipif(not HAVE_TORCH, reason="PyTorch is not installed")

# ---------------------------------------------------------------------------
# dtype tables
# ---------------------------------------------------------------------------

ST2NP = {
    st.bool: np.bool_,
    st.uint8: np.uint8,
    st.int32: np.int32,
    st.int64: np.int64,
    st.float16: np.float16,
    st.float32: np.float32,
    st.float64: np.float64,
}
NP2ST = {np.dtype(v): k for k, v in ST2NP.items()}

FLOAT_DTYPES = [st.float32, st.float64]
INT_DTYPES = [st.int32, st.int64]
NUMERIC_DTYPES = FLOAT_DTYPES + INT_DTYPES

DEFAULT_TOL = {
    st.float16: (1e-2, 1e-2),
    st.float32: (1e-5, 1e-5),
    st.float64: (1e-12, 1e-12),
}

# Shapes used across the suite: 0-d, empty, 1-d, odd sizes that exercise SIMD tails,
# and a larger tensor that crosses any parallel threshold.
SHAPES = [(), (0,), (1,), (7,), (3, 4), (2, 0, 3), (2, 3, 5), (4, 1, 3, 2), (1037,)]

# Pairs of broadcast-compatible shapes.
BROADCAST_PAIRS = [
    ((), ()),
    ((), (3, 4)),
    ((3, 4), ()),
    ((3, 4), (3, 4)),
    ((3, 1), (1, 4)),
    ((4,), (3, 4)),
    ((2, 1, 4), (3, 1)),
    ((5, 1, 1), (1, 6, 1)),
    ((0, 3), (1, 3)),
    ((2, 0), (2, 1)),
    ((1,), (0,)),
    ((2, 3, 1, 5), (4, 1)),
]


def np_dtype(dt):
    return ST2NP[dt]


def st_dtype(npdt):
    return NP2ST[np.dtype(npdt)]


def rng(seed=0):
    return np.random.default_rng(seed)


def rand_array(shape, dtype=np.float64, seed=0, low=-2.0, high=2.0):
    """Reproducible random array of ``dtype``; integers in [-9, 9] unless low/high say otherwise."""
    g = rng(seed)
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return g.random(shape) > 0.5
    if dtype.kind in "iu":
        lo = 0 if dtype.kind == "u" else int(min(low, -9) if low < 0 else low)
        hi = 10 if high <= 2 else int(high)
        return g.integers(lo, hi, size=shape).astype(dtype)
    return g.uniform(low, high, size=shape).astype(dtype)


def to_np(t):
    """A NumPy copy of a SpiralTorch tensor (detached)."""
    return np.array(t.detach().numpy(), copy=True)


def st_tensor(arr, dtype=None, requires_grad=False):
    arr = np.asarray(arr)
    t = st.tensor(arr, dtype=dtype if dtype is not None else st_dtype(arr.dtype))
    if requires_grad:
        t.requires_grad_(True)
    return t


def noncontig(arr, kind="transpose"):
    """A non-contiguous SpiralTorch view holding the same values as ``arr``.

    ``transpose``: the transposed view of a contiguous copy of ``arr.T``.
    ``slice``: every other element of a tensor twice as large along the last dim.
    """
    arr = np.asarray(arr)
    if kind == "transpose":
        if arr.ndim < 2:
            return noncontig(arr, "slice")
        base = st_tensor(np.ascontiguousarray(np.swapaxes(arr, -1, -2)))
        v = base.transpose(-1, -2)
    elif kind == "slice":
        if arr.ndim == 0:
            return st_tensor(arr)
        big = np.zeros(arr.shape[:-1] + (arr.shape[-1] * 2,), dtype=arr.dtype)
        big[..., ::2] = arr
        base = st_tensor(big)
        v = base[..., ::2]
    else:  # pragma: no cover
        raise ValueError(kind)
    assert tuple(v.shape) == arr.shape
    if arr.size > 1 and any(s > 1 for s in arr.shape):
        assert not v.is_contiguous() or arr.ndim == 0
    return v


def assert_close(actual, expected, rtol=None, atol=None, check_dtype=True, equal_nan=True):
    """Compares a SpiralTorch tensor to a NumPy array (values, shape and dtype)."""
    expected = np.asarray(expected)
    if isinstance(actual, st.Tensor):
        if check_dtype:
            assert actual.dtype == st_dtype(expected.dtype), f"dtype {actual.dtype} != {expected.dtype}"
        assert tuple(actual.shape) == expected.shape, f"shape {tuple(actual.shape)} != {expected.shape}"
        got = to_np(actual)
    else:
        got = np.asarray(actual)
    assert got.shape == expected.shape, f"shape {got.shape} != {expected.shape}"
    if expected.dtype.kind in "biu" and got.dtype.kind in "biu":
        np.testing.assert_array_equal(got, expected)
        return
    if rtol is None or atol is None:
        dt = actual.dtype if isinstance(actual, st.Tensor) else st.float64
        r, a = DEFAULT_TOL.get(dt, (1e-5, 1e-5))
        rtol = r if rtol is None else rtol
        atol = a if atol is None else atol
    np.testing.assert_allclose(got.astype(np.float64), expected.astype(np.float64), rtol=rtol, atol=atol,
                               equal_nan=equal_nan)


# ---------------------------------------------------------------------------
# finite-difference gradient check
# ---------------------------------------------------------------------------


def numerical_grads(fn, arrays, weights, eps=1e-6):
    """Central finite differences of ``sum(fn(*inputs) * weights)`` w.r.t. every array."""
    grads = []

    def scalar(arrs):
        with st.no_grad():
            out = fn(*[st.tensor(a, dtype=st.float64) for a in arrs])
        outs = out if isinstance(out, (list, tuple)) else [out]
        total = 0.0
        for o, w in zip(outs, weights):
            total += float(np.sum(to_np(o).astype(np.float64) * w))
        return total

    for i, a in enumerate(arrays):
        g = np.zeros_like(a, dtype=np.float64)
        flat = g.reshape(-1)
        for j in range(a.size):
            plus = [x.copy() for x in arrays]
            minus = [x.copy() for x in arrays]
            plus[i].reshape(-1)[j] += eps
            minus[i].reshape(-1)[j] -= eps
            flat[j] = (scalar(plus) - scalar(minus)) / (2 * eps)
        grads.append(g)
    return grads


def gradcheck(fn, *arrays, eps=1e-6, atol=1e-6, rtol=1e-5, seed=0, check_grad_of=None):
    """Checks the autograd gradient of ``fn`` against central finite differences in float64.

    ``fn`` takes SpiralTorch tensors (one per array) and returns a tensor or a tuple of
    tensors. The scalar ``sum(out * w)`` with random ``w`` is differentiated, so every
    output element contributes with a distinct weight. ``check_grad_of`` optionally
    restricts which inputs are differentiated (indices); others are constants.
    Returns the analytic gradients for further checks.
    """
    arrays = [np.array(a, dtype=np.float64) for a in arrays]
    which = list(range(len(arrays))) if check_grad_of is None else list(check_grad_of)
    ts = [st.tensor(a, dtype=st.float64, requires_grad=(i in which)) for i, a in enumerate(arrays)]
    out = fn(*ts)
    outs = list(out) if isinstance(out, (list, tuple)) else [out]
    g = rng(seed + 12345)
    weights = [g.uniform(0.5, 1.5, size=tuple(o.shape)) for o in outs]
    loss = None
    for o, w in zip(outs, weights):
        if not o.requires_grad:
            continue
        term = (o * st.tensor(w, dtype=st.float64)).sum()
        loss = term if loss is None else loss + term
    assert loss is not None, "no output requires grad"
    loss.backward()
    num = numerical_grads(fn, arrays, weights, eps=eps)
    analytic = []
    for i in which:
        t = ts[i]
        got = t.grad
        if got is None:
            got_np = np.zeros_like(arrays[i])
        else:
            assert tuple(got.shape) == arrays[i].shape, f"grad shape {tuple(got.shape)} != {arrays[i].shape}"
            assert got.dtype == st.float64
            got_np = to_np(got)
        np.testing.assert_allclose(got_np, num[i], rtol=rtol, atol=atol,
                                   err_msg=f"gradient of input {i} disagrees with finite differences")
        analytic.append(got_np)
    return analytic


# ---------------------------------------------------------------------------
# PyTorch comparison helpers
# ---------------------------------------------------------------------------


def torch_compare(st_fn, torch_fn, *arrays, rtol=1e-10, atol=1e-10, grad=True, seed=0):
    """Runs the same function in SpiralTorch and PyTorch (float64) and compares the
    forward value and the gradients of ``sum(out * w)``."""
    import torch as _torch

    arrays = [np.array(a, dtype=np.float64) for a in arrays]
    sts = [st.tensor(a, dtype=st.float64, requires_grad=grad) for a in arrays]
    tts = [_torch.tensor(a, dtype=_torch.float64, requires_grad=grad) for a in arrays]
    so = st_fn(*sts)
    to = torch_fn(*tts)
    so_list = list(so) if isinstance(so, (list, tuple)) else [so]
    to_list = list(to) if isinstance(to, (list, tuple)) else [to]
    assert len(so_list) == len(to_list)
    for s, t in zip(so_list, to_list):
        assert tuple(s.shape) == tuple(t.shape)
        np.testing.assert_allclose(to_np(s).astype(np.float64), t.detach().numpy().astype(np.float64),
                                   rtol=rtol, atol=atol)
    if not grad:
        return
    g = rng(seed + 777)
    ws = [g.uniform(0.5, 1.5, size=tuple(t.shape)) for t in to_list]
    sl = None
    tl = None
    for s, t, w in zip(so_list, to_list, ws):
        if not t.requires_grad:
            continue
        s_term = (s * st.tensor(w, dtype=st.float64)).sum()
        t_term = (t * _torch.tensor(w, dtype=_torch.float64)).sum()
        sl = s_term if sl is None else sl + s_term
        tl = t_term if tl is None else tl + t_term
    sl.backward()
    tl.backward()
    for s, t in zip(sts, tts):
        tg = t.grad.numpy() if t.grad is not None else np.zeros(t.shape)
        sg = to_np(s.grad) if s.grad is not None else np.zeros(tuple(s.shape))
        np.testing.assert_allclose(sg, tg, rtol=rtol, atol=atol)


@pytest.fixture(autouse=True)
def _restore_global_state():
    """Every test starts with grad mode on and a fixed seed; thread count restored."""
    threads = st.get_num_threads()
    st.set_grad_enabled(True)
    st.manual_seed(1234)
    yield
    st.set_grad_enabled(True)
    st.set_num_threads(threads)
