"""The original spiraltorch's 2-D Tensor helpers, attached to ``st.Tensor`` at import.

Each is a thin composition of native ops (so autograd and every device apply) with the
original's argument checks: ``rows``/``cols``, ``scale``, ``add_scaled_``,
``add_row_inplace``, ``squared_l2_norm``, ``row_softmax(backend=)``,
``scaled_dot_attention``, ``Tensor.cat_rows``, ``project_to_poincare``, ``to_dlpack`` and
``Tensor.from_dlpack``. Where the original computed something geometrically wrong
(``project_to_poincare`` squashed into the unit ball for every curvature), the correct
mapping is used and the docstring says so.
"""

from __future__ import annotations

import math
from typing import Any, Optional, Sequence

from . import _core

__all__ = ["install"]

Tensor = _core.Tensor

# The original's backend labels; "mps" names a device this build does not have, "wgpu" one it
# has when built with the wgpu backend and an adapter answers.
_BACKENDS = (None, "auto", "cpu", "cuda", "wgpu", "mps")


def _require_2d(t: Tensor, op: str) -> None:
    if t.dim() != 2:
        raise _core.ShapeError(f"{op}: expected a 2-D (rows, cols) tensor, got shape {tuple(t.shape)}")


def _rows(self: Tensor) -> int:
    """Number of rows of a 2-D tensor."""
    _require_2d(self, "Tensor.rows")
    return int(self.shape[0])


def _cols(self: Tensor) -> int:
    """Number of columns of a 2-D tensor."""
    _require_2d(self, "Tensor.cols")
    return int(self.shape[1])


def _finite_scalar(value: Any, op: str, name: str) -> float:
    v = float(value)
    if not math.isfinite(v):
        raise _core.SpiralValueError(f"{op}: {name} must be finite, got {v}")
    return v


def _scale(self: Tensor, value: float) -> Tensor:
    """Returns ``value * self`` (a new tensor); ``value`` must be finite."""
    return self * _finite_scalar(value, "Tensor.scale", "the factor")


def _add_scaled_(self: Tensor, other: Tensor, scale: float) -> Tensor:
    """In place ``self += scale * other`` (same shape required); returns self."""
    s = _finite_scalar(scale, "Tensor.add_scaled_", "scale")
    if tuple(other.shape) != tuple(self.shape):
        raise _core.ShapeError(
            f"Tensor.add_scaled_: shapes {tuple(self.shape)} and {tuple(other.shape)} differ")
    return self.add_(other, alpha=s)


def _add_row_inplace(self: Tensor, bias: Any) -> Tensor:
    """In place: adds ``bias`` (``cols`` values: a list or a tensor) to every row; returns self."""
    _require_2d(self, "Tensor.add_row_inplace")
    row = bias if isinstance(bias, Tensor) else _core.tensor(list(bias), dtype=self.dtype)
    if row.numel() != self.shape[1]:
        raise _core.ShapeError(
            f"Tensor.add_row_inplace: bias has {row.numel()} values but the tensor has {self.shape[1]} columns")
    return self.add_(row.reshape(1, -1).to(self.device))


def _squared_l2_norm(self: Tensor) -> float:
    """Sum of squares of every element, as a Python float."""
    return float((self.double() * self.double()).sum().item())


def _check_backend(backend: Optional[str], t: Tensor, op: str) -> None:
    if backend not in _BACKENDS:
        raise _core.SpiralValueError(f"{op}: unknown backend {backend!r}; expected one of auto, cpu, cuda, wgpu, mps")
    if backend == "mps":
        raise _core.DeviceUnavailableError(f"{op}: backend '{backend}' is not built into this SpiralTorch")
    if backend == "wgpu" and not _core._wgpu_is_available():
        raise _core.DeviceUnavailableError(f"{op}: backend 'wgpu' is not available: {_core._wgpu_unavailable_reason()}")
    if backend in ("cpu", "cuda", "wgpu") and not str(t.device).startswith(backend):
        raise _core.SpiralValueError(f"{op}: backend '{backend}' asked for a tensor on {t.device}; move it first")


def _row_softmax(self: Tensor, *, backend: Optional[str] = None) -> Tensor:
    """Softmax of every row of a 2-D tensor (max-shifted, rows sum to 1), on the tensor's
    device. ``backend`` (auto/cpu/cuda/wgpu) only checks where the tensor lives."""
    _require_2d(self, "Tensor.row_softmax")
    _check_backend(backend, self, "Tensor.row_softmax")
    return self.softmax(-1)


def _scaled_dot_attention(self: Tensor, keys: Tensor, values: Tensor, *, contexts: int, sequence: int,
                          scale: float, z_bias: Optional[Tensor] = None, attn_bias: Optional[Tensor] = None,
                          backend: Optional[str] = None) -> Tensor:
    """Attention of the original's flat layout: queries (self), keys and values are
    ``(contexts * sequence, head_dim)``. Per context c and query i,
    ``logit_ij = scale * <q_i, k_j> + z_bias[c, j] + attn_bias[c * sequence + i, j]``,
    softmax over j, ``out_i = sum_j w_ij v_j``. Returns ``(contexts * sequence, head_dim)``."""
    op = "Tensor.scaled_dot_attention"
    _check_backend(backend, self, op)
    s = _finite_scalar(scale, op, "scale")
    if contexts < 0 or sequence < 0:
        raise _core.ShapeError(f"{op}: contexts and sequence must be non-negative, got {contexts}, {sequence}")
    for name, t in (("queries", self), ("keys", keys), ("values", values)):
        _require_2d(t, op)
        if t.shape[0] != contexts * sequence:
            raise _core.ShapeError(
                f"{op}: {name} have {t.shape[0]} rows, expected contexts * sequence = {contexts * sequence}")
    if keys.shape[1] != self.shape[1]:
        raise _core.ShapeError(f"{op}: queries have {self.shape[1]} columns but keys {keys.shape[1]}")
    d = self.shape[1]
    q = self.reshape(contexts, sequence, d)
    k = keys.reshape(contexts, sequence, d)
    v = values.reshape(contexts, sequence, values.shape[1])
    logits = (q @ k.transpose(1, 2)) * s
    if z_bias is not None:
        if tuple(z_bias.shape) != (contexts, sequence):
            raise _core.ShapeError(f"{op}: z_bias must be {(contexts, sequence)}, got {tuple(z_bias.shape)}")
        logits = logits + z_bias.reshape(contexts, 1, sequence)
    if attn_bias is not None:
        if tuple(attn_bias.shape) != (contexts * sequence, sequence):
            raise _core.ShapeError(
                f"{op}: attn_bias must be {(contexts * sequence, sequence)}, got {tuple(attn_bias.shape)}")
        logits = logits + attn_bias.reshape(contexts, sequence, sequence)
    return (logits.softmax(-1) @ v).reshape(contexts * sequence, values.shape[1])


def _cat_rows(tensors: Sequence[Tensor]) -> Tensor:
    """Stacks 2-D tensors with equal column counts vertically (``cat`` along rows)."""
    items = list(tensors)
    if not items:
        raise _core.SpiralValueError("Tensor.cat_rows: needs at least one tensor")
    for t in items:
        _require_2d(t, "Tensor.cat_rows")
        if t.shape[1] != items[0].shape[1]:
            raise _core.ShapeError(
                f"Tensor.cat_rows: column counts differ ({items[0].shape[1]} and {t.shape[1]})")
    return _core.cat(items, 0)


def _project_to_poincare(self: Tensor, curvature: float = -1.0) -> Tensor:
    """Maps every row into the Poincare ball of curvature ``curvature`` (< 0) with the
    exponential map at the origin, ``tanh(sqrt|c| |x|) x / (sqrt|c| |x|)``; zero rows stay
    zero. (The original divided by sqrt|c| and always landed in the unit ball; this is
    the exact map into the ball of radius 1/sqrt|c|, equal to it at c = -1.)"""
    c = _finite_scalar(curvature, "Tensor.project_to_poincare", "curvature")
    if c >= 0:
        raise _core.SpiralValueError(f"Tensor.project_to_poincare: curvature must be negative, got {c}")
    return _core.geometry.expmap0(self, c)


def _to_dlpack(self: Tensor) -> Any:
    """A DLPack capsule sharing this tensor's memory (``__dlpack__()``)."""
    return self.__dlpack__()


def install() -> None:
    T = Tensor
    T.rows = property(_rows)
    T.cols = property(_cols)
    T.scale = _scale
    T.add_scaled_ = _add_scaled_
    T.add_row_inplace = _add_row_inplace
    T.squared_l2_norm = _squared_l2_norm
    T.row_softmax = _row_softmax
    T.scaled_dot_attention = _scaled_dot_attention
    T.cat_rows = staticmethod(_cat_rows)
    T.project_to_poincare = _project_to_poincare
    T.to_dlpack = _to_dlpack
    T.from_dlpack = staticmethod(_core.from_dlpack)
