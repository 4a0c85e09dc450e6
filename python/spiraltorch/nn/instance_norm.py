"""torch.nn.InstanceNorm1d / 2d / 3d: optional affine parameters and running-stat buffers around
the native ``functional.instance_norm`` (C++, src/nn/normalization.cpp)."""

from __future__ import annotations

from typing import Any, Optional

from .. import _core
from .._core import Tensor
from . import Module, Parameter  # defined in __init__ before this module is imported


class _InstanceNorm(Module):
    """Normalises each (sample, channel) over its spatial dims. ``affine`` adds weight (ones) and
    bias (zeros) of shape (num_features,); ``track_running_stats`` keeps running_mean (zeros),
    running_var (ones) and num_batches_tracked, updated in training and used in eval mode."""

    _spatial = 2

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: Optional[float] = 0.1, affine: bool = False,
                 track_running_stats: bool = False, device: Optional[str] = None, dtype: Any = None,
                 name: str = "") -> None:
        super().__init__(name)
        layer = type(self).__name__
        if num_features <= 0:
            raise _core.SpiralValueError(f"{layer}: num_features must be positive, got {num_features}")
        if momentum is None:
            raise _core.SpiralValueError(f"{layer}: momentum=None (a cumulative average) is not supported")
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.affine, self.track_running_stats = affine, track_running_stats
        kind = dtype if dtype is not None else _core.dtype.float32
        dev = device or "cpu"
        if affine:
            self.weight = Parameter(_core.ones(num_features, dtype=kind).to(dev))
            self.bias = Parameter(_core.zeros(num_features, dtype=kind).to(dev))
        else:
            self.weight = None
            self.bias = None
        if track_running_stats:
            self.register_buffer("running_mean", _core.zeros(num_features, dtype=kind).to(dev))
            self.register_buffer("running_var", _core.ones(num_features, dtype=kind).to(dev))
            self.register_buffer("num_batches_tracked", _core.zeros(1, dtype=_core.dtype.int64).reshape(()).to(dev))
        else:
            self.running_mean = None
            self.running_var = None

    def forward(self, input: Tensor) -> Tensor:
        layer = type(self).__name__
        n = self._spatial
        if input.dim() not in (n + 1, n + 2):
            raise _core.ShapeError(f"{layer}: expected a {n + 1}-d (unbatched) or {n + 2}-d input, got shape "
                                   f"{tuple(input.shape)}")
        unbatched = input.dim() == n + 1
        x = input.unsqueeze(0) if unbatched else input
        if x.shape[1] != self.num_features:
            raise _core.ShapeError(f"{layer}: expected {self.num_features} channels, got input of shape "
                                   f"{tuple(input.shape)}")
        # num_batches_tracked stays as it is: PyTorch keeps it for state-dict compatibility only here.
        use_input_stats = self.training or not self.track_running_stats
        y = _core.nn.instance_norm(x, self.running_mean, self.running_var, self.weight, self.bias, use_input_stats,
                                   self.momentum, self.eps)
        return y.squeeze(0) if unbatched else y

    def extra_repr(self) -> str:
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, affine={self.affine}, "
                f"track_running_stats={self.track_running_stats}")


class InstanceNorm1d(_InstanceNorm):
    """torch.nn.InstanceNorm1d over (N, C, L) or (C, L)."""

    _spatial = 1


class InstanceNorm2d(_InstanceNorm):
    """torch.nn.InstanceNorm2d over (N, C, H, W) or (C, H, W)."""

    _spatial = 2


class InstanceNorm3d(_InstanceNorm):
    """torch.nn.InstanceNorm3d over (N, C, D, H, W) or (C, D, H, W)."""

    _spatial = 3


__all__ = ["InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d"]
