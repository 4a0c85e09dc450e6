"""Amegagrad: a hyperbolic (``Hypergrad``) and a Euclidean (``Realgrad``) tape stepped together,
with learning rates scaled by ``DesireGradientControl`` from the two tapes' statistics.

The control is a fixed heuristic (clamped blends of gradient statistics; see
``desire_control``): it turns the balance, agreement and saturation of the two gradients into
rate scales. It is documented here as what it is, not as a learned or optimal rule.

All of it is C++ (``include/spiraltorch/zspace/desire_control.h``, ``amegagrad.h``), bound as
``spiraltorch._core.zspace``; this module re-exports it.
"""

from __future__ import annotations

import os
from typing import Any

from . import _core
from .zspace import as_topos

__all__ = ["Amegagrad", "DesireGradientControl", "DesireGradientInterpretation", "desire_control"]

_zs = _core.zspace

DesireGradientInterpretation = _zs.DesireGradientInterpretation
DesireGradientControl = _zs.DesireGradientControl
desire_control = _zs.desire_control


class Amegagrad(_zs.Amegagrad):
    """``Amegagrad(shape, curvature=-1.0, hyper_learning_rate=0.05, real_learning_rate=0.01,
    gain=1.0)`` (shape as a (rows, cols) tuple or two ints).

    ``topos`` (an ``OpenCartesianTopos``, mapping or 5-tuple) guards both tapes on every step.

    ``step(weights)``: optionally tunes both rates from the tapes (base rate x control scale, never
    compounding), then moves each row by a Riemannian SGD step of the hyperbolic tape and an SGD
    step of the Euclidean tape, clips the result into the ball, writes it in place, clears both
    tapes' pending gradients (each tape keeps reporting the gradient it applied through
    ``gradient()``, so ``opt.real.gradient()`` after ``step`` is the Euclidean gradient just used).
    A non-finite result raises and changes nothing. The optimizer is C++
    (``include/spiraltorch/zspace/amegagrad.h``); this class only parses the shape forms."""

    def __init__(self, *shape: Any, curvature: float = -1.0, hyper_learning_rate: float = 0.05,
                 real_learning_rate: float = 0.01, gain: float = 1.0, rows: int | None = None,
                 cols: int | None = None, topos: Any = None) -> None:
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        if not shape and rows is not None and cols is not None:
            shape = (rows, cols)
        if len(shape) != 2:
            raise ValueError(f"Amegagrad: expected a (rows, cols) shape, got {shape!r}")
        super().__init__(int(shape[0]), int(shape[1]), float(curvature), float(hyper_learning_rate),
                         float(real_learning_rate), float(gain), as_topos(topos, "Amegagrad"))


# ---------------------------------------------------------------- sessions

def _shape_of(shape: tuple[Any, ...], rows: int | None, cols: int | None, who: str) -> tuple[int, int]:
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    if len(shape) == 1 and isinstance(shape[0], _core.Tensor):
        t = shape[0]
        shape = (1, t.shape[0]) if t.dim() == 1 else tuple(t.shape)
    if not shape and rows is not None and cols is not None:
        shape = (rows, cols)
    if len(shape) != 2 or not all(isinstance(v, int) and not isinstance(v, bool) for v in shape):
        raise _core.SpiralValueError(f"{who}: expected a model and a loss, or a (rows, cols) shape, got {shape!r}")
    return int(shape[0]), int(shape[1])


class AmegagradSession(_zs.AmegagradSession):
    """A training session over Z-space tapes that records an Atlas frame per step.

    Two forms:

    - ``AmegagradSession(model, loss, ...)``: ``step(input, target)`` zeroes the gradients, runs
      ``model(input)``, ``loss(prediction, target)`` (a one-element tensor), ``backward()``, then
      updates every floating parameter with its own ``Amegagrad`` (a parameter is viewed as
      (size of dim 0, the rest), each row a point of the Poincaré ball of ``curvature``; rates tuned
      by ``DesireGradientControl`` when ``tune``). A non-finite loss or gradient skips the step
      (reported in the frame, nothing changes); a non-finite update raises, changing nothing.
    - ``AmegagradSession((rows, cols), weights=None, ...)`` (the original's form): a weights
      tensor (zeros unless given) stepped by ``step_wave(wave)``, ``step_pair(prediction, target)``,
      ``step_text(encoder, text)``, or ``accumulate_*`` then ``step()``.

    Each step returns a dict ``{step, loss, skipped, timestamp, metrics, notes}`` and pushes the
    same frame (``telemetry.AtlasFrame``) into ``route`` (a ``telemetry.AtlasRoute`` keeping the last
    ``telemetry_bound`` frames; None with ``telemetry=False``). Metrics: ``session.loss``,
    ``session.skipped``, ``hypergrad.l2``/``mean_abs``/``linf``/``learning_rate``,
    ``realgrad.l2``/``mean_abs``/``learning_rate``, ``desire.hyper_rate_scale``/``real_rate_scale``,
    ``geometry.max_radius`` (max sqrt(k)|row| after the step) and ``zspace.loss`` (the objective of a
    ``ZSpaceTrainer`` of ``z_dim`` fed with the step's gradient statistics; ``z_dim=0`` leaves it
    out). ``topos`` (an ``OpenCartesianTopos``, mapping or 5-tuple) guards every tape and the trainer.
    ``trace_path`` writes a JSONL trace (``spiraltorch.zspace_trace``, ``docs/traces.md``): a
    ``run_start`` event with the settings, then a ``step`` event per step with the frame's metrics
    (read it back with ``zspace_trace.load_trace``; ``trace_errors`` counts failed writes).
    The per-step work is C++ (``include/spiraltorch/zspace/session.h``)."""

    _HYPER_ONLY = False

    def __init__(self, *shape_or_model: Any, loss: Any = None, curvature: float = -1.0,
                 hyper_learning_rate: float = 0.05, real_learning_rate: float = 0.01, gain: float = 1.0,
                 tune: bool = True, topos: Any = None, weights: Any = None, rows: int | None = None,
                 cols: int | None = None, z_dim: int = 4, z_lr: float = 0.05, z_lam_frac: float = 0.05,
                 telemetry: bool = True, telemetry_bound: int = 128,
                 trace_path: str | os.PathLike[str] | None = None) -> None:
        who = type(self).__name__
        common = dict(hyper_only=self._HYPER_ONLY, curvature=float(curvature),
                      hyper_learning_rate=float(hyper_learning_rate), real_learning_rate=float(real_learning_rate),
                      gain=float(gain), tune=bool(tune), topos=as_topos(topos, who),
                      telemetry_bound=int(telemetry_bound), z_dim=int(z_dim), z_lr=float(z_lr),
                      z_lam_frac=float(z_lam_frac),
                      trace_path=None if trace_path is None else os.fspath(trace_path))
        if shape_or_model and isinstance(shape_or_model[0], _core.nn.Module):
            model, *rest = shape_or_model
            if rest:
                if loss is not None or len(rest) > 1:
                    raise _core.SpiralValueError(f"{who}: expected (model, loss), got {len(shape_or_model)} arguments")
                loss = rest[0]
            if not callable(loss):
                raise TypeError(f"{who}: a model session needs a callable loss(prediction, target)")
            super().__init__(model, loss, **common)
            self.model = model
        else:
            r, c = _shape_of(shape_or_model, rows, cols, who)
            if weights is not None and not isinstance(weights, _core.Tensor):
                weights = _core.tensor(weights, dtype=_core.dtype.float64)
            super().__init__(r, c, weights=weights, **common)
            self.model = None
        from .telemetry import AtlasRoute

        self.route = AtlasRoute() if telemetry else None
        self.last_step_metrics: dict[str, float] | None = None

    def _emit(self, result: dict[str, Any]) -> dict[str, Any]:
        self.last_step_metrics = dict(result["metrics"])
        if self.route is not None:
            from .telemetry import AtlasFrame, AtlasMetric

            frame = AtlasFrame(result["timestamp"], [AtlasMetric(k, v) for k, v in result["metrics"].items()],
                               result["notes"])
            self.route.push_bounded(frame, self.telemetry_bound)
        return result

    def step(self, *args: Any, note: str | None = None) -> dict[str, Any]:
        """Model session: ``step(input, target)``. Weights session: ``step()`` applies what has been
        accumulated (``accumulate_wave``/``accumulate_pair``/``absorb_text``)."""
        if self.is_model_session:
            if len(args) != 2:
                raise _core.SpiralValueError(f"{type(self).__name__}.step: expected (input, target), got "
                                             f"{len(args)} arguments")
            return self._emit(self._step(args[0], args[1], note or ""))
        if args:
            raise _core.SpiralValueError(f"{type(self).__name__}.step: a weights session steps with what was "
                                         "accumulated (or use step_wave / step_pair / step_text)")
        return self._emit(self._apply(note or ""))

    def step_wave(self, wave: Any, *, note: str | None = None) -> dict[str, Any]:
        """Weights session: clears the tapes, accumulates ``wave`` and steps."""
        return self._emit(self._step_wave(wave, note or ""))

    def step_pair(self, prediction: Any, target: Any, *, note: str | None = None) -> dict[str, Any]:
        """Weights session: clears the tapes, accumulates ``prediction - target`` and steps."""
        return self._emit(self._step_pair(prediction, target, note or ""))

    def step_text(self, encoder: Any, text: str, *, note: str | None = None) -> dict[str, Any]:
        """Weights session: clears the tapes, absorbs the encoded ``text`` and steps."""
        return self._emit(self._step_text(encoder, text, note or ""))

    def frames(self) -> list[dict[str, Any]]:
        """The kept frames (the last ``telemetry_bound``), oldest first, as dicts."""
        return self._frames()

    @property
    def opt(self) -> Any:
        """The single optimizer of a weights session (the original's ``.opt``)."""
        return self.optimizers[0]

    @property
    def hyper(self) -> Any:
        return self.optimizers[0].hyper

    @property
    def real(self) -> Any:
        return self.optimizers[0].real


class HypergradSession(AmegagradSession):
    """``AmegagradSession`` with Riemannian SGD only: each parameter (or the weights) takes a
    ``Hypergrad`` step, with no Euclidean tape and no rate tuning; frames carry the ``hypergrad.*``,
    ``session.*``, ``geometry.max_radius`` and ``zspace.loss`` metrics."""

    _HYPER_ONLY = True


def amegagrad_session(*shape_or_model: Any, **kwargs: Any) -> AmegagradSession:
    """``AmegagradSession(model, loss, ...)`` or ``AmegagradSession((rows, cols), ...)``; see there."""
    return AmegagradSession(*shape_or_model, **kwargs)


def hypergrad_session(*shape_or_model: Any, learning_rate: float | None = None, **kwargs: Any) -> HypergradSession:
    """``HypergradSession(model, loss, ...)`` or ``HypergradSession((rows, cols), ...)``;
    ``learning_rate`` is the hyperbolic rate (the original's name)."""
    if learning_rate is not None:
        kwargs["hyper_learning_rate"] = learning_rate
    return HypergradSession(*shape_or_model, **kwargs)


__all__ += ["AmegagradSession", "HypergradSession", "amegagrad_session", "hypergrad_session"]
