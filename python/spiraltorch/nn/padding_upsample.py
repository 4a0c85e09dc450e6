"""torch.nn's padding layers (ZeroPad2d, ConstantPad1d/2d, ReflectionPad1d/2d,
ReplicationPad1d/2d) and Upsample, as thin modules over ``functional.pad`` and
``functional.interpolate`` (which run on native differentiable ops)."""

from __future__ import annotations

from typing import Any, Optional, Sequence, Tuple

from .. import _core
from .._core import Tensor
from . import Module  # defined in __init__ before this module is imported
from ._functional_compat import interpolate, pad


def _amounts(padding: Any, n: int, layer: str) -> Tuple[int, ...]:
    """``padding`` as torch's (left, right[, top, bottom]) tuple of 2*n ints (an int pads every side)."""
    if isinstance(padding, int) and not isinstance(padding, bool):
        return (int(padding),) * (2 * n)
    if isinstance(padding, Sequence) and len(padding) == 2 * n and all(
            isinstance(p, int) and not isinstance(p, bool) for p in padding):
        return tuple(int(p) for p in padding)
    raise _core.SpiralValueError(f"{layer}: padding must be an int or a tuple of {2 * n} ints, got {padding!r}")


class _PadNd(Module):
    """Pads the last ``n`` dims of (N, C, *spatial) or (C, *spatial) input with ``mode``."""

    _n = 1
    _mode = "constant"

    def __init__(self, padding: Any, value: Optional[float] = None, name: str = "") -> None:
        super().__init__(name)
        self.padding = _amounts(padding, self._n, type(self).__name__)
        self.value = value

    def forward(self, input: Tensor) -> Tensor:
        dims = (self._n + 1, self._n + 2)
        if input.dim() not in dims:
            raise _core.ShapeError(f"{type(self).__name__}: expected a {dims[0]}-d or {dims[1]}-d input, "
                                   f"got shape {tuple(input.shape)}")
        return pad(input, self.padding, mode=self._mode, value=self.value)

    def extra_repr(self) -> str:
        return f"{self.padding}" + (f", value={self.value}" if self._mode == "constant" else "")


class ConstantPad1d(_PadNd):
    """Pads the last dim of (N, C, L) / (C, L) input with ``value``; ``padding`` is an int or (left, right)."""

    def __init__(self, padding: Any, value: float, name: str = "") -> None:
        super().__init__(padding, float(value), name)


class ConstantPad2d(_PadNd):
    """Pads the last two dims of (N, C, H, W) / (C, H, W) input with ``value``; ``padding`` is an int or
    (left, right, top, bottom)."""

    _n = 2

    def __init__(self, padding: Any, value: float, name: str = "") -> None:
        super().__init__(padding, float(value), name)


class ZeroPad1d(ConstantPad1d):
    """Pads the last dim with zeros; ``padding`` is an int or (left, right)."""

    def __init__(self, padding: Any, name: str = "") -> None:
        super().__init__(padding, 0.0, name)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class ZeroPad2d(ConstantPad2d):
    """Pads the last two dims with zeros; ``padding`` is an int or (left, right, top, bottom)."""

    def __init__(self, padding: Any, name: str = "") -> None:
        super().__init__(padding, 0.0, name)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class ReflectionPad1d(_PadNd):
    """Pads the last dim by reflecting the input at its edges (edge values not repeated)."""

    _mode = "reflect"


class ReflectionPad2d(_PadNd):
    """Pads the last two dims by reflection; ``padding`` is an int or (left, right, top, bottom)."""

    _n = 2
    _mode = "reflect"


class ReplicationPad1d(_PadNd):
    """Pads the last dim by repeating the edge values."""

    _mode = "replicate"


class ReplicationPad2d(_PadNd):
    """Pads the last two dims by repeating the edge values; ``padding`` is an int or (left, right, top, bottom)."""

    _n = 2
    _mode = "replicate"


class Upsample(Module):
    """torch.nn.Upsample: resizes (N, C, *spatial) input to ``size`` or by ``scale_factor`` with
    ``mode`` 'nearest', 'linear', 'bilinear' or 'trilinear' (``align_corners`` for the linear
    modes); the computation is ``functional.interpolate``."""

    def __init__(self, size: Any = None, scale_factor: Any = None, mode: str = "nearest",
                 align_corners: Optional[bool] = None, recompute_scale_factor: Optional[bool] = None,
                 name: str = "") -> None:
        super().__init__(name)
        if (size is None) == (scale_factor is None):
            raise _core.SpiralValueError("Upsample: give exactly one of size and scale_factor")
        if mode not in ("nearest", "linear", "bilinear", "trilinear"):
            raise _core.SpiralValueError(
                f"Upsample: mode must be 'nearest', 'linear', 'bilinear' or 'trilinear', got {mode!r}")
        if mode == "nearest" and align_corners is not None:
            raise _core.SpiralValueError("Upsample: align_corners applies to the linear modes only")
        self.size, self.scale_factor, self.mode = size, scale_factor, mode
        self.align_corners, self.recompute_scale_factor = align_corners, recompute_scale_factor

    def forward(self, input: Tensor) -> Tensor:
        return interpolate(input, self.size, self.scale_factor, self.mode, self.align_corners,
                           self.recompute_scale_factor)

    def extra_repr(self) -> str:
        what = f"size={self.size}" if self.size is not None else f"scale_factor={float(self.scale_factor)}"
        return f"{what}, mode='{self.mode}'"


__all__ = ["ConstantPad1d", "ConstantPad2d", "ReflectionPad1d", "ReflectionPad2d", "ReplicationPad1d",
           "ReplicationPad2d", "Upsample", "ZeroPad1d", "ZeroPad2d"]
