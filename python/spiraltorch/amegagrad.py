"""Amegagrad: a hyperbolic (``Hypergrad``) and a Euclidean (``Realgrad``) tape stepped together,
with learning rates scaled by ``DesireGradientControl`` from the two tapes' statistics.

The control is a fixed heuristic (clamped blends of gradient statistics; see
``desire_control``): it turns the balance, agreement and saturation of the two gradients into
rate scales. It is documented here as what it is, not as a learned or optimal rule.

All of it is C++ (``include/spiraltorch/zspace/desire_control.h``, ``amegagrad.h``), bound as
``spiraltorch._core.zspace``; this module re-exports it.
"""

from __future__ import annotations

from typing import Any

from . import _core

__all__ = ["Amegagrad", "DesireGradientControl", "DesireGradientInterpretation", "desire_control"]

_zs = _core.zspace

DesireGradientInterpretation = _zs.DesireGradientInterpretation
DesireGradientControl = _zs.DesireGradientControl
desire_control = _zs.desire_control


class Amegagrad(_zs.Amegagrad):
    """``Amegagrad(shape, curvature=-1.0, hyper_learning_rate=0.05, real_learning_rate=0.01,
    gain=1.0)`` (shape as a (rows, cols) tuple or two ints).

    ``step(weights)``: optionally tunes both rates from the tapes (base rate x control scale, never
    compounding), then moves each row by a Riemannian SGD step of the hyperbolic tape and an SGD
    step of the Euclidean tape, clips the result into the ball, writes it in place, clears both
    tapes' pending gradients (each tape keeps reporting the gradient it applied through
    ``gradient()``, so ``opt.real.gradient()`` after ``step`` is the Euclidean gradient just used).
    A non-finite result raises and changes nothing. The optimizer is C++
    (``include/spiraltorch/zspace/amegagrad.h``); this class only parses the shape forms."""

    def __init__(self, *shape: Any, curvature: float = -1.0, hyper_learning_rate: float = 0.05,
                 real_learning_rate: float = 0.01, gain: float = 1.0, rows: int | None = None,
                 cols: int | None = None) -> None:
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        if not shape and rows is not None and cols is not None:
            shape = (rows, cols)
        if len(shape) != 2:
            raise ValueError(f"Amegagrad: expected a (rows, cols) shape, got {shape!r}")
        super().__init__(int(shape[0]), int(shape[1]), float(curvature), float(hyper_learning_rate),
                         float(real_learning_rate), float(gain))
