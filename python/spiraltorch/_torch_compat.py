"""PyTorch names that ported code reaches for, as glue over the native ops (meshgrid, randperm,
multinomial and cdist are C++ ops bound in python/src): ``where(cond)``, ``inference_mode``, the
legacy ``FloatTensor``-style constructors and the global switches (matmul precision, determinism,
RNG state). ``install()`` puts them into the package namespace; it attaches
nothing to ``Tensor``, whose surface (``device``, ``new_*``, ``nonzero``, ``index_add``, ``unique``,
``flip``/``roll``, ...) is bound in python/src."""

from __future__ import annotations

from typing import Any, Optional



class _LazyNumpy:
    """NumPy on first use (finfo/iinfo): importing spiraltorch must not import it."""

    def __getattr__(self, name: str) -> Any:
        import numpy

        return getattr(numpy, name)


np = _LazyNumpy()

from . import _core

Tensor = _core.Tensor


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


def where(condition: Tensor, input: Any = None, other: Any = None) -> Any:
    """``where(cond, x, y)`` picks x where cond holds else y; ``where(cond)`` is
    ``nonzero(cond, as_tuple=True)``, as torch.where."""
    if input is None and other is None:
        return _core.nonzero(condition, as_tuple=True)
    if input is None or other is None:
        raise _core.SpiralValueError("where: give both input and other, or neither")
    return _native_where(condition, input, other)


_native_where = _core.where


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
    so its state_dict keys carry no ``_orig_mod.`` prefix. ``mode="max-autotune"`` (and
    ``"max-autotune-no-cudagraphs"``), which asks PyTorch to time its GEMM kernels, turns on
    ``st.cuda.tunable`` (process-wide: CUDA GEMM shapes are timed once and the fastest kept)."""
    for key, value in (("mode", mode), ("backend", backend)):
        if value is not None and not isinstance(value, str) and not callable(value):
            raise TypeError(f"compile: {key} must be a string, got {type(value).__name__}")
    if not disable and mode in ("max-autotune", "max-autotune-no-cudagraphs"):
        _core._cuda_set_gemm_tuning(True)
    if model is None:
        return lambda fn: fn
    if not callable(model):
        raise TypeError(f"compile: expected a module or a function, got {type(model).__name__}")
    return model


def install(namespace: dict) -> None:
    """Puts the functions and classes into the package namespace."""
    for name in ("inference_mode", "where",
                 "compile", "FloatTensor", "DoubleTensor", "HalfTensor", "BFloat16Tensor", "LongTensor", "IntTensor",
                 "ByteTensor", "BoolTensor", "set_float32_matmul_precision", "get_float32_matmul_precision",
                 "use_deterministic_algorithms", "are_deterministic_algorithms_enabled", "get_rng_state",
                 "set_rng_state", "seed", "finfo", "iinfo"):
        namespace[name] = globals()[name]
