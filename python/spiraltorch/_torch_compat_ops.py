"""More PyTorch tensor functions, composed from native differentiable ops so gradients and every
device come with them: tensordot, order statistics (median, nanmedian, quantile/nanquantile, mode,
kthvalue, aminmax), constructors (block_diag, cartesian_prod, combinations, tril/triu_indices,
logspace, as_tensor), counting (bucketize, searchsorted, bincount, histc, count_nonzero), statistics
(std_mean/var_mean, cov, corrcoef), sampling (bernoulli, randint_like) and dtype/shape queries
(broadcast_shapes/tensors, result_type, promote_types, can_cast, is_tensor, ...). ``install()`` puts
them into the package namespace and, for the Tensor methods torch has that are not native yet,
attaches them (tests/python/test_tensor_surface.py lists those; the rest of torch's surface is bound
in python/src: flip, roll, the scans, movedim, rot90, the elementwise helpers, products, ...)."""

from __future__ import annotations

import itertools
import math
from typing import Any, Optional, Sequence, Tuple, Union

from . import _core
from ._torch_compat import _dims, _index

Tensor = _core.Tensor
DT = _core.dtype
_Dims = Union[int, Sequence[int]]

_FLOATS = (DT.float32, DT.float64, DT.float16, DT.bfloat16)
_INTS = (DT.uint8, DT.int32, DT.int64)



def _dev(t: Tensor) -> str:
    return str(t.device)


def _dim(dim: int, ndim: int, op: str) -> int:
    return _dims(dim, max(ndim, 1), op)[0]


def _float(x: Tensor) -> Tensor:
    """x itself when floating, else as float32 (what torch's float-only functions do with integers)."""
    return x if x.dtype in _FLOATS else x.to(DT.float32)


def _scalar(x: Any, like: Tensor, dtype: Any = None) -> Tensor:
    """A Python number as a 0-d tensor beside ``like`` (its dtype unless one is given)."""
    return _core.full((), x, dtype=dtype or like.dtype, device=_dev(like))


def clone(input: Tensor) -> Tensor:
    """A copy of ``input`` with its own storage (differentiable), as torch.clone."""
    return input.clone()


# ---------------------------------------------------------------- products


def tensordot(a: Tensor, b: Tensor, dims: Any = 2) -> Tensor:
    """Sums the products of ``a`` and ``b`` over the last ``dims`` dims of a and the first of b (an int), or
    over the listed pairs ``dims=([a dims], [b dims])``, as torch.tensordot."""
    if isinstance(dims, Tensor):
        dims = dims.tolist()
    if isinstance(dims, int):
        if dims < 0 or dims > min(a.dim(), b.dim()):
            raise _core.SpiralValueError(f"tensordot: dims={dims} must be between 0 and {min(a.dim(), b.dim())} for "
                                         f"shapes {tuple(a.shape)} and {tuple(b.shape)}")
        da = list(range(a.dim() - dims, a.dim()))
        db = list(range(dims))
    else:
        if len(dims) != 2:
            raise _core.SpiralValueError(f"tensordot: dims must be an int or two lists of dims, got {dims}")
        da_raw, db_raw = ([d] if isinstance(d, int) else list(d) for d in dims)
        if len(da_raw) != len(db_raw):
            raise _core.SpiralValueError(f"tensordot: {len(da_raw)} dims of a paired with {len(db_raw)} dims of b")
        da = _dims(da_raw, a.dim(), "tensordot") if da_raw else []
        db = _dims(db_raw, b.dim(), "tensordot") if db_raw else []
    for x, y in zip(da, db):
        if a.shape[x] != b.shape[y]:
            raise _core.ShapeError(f"tensordot: dim {x} of a {tuple(a.shape)} has size {a.shape[x]} but dim {y} of "
                                   f"b {tuple(b.shape)} has size {b.shape[y]}")
    fa = [d for d in range(a.dim()) if d not in da]
    fb = [d for d in range(b.dim()) if d not in db]
    k = math.prod(a.shape[d] for d in da)
    ma = a.permute(fa + da).reshape(math.prod(a.shape[d] for d in fa), k) if a.dim() else a.reshape(1, 1)
    mb = b.permute(db + fb).reshape(k, math.prod(b.shape[d] for d in fb)) if b.dim() else b.reshape(1, 1)
    return _core.matmul(ma, mb).reshape(tuple(a.shape[d] for d in fa) + tuple(b.shape[d] for d in fb))


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


def _promoted(tensors: Sequence[Tensor]) -> Any:
    dt = tensors[0].dtype
    for t in tensors[1:]:
        dt = promote_types(dt, t.dtype)
    return dt


def block_diag(*tensors: Tensor) -> Tensor:
    """A block-diagonal matrix with the given 0-, 1- or 2-D tensors on its diagonal, as torch.block_diag."""
    mats = []
    for i, t in enumerate(tensors):
        if t.dim() > 2:
            raise _core.ShapeError(f"block_diag: input {i} has {t.dim()} dimensions, expected 2 or fewer")
        mats.append(t.reshape(1, -1) if t.dim() < 2 else t)
    if not mats:
        return _core.zeros((1, 0))
    dt = _promoted(mats)
    dev = _dev(mats[0])
    cols = sum(m.shape[1] for m in mats)
    rows = []
    left = 0
    for m in mats:
        r, c = tuple(m.shape)
        parts = [_core.zeros((r, left), dtype=dt, device=dev), m.to(dt),
                 _core.zeros((r, cols - left - c), dtype=dt, device=dev)]
        rows.append(_core.cat(parts, 1))
        left += c
    return _core.cat(rows, 0)


def cartesian_prod(*tensors: Tensor) -> Tensor:
    """Every combination of the elements of the 1-D inputs, one per row (a single input is returned as is),
    as torch.cartesian_prod."""
    from ._torch_compat import meshgrid

    for t in tensors:
        if t.dim() != 1:
            raise _core.ShapeError(f"cartesian_prod: expects 1-D tensors, got shape {tuple(t.shape)}")
    if len(tensors) == 1:
        return tensors[0]
    grids = meshgrid(*tensors, indexing="ij")
    return _core.stack([g.reshape(-1) for g in grids], 1)


def combinations(input: Tensor, r: int = 2, with_replacement: bool = False) -> Tensor:
    """The length-``r`` combinations of the elements of a 1-D tensor (with or without replacement), one per
    row, as torch.combinations (itertools order)."""
    if input.dim() != 1:
        raise _core.ShapeError(f"combinations: expects a 1-D tensor, got shape {tuple(input.shape)}")
    if r < 0:
        raise _core.SpiralValueError(f"combinations: r must be non-negative, got {r}")
    n = input.shape[0]
    gen = itertools.combinations_with_replacement if with_replacement else itertools.combinations
    combos = list(gen(range(n), r))
    if r == 0:
        return _core.zeros((0,), dtype=input.dtype, device=_dev(input))
    if not combos:
        return _core.zeros((0, r), dtype=input.dtype, device=_dev(input))
    cols = [_core.index_select(input, 0, _index([c[j] for c in combos], input)) for j in range(r)]
    return _core.stack(cols, 1)


def _tri_indices(row: int, col: int, offset: int, upper: bool, dtype: Any, device: Any, op: str) -> Tensor:
    if row < 0 or col < 0:
        raise _core.SpiralValueError(f"{op}: row and col must be non-negative, got row={row}, col={col}")
    import numpy

    fn = numpy.triu_indices if upper else numpy.tril_indices
    rows, cols = fn(row, offset, col)
    out = _core.tensor(numpy.stack([rows, cols]).astype(numpy.int64).reshape(2, -1))
    return out.to(dtype or DT.int64).to(str(device or "cpu"))


def tril_indices(row: int, col: int, offset: int = 0, *, dtype: Any = None, device: Any = None) -> Tensor:
    """The (2, N) coordinates of the lower triangle (on and below diagonal ``offset``) of a row x col matrix,
    row-major, as torch.tril_indices."""
    return _tri_indices(row, col, offset, False, dtype, device, "tril_indices")


def triu_indices(row: int, col: int, offset: int = 0, *, dtype: Any = None, device: Any = None) -> Tensor:
    """The (2, N) coordinates of the upper triangle (on and above diagonal ``offset``), as torch.triu_indices."""
    return _tri_indices(row, col, offset, True, dtype, device, "triu_indices")


def logspace(start: float, end: float, steps: int, base: float = 10.0, *, dtype: Any = None, device: Any = None,
             requires_grad: bool = False) -> Tensor:
    """``steps`` values ``base ** e`` for exponents evenly spaced from ``start`` to ``end``, as torch.logspace."""
    if steps < 0:
        raise _core.SpiralValueError(f"logspace: steps must be non-negative, got {steps}")
    e = _core.linspace(float(start), float(end), steps, dtype=DT.float64)
    out = _core.pow(_core.full_like(e, float(base)), e).to(dtype or DT.float32)
    if device is not None:
        out = out.to(str(device))
    return out.requires_grad_(True) if requires_grad else out


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


def _search(seq: Tensor, values: Tensor, right: bool) -> Tensor:
    """For each value, how many entries of the sorted last dim of ``seq`` precede its insertion point
    (NaN values go after everything, as torch)."""
    v = values.unsqueeze(-1)
    s = seq.unsqueeze(-2) if seq.dim() > 1 else seq
    before = (s <= v) if right else (s < v)
    count = before.to(DT.int64).sum(-1)
    if values.dtype in _FLOATS:
        count = _core.where(values.isnan(), _core.full_like(count, seq.shape[-1]), count)
    return count


def searchsorted(sorted_sequence: Tensor, input: Any, *, out_int32: bool = False, right: bool = False,
                 side: Optional[str] = None, sorter: Optional[Tensor] = None) -> Tensor:
    """Indices at which each of ``input`` would be inserted into the sorted last dim of ``sorted_sequence``
    to keep it sorted (the first such place, or the last with ``right=True``/``side='right'``), as
    torch.searchsorted."""
    if side is not None:
        if side not in ("left", "right"):
            raise _core.SpiralValueError(f"searchsorted: side must be 'left' or 'right', got {side!r}")
        if right and side == "left":
            raise _core.SpiralValueError("searchsorted: side='left' and right=True contradict each other")
        right = side == "right"
    scalar = not isinstance(input, Tensor)
    if scalar:
        vdt = DT.float64 if isinstance(input, float) and sorted_sequence.dtype not in _FLOATS else sorted_sequence.dtype
        values = _core.tensor([input], dtype=vdt).to(_dev(sorted_sequence))
    else:
        values = input
    seq = sorted_sequence
    if sorter is not None:
        if tuple(sorter.shape) != tuple(seq.shape):
            raise _core.ShapeError(f"searchsorted: sorter {tuple(sorter.shape)} must have the shape of "
                                   f"sorted_sequence {tuple(seq.shape)}")
        seq = _core.gather(seq, seq.dim() - 1, sorter.to(DT.int64))
    if seq.dim() == 0:
        raise _core.ShapeError("searchsorted: sorted_sequence must have at least one dimension")
    if seq.dim() > 1 and (values.dim() != seq.dim() or tuple(values.shape[:-1]) != tuple(seq.shape[:-1])):
        raise _core.ShapeError(f"searchsorted: sorted_sequence {tuple(seq.shape)} and input "
                               f"{tuple(values.shape)} must agree in every dim but the last")
    out = _search(seq.detach(), values.detach(), right)
    out = out.reshape(()) if scalar else out
    return out.to(DT.int32) if out_int32 else out


def bucketize(input: Any, boundaries: Tensor, *, out_int32: bool = False, right: bool = False) -> Tensor:
    """The bucket of each element of ``input`` given sorted 1-D ``boundaries``: the index i with
    ``boundaries[i-1] < x <= boundaries[i]`` (``<=`` and ``<`` swapped with right=True), as torch.bucketize."""
    if boundaries.dim() != 1:
        raise _core.ShapeError(f"bucketize: boundaries must be 1-D, got shape {tuple(boundaries.shape)}")
    return searchsorted(boundaries, input, out_int32=out_int32, right=right)


# ---------------------------------------------------------------- sampling


def bernoulli(input: Tensor, p: Optional[float] = None, *, generator: Any = None) -> Tensor:
    """0/1 draws, 1 with probability ``input`` elementwise (or the scalar ``p``), in the input's dtype, as
    torch.bernoulli."""
    probs = input if p is None else _core.full_like(input, p)
    if probs.dtype not in _FLOATS:
        raise _core.DtypeError(f"bernoulli: probabilities must be floating point, got {probs.dtype}")
    pf = probs.detach()
    if pf.numel() and bool(((pf < 0) | (pf > 1) | pf.isnan()).any().item()):
        raise _core.SpiralValueError("bernoulli: probabilities must be in [0, 1]")
    kw = {"generator": generator} if generator is not None else {}
    u = _core.rand(*tuple(input.shape), dtype=DT.float64, device=_dev(input), **kw)
    return (u < pf.to(DT.float64)).to(input.dtype)


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
    "clone", "tensordot",
    "std_mean", "var_mean",
    "block_diag", "cartesian_prod", "combinations", "tril_indices", "triu_indices", "bucketize", "searchsorted",
    "logspace", "bernoulli", "randint_like",
    "broadcast_tensors", "broadcast_shapes", "result_type", "promote_types", "can_cast", "is_tensor",
    "is_complex", "numel", "get_default_dtype", "as_tensor",
]

_METHODS = [
    "bernoulli",
]


def install(namespace: dict) -> None:
    """Puts the functions into the package namespace and attaches the Tensor methods torch has."""
    for name in _FUNCTIONS:
        namespace[name] = globals()[name]
    for name in _METHODS:
        if not hasattr(Tensor, name):
            setattr(Tensor, name, globals()[name])
