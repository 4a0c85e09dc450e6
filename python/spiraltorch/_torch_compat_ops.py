"""More PyTorch functions, glue over the native ops: std_mean/var_mean (two native reductions),
as_tensor, randint_like and dtype/shape queries (broadcast_shapes/tensors, result_type,
promote_types, can_cast, is_tensor, ...). ``install()`` puts them into the package namespace; it
attaches nothing to Tensor. What computes is C++ bound in python/src (tensordot, searchsorted/bucketize,
bernoulli, block_diag, cartesian_prod, combinations, tril/triu_indices, logspace, ...)."""

from __future__ import annotations

from typing import Any, Optional, Tuple

from . import _core

Tensor = _core.Tensor
DT = _core.dtype


def _dev(t: Tensor) -> str:
    return str(t.device)


def clone(input: Tensor) -> Tensor:
    """A copy of ``input`` with its own storage (differentiable), as torch.clone."""
    return input.clone()


# ---------------------------------------------------------------- products


# ---------------------------------------------------------------- statistics and order statistics


def var_mean(input: Tensor, dim: Any = None, unbiased: Any = None, keepdim: bool = False, *,
             correction: Any = None) -> Tuple[Tensor, Tensor]:
    """``(var, mean)`` over ``dim`` with ``correction`` (1 = Bessel's, the default), as torch.var_mean."""
    v = _core.var(input, dim, unbiased, keepdim, correction)
    return v, _core.mean(input, dim, keepdim) if dim is not None else _mean_all(input, keepdim)


def std_mean(input: Tensor, dim: Any = None, unbiased: Any = None, keepdim: bool = False, *,
             correction: Any = None) -> Tuple[Tensor, Tensor]:
    """``(std, mean)`` over ``dim`` with ``correction`` (1 = Bessel's, the default), as torch.std_mean."""
    s = _core.std(input, dim, unbiased, keepdim, correction)
    return s, _core.mean(input, dim, keepdim) if dim is not None else _mean_all(input, keepdim)


def _mean_all(x: Tensor, keepdim: bool) -> Tensor:
    return _core.mean(x, list(range(x.dim())), keepdim) if keepdim else _core.mean(x)


# ---------------------------------------------------------------- constructors


def as_tensor(data: Any, dtype: Any = None, device: Any = None) -> Tensor:
    """``data`` as a tensor without copying where possible: a tensor of the asked dtype and device is
    returned itself, a NumPy array of a supported dtype is shared (as torch.as_tensor)."""
    if isinstance(data, Tensor):
        out = data if dtype is None or data.dtype == dtype else data.to(dtype)
        return out if device is None or str(out.device) == str(device) else out.to(str(device))
    mod = type(data).__module__
    if mod == "numpy" and type(data).__name__ == "ndarray" and dtype is None:
        try:
            out = _core.from_numpy(data)
        except (TypeError, ValueError, _core.SpiralError):
            out = _core.tensor(data)
    else:
        out = _core.tensor(data, dtype=dtype)
    return out if device is None else out.to(str(device))


# ---------------------------------------------------------------- counting


# ---------------------------------------------------------------- sampling


def randint_like(input: Tensor, low: int = 0, high: Optional[int] = None, *, dtype: Any = None,
                 device: Any = None, generator: Any = None) -> Tensor:
    """Uniform integers in ``[low, high)`` (``randint_like(x, high)`` starts at 0) with the shape of
    ``input`` and its dtype unless one is given, as torch.randint_like."""
    if high is None:
        low, high = 0, low
    if high <= low:
        raise _core.SpiralValueError(f"randint_like: expected low < high, got low={low}, high={high}")
    kw = {"generator": generator} if generator is not None else {}
    out = _core.randint(low, high, tuple(input.shape), device=str(device or input.device), **kw)
    return out.to(dtype or input.dtype)


# ---------------------------------------------------------------- dtype and shape queries


def broadcast_shapes(*shapes: Any) -> Tuple[int, ...]:
    """The shape that tensors of the given shapes broadcast to (NumPy rules), as torch.broadcast_shapes."""
    norm = [(s,) if isinstance(s, int) else tuple(s) for s in shapes]
    nd = max((len(s) for s in norm), default=0)
    out = [1] * nd
    for s in norm:
        for i, v in enumerate((1,) * (nd - len(s)) + s):
            if v < 0:
                raise _core.SpiralValueError(f"broadcast_shapes: negative size in shape {s}")
            if v != 1:
                if out[i] not in (1, v):
                    raise _core.ShapeError(f"broadcast_shapes: shapes {tuple(norm)} cannot be broadcast together "
                                           f"(size {out[i]} against {v} at dim {i})")
                out[i] = v
    return tuple(out)


def broadcast_tensors(*tensors: Tensor) -> Tuple[Tensor, ...]:
    """Views of the tensors expanded to their common broadcast shape, as torch.broadcast_tensors."""
    shape = broadcast_shapes(*(tuple(t.shape) for t in tensors))
    return tuple(t.expand(shape) for t in tensors)


_CATEGORY = {DT.bool: 0, DT.uint8: 1, DT.int32: 1, DT.int64: 1, DT.float16: 2, DT.bfloat16: 2, DT.float32: 2,
             DT.float64: 2}


def _check_dtype(d: Any, op: str) -> Any:
    if not isinstance(d, DT):
        raise _core.DtypeError(f"{op}: expected a dtype, got {d!r}")
    return d


def promote_types(type1: Any, type2: Any) -> Any:
    """The smallest dtype both ``type1`` and ``type2`` convert to without losing their category, as the
    library's binary ops promote (torch.promote_types)."""
    a, b = _check_dtype(type1, "promote_types"), _check_dtype(type2, "promote_types")
    if a == b:
        return a
    return (_core.zeros((1,), dtype=a) + _core.zeros((1,), dtype=b)).dtype


def result_type(tensor1: Any, tensor2: Any) -> Any:
    """The dtype an arithmetic op on ``tensor1`` and ``tensor2`` (tensors or Python numbers) produces,
    as torch.result_type: a number or a 0-d tensor only changes the dtype when it is of a higher category."""
    def probe(v: Any) -> Any:
        if isinstance(v, Tensor):
            return _core.zeros((1,) * v.dim(), dtype=v.dtype)
        if isinstance(v, (bool, int, float)):
            return v
        raise _core.DtypeError(f"result_type: expected tensors or numbers, got {type(v).__name__}")
    a, b = probe(tensor1), probe(tensor2)
    if not isinstance(a, Tensor) and not isinstance(b, Tensor):
        rank = {bool: 0, int: 1, float: 2}
        return (DT.bool, DT.int64, DT.float32)[max(rank[type(a)], rank[type(b)])]
    if isinstance(a, Tensor) and isinstance(b, Tensor) and a.dtype == b.dtype:
        return a.dtype
    if not isinstance(a, Tensor):
        a, b = b, a
    if isinstance(b, bool) or (isinstance(b, Tensor) and b.dtype == DT.bool and a.dtype == DT.bool):
        return a.dtype if not isinstance(b, Tensor) else DT.bool
    return (a + b).dtype


def can_cast(from_: Any, to: Any) -> bool:
    """Whether converting ``from_`` to ``to`` keeps the value's category (bool < integer < floating point),
    as torch.can_cast."""
    return _CATEGORY[_check_dtype(from_, "can_cast")] <= _CATEGORY[_check_dtype(to, "can_cast")]


def is_tensor(obj: Any) -> bool:
    """Whether ``obj`` is a spiraltorch Tensor, as torch.is_tensor."""
    return isinstance(obj, Tensor)


def is_complex(input: Tensor) -> bool:
    """Whether ``input`` is complex: False for every Tensor (complex numbers live in ``ComplexTensor``)."""
    return type(input).__name__ == "ComplexTensor"


def numel(input: Tensor) -> int:
    """The number of elements of ``input``, as torch.numel."""
    return input.numel()


def get_default_dtype() -> Any:
    """The dtype factories use for floating-point values: always float32 here (there is no
    set_default_dtype)."""
    return DT.float32


# ---------------------------------------------------------------- installation

_FUNCTIONS = [
    "clone",
    "std_mean", "var_mean",
    "randint_like",
    "broadcast_tensors", "broadcast_shapes", "result_type", "promote_types", "can_cast", "is_tensor",
    "is_complex", "numel", "get_default_dtype", "as_tensor",
]

def install(namespace: dict) -> None:
    """Puts the functions into the package namespace (it attaches nothing to Tensor)."""
    for name in _FUNCTIONS:
        namespace[name] = globals()[name]
