"""More PyTorch tensor functions, composed from native differentiable ops so gradients and every
device come with them: dimension shuffles (movedim, swapaxes, unbind, tensor_split, unflatten,
take_along_dim), products (outer, kron, tensordot, trace, cross), scans (diff, cumprod,
logcumsumexp, cummax/cummin as log-depth scans), order statistics (median, nanmedian,
quantile/nanquantile, mode, kthvalue, aminmax), elementwise helpers (nan_to_num, heaviside, hypot,
fmod, frac, xlogy, logit, sinc), constructors (rot90, block_diag, cartesian_prod, combinations,
tril/triu_indices, logspace, as_tensor), counting (bucketize, searchsorted, bincount, histc,
count_nonzero), statistics (std_mean/var_mean, cov, corrcoef), sampling (bernoulli, poisson,
randint_like) and dtype/shape queries (broadcast_shapes/tensors, result_type, promote_types,
can_cast, is_tensor, ...). ``install()`` attaches them at import."""

from __future__ import annotations

import collections
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

values_indices = collections.namedtuple("values_indices", ["values", "indices"])
min_max = collections.namedtuple("min_max", ["min", "max"])


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


# ---------------------------------------------------------------- dimension shuffles


def movedim(input: Tensor, source: _Dims, destination: _Dims) -> Tensor:
    """A view of ``input`` with the dims at ``source`` moved to ``destination`` (the others keep their
    order), as torch.movedim."""
    nd = input.dim()
    src = _dims(source, nd, "movedim")
    dst = _dims(destination, nd, "movedim")
    if len(src) != len(dst):
        raise _core.SpiralValueError(f"movedim: source {source} and destination {destination} name different "
                                     f"numbers of dims ({len(src)} and {len(dst)})")
    order = [-1] * nd
    for s, d in zip(src, dst):
        order[d] = s
    rest = iter(d for d in range(nd) if d not in src)
    order = [o if o >= 0 else next(rest) for o in order]
    return input.permute(order) if nd else input


moveaxis = movedim


def swapaxes(input: Tensor, axis0: int, axis1: int) -> Tensor:
    """A view of ``input`` with dims ``axis0`` and ``axis1`` exchanged (torch.swapaxes = transpose)."""
    return input.transpose(axis0, axis1)


swapdims = swapaxes


def unbind(input: Tensor, dim: int = 0) -> Tuple[Tensor, ...]:
    """The slices of ``input`` along ``dim`` (each without that dim), as a tuple of views."""
    if input.dim() == 0:
        raise _core.SpiralIndexError("unbind: a 0-d tensor has no dimension to unbind")
    d = _dim(dim, input.dim(), "unbind")
    return tuple(input.select(d, i) for i in range(input.shape[d]))


def tensor_split(input: Tensor, indices_or_sections: Any, dim: int = 0) -> Tuple[Tensor, ...]:
    """``input`` split along ``dim`` into ``n`` nearly equal parts (the first ``size % n`` one longer) when
    given an int, or at the given indices (clamped to the size), as torch.tensor_split."""
    if input.dim() == 0:
        raise _core.SpiralIndexError("tensor_split: expected at least a 1-dimensional tensor")
    d = _dim(dim, input.dim(), "tensor_split")
    size = input.shape[d]
    if isinstance(indices_or_sections, Tensor):
        if indices_or_sections.dim() == 0:
            indices_or_sections = int(indices_or_sections.item())
        else:
            indices_or_sections = [int(v) for v in indices_or_sections.tolist()]
    if isinstance(indices_or_sections, int):
        n = indices_or_sections
        if n <= 0:
            raise _core.SpiralValueError(f"tensor_split: number of sections must be larger than 0, got {n}")
        q, r = divmod(size, n)
        bounds = [0]
        for i in range(n):
            bounds.append(bounds[-1] + q + (1 if i < r else 0))
    else:
        idx = [min(max(i + size if i < 0 else i, 0), size) for i in indices_or_sections]
        bounds = [0] + idx + [size]
    return tuple(input.narrow(d, min(a, size), max(b - a, 0)) for a, b in zip(bounds[:-1], bounds[1:]))


def unflatten(input: Tensor, dim: int, sizes: Sequence[int]) -> Tensor:
    """``input`` with dim ``dim`` expanded into ``sizes`` (one may be -1), as torch.unflatten."""
    d = _dim(dim, input.dim(), "unflatten")
    sizes = list(sizes)
    n = input.shape[d]
    if not sizes:
        raise _core.SpiralValueError("unflatten: sizes must be non-empty")
    if sizes.count(-1) > 1:
        raise _core.SpiralValueError(f"unflatten: only one dimension may be inferred (-1), got sizes {tuple(sizes)}")
    known = math.prod(s for s in sizes if s != -1)
    if -1 in sizes:
        if known == 0 or n % known:
            raise _core.ShapeError(f"unflatten: sizes {tuple(sizes)} do not divide dim {d} of size {n}")
        sizes[sizes.index(-1)] = n // known
    elif known != n:
        raise _core.ShapeError(f"unflatten: sizes {tuple(sizes)} multiply to {known}, not to dim {d} of size {n}")
    shape = tuple(input.shape)
    return input.reshape(shape[:d] + tuple(sizes) + shape[d + 1:])


def take_along_dim(input: Tensor, indices: Tensor, dim: Optional[int] = None) -> Tensor:
    """Values of ``input`` at ``indices`` along ``dim`` (the other dims broadcast; the flattened input when
    dim is None), as torch.take_along_dim."""
    if indices.dtype not in (DT.int64, DT.int32):
        raise _core.DtypeError(f"take_along_dim: indices must be int64 or int32, got {indices.dtype}")
    if dim is None:
        return _core.gather(input.reshape(-1), 0, indices.reshape(-1).to(DT.int64))
    if input.dim() != indices.dim():
        raise _core.ShapeError(f"take_along_dim: input {tuple(input.shape)} and indices {tuple(indices.shape)} "
                               "must have the same number of dimensions")
    d = _dim(dim, input.dim(), "take_along_dim")
    si, ii = list(input.shape), list(indices.shape)
    si[d] = ii[d] = 1
    b = broadcast_shapes(tuple(si), tuple(ii))
    ishape, jshape = list(b), list(b)
    ishape[d], jshape[d] = input.shape[d], indices.shape[d]
    return _core.gather(input.expand(tuple(ishape)), d, indices.to(DT.int64).expand(tuple(jshape)))


def clone(input: Tensor) -> Tensor:
    """A copy of ``input`` with its own storage (differentiable), as torch.clone."""
    return input.clone()


# ---------------------------------------------------------------- products


def outer(input: Tensor, vec2: Tensor) -> Tensor:
    """The outer product ``input[i] * vec2[j]`` of two 1-D tensors, as torch.outer."""
    if input.dim() != 1 or vec2.dim() != 1:
        raise _core.ShapeError(f"outer: expected 1-D vectors, got shapes {tuple(input.shape)} and {tuple(vec2.shape)}")
    return input.reshape(-1, 1) * vec2.reshape(1, -1)


def kron(input: Tensor, other: Tensor) -> Tensor:
    """The Kronecker product: block ``(i, j, ...)`` is ``input[i, j, ...] * other`` (the shorter shape padded
    with leading ones), as torch.kron."""
    nd = max(input.dim(), other.dim())
    a_shape = (1,) * (nd - input.dim()) + tuple(input.shape)
    b_shape = (1,) * (nd - other.dim()) + tuple(other.shape)
    a = input.reshape(tuple(v for s in a_shape for v in (s, 1)))
    b = other.reshape(tuple(v for s in b_shape for v in (1, s)))
    return (a * b).reshape(tuple(x * y for x, y in zip(a_shape, b_shape)))


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


def trace(input: Tensor) -> Tensor:
    """The sum of the main diagonal of a 2-D tensor (integers sum to int64), as torch.trace."""
    if input.dim() != 2:
        raise _core.ShapeError(f"trace: expected a 2-D matrix, got shape {tuple(input.shape)}")
    r, c = tuple(input.shape)
    n = min(r, c)
    return _core.index_select(input.reshape(-1), 0, _index([i * c + i for i in range(n)], input)).sum()


def cross(input: Tensor, other: Tensor, dim: Optional[int] = None) -> Tensor:
    """The 3-vector cross product along ``dim`` (shapes broadcast; when dim is None the first dim of size 3),
    as torch.cross."""
    shape = broadcast_shapes(tuple(input.shape), tuple(other.shape))
    a, b = input.expand(shape), other.expand(shape)
    if dim is None:
        if 3 not in shape:
            raise _core.ShapeError(f"cross: no dimension of size 3 in shape {shape}")
        d = list(shape).index(3)
    else:
        d = _dim(dim, len(shape), "cross")
        if shape[d] != 3:
            raise _core.ShapeError(f"cross: dimension {dim} of shape {shape} has size {shape[d]}, expected 3")
    a0, a1, a2 = (a.narrow(d, i, 1) for i in range(3))
    b0, b1, b2 = (b.narrow(d, i, 1) for i in range(3))
    return _core.cat([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], d)


# ---------------------------------------------------------------- scans


def diff(input: Tensor, n: int = 1, dim: int = -1, prepend: Optional[Tensor] = None,
         append: Optional[Tensor] = None) -> Tensor:
    """The ``n``-th forward difference ``x[i+1] - x[i]`` along ``dim`` (bool inputs use xor), after
    concatenating ``prepend`` and ``append``, as torch.diff."""
    if input.dim() == 0:
        raise _core.ShapeError("diff: expected at least a 1-dimensional tensor")
    if n < 0:
        raise _core.SpiralValueError(f"diff: order must be non-negative, got n={n}")
    d = _dim(dim, input.dim(), "diff")
    parts = [p for p in (prepend, input, append) if p is not None]
    x = _core.cat(parts, d) if len(parts) > 1 else input
    for _ in range(n):
        m = x.shape[d]
        if m == 0:
            break
        hi, lo = x.narrow(d, 1, m - 1), x.narrow(d, 0, m - 1)
        x = (hi != lo) if x.dtype == DT.bool else hi - lo
    return x


def _scan(x: Tensor, d: int, combine: Any, pad: Any) -> Any:
    """Inclusive scan along ``d`` with an associative ``combine(earlier, later)`` in log2(n) rounds
    (Hillis-Steele); ``pad`` makes the identity-filled prefix of a shifted operand."""
    n = x.shape[d]
    y = x
    k = 1
    while k < n:
        shifted = _core.cat([pad(y, k), y.narrow(d, 0, n - k)], d)
        y = combine(shifted, y)
        k *= 2
    return y


def cumprod(input: Tensor, dim: int, *, dtype: Any = None) -> Tensor:
    """Running products along ``dim`` (integers and bool accumulate in int64), differentiable through zeros,
    as torch.cumprod."""
    x = input if dtype is None else input.to(dtype)
    if dtype is None and x.dtype in (DT.bool, DT.uint8, DT.int32):
        x = x.to(DT.int64)
    d = _dim(dim, x.dim(), "cumprod")
    if x.dim() == 0:
        return x.clone()

    def ones(y: Tensor, k: int) -> Tensor:
        shape = list(y.shape)
        shape[d] = k
        return _core.ones(tuple(shape), dtype=y.dtype, device=_dev(y))

    return _scan(x, d, lambda e, l: e * l, ones)


def logcumsumexp(input: Tensor, dim: int) -> Tensor:
    """``log(cumsum(exp(input)))`` along ``dim``, computed stably, as torch.logcumsumexp."""
    x = _float(input)
    d = _dim(dim, x.dim(), "logcumsumexp")
    if x.dim() == 0:
        return x.clone()

    def neg_inf(y: Tensor, k: int) -> Tensor:
        shape = list(y.shape)
        shape[d] = k
        return _core.full(tuple(shape), -math.inf, dtype=y.dtype, device=_dev(y))

    def logaddexp(e: Tensor, l: Tensor) -> Tensor:
        m = _core.maximum(e, l).detach()
        m = _core.where(m.isfinite(), m, _core.zeros_like(m))
        return ((e - m).exp() + (l - m).exp()).log() + m

    return _scan(x, d, logaddexp, neg_inf)


def _cum_extreme(input: Tensor, dim: int, op: str, better: Any) -> Any:
    d = _dim(dim, input.dim(), op)
    if input.dim() == 0:
        return values_indices(input.clone(), _core.zeros((), dtype=DT.int64, device=_dev(input)))
    n = input.shape[d]
    shape = [1] * input.dim()
    shape[d] = n
    pos = _core.arange(n, dtype=DT.int64, device=_dev(input)).reshape(tuple(shape)).expand(tuple(input.shape))
    x = input.detach()

    def combine(e: Tuple[Tensor, Tensor], l: Tuple[Tensor, Tensor]) -> Tuple[Tensor, Tensor]:
        # the later one wins ties, and a later NaN wins over anything: keep the earlier one only when it is
        # NaN or strictly better and the later one is not NaN
        if x.dtype in _FLOATS:
            keep = ~l[0].isnan() & (e[0].isnan() | better(e[0], l[0]))
        else:
            keep = better(e[0], l[0])
        return _core.where(keep, e[0], l[0]), _core.where(keep, e[1], l[1])

    y = (x, pos)
    k = 1
    while k < n:  # Hillis-Steele: position i combines with the running result at i - k
        earlier = tuple(y[i].narrow(d, 0, n - k) for i in range(2))
        later = tuple(y[i].narrow(d, k, n - k) for i in range(2))
        merged = combine(earlier, later)
        y = tuple(_core.cat([y[i].narrow(d, 0, k), merged[i]], d) for i in range(2))
        k *= 2
    idx = y[1]
    return values_indices(_core.gather(input, d, idx), idx)


def cummax(input: Tensor, dim: int) -> Any:
    """Running maxima along ``dim`` and the index of each (the latest among ties; NaN propagates from its
    first occurrence); the values carry the gradient to the chosen elements, as torch.cummax."""
    return _cum_extreme(input, dim, "cummax", lambda e, l: e > l)


def cummin(input: Tensor, dim: int) -> Any:
    """Running minima along ``dim`` and the index of each (the latest among ties), as torch.cummin."""
    return _cum_extreme(input, dim, "cummin", lambda e, l: e < l)


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


def _sorted_along(input: Tensor, dim: Optional[int], op: str) -> Tuple[Tensor, int, Tensor, Tensor]:
    x = input.reshape(-1) if dim is None else input
    if x.dim() == 0:
        x = x.reshape(1)
    d = 0 if dim is None else _dim(dim, x.dim(), op)
    sv, si = _core.sort(x.detach(), d)
    return x, d, sv, si


def _pick(x: Tensor, d: int, si: Tensor, k: Tensor, keepdim: bool, squeeze: bool) -> Any:
    idx = _core.gather(si, d, k)
    vals = _core.gather(x, d, idx)
    if not keepdim or squeeze:
        vals, idx = vals.squeeze(d), idx.squeeze(d)
    return values_indices(vals, idx)


def _median(input: Tensor, dim: Optional[int], keepdim: bool, ignore_nan: bool, op: str) -> Any:
    if input.numel() == 0:
        raise _core.SpiralIndexError(f"{op}: cannot compute the median of an empty tensor")
    x, d, sv, si = _sorted_along(input, dim, op)
    n = x.shape[d]
    if x.dtype in _FLOATS:
        nan = sv.isnan().sum(d, keepdim=True)
    else:
        nan = _core.zeros_like(sv.narrow(d, 0, 1), dtype=DT.int64)
    if ignore_nan:
        valid = nan.neg() + n
        k = _core.where(valid > 0, _core.floor_divide(valid - 1, _scalar(2, valid)), _core.zeros_like(valid))
    else:
        k = _core.where(nan > 0, nan.neg() + n, _core.full_like(nan, (n - 1) // 2))
    out = _pick(x, d, si, k, keepdim, False)
    if dim is None:
        return out.values.reshape(())
    if input.dim() == 0:
        return values_indices(out.values.reshape(()), out.indices.reshape(()))
    return out


def median(input: Tensor, dim: Optional[int] = None, keepdim: bool = False) -> Any:
    """The lower median (the element at ``(n - 1) // 2`` in sorted order; NaN when a NaN is present): of
    all elements when dim is None, else ``(values, indices)`` along ``dim``; the gradient goes to the
    chosen element, as torch.median."""
    return _median(input, dim, keepdim, False, "median")


def nanmedian(input: Tensor, dim: Optional[int] = None, keepdim: bool = False) -> Any:
    """As :func:`median` with NaNs ignored (NaN only where every element is NaN), as torch.nanmedian."""
    return _median(input, dim, keepdim, True, "nanmedian")


def kthvalue(input: Tensor, k: int, dim: int = -1, keepdim: bool = False) -> Any:
    """The ``k``-th smallest element along ``dim`` (1-based) and its index, as torch.kthvalue."""
    x, d, sv, si = _sorted_along(input, dim, "kthvalue")
    n = x.shape[d]
    if not 1 <= k <= n:
        raise _core.SpiralIndexError(f"kthvalue: k={k} is out of range for dimension {dim} of size {n}")
    kk = _core.full_like(si.narrow(d, 0, 1), k - 1)
    out = _pick(x, d, si, kk, keepdim, False)
    if input.dim() == 0:
        return values_indices(out.values.reshape(()), out.indices.reshape(()))
    return out


def mode(input: Tensor, dim: int = -1, keepdim: bool = False) -> Any:
    """The most frequent value along ``dim`` (the smallest among equally frequent ones) and the index of
    its last occurrence, as torch.mode."""
    x, d, sv, si = _sorted_along(input, dim, "mode")
    if x.shape[d] == 0:
        raise _core.SpiralIndexError(f"mode: dimension {dim} is empty")
    s = movedim(sv, d, -1)
    i = movedim(si, d, -1)
    n = s.shape[-1]
    # Runs of equal values in the sorted row: a run's length so far at each position is the position
    # minus the run's start (a running maximum of the start positions), so memory stays O(n).
    pos = _core.arange(n, dtype=DT.int64, device=_dev(input)).expand(tuple(s.shape))
    starts = _core.ones(tuple(s.shape[:-1]) + (1,), dtype=DT.bool, device=_dev(input))
    if n > 1:
        starts = _core.cat([starts, s.narrow(-1, 1, n - 1) != s.narrow(-1, 0, n - 1)], -1)
    run_start = cummax(_core.where(starts, pos, _core.zeros_like(pos)), -1)[0]
    run_length = pos - run_start
    # The first longest run ends at the first maximum: sorted ascending, the smallest of the most frequent values.
    end = run_length.argmax(-1, keepdim=True)
    value = _core.gather(s, -1, end)
    last = _core.where(s == value, i, _core.full_like(i, -1)).amax(-1, keepdim=True)
    vals = _core.gather(movedim(x, d, -1), -1, last)
    vals, last = movedim(vals, -1, d), movedim(last, -1, d)
    if not keepdim or input.dim() == 0:
        vals, last = vals.squeeze(d), last.squeeze(d)
    return values_indices(vals, last)


_INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")


def _quantile(input: Tensor, q: Any, dim: Optional[int], keepdim: bool, interpolation: str, ignore_nan: bool,
              op: str) -> Tensor:
    if input.dtype not in (DT.float32, DT.float64):
        raise _core.DtypeError(f"{op}: input must be float32 or float64, got {input.dtype}")
    if interpolation not in _INTERPOLATIONS:
        raise _core.SpiralValueError(f"{op}: interpolation must be one of {_INTERPOLATIONS}, got {interpolation!r}")
    scalar_q = not isinstance(q, Tensor)
    qv = [float(q)] if scalar_q else [float(v) for v in q.reshape(-1).tolist()]
    if not scalar_q and q.dim() > 1:
        raise _core.ShapeError(f"{op}: q must be a scalar or 1-D tensor, got shape {tuple(q.shape)}")
    if any(not 0 <= v <= 1 for v in qv):
        raise _core.SpiralValueError(f"{op}: q values must be in the range [0, 1], got {qv}")
    if input.numel() == 0:
        raise _core.SpiralIndexError(f"{op}: input tensor must be non-empty")
    x, d, sv, si = _sorted_along(input, dim, op)
    n = x.shape[d]
    nan = sv.isnan().sum(d, keepdim=True)  # (.., 1, ..)
    valid = (nan.neg() + n).to(x.dtype)
    last = (valid - 1).clamp(min=0)
    outs = []
    for qq in qv:
        rank = last * qq
        if interpolation == "lower":
            rank = rank.floor()
        elif interpolation == "higher":
            rank = rank.ceil()
        elif interpolation == "nearest":
            rank = rank.round()  # half to even, as torch
        lo = rank.floor()
        hi = _core.minimum(lo + 1, last)
        lo_i, hi_i = lo.to(DT.int64), hi.to(DT.int64)
        vlo = _core.gather(x, d, _core.gather(si, d, lo_i))
        vhi = _core.gather(x, d, _core.gather(si, d, hi_i))
        if interpolation == "midpoint":
            w = _core.where(rank > lo, _core.full_like(lo, 0.5), _core.zeros_like(lo))
        else:
            w = rank - lo
        v = vlo + (vhi - vlo) * w
        if ignore_nan:
            v = _core.where(valid > 0, v, _core.full_like(v, math.nan))
        else:
            v = _core.where(nan > 0, _core.full_like(v, math.nan), v)
        if dim is None:
            v = v.reshape([1] * input.dim()) if keepdim else v.reshape(())
        elif not keepdim:
            v = v.squeeze(d)
        outs.append(v)
    return outs[0] if scalar_q else _core.stack(outs, 0)


def quantile(input: Tensor, q: Any, dim: Optional[int] = None, keepdim: bool = False, *,
             interpolation: str = "linear") -> Tensor:
    """The ``q``-quantiles of ``input`` (all elements, or along ``dim``): the value at rank ``q * (n - 1)``
    in sorted order, interpolated linearly between neighbours (or 'lower', 'higher', 'midpoint',
    'nearest'); a tensor q puts its values along a new first dim; NaN where a NaN is present. As
    torch.quantile."""
    return _quantile(input, q, dim, keepdim, interpolation, False, "quantile")


def nanquantile(input: Tensor, q: Any, dim: Optional[int] = None, keepdim: bool = False, *,
                interpolation: str = "linear") -> Tensor:
    """As :func:`quantile` with NaNs ignored (NaN only where every element is NaN), as torch.nanquantile."""
    return _quantile(input, q, dim, keepdim, interpolation, True, "nanquantile")


def aminmax(input: Tensor, *, dim: Optional[int] = None, keepdim: bool = False) -> Any:
    """``(min, max)`` of ``input`` (all elements, or along ``dim``), as torch.aminmax."""
    if input.numel() == 0:
        raise _core.SpiralValueError("aminmax: cannot compute on an empty tensor")
    if dim is None:
        if keepdim:
            all_dims = list(range(input.dim()))
            return min_max(_core.amin(input, all_dims, True), _core.amax(input, all_dims, True))
        return min_max(_core.amin(input), _core.amax(input))
    d = _dim(dim, input.dim(), "aminmax")
    return min_max(_core.amin(input, d, keepdim), _core.amax(input, d, keepdim))


def count_nonzero(input: Tensor, dim: Optional[_Dims] = None) -> Tensor:
    """The number of non-zero elements (over ``dim``, or all), int64, as torch.count_nonzero."""
    nz = (input != 0).to(DT.int64)
    if dim is None:
        return nz.sum()
    return nz.sum(_dims(dim, input.dim(), "count_nonzero"))


def cov(input: Tensor, *, correction: int = 1, fweights: Optional[Tensor] = None,
        aweights: Optional[Tensor] = None) -> Tensor:
    """The covariance matrix of the rows of ``input`` (variables) over its columns (observations), with
    optional integer frequency weights and float observation weights, as torch.cov."""
    if input.dim() > 2:
        raise _core.ShapeError(f"cov: expected a 1-D or 2-D input, got shape {tuple(input.shape)}")
    x = _float(input)
    x = x.reshape(1, -1) if x.dim() < 2 else x
    n = x.shape[1]
    w = None
    if fweights is not None:
        if fweights.dim() > 1 or fweights.numel() != n:
            raise _core.ShapeError(f"cov: fweights must be 1-D with {n} entries, got shape {tuple(fweights.shape)}")
        if fweights.dtype in _FLOATS:
            raise _core.DtypeError(f"cov: fweights must be integers, got {fweights.dtype}")
        if bool((fweights < 0).any().item()):
            raise _core.SpiralValueError("cov: fweights cannot be negative")
        w = fweights.reshape(-1).to(x.dtype)
    if aweights is not None:
        if aweights.dim() > 1 or aweights.numel() != n:
            raise _core.ShapeError(f"cov: aweights must be 1-D with {n} entries, got shape {tuple(aweights.shape)}")
        if aweights.dtype not in _FLOATS:
            raise _core.DtypeError(f"cov: aweights must be floating point, got {aweights.dtype}")
        if bool((aweights < 0).any().item()):
            raise _core.SpiralValueError("cov: aweights cannot be negative")
        aw = aweights.reshape(-1).to(x.dtype)
        w = aw if w is None else w * aw
    if w is None:
        w_sum = _scalar(n, x)
        avg = x.mean(1, keepdim=True)
        norm = w_sum - correction
        xm = x - avg
        c = _core.matmul(xm, xm.t())
    else:
        w_sum = w.sum()
        avg = (x * w).sum(1, keepdim=True) / w_sum
        if aweights is None:
            norm = w_sum - correction
        else:
            norm = w_sum - correction * (w * aw).sum() / w_sum
        xm = x - avg
        c = _core.matmul(xm * w, xm.t())
    norm = norm.clamp(min=0)
    return (c / norm).squeeze()


def corrcoef(input: Tensor) -> Tensor:
    """Pearson correlation coefficients between the rows of ``input``, clipped to [-1, 1], as
    torch.corrcoef."""
    c = cov(input)
    if c.dim() == 0:
        return c / c
    sd = _core.index_select(c.reshape(-1), 0, _index([i * c.shape[0] + i for i in range(c.shape[0])], c)).sqrt()
    c = c / sd.reshape(-1, 1) / sd.reshape(1, -1)
    return c.clamp(-1, 1)


# ---------------------------------------------------------------- elementwise


def _finfo(dtype: Any) -> Tuple[float, float]:
    import numpy

    name = {DT.float32: "float32", DT.float64: "float64", DT.float16: "float16"}.get(dtype)
    if name is None:  # bfloat16
        return 3.3895313892515355e38, -3.3895313892515355e38
    fi = numpy.finfo(name)
    return float(fi.max), float(fi.min)


def nan_to_num(input: Tensor, nan: float = 0.0, posinf: Optional[float] = None,
               neginf: Optional[float] = None) -> Tensor:
    """``input`` with NaN replaced by ``nan`` and +/-inf by ``posinf``/``neginf`` (the dtype's largest and
    lowest finite values by default); integers are returned as copies; the gradient is 1 at kept elements
    and 0 at replaced ones, as torch.nan_to_num."""
    if input.dtype not in _FLOATS:
        return input.clone()
    hi, lo = _finfo(input.dtype)
    pos = hi if posinf is None else posinf
    neg = lo if neginf is None else neginf
    out = _core.where(input.isnan(), _core.full_like(input, nan), input)
    out = _core.where(input == math.inf, _core.full_like(input, pos), out)
    return _core.where(input == -math.inf, _core.full_like(input, neg), out)


def heaviside(input: Tensor, values: Tensor) -> Tensor:
    """The Heaviside step: 0 where ``input < 0``, 1 where ``input > 0``, ``values`` where ``input == 0``
    (same dtype required), as torch.heaviside."""
    if not isinstance(values, Tensor):
        raise _core.DtypeError(f"heaviside: values must be a tensor, got {type(values).__name__}")
    if input.dtype != values.dtype:
        raise _core.DtypeError(f"heaviside: input ({input.dtype}) and values ({values.dtype}) must have the same dtype")
    step = (input > 0).to(input.dtype)
    return _core.where(input == 0, values.to(input.dtype), step)


def hypot(input: Tensor, other: Any) -> Tensor:
    """``sqrt(input**2 + other**2)`` elementwise without overflow for large values (infinite when either is),
    as torch.hypot."""
    a = input
    b = other if isinstance(other, Tensor) else _scalar(other, a)
    if a.dtype not in _FLOATS or b.dtype not in _FLOATS:
        raise _core.DtypeError(f"hypot: expects floating-point inputs, got {a.dtype} and {b.dtype}")
    aa, ab = a.abs(), b.abs()
    m = _core.maximum(aa, ab)
    safe = _core.where((m == 0) | m.isinf(), _core.ones_like(m), m).detach()
    r = ((aa / safe).square() + (ab / safe).square()).sqrt() * safe
    return _core.where(aa.isinf() | ab.isinf(), _core.full_like(r, math.inf), r)


def fmod(input: Tensor, other: Any) -> Tensor:
    """The C remainder ``input - trunc(input / other) * other`` (the sign of the dividend), as torch.fmod;
    :func:`remainder` takes the divisor's sign."""
    b = other if isinstance(other, Tensor) else _scalar(other, input)
    if input.dtype not in _FLOATS and b.dtype not in _FLOATS and bool((b == 0).any().item()):
        raise _core.SpiralValueError("fmod: integer division by zero")
    r = _core.remainder(input, b)
    fix = (r != 0) & ((r < 0) != (input < 0))
    return _core.where(fix, r - b, r)


def frac(input: Tensor) -> Tensor:
    """The fractional part ``input - trunc(input)`` (sign of input), as torch.frac."""
    if input.dtype not in _FLOATS:
        raise _core.DtypeError(f"frac: expects a floating-point tensor, got {input.dtype}")
    return input - input.trunc()


def xlogy(input: Any, other: Any) -> Tensor:
    """``input * log(other)``, 0 where ``input == 0`` (unless other is NaN); the gradient for input is
    ``log(other)``, for other ``input / other``, as torch.xlogy."""
    if not isinstance(input, Tensor):
        input = _scalar(input, other, other.dtype if other.dtype in _FLOATS else DT.float32)
    if not isinstance(other, Tensor):
        other = _scalar(other, input, input.dtype if input.dtype in _FLOATS else DT.float32)
    x, y = input, _float(other)
    if x.dtype not in _FLOATS:
        x = x.to(y.dtype)
    log_y = y.log()
    # where x == 0 the infinite logs (y = 0 or inf) become 0 so the product is 0; the gradient for x stays log(y)
    fix = (x == 0) & log_y.isinf()
    return x * _core.where(fix, _core.zeros_like(log_y), log_y)


def logit(input: Tensor, eps: Optional[float] = None) -> Tensor:
    """``log(p / (1 - p))`` with p clamped to ``[eps, 1 - eps]`` when eps is given, as torch.logit."""
    p = _float(input)
    if eps is not None:
        p = p.clamp(eps, 1 - eps)
    return (p / (1 - p)).log()


def sinc(input: Tensor) -> Tensor:
    """The normalised sinc ``sin(pi x) / (pi x)``, 1 at 0, as torch.sinc."""
    x = _float(input)
    zero = x == 0
    safe = _core.where(zero, _core.ones_like(x), x) * math.pi
    return _core.where(zero, _core.ones_like(x), safe.sin() / safe)


# ---------------------------------------------------------------- constructors


def rot90(input: Tensor, k: int = 1, dims: Sequence[int] = (0, 1)) -> Tensor:
    """``input`` rotated by 90 degrees ``k`` times in the plane of ``dims`` (from the first towards the
    second axis), as torch.rot90."""
    from ._torch_compat import flip

    if len(dims) != 2:
        raise _core.SpiralValueError(f"rot90: expected two dims, got {tuple(dims)}")
    if input.dim() < 2:
        raise _core.ShapeError(f"rot90: expected at least a 2-D tensor, got {input.dim()}-D")
    d0, d1 = _dims(list(dims), input.dim(), "rot90")
    k %= 4
    if k == 1:
        return flip(input, d1).transpose(d0, d1)
    if k == 2:
        return flip(input, [d0, d1])
    if k == 3:
        return flip(input, d0).transpose(d0, d1)
    return input.clone()


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


def bincount(input: Tensor, weights: Optional[Tensor] = None, minlength: int = 0) -> Tensor:
    """How often each value 0..max occurs in a 1-D non-negative integer tensor (summing ``weights`` instead
    of ones when given), at least ``minlength`` long, as torch.bincount."""
    if input.dim() != 1:
        raise _core.ShapeError(f"bincount: input must be 1-D, got shape {tuple(input.shape)}")
    if input.dtype not in _INTS:
        raise _core.DtypeError(f"bincount: input must be an integer tensor, got {input.dtype}")
    if minlength < 0:
        raise _core.SpiralValueError(f"bincount: minlength must be non-negative, got {minlength}")
    n = input.shape[0]
    if n and int(input.min().item()) < 0:
        raise _core.SpiralValueError(f"bincount: input must be non-negative, got a minimum of "
                                     f"{int(input.min().item())}")
    size = max(int(input.max().item()) + 1 if n else 0, minlength)
    idx = input.to(DT.int64)
    if weights is None:
        src = _core.ones((n,), dtype=DT.int64, device=_dev(input))
        dt = DT.int64
    else:
        if tuple(weights.shape) != (n,):
            raise _core.ShapeError(f"bincount: weights {tuple(weights.shape)} must match input ({n},)")
        dt = weights.dtype if weights.dtype in (DT.float32, DT.float64) else DT.float64
        src = weights.to(dt)
    return _core.scatter_add(_core.zeros((size,), dtype=dt, device=_dev(input)), 0, idx, src)


def histc(input: Tensor, bins: int = 100, min: float = 0, max: float = 0) -> Tensor:
    """Counts of the elements of ``input`` in ``bins`` equal-width bins over [min, max] (the data's range when
    min == max; elements outside are ignored), in the input's dtype, as torch.histc."""
    if input.dtype not in _FLOATS:
        raise _core.DtypeError(f"histc: expects a floating-point tensor, got {input.dtype}")
    if bins <= 0:
        raise _core.SpiralValueError(f"histc: bins must be positive, got {bins}")
    lo, hi = float(min), float(max)
    if lo > hi:
        raise _core.SpiralValueError(f"histc: max ({hi}) must be larger than or equal to min ({lo})")
    flat = input.detach().reshape(-1).to(DT.float64)
    if lo == hi and flat.numel():
        lo, hi = float(flat.min().item()), float(flat.max().item())
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise _core.SpiralValueError(f"histc: range of [{lo}, {hi}] is not finite")
    keep = (flat >= lo) & (flat <= hi)
    x = flat[keep]
    b = ((x - lo) * (bins / (hi - lo))).floor().to(DT.int64).clamp(0, bins - 1)
    counts = _core.scatter_add(_core.zeros((bins,), dtype=DT.float64, device=_dev(input)), 0, b,
                               _core.ones((x.shape[0],), dtype=DT.float64, device=_dev(input)))
    return counts.to(input.dtype)


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


def poisson(input: Tensor, generator: Any = None) -> Tensor:
    """Poisson counts with rates ``input`` elementwise, in the input's dtype, as torch.poisson: each draw
    inverts the Poisson CDF (summed in float64 up to rate + 12 * sqrt(rate) + 20 terms, beyond which the
    tail mass is below 1e-30) against one uniform."""
    if input.dtype not in _FLOATS:
        raise _core.DtypeError(f"poisson: rates must be floating point, got {input.dtype}")
    lam = input.detach().reshape(-1).to(DT.float64)
    if lam.numel() and bool(((lam < 0) | lam.isnan()).any().item()):
        raise _core.SpiralValueError("poisson: rates must be non-negative")
    n = lam.shape[0]
    if n == 0:
        return _core.zeros(tuple(input.shape), dtype=input.dtype, device=_dev(input))
    top = float(lam.max().item())
    if not math.isfinite(top) or top > 1e6:
        raise _core.SpiralValueError(f"poisson: rates up to 1e6 are supported, got {top}")
    kw = {"generator": generator} if generator is not None else {}
    u = _core.rand(n, dtype=DT.float64, device=_dev(input), **kw)
    out = _core.zeros((n,), dtype=DT.float64, device=_dev(input))
    kmax = int(top + 12 * math.sqrt(top) + 20)
    chunk = max(8, min(256, (1 << 24) // n))  # at most ~16M float64 terms at a time
    log_lam = _core.where(lam > 0, lam, _core.ones_like(lam)).log()
    cdf = _core.zeros((n,), dtype=DT.float64, device=_dev(input))
    for start in range(0, kmax + 1, chunk):
        ks = list(range(start, min(start + chunk, kmax + 1)))
        k = _core.tensor([float(v) for v in ks], dtype=DT.float64).to(_dev(input))
        lgam = _core.tensor([math.lgamma(v + 1) for v in ks], dtype=DT.float64).to(_dev(input))
        logp = k.reshape(1, -1) * log_lam.reshape(-1, 1) - lam.reshape(-1, 1) - lgam.reshape(1, -1)
        pk = logp.exp()
        zero_rate = (lam == 0).reshape(-1, 1)
        pk = _core.where(zero_rate, (k.reshape(1, -1) == 0).to(DT.float64).expand(tuple(pk.shape)), pk)
        c = pk.cumsum(1) + cdf.reshape(-1, 1)
        out = out + (c < u.reshape(-1, 1)).to(DT.float64).sum(1)
        cdf = c.narrow(1, len(ks) - 1, 1).reshape(-1)
        if bool((cdf >= u).all().item()):
            break
    return out.reshape(tuple(input.shape)).to(input.dtype)


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


def is_floating_point(input: Tensor) -> bool:
    """Whether ``input`` has a floating-point dtype, as torch.is_floating_point."""
    return input.dtype in _FLOATS


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
    "movedim", "moveaxis", "swapaxes", "swapdims", "unbind", "tensor_split", "unflatten", "take_along_dim", "clone",
    "outer", "kron", "tensordot", "trace", "cross", "diff", "cumprod", "logcumsumexp", "cummax", "cummin",
    "std_mean", "var_mean", "median", "nanmedian", "quantile", "nanquantile", "mode", "kthvalue", "aminmax",
    "count_nonzero", "nan_to_num", "heaviside", "hypot", "fmod", "frac", "xlogy", "logit", "sinc", "rot90",
    "block_diag", "cartesian_prod", "combinations", "tril_indices", "triu_indices", "bucketize", "searchsorted",
    "bincount", "histc", "cov", "corrcoef", "logspace", "bernoulli", "poisson", "randint_like",
    "broadcast_tensors", "broadcast_shapes", "result_type", "promote_types", "can_cast", "is_tensor",
    "is_floating_point", "is_complex", "numel", "get_default_dtype", "as_tensor",
]

_METHODS = [
    "movedim", "moveaxis", "swapaxes", "swapdims", "unbind", "tensor_split", "unflatten", "take_along_dim",
    "outer", "kron", "trace", "cross", "diff", "cumprod", "logcumsumexp", "cummax", "cummin", "median",
    "nanmedian", "quantile", "nanquantile", "mode", "kthvalue", "aminmax", "count_nonzero", "nan_to_num",
    "heaviside", "hypot", "fmod", "frac", "xlogy", "logit", "sinc", "rot90", "bincount", "histc", "cov",
    "corrcoef", "bernoulli", "is_complex",
]


def _inplace(fn: Any) -> Any:
    def method(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
        self.copy_(fn(self, *args, **kwargs))
        return self
    method.__name__ = fn.__name__ + "_"
    method.__doc__ = f"In-place {fn.__name__}: writes the result into ``self`` and returns it."
    return method


def install(namespace: dict) -> None:
    """Puts the functions into the package namespace and attaches the Tensor methods torch has."""
    for name in _FUNCTIONS:
        namespace[name] = globals()[name]
    for name in _METHODS:
        if not hasattr(Tensor, name):
            setattr(Tensor, name, globals()[name])
    for name in ("cumprod", "nan_to_num", "hypot", "fmod", "frac", "xlogy", "logit", "sinc", "heaviside"):
        if not hasattr(Tensor, name + "_"):
            setattr(Tensor, name + "_", _inplace(globals()[name]))
