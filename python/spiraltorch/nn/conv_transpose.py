"""torch.nn.ConvTranspose1d / ConvTranspose2d: parameters and settings around the native
``functional.conv_transpose1d`` / ``conv_transpose2d`` (C++, src/nn/conv_transpose.cpp)."""

from __future__ import annotations

import math
from typing import Any, Optional, Tuple

from .. import _core
from .._core import Tensor
from . import Module, Parameter  # defined in __init__ before this module is imported


def _tuple(value: Any, n: int, layer: str, arg: str) -> Tuple[int, ...]:
    """An int or a tuple of ``n`` ints as a tuple of ``n`` ints."""
    if isinstance(value, int) and not isinstance(value, bool):
        return (int(value),) * n
    if isinstance(value, (tuple, list)) and len(value) == n and all(
            isinstance(v, int) and not isinstance(v, bool) for v in value):
        return tuple(int(v) for v in value)
    raise _core.SpiralValueError(f"{layer}: {arg} must be an int or a tuple of {n} ints, got {value!r}")


class _ConvTransposeNd(Module):
    """Weight (in_channels, out_channels/groups, *kernel_size) and bias (out_channels,), both
    uniform in +-1/sqrt(fan_in) with fan_in = out_channels/groups * prod(kernel_size), PyTorch's
    default initialisation for these layers."""

    _n = 2

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1, padding: Any = 0,
                 output_padding: Any = 0, groups: int = 1, bias: bool = True, dilation: Any = 1,
                 padding_mode: str = "zeros", device: Optional[str] = None, dtype: Any = None,
                 name: str = "") -> None:
        super().__init__(name)
        layer = type(self).__name__
        if padding_mode != "zeros":
            raise _core.SpiralValueError(f"{layer}: only padding_mode='zeros' is supported, got {padding_mode!r}")
        if in_channels <= 0 or out_channels <= 0:
            raise _core.SpiralValueError(
                f"{layer}: in_channels and out_channels must be positive, got {in_channels} and {out_channels}")
        if groups <= 0 or in_channels % groups or out_channels % groups:
            raise _core.SpiralValueError(
                f"{layer}: in_channels ({in_channels}) and out_channels ({out_channels}) must both be divisible "
                f"by groups ({groups})")
        n = self._n
        self.in_channels, self.out_channels, self.groups = in_channels, out_channels, groups
        self.kernel_size = _tuple(kernel_size, n, layer, "kernel_size")
        self.stride = _tuple(stride, n, layer, "stride")
        self.padding = _tuple(padding, n, layer, "padding")
        self.output_padding = _tuple(output_padding, n, layer, "output_padding")
        self.dilation = _tuple(dilation, n, layer, "dilation")
        self.padding_mode = padding_mode
        if min(self.kernel_size) <= 0:
            raise _core.SpiralValueError(f"{layer}: kernel_size must be positive, got {kernel_size!r}")
        fan_in = out_channels // groups * math.prod(self.kernel_size)
        bound = 1.0 / math.sqrt(fan_in)
        shape = (in_channels, out_channels // groups) + self.kernel_size
        kind = dtype if dtype is not None else _core.dtype.float32
        self.weight = Parameter((_core.rand(*shape, dtype=kind) * (2 * bound) - bound).to(device or "cpu"))
        if bias:
            self.bias = Parameter((_core.rand(out_channels, dtype=kind) * (2 * bound) - bound).to(device or "cpu"))
        else:
            self.bias = None

    def forward(self, input: Tensor, output_size: Optional[Any] = None) -> Tensor:
        if output_size is not None:
            raise _core.SpiralValueError(f"ConvTranspose{self._n}d: output_size is not supported; use output_padding")
        conv = getattr(_core.nn, f"conv_transpose{self._n}d")
        return conv(input, self.weight, self.bias, self.stride, self.padding, self.output_padding, self.groups,
                    self.dilation)

    def extra_repr(self) -> str:
        s = f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, stride={self.stride}"
        if any(self.padding):
            s += f", padding={self.padding}"
        if any(self.output_padding):
            s += f", output_padding={self.output_padding}"
        if any(d != 1 for d in self.dilation):
            s += f", dilation={self.dilation}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        return s


class ConvTranspose2d(_ConvTransposeNd):
    """torch.nn.ConvTranspose2d: (N, C_in, H, W) or (C_in, H, W) to C_out channels of size
    (H - 1) stride - 2 padding + dilation (k - 1) + output_padding + 1 per spatial dim."""

    _n = 2


class ConvTranspose1d(_ConvTransposeNd):
    """torch.nn.ConvTranspose1d: (N, C_in, L) or (C_in, L) to C_out channels of length
    (L - 1) stride - 2 padding + dilation (k - 1) + output_padding + 1."""

    _n = 1


__all__ = ["ConvTranspose1d", "ConvTranspose2d"]
