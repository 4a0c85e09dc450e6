"""PyTorch names that ported code reaches for, written as compositions of native ops (so autograd and
every device come with them): ``where(cond)``, ``meshgrid``, ``randperm``, ``multinomial``, ``cdist``,
``inference_mode``, the legacy ``FloatTensor``-style constructors and the global switches (matmul
precision, determinism, RNG state). ``install()`` puts them into the package namespace; it attaches
nothing to ``Tensor``, whose surface (``device``, ``new_*``, ``nonzero``, ``index_add``, ``unique``,
``flip``/``roll``, ...) is bound in python/src."""

from __future__ import annotations

import math
from typing import Any, Optional, Sequence, Tuple, Union



class _LazyNumpy:
    """NumPy on first use (index arithmetic on the host): importing spiraltorch must not import it."""

    def __getattr__(self, name: str) -> Any:
        import numpy

        return getattr(numpy, name)


np = _LazyNumpy()

from . import _core

Tensor = _core.Tensor
_Dims = Union[int, Sequence[int]]


class inference_mode:
    """Context manager and decorator like ``torch.inference_mode``: no graph is recorded inside
    (``mode=False`` leaves recording as it is)."""

    def __init__(self, mode: bool = True) -> None:
        self.mode = mode

    def __enter__(self) -> None:
        self._prev = _core.is_grad_enabled()
        if self.mode:
            _core.set_grad_enabled(False)

    def __exit__(self, *exc: object) -> None:
        _core.set_grad_enabled(self._prev)

    def __call__(self, fn):  # type: ignore[no-untyped-def]
        import functools

        @functools.wraps(fn)
        def wrapped(*args: Any, **kwargs: Any) -> Any:
            with inference_mode(self.mode):
                return fn(*args, **kwargs)

        return wrapped


def _dims(dims: _Dims, ndim: int, op: str) -> list:
    out = []
    for d in [dims] if isinstance(dims, int) else list(dims):
        if not -ndim <= d < max(ndim, 1):
            raise _core.SpiralIndexError(f"{op}: dimension {d} is out of range for a tensor of {ndim} dimensions")
        out.append(d % max(ndim, 1))
    if len(set(out)) != len(out):
        raise _core.SpiralValueError(f"{op}: dimension {dims} repeats a dimension")
    return out


def _index(values: Sequence[int], like: Tensor) -> Tensor:
    return _core.tensor(np.asarray(values, dtype=np.int64)).to(str(like.device))


def where(condition: Tensor, input: Any = None, other: Any = None) -> Any:
    """``where(cond, x, y)`` picks x where cond holds else y; ``where(cond)`` is
    ``nonzero(cond, as_tuple=True)``, as torch.where."""
    if input is None and other is None:
        return _core.nonzero(condition, as_tuple=True)
    if input is None or other is None:
        raise _core.SpiralValueError("where: give both input and other, or neither")
    return _native_where(condition, input, other)


_native_where = _core.where


def meshgrid(*tensors: Any, indexing: str = "ij") -> Tuple[Tensor, ...]:
    """Coordinate grids from 1-D tensors (``indexing='ij'`` matrix order or ``'xy'`` Cartesian), as
    torch.meshgrid."""
    if len(tensors) == 1 and not isinstance(tensors[0], Tensor):
        tensors = tuple(tensors[0])
    if indexing not in ("ij", "xy"):
        raise _core.SpiralValueError(f"meshgrid: indexing must be 'ij' or 'xy', got {indexing!r}")
    if any(t.dim() > 1 for t in tensors):
        raise _core.ShapeError("meshgrid: expects 0-D or 1-D tensors")
    flat = [t.reshape(-1) for t in tensors]
    swap = indexing == "xy" and len(flat) >= 2
    if swap:
        flat[0], flat[1] = flat[1], flat[0]
    shape = tuple(t.shape[0] for t in flat)
    grids = []
    for i, t in enumerate(flat):
        view = [1] * len(flat)
        view[i] = shape[i]
        grids.append(t.reshape(tuple(view)).expand(shape))
    if swap:  # 'xy' is 'ij' on the first two inputs swapped, with those two grids swapped back
        grids[0], grids[1] = grids[1], grids[0]
    return tuple(grids)


def randperm(n: int, *, generator: Any = None, dtype: Any = None, device: Any = None,
             requires_grad: bool = False) -> Tensor:
    """A uniformly random permutation of 0, 1, ..., n-1 (int64 unless dtype says otherwise)."""
    if n < 0:
        raise _core.SpiralValueError(f"randperm: n must be non-negative, got {n}")
    kw = {"generator": generator} if generator is not None else {}
    keys = _core.rand(n, device=str(device or "cpu"), **kw)
    perm = keys.argsort()
    return perm if dtype is None else perm.to(dtype)


def multinomial(input: Tensor, num_samples: int, replacement: bool = False, *, generator: Any = None) -> Tensor:
    """Category indices drawn from the rows of ``input`` (non-negative weights, 1-D or 2-D) — with
    replacement by inverting the cumulative distribution, without by the Gumbel top-k trick (which
    draws exactly as sampling one at a time without replacement) — as torch.multinomial."""
    probs = input if input.dim() == 2 else input.reshape(1, -1)
    if input.dim() not in (1, 2):
        raise _core.ShapeError(f"multinomial: expected a 1-D or 2-D input, got {input.dim()}-D")
    rows, n = tuple(probs.shape)
    if num_samples <= 0:
        raise _core.SpiralValueError(f"multinomial: num_samples must be positive, got {num_samples}")
    p = probs.to(_core.dtype.float64) if probs.dtype != _core.dtype.float64 else probs
    if bool((p < 0).any().item()) or not bool(p.isfinite().all().item()):
        raise _core.SpiralValueError("multinomial: probabilities must be finite and non-negative")
    positive = (p > 0).sum(1)
    if bool((positive == 0).any().item()):
        raise _core.SpiralValueError("multinomial: a row of probabilities sums to zero")
    if not replacement and bool((positive < num_samples).any().item()):
        raise _core.SpiralValueError(f"multinomial: cannot draw {num_samples} samples without replacement from a row with "
                               f"{int(positive.min().item())} non-zero categories")
    kw = {"generator": generator} if generator is not None else {}
    u = _core.rand(rows, num_samples, dtype=_core.dtype.float64, device=str(input.device), **kw)
    if replacement:
        cdf = (p / p.sum(1, keepdim=True)).cumsum(1)
        out = (cdf.unsqueeze(1) <= u.unsqueeze(2)).sum(2).clamp(max=n - 1)
    else:
        g = _core.rand(rows, n, dtype=_core.dtype.float64, device=str(input.device), **kw)
        keys = p.log() - (-(g.clamp(min=1e-300)).log()).log()
        out = keys.topk(num_samples, 1)[1]
    out = out.to(_core.dtype.int64)
    return out if input.dim() == 2 else out.reshape(-1)


def cdist(x1: Tensor, x2: Tensor, p: float = 2.0) -> Tensor:
    """Pairwise p-norm distances between the rows of ``x1`` (..., P, M) and ``x2`` (..., R, M), shape
    (..., P, R), as torch.cdist (computed from the differences, not the |a|^2 + |b|^2 - 2ab shortcut)."""
    if x1.dim() < 2 or x2.dim() < 2 or x1.shape[-1] != x2.shape[-1]:
        raise _core.ShapeError(f"cdist: expected (..., P, M) and (..., R, M), got {tuple(x1.shape)} and "
                               f"{tuple(x2.shape)}")
    if p < 0:
        raise _core.SpiralValueError(f"cdist: p must be non-negative, got {p}")
    diff = (x1.unsqueeze(-2) - x2.unsqueeze(-3)).abs()
    if math.isinf(p):
        return diff.amax(-1)
    if p == 0:
        return (diff != 0).to(x1.dtype).sum(-1)
    if p == 2:
        return (diff * diff).sum(-1).sqrt()
    if p == 1:
        return diff.sum(-1)
    return diff.pow(p).sum(-1).pow(1.0 / p)


class _LegacyTensorType(type):
    """isinstance(t, torch.FloatTensor) is True for a tensor of that dtype on any device."""

    def __instancecheck__(cls, obj: Any) -> bool:
        return isinstance(obj, Tensor) and obj.dtype == getattr(_core.dtype, cls._dtype_name)


def _legacy_tensor_type(name: str, dtype_name: str) -> type:
    def __new__(cls: type, *args: Any, device: Any = None) -> Tensor:
        dtype = getattr(_core.dtype, dtype_name)
        if len(args) == 1 and not isinstance(args[0], int):
            return _core.tensor(args[0], dtype=dtype, device=device)  # FloatTensor(data)
        return _core.zeros(*args, dtype=dtype, device=device)  # FloatTensor(2, 3): PyTorch leaves it uninitialised

    doc = (f"torch.{name}: the legacy constructor, {name}(data) = tensor(data, dtype={dtype_name}) and "
           f"{name}(*sizes) = a {dtype_name} tensor of that shape (zero-filled); isinstance(t, {name}) checks "
           "the dtype.")
    return _LegacyTensorType(name, (), {"__new__": __new__, "__doc__": doc, "_dtype_name": dtype_name})


FloatTensor = _legacy_tensor_type("FloatTensor", "float32")
DoubleTensor = _legacy_tensor_type("DoubleTensor", "float64")
HalfTensor = _legacy_tensor_type("HalfTensor", "float16")
BFloat16Tensor = _legacy_tensor_type("BFloat16Tensor", "bfloat16")
LongTensor = _legacy_tensor_type("LongTensor", "int64")
IntTensor = _legacy_tensor_type("IntTensor", "int32")
ByteTensor = _legacy_tensor_type("ByteTensor", "uint8")
BoolTensor = _legacy_tensor_type("BoolTensor", "bool")


_MATMUL_PRECISION = ["high"]  # what set_float32_matmul_precision last asked for, when TF32 is on


def set_float32_matmul_precision(precision: str) -> None:
    """torch.set_float32_matmul_precision: "highest" keeps float32 CUDA matmuls in full float32,
    "high" and "medium" let them use TF32 tensor cores (the switch of ``st.cuda.set_allow_tf32`` and
    ``st.backends.cuda.matmul.allow_tf32``). CPU matmuls are float32 either way."""
    if precision not in ("highest", "high", "medium"):
        raise _core.SpiralValueError(f"set_float32_matmul_precision: expected 'highest', 'high' or 'medium', "
                                     f"got {precision!r}")
    _core._cuda_set_allow_tf32(precision != "highest")
    if precision != "highest":
        _MATMUL_PRECISION[0] = precision


def get_float32_matmul_precision() -> str:
    """"highest" unless float32 CUDA matmuls may use TF32 (then what was set: "high" or "medium")."""
    return _MATMUL_PRECISION[0] if _core._cuda_allow_tf32() else "highest"


_DETERMINISTIC = {"mode": False, "warn_only": False}


def use_deterministic_algorithms(mode: bool, *, warn_only: bool = False) -> None:
    """torch.use_deterministic_algorithms: recorded (``are_deterministic_algorithms_enabled``). No
    SpiralTorch op switches algorithms on it: random numbers come from the counter-based Philox
    generator (the same for any thread count) and CUDA convolutions use deterministic cuDNN
    algorithms."""
    _DETERMINISTIC["mode"], _DETERMINISTIC["warn_only"] = bool(mode), bool(warn_only)


def are_deterministic_algorithms_enabled() -> bool:
    """Whether ``use_deterministic_algorithms(True)`` is in effect (torch's name; the flag as last set)."""
    return _DETERMINISTIC["mode"]


def get_rng_state() -> Tensor:
    """The global generator's state as a uint8 tensor (its seed and offset, 16 little-endian bytes),
    for checkpoints: ``set_rng_state`` restores it and the same numbers follow."""
    seed, offset = _core._get_rng_state()
    raw = int(seed).to_bytes(8, "little") + int(offset).to_bytes(8, "little")
    return _core.tensor(list(raw), dtype=_core.dtype.uint8)


def set_rng_state(new_state: Tensor) -> None:
    """Restores a state from ``get_rng_state``."""
    raw = bytes(int(v) for v in new_state.tolist())
    if len(raw) != 16:
        raise _core.SpiralValueError(f"set_rng_state: expected the 16-byte state of get_rng_state, got {len(raw)} bytes")
    _core._set_rng_state(int.from_bytes(raw[:8], "little"), int.from_bytes(raw[8:], "little"))


def seed() -> int:
    """Seeds the global generator with a non-deterministic number and returns it (torch.seed)."""
    import random

    value = random.SystemRandom().getrandbits(63)
    _core.manual_seed(value)
    return value


class finfo:
    """torch.finfo(dtype): bits, eps, max, min, tiny (= smallest_normal) and resolution of a floating
    dtype (float32 by default)."""

    _BF16 = dict(bits=16, eps=0.0078125, max=3.3895313892515355e38, min=-3.3895313892515355e38,
                 tiny=1.1754943508222875e-38, resolution=0.01)

    def __init__(self, type: Any = None) -> None:
        dtype = _core.dtype.float32 if type is None else type
        if dtype == _core.dtype.bfloat16:
            info = dict(self._BF16)
        else:
            names = {_core.dtype.float16: "float16", _core.dtype.float32: "float32", _core.dtype.float64: "float64"}
            if dtype not in names:
                raise TypeError(f"finfo: {dtype} is not a floating dtype")
            f = np.finfo(names[dtype])
            info = dict(bits=int(f.bits), eps=float(f.eps), max=float(f.max), min=float(f.min),
                        tiny=float(f.tiny), resolution=10.0 ** -int(f.precision))
        self.dtype = dtype
        self.bits, self.eps, self.max, self.min = info["bits"], info["eps"], info["max"], info["min"]
        self.tiny = self.smallest_normal = info["tiny"]
        self.resolution = info["resolution"]

    def __repr__(self) -> str:
        return (f"finfo(resolution={self.resolution}, min={self.min:g}, max={self.max:g}, eps={self.eps:g}, "
                f"smallest_normal={self.tiny:g}, tiny={self.tiny:g}, dtype={self.dtype})")


class iinfo:
    """torch.iinfo(dtype): bits, min and max of an integer dtype."""

    def __init__(self, type: Any) -> None:
        names = {_core.dtype.uint8: "uint8", _core.dtype.int32: "int32", _core.dtype.int64: "int64"}
        if type not in names:
            raise TypeError(f"iinfo: {type} is not an integer dtype")
        i = np.iinfo(names[type])
        self.dtype, self.bits, self.min, self.max = type, int(i.bits), int(i.min), int(i.max)

    def __repr__(self) -> str:
        return f"iinfo(min={self.min}, max={self.max}, dtype={self.dtype})"


def compile(model: Any = None, *, fullgraph: bool = False, dynamic: Any = None, backend: Any = "inductor",
            mode: Optional[str] = None, options: Optional[dict] = None, disable: bool = False) -> Any:
    """``torch.compile`` for code written for PyTorch 2: returns ``model`` itself (a module or a
    function), ready to call; as a decorator (``@compile`` or ``@compile(mode=...)``) it returns
    the function. SpiralTorch has no graph compiler: every call runs eagerly through the native
    ops, which is what ``torch.compile`` promises to compute. The returned object is the one given,
    so its state_dict keys carry no ``_orig_mod.`` prefix."""
    for key, value in (("mode", mode), ("backend", backend)):
        if value is not None and not isinstance(value, str) and not callable(value):
            raise TypeError(f"compile: {key} must be a string, got {type(value).__name__}")
    if model is None:
        return lambda fn: fn
    if not callable(model):
        raise TypeError(f"compile: expected a module or a function, got {type(model).__name__}")
    return model


def install(namespace: dict) -> None:
    """Puts the functions and classes into the package namespace."""
    for name in ("inference_mode", "where",
                 "meshgrid", "randperm", "multinomial", "cdist",
                 "compile", "FloatTensor", "DoubleTensor", "HalfTensor", "BFloat16Tensor", "LongTensor", "IntTensor",
                 "ByteTensor", "BoolTensor", "set_float32_matmul_precision", "get_float32_matmul_precision",
                 "use_deterministic_algorithms", "are_deterministic_algorithms_enabled", "get_rng_state",
                 "set_rng_state", "seed", "finfo", "iinfo"):
        namespace[name] = globals()[name]
