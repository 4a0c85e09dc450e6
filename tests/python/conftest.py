"""Shared helpers for the SpiralTorch Python test suite.

Everything here compares SpiralTorch against NumPy (always available) and, where
installed, PyTorch. Nothing in this file imports torch eagerly at module level in a
way that fails without it.
"""

from __future__ import annotations

import contextlib
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
# devices
# ---------------------------------------------------------------------------
#
# Op and gradient tests take the ``device`` fixture: they run once on "cpu" and once on
# "cuda", the cuda case skipped (with st.cuda.unavailable_reason()) where there is no GPU.
# Such a test builds every input on ``device`` (st_tensor(..., device=device),
# x.to(device), module.to(device)) and compares on the host: to_np copies back, and
# assert_close also checks that a tensor result is still on the test's device.
#
# Checking placement without a GPU: SPIRALTORCH_TEST_EXTRA_DEVICE=cpu:1 adds a third
# param, the pseudo-device "cpu:1". Its tensors live on the host but count as another
# device, so an input the test forgot to move (or an op that builds a helper tensor on
# "cpu") raises "tensors are on different devices" exactly as it would on CUDA; its
# tensors report t.device == "cpu:1", and Tensor.to / Module.to take it like "cuda".
# Code that branches on the device type (the losses' host loops, for one) takes its host
# path for "cpu:1" (those paths build their tensors on the input's device, so they pass
# there too); the one host-only path that doesn't, oneDNN's float32 conv, is switched off
# for the stand-in (see ``device``). Only the cuda param is authoritative.

HAVE_CUDA = st.cuda.is_available()
CUDA_SKIP_REASON = "CUDA not available: " + ("" if HAVE_CUDA else st.cuda.unavailable_reason())
needs_cuda = pytest.mark.skipif(not HAVE_CUDA, reason=CUDA_SKIP_REASON)

_EXTRA_DEVICE = os.environ.get("SPIRALTORCH_TEST_EXTRA_DEVICE", "").strip()
DEVICES = ["cpu", pytest.param("cuda", marks=needs_cuda, id="cuda")]
if _EXTRA_DEVICE:
    DEVICES.append(pytest.param(_EXTRA_DEVICE, id=_EXTRA_DEVICE.replace(":", "")))

_ACTIVE_DEVICE = None  # the device param of the running test, for assert_close's placement check


def is_cuda(device):
    return str(device).startswith("cuda")


def device_type(device):
    """'cpu' or 'cuda' for a device string ('cuda:0', 'cpu:1', ...) or a tensor."""
    d = device.device if isinstance(device, st.Tensor) else str(device)
    return d.split(":")[0]


def device_key(device):
    """(type, index) of a device string or a tensor: "cuda" and "cuda:0" are the same
    device, and the stand-in "cpu:1" differs from "cpu"."""
    d = device.device if isinstance(device, st.Tensor) else str(device)
    kind, _, index = d.partition(":")
    return kind, int(index) if index else 0


def same_device(a, b):
    return device_key(a) == device_key(b)


def is_pseudo_device(device):
    """True for the host stand-in "cpu:N" (N > 0) of SPIRALTORCH_TEST_EXTRA_DEVICE."""
    d = str(device)
    return d.startswith("cpu:") and d != "cpu:0"


@pytest.fixture(params=DEVICES)
def device(request):
    """The device an op/gradient test runs on: "cpu", "cuda" (skipped without a GPU)."""
    global _ACTIVE_DEVICE
    _ACTIVE_DEVICE = request.param
    conv_backend = rnn_backend = None
    if is_pseudo_device(request.param):
        # float32 conv2d/conv1d on the host goes to oneDNN, a path only a device of type
        # CPU takes (its buffers are host tensors of "cpu"); CUDA never does. The stand-in
        # runs the portable im2col path instead, which is what it can check.
        conv_backend = st._core._conv_backend()
        st._core._set_conv_backend("im2col")
        # Likewise the float32 LSTM layers go to oneDNN only on "cpu"; the stand-in runs the loop.
        rnn_backend = st._core._rnn_backend()
        st._core._set_rnn_backend("loop")
    try:
        yield request.param
    finally:
        _ACTIVE_DEVICE = None
        if conv_backend is not None:
            st._core._set_conv_backend(conv_backend)
            st._core._set_rnn_backend(rnn_backend)
        if is_cuda(request.param) and HAVE_CUDA:
            st.cuda.synchronize()  # surface asynchronous kernel errors in the test that caused them

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


_CPU_INFO = st.describe_device("cpu")
HAVE_ONEDNN = _CPU_INFO["onednn"] is not None
needs_onednn = pytest.mark.skipif(not HAVE_ONEDNN, reason=f"oneDNN not built: {_CPU_INFO.get('onednn_reason')}")


@contextlib.contextmanager
def native_backend(kind, name):
    """Selects the "conv" or "rnn" CPU path (``auto``, ``onednn`` or the layer's own
    kernels) for the duration of a with-block, restoring the previous choice after."""
    get, put = getattr(st._core, f"_{kind}_backend"), getattr(st._core, f"_set_{kind}_backend")
    before = get()
    put(name)
    try:
        yield
    finally:
        put(before)


def run_python(code, **env):
    """Runs ``code`` in a fresh interpreter that imports the same spiraltorch as this one
    (source tree or installed package), with extra environment variables; returns the
    CompletedProcess (stdout/stderr as text)."""
    import subprocess

    full_env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p), **env)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=full_env, cwd=ROOT,
                          timeout=120)


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
    """A NumPy copy of a SpiralTorch tensor (detached, copied to the host)."""
    t = t.detach()
    if device_type(t) != "cpu":
        t = t.cpu()
    return np.array(t.numpy(), copy=True)


def st_tensor(arr, dtype=None, requires_grad=False, device="cpu"):
    """A SpiralTorch copy of the array ``arr`` on ``device`` (a leaf when requires_grad)."""
    arr = np.asarray(arr)
    t = st.tensor(arr, dtype=dtype if dtype is not None else st_dtype(arr.dtype)).to(device)
    if requires_grad:
        t.requires_grad_(True)
    return t


def tensor_on(data, device="cpu", dtype=None, requires_grad=False):
    """``st.tensor(data, dtype=dtype)`` (its dtype inference: Python floats give float32)
    moved to ``device``; a leaf when requires_grad."""
    t = st.tensor(data, dtype=dtype).to(device)
    if requires_grad:
        t.requires_grad_(True)
    return t


def noncontig(arr, kind="transpose", device="cpu"):
    """A non-contiguous SpiralTorch view holding the same values as ``arr``.

    ``transpose``: the transposed view of a contiguous copy of ``arr.T``.
    ``slice``: every other element of a tensor twice as large along the last dim.
    """
    arr = np.asarray(arr)
    if kind == "transpose":
        if arr.ndim < 2:
            return noncontig(arr, "slice", device=device)
        base = st_tensor(np.ascontiguousarray(np.swapaxes(arr, -1, -2)), device=device)
        v = base.transpose(-1, -2)
    elif kind == "slice":
        if arr.ndim == 0:
            return st_tensor(arr, device=device)
        big = np.zeros(arr.shape[:-1] + (arr.shape[-1] * 2,), dtype=arr.dtype)
        big[..., ::2] = arr
        base = st_tensor(big, device=device)
        v = base[..., ::2]
    else:  # pragma: no cover
        raise ValueError(kind)
    assert tuple(v.shape) == arr.shape
    if arr.size > 1 and any(s > 1 for s in arr.shape):
        assert not v.is_contiguous() or arr.ndim == 0
    return v


def assert_close(actual, expected, rtol=None, atol=None, check_dtype=True, equal_nan=True, check_device=True):
    """Compares a SpiralTorch tensor to a NumPy array (values, shape and dtype).

    Inside a test that takes the ``device`` fixture, a tensor ``actual`` must also be on
    that device (an op that silently computed on the host would otherwise pass)."""
    expected = np.asarray(expected)
    if isinstance(actual, st.Tensor):
        if check_device and _ACTIVE_DEVICE is not None:
            assert same_device(actual, _ACTIVE_DEVICE), \
                f"result is on {actual.device}, expected the test's device {_ACTIVE_DEVICE}"
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


def numerical_grads(fn, arrays, weights, eps=1e-6, device="cpu"):
    """Central finite differences of ``sum(fn(*inputs) * weights)`` w.r.t. every array.

    The function is evaluated on ``device`` (so the differences see that device's
    arithmetic); the weighted sum is taken on the host in float64."""
    grads = []

    def scalar(arrs):
        with st.no_grad():
            out = fn(*[st.tensor(a, dtype=st.float64).to(device) for a in arrs])
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


def gradcheck(fn, *arrays, eps=1e-6, atol=1e-6, rtol=1e-5, seed=0, check_grad_of=None, device="cpu"):
    """Checks the autograd gradient of ``fn`` against central finite differences in float64.

    ``fn`` takes SpiralTorch tensors (one per array) and returns a tensor or a tuple of
    tensors. The scalar ``sum(out * w)`` with random ``w`` is differentiated, so every
    output element contributes with a distinct weight. ``check_grad_of`` optionally
    restricts which inputs are differentiated (indices); others are constants.
    Inputs are built on ``device``; both the backward and the finite differences run
    there, and the comparison is on the host. Returns the analytic gradients (NumPy).
    """
    arrays = [np.array(a, dtype=np.float64) for a in arrays]
    which = list(range(len(arrays))) if check_grad_of is None else list(check_grad_of)
    ts = [st.tensor(a, dtype=st.float64).to(device).requires_grad_(i in which) for i, a in enumerate(arrays)]
    out = fn(*ts)
    outs = list(out) if isinstance(out, (list, tuple)) else [out]
    g = rng(seed + 12345)
    weights = [g.uniform(0.5, 1.5, size=tuple(o.shape)) for o in outs]
    loss = None
    for o, w in zip(outs, weights):
        if not o.requires_grad:
            continue
        assert same_device(o, device), f"output is on {o.device}, expected {device}"
        term = (o * st.tensor(w, dtype=st.float64).to(device)).sum()
        loss = term if loss is None else loss + term
    assert loss is not None, "no output requires grad"
    loss.backward()
    num = numerical_grads(fn, arrays, weights, eps=eps, device=device)
    analytic = []
    for i in which:
        t = ts[i]
        got = t.grad
        if got is None:
            got_np = np.zeros_like(arrays[i])
        else:
            assert tuple(got.shape) == arrays[i].shape, f"grad shape {tuple(got.shape)} != {arrays[i].shape}"
            assert got.dtype == st.float64
            assert same_device(got, device), f"grad is on {got.device}, expected {device}"
            got_np = to_np(got)
        np.testing.assert_allclose(got_np, num[i], rtol=rtol, atol=atol,
                                   err_msg=f"gradient of input {i} disagrees with finite differences")
        analytic.append(got_np)
    return analytic


# ---------------------------------------------------------------------------
# PyTorch comparison helpers
# ---------------------------------------------------------------------------


def torch_compare(st_fn, torch_fn, *arrays, rtol=1e-10, atol=1e-10, grad=True, seed=0, device="cpu"):
    """Runs the same function in SpiralTorch (inputs on ``device``) and PyTorch (float64,
    on the host) and compares the forward value and the gradients of ``sum(out * w)``."""
    import torch as _torch

    arrays = [np.array(a, dtype=np.float64) for a in arrays]
    sts = [st.tensor(a, dtype=st.float64).to(device).requires_grad_(grad) for a in arrays]
    tts = [_torch.tensor(a, dtype=_torch.float64, requires_grad=grad) for a in arrays]
    so = st_fn(*sts)
    to = torch_fn(*tts)
    so_list = list(so) if isinstance(so, (list, tuple)) else [so]
    to_list = list(to) if isinstance(to, (list, tuple)) else [to]
    assert len(so_list) == len(to_list)
    for s, t in zip(so_list, to_list):
        assert tuple(s.shape) == tuple(t.shape)
        assert same_device(s, device), f"output is on {s.device}, expected {device}"
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
        s_term = (s * st.tensor(w, dtype=st.float64).to(device)).sum()
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
    """Every test starts with grad mode on and a fixed seed (PyTorch's too, where a test module
    imported it: its modules' initial weights then do not depend on which tests ran before);
    thread count, the TF32 matmul switch (float32 tolerances assume it off) and GEMM tuning restored."""
    threads = st.get_num_threads()
    tf32 = st.cuda.allow_tf32()
    tuning = st.cuda.tunable.is_enabled()
    st.set_grad_enabled(True)
    st.manual_seed(1234)
    if "torch" in sys.modules:
        sys.modules["torch"].manual_seed(1234)
    yield
    st.set_grad_enabled(True)
    st.set_num_threads(threads)
    st.cuda.set_allow_tf32(tf32)
    st.cuda.tunable.enable(tuning)


@pytest.fixture(scope="session")
def bentoml_in_tmp(tmp_path_factory):
    """(bentoml, home): bentoml imported with its model store in a temp dir. BENTOML_HOME is read
    when bentoml is first imported, so every test file shares this one store."""
    home = tmp_path_factory.mktemp("bentoml")
    old = os.environ.get("BENTOML_HOME")
    os.environ["BENTOML_HOME"] = str(home)
    try:
        yield pytest.importorskip("bentoml"), home
    finally:
        if old is None:
            os.environ.pop("BENTOML_HOME", None)
        else:
            os.environ["BENTOML_HOME"] = old
