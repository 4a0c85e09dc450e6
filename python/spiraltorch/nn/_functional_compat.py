"""torch.nn.functional's pad, interpolate and one_hot, written with native ops (cat, index_select,
arithmetic), so gradients and every device come with them."""

from __future__ import annotations

import math
from typing import Any, Optional, Sequence



class _LazyNumpy:
    """NumPy on first use (index arithmetic on the host): importing spiraltorch must not import it."""

    def __getattr__(self, name: str) -> Any:
        import numpy

        return getattr(numpy, name)


np = _LazyNumpy()

from .. import _core

Tensor = _core.Tensor


def _index(values: Any, like: Tensor) -> Tensor:
    return _core.tensor(np.asarray(values, dtype=np.int64), device=str(like.device))


def pad(input: Tensor, pad: Sequence[int], mode: str = "constant", value: Optional[float] = None) -> Tensor:
    """``input`` padded as torch.nn.functional.pad: ``pad`` lists (before, after) amounts for the last
    dimension first, then the one before it, ...; negative amounts crop. ``mode`` is 'constant' (with
    ``value``, default 0), 'reflect', 'replicate' or 'circular'."""
    if len(pad) % 2 or len(pad) // 2 > input.dim():
        raise _core.SpiralValueError(f"pad: expected an even number of amounts for at most {input.dim()} dimensions, "
                               f"got {list(pad)}")
    if mode not in ("constant", "reflect", "replicate", "circular"):
        raise _core.SpiralValueError(f"pad: mode must be 'constant', 'reflect', 'replicate' or 'circular', got {mode!r}")
    if mode != "constant" and value not in (None, 0):
        raise _core.SpiralValueError(f"pad: value is only used by mode='constant', got value={value} with mode={mode!r}")
    out = input
    for i in range(len(pad) // 2):
        d = input.dim() - 1 - i
        before, after = int(pad[2 * i]), int(pad[2 * i + 1])
        n = out.shape[d]
        if before < 0:  # crop first, then pad the rest
            out, n, before = out.narrow(d, -before, n + before), n + before, 0
        if after < 0:
            out, n, after = out.narrow(d, 0, n + after), n + after, 0
        if before == 0 and after == 0:
            continue
        if mode == "constant":
            parts = []
            for amount in (before, after):
                shape = list(out.shape)
                shape[d] = amount
                parts.append(_core.full(tuple(shape), 0.0 if value is None else value, dtype=out.dtype,
                                        device=str(out.device)))
            out = _core.cat([parts[0], out, parts[1]], d)
            continue
        positions = range(-before, n + after)
        if mode == "reflect":
            if before >= n or after >= n:
                raise _core.SpiralValueError(f"pad: reflect padding ({before}, {after}) must be smaller than the "
                                       f"dimension's size {n}")
            period = 2 * (n - 1)
            idx = [abs(((p % period) + period) % period) if period else 0 for p in positions]
            idx = [period - j if j >= n else j for j in idx]
        elif mode == "replicate":
            idx = [min(max(p, 0), n - 1) for p in positions]
        else:
            if before > n or after > n:
                raise _core.SpiralValueError(f"pad: circular padding ({before}, {after}) must not exceed the "
                                       f"dimension's size {n}")
            idx = [p % n for p in positions]
        out = _core.index_select(out, d, _index(idx, out))
    return out


def _source_coords(out_size: int, in_size: int, scale: Optional[float], align_corners: bool) -> np.ndarray:
    i = np.arange(out_size, dtype=np.float64)
    if align_corners:
        return i * ((in_size - 1) / (out_size - 1)) if out_size > 1 else np.zeros(out_size)
    ratio = 1.0 / scale if scale is not None else in_size / out_size
    return np.maximum((i + 0.5) * ratio - 0.5, 0.0)


def interpolate(input: Tensor, size: Any = None, scale_factor: Any = None, mode: str = "nearest",
                align_corners: Optional[bool] = None, recompute_scale_factor: Optional[bool] = None) -> Tensor:
    """``input`` (N, C, *spatial) resized as torch.nn.functional.interpolate: to ``size`` or by
    ``scale_factor``, with mode 'nearest', 'linear' (1 spatial dim), 'bilinear' (2) or 'trilinear' (3),
    separably along each spatial dimension (linear modes honour ``align_corners``)."""
    spatial = input.dim() - 2
    if spatial < 1:
        raise _core.ShapeError(f"interpolate: expected (N, C, *spatial) input, got shape {tuple(input.shape)}")
    linear_modes = {"linear": 1, "bilinear": 2, "trilinear": 3}
    if mode not in ("nearest", *linear_modes):
        raise _core.SpiralValueError(f"interpolate: mode must be 'nearest', 'linear', 'bilinear' or 'trilinear', got {mode!r}")
    if mode in linear_modes and linear_modes[mode] != spatial:
        raise _core.SpiralValueError(f"interpolate: mode {mode!r} needs {linear_modes[mode]} spatial dimensions, the input "
                               f"has {spatial}")
    if mode == "nearest" and align_corners is not None:
        raise _core.SpiralValueError("interpolate: align_corners applies to the linear modes only")
    if (size is None) == (scale_factor is None):
        raise _core.SpiralValueError("interpolate: give exactly one of size and scale_factor")
    in_sizes = tuple(input.shape[2:])
    if size is not None:
        sizes = [int(size)] * spatial if isinstance(size, (int, float)) else [int(s) for s in size]
        scales: list = [None] * spatial
    else:
        factors = [float(scale_factor)] * spatial if isinstance(scale_factor, (int, float)) else \
            [float(f) for f in scale_factor]
        if len(factors) != spatial:
            raise _core.SpiralValueError(f"interpolate: {len(factors)} scale factors for {spatial} spatial dimensions")
        sizes = [int(math.floor(n * f)) for n, f in zip(in_sizes, factors)]
        scales = [None if recompute_scale_factor else f for f in factors]
    if len(sizes) != spatial or any(s <= 0 for s in sizes):
        raise _core.SpiralValueError(f"interpolate: output size {sizes} must have {spatial} positive entries")
    out = input
    for k in range(spatial):
        d = 2 + k
        n, m = in_sizes[k], sizes[k]
        if mode == "nearest":
            ratio = 1.0 / scales[k] if scales[k] is not None else n / m
            idx = np.minimum(np.floor(np.arange(m) * ratio).astype(np.int64), n - 1)
            out = _core.index_select(out, d, _index(idx, out))
            continue
        src = _source_coords(m, n, scales[k], bool(align_corners))
        lo = np.minimum(np.floor(src).astype(np.int64), n - 1)
        hi = np.minimum(lo + 1, n - 1)
        w_shape = [1] * input.dim()
        w_shape[d] = m
        w = _core.tensor((src - lo).reshape(w_shape), dtype=out.dtype, device=str(out.device))
        a = _core.index_select(out, d, _index(lo, out))
        b = _core.index_select(out, d, _index(hi, out))
        out = a + (b - a) * w
    return out


def one_hot(tensor: Tensor, num_classes: int = -1) -> Tensor:
    """int64 one-hot rows for the class indices in ``tensor`` (shape + (num_classes,)), as
    torch.nn.functional.one_hot (num_classes=-1: one more than the largest index)."""
    return _core.one_hot(tensor, num_classes)
