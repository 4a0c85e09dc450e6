"""Amegagrad: a hyperbolic (``Hypergrad``) and a Euclidean (``Realgrad``) tape stepped together,
with learning rates scaled by ``DesireGradientControl`` from the two tapes' statistics.

The control is a fixed heuristic (clamped blends of gradient statistics; see
``desire_control``): it turns the balance, agreement and saturation of the two gradients into
rate scales. It is documented here as what it is, not as a learned or optimal rule.
"""

from __future__ import annotations

import math
from typing import Any

from . import _core
from .zspace import GradientSummary, Hypergrad, LanguageWaveEncoder, Realgrad

__all__ = ["Amegagrad", "DesireGradientControl", "DesireGradientInterpretation", "desire_control"]

_geo = _core.geometry


def _clamp(x: float, lo: float, hi: float) -> float:
    return min(max(x, lo), hi)


class DesireGradientInterpretation:
    """How the hyperbolic gradient H and the Euclidean gradient R relate: pressures (mean |g|),
    balance (RMS ratio, clamped to [0, 16]), sharpness (|kurtosis - 3|, <= 4), stability (1 minus the
    relative pressure gap), saturation (largest |g|), activation, sign alignment and entropy."""

    def __init__(self, hyper: GradientSummary, real: GradientSummary) -> None:
        self.hyper_pressure, self.real_pressure = hyper.mean_abs(), real.mean_abs()
        hr, rr = hyper.rms(), real.rms()
        self.balance = _clamp(hr / rr, 0.0, 16.0) if rr > 1e-6 else (16.0 if hr > 1e-6 else 1.0)
        self.sharpness = min(abs(hyper.kurtosis() - 3.0), 4.0) if hyper.std() > 1e-6 else 0.0
        hp, rp = self.hyper_pressure, self.real_pressure
        self.stability = _clamp(1.0 - abs(hp - rp) / (hp + rp + 1e-6), 0.0, 1.0)
        self.saturation = max(hyper.linf(), real.linf())
        self.activation = 0.5 * (hyper.activation() + real.activation())
        self.sign_alignment = _clamp(1.0 - 0.5 * abs(hyper.sign_lean() - real.sign_lean()), 0.0, 1.0)
        self.sign_entropy = _clamp(0.5 * (hyper.sign_entropy() + real.sign_entropy()), 0.0, 1.0)
        self.hyper_std, self.real_std = hyper.std(), real.std()

    def penalty_gain(self) -> float:
        return _clamp(1 + 0.35 * min(abs(self.balance - 1), 2) + 0.35 * min(1 - self.stability, 1)
                      + 0.2 * min(self.sharpness / 4, 1) + 0.2 * min(1 - self.sign_alignment, 1)
                      + 0.1 * min(1 - self.activation, 1), 1.0, 3.5)


class DesireGradientControl:
    """Rate scales for the two tapes (and the penalty gain) derived from an interpretation."""

    def __init__(self, interp: DesireGradientInterpretation, gain: float = 1.0) -> None:
        gain = _clamp(float(gain), 0.0, 1.0)
        imb = _clamp(interp.balance - 1.0, -4.0, 4.0)
        caution, sat = 1.0 - interp.stability, math.tanh(interp.saturation)
        dormant, mismatch = 1.0 - interp.activation, 1.0 - interp.sign_alignment
        if imb >= 0:
            hyper, real = _clamp(1 / (1 + imb), 0.25, 1.0), _clamp(1 + imb / 2, 1.0, 1.8)
        else:
            hyper, real = _clamp(1 - imb / 2, 1.0, 1.8), _clamp(1 / (1 - imb), 0.25, 1.0)
        hyper = _clamp(hyper * _clamp(1 - 0.6 * caution - 0.4 * sat - 0.25 * mismatch, 0.2, 1.0), 0.25, 1.8)
        real = _clamp(real * _clamp(1 - 0.4 * caution - 0.25 * sat - 0.2 * dormant, 0.25, 1.0), 0.25, 1.8)
        self.quality_gain = _clamp(0.6 + 0.3 * (1 - caution) + 0.1 * interp.sign_alignment, 0.4, 1.0) * gain
        q = 1.0 / (1.0 + math.exp(-self.quality_gain * 0.9))
        scale = 0.4 + 0.9 * q
        self._hyper, self._real = _clamp(hyper * scale, 0.1, 2.0), _clamp(real * scale, 0.1, 2.0)
        self._penalty = interp.penalty_gain()
        self.interpretation = interp
        events = ["lr_increase" if scale * max(hyper, real) > 1 else "lr_decrease"]
        if self.quality_gain > 0:
            events.append("quality_weight")
        self._events = events

    def hyper_rate_scale(self) -> float:
        return self._hyper

    def real_rate_scale(self) -> float:
        return self._real

    def penalty_gain(self) -> float:
        return self._penalty

    def events(self) -> list[str]:
        return list(self._events)

    def __repr__(self) -> str:
        return (f"DesireGradientControl(hyper_rate_scale={self._hyper:.5f}, real_rate_scale={self._real:.5f}, "
                f"penalty_gain={self._penalty:.5f})")


def desire_control(hyper: GradientSummary, real: GradientSummary, gain: float = 1.0) -> DesireGradientControl:
    """``DesireGradientControl`` from the two gradient summaries."""
    return DesireGradientControl(DesireGradientInterpretation(hyper, real), gain)


class Amegagrad:
    """``Amegagrad(shape, curvature=-1.0, hyper_learning_rate=0.05, real_learning_rate=0.01,
    gain=1.0)`` (shape as a (rows, cols) tuple or two ints).

    ``step(weights)``: optionally tunes both rates from the tapes (base rate x control scale, never
    compounding), then moves each row by a Riemannian SGD step of the hyperbolic tape and an SGD
    step of the Euclidean tape, clips the result into the ball, writes it in place, clears both
    tapes' pending gradients (each tape keeps reporting the gradient it applied through
    ``gradient()``, so ``opt.real.gradient()`` after ``step`` is the Euclidean gradient just used).
    A non-finite result raises and changes nothing."""

    def __init__(self, *shape: Any, curvature: float = -1.0, hyper_learning_rate: float = 0.05,
                 real_learning_rate: float = 0.01, gain: float = 1.0, rows: int | None = None,
                 cols: int | None = None) -> None:
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        if not shape and rows is not None and cols is not None:
            shape = (rows, cols)
        if len(shape) != 2:
            raise ValueError(f"Amegagrad: expected a (rows, cols) shape, got {shape!r}")
        r, c = int(shape[0]), int(shape[1])
        self.curvature = float(curvature)
        self.hyper = Hypergrad(self.curvature, hyper_learning_rate, r, c)
        self.real = Realgrad(real_learning_rate, r, c)
        self.hyper_learning_rate, self.real_learning_rate = float(hyper_learning_rate), float(real_learning_rate)
        self.gain = float(gain)
        self.last_control: DesireGradientControl | None = None

    def shape(self) -> tuple[int, int]:
        return self.hyper.shape()

    def zero_grad(self) -> None:
        self.hyper.reset()
        self.real.reset()

    reset = zero_grad

    def accumulate_wave(self, wave: Any) -> None:
        """Adds ``wave`` to both tapes."""
        self.hyper.accumulate_wave(wave)
        self.real.accumulate_wave(wave)

    def accumulate_pair(self, prediction: Any, target: Any) -> None:
        self.hyper.accumulate_pair(prediction, target)
        self.real.accumulate_pair(prediction, target)

    def absorb_text(self, encoder: LanguageWaveEncoder, text: str) -> None:
        """Encodes ``text`` and adds it to both tapes, zero-padded or truncated to rows * cols."""
        if abs(encoder.curvature() - self.curvature) > 1e-6:
            raise ValueError(f"Amegagrad.absorb_text: encoder curvature {encoder.curvature()} differs from "
                             f"{self.curvature}")
        rows, cols = self.shape()
        flat = encoder.encode_z_space(text).reshape(-1).tolist()[: rows * cols]
        flat += [0.0] * (rows * cols - len(flat))
        self.accumulate_wave(_core.Tensor(rows, cols, flat))

    def desire_control(self, *, gain: float | None = None) -> DesireGradientControl:
        """The control computed from the two tapes' pending gradients (what ``step`` would apply)."""
        return desire_control(GradientSummary(self.hyper.pending_gradient()), GradientSummary(self.real.pending_gradient()),
                              self.gain if gain is None else gain)

    def tune(self, control: Any = None, *, gain: float | None = None) -> Any:
        """Sets the tapes' rates to base rate x control scale; returns the control."""
        control = control if control is not None else self.desire_control(gain=gain)
        h = self.hyper_learning_rate * float(control.hyper_rate_scale())
        r = self.real_learning_rate * float(control.real_rate_scale())
        if not (math.isfinite(h) and h > 0 and math.isfinite(r) and r > 0):
            raise ValueError(f"Amegagrad.tune: the control gives invalid rates ({h}, {r})")
        self.hyper.set_learning_rate(h)
        self.real.set_learning_rate(r)
        self.last_control = control
        return control

    def step(self, weights: Any, *, tune: bool = True, gain: float | None = None, control: Any = None) -> Any:
        """One combined step on ``weights`` (mutated in place and returned)."""
        if tune:
            self.tune(control, gain=gain)
        w = self.hyper._as_matrix(weights, "step")
        mid = _geo.rsgd_step(_geo.clip_to_ball(w, self.curvature), self.hyper._pending(), self.curvature,
                             self.hyper.learning_rate())
        new = _geo.clip_to_ball(mid - self.real._pending() * self.real.learning_rate(), self.curvature)
        self.hyper._commit(weights, new, "Amegagrad.step")
        self.real._mark_applied()  # both tapes keep their applied gradient readable (gradient())
        return weights
