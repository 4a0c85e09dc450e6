"""Z-space text and gradient tapes: ``LanguageWaveEncoder``, ``Hypergrad``, ``Realgrad``,
``GradientSummary`` and ``ComplexTensor``.

Z-space is the Poincaré ball of curvature c < 0 (k = -c, radius 1/sqrt(k)); each row of a tensor
is one point. ``LanguageWaveEncoder`` maps text to a point through a DFT of its code points,
``Hypergrad`` is a Riemannian SGD tape on the ball (gradients accumulate in Euclidean
coordinates, ``apply`` moves each row along the geodesic), ``Realgrad`` the Euclidean SGD tape.
The ball operations are ``spiraltorch.geometry`` (Möbius addition, exp/log maps, distance).
"""

from __future__ import annotations

import cmath
import math
from typing import Any, Iterable, Sequence

from . import _core

__all__ = ["ComplexTensor", "GradientSummary", "Hypergrad", "LanguageWaveEncoder", "Realgrad"]

_geo = _core.geometry
_f64 = _core.dtype.float64


def _check_curvature(c: float, who: str) -> float:
    c = float(c)
    if not (math.isfinite(c) and c < 0):
        raise ValueError(f"{who}: curvature must be negative and finite (a hyperbolic ball), got {c}")
    return c


class ComplexTensor:
    """A (rows, cols) matrix of complex numbers; ``to_tensor`` interleaves [re, im] per entry."""

    def __init__(self, rows: int, cols: int, data: Sequence[complex] | None = None) -> None:
        data = [0j] * (rows * cols) if data is None else [complex(v) for v in data]
        if len(data) != rows * cols:
            raise ValueError(f"ComplexTensor: {len(data)} values for shape ({rows}, {cols})")
        self._rows, self._cols, self._data = rows, cols, data

    def shape(self) -> tuple[int, int]:
        return (self._rows, self._cols)

    def data(self) -> list[complex]:
        return list(self._data)

    def to_tensor(self) -> Any:
        """The real (rows, 2 * cols) tensor [re, im, re, im, ...] per row (float32)."""
        flat = [p for z in self._data for p in (z.real, z.imag)]
        return _core.Tensor(self._rows, 2 * self._cols, flat)

    def __repr__(self) -> str:
        return f"ComplexTensor(shape={self.shape()}, data={self._data})"


class LanguageWaveEncoder:
    """Text -> a point of Z-space (a character-codepoint DFT embedding).

    For character i of N with code point u: s_i = T * ((u mod 1024)/1024 + |sin((i+1)/N)|);
    X = DFT(s) (unnormalised); bin X_j becomes the 2-d point tanh(sqrt(k)|X_j|) (cos arg X_j,
    sin arg X_j); the 2N coordinates are mapped into the ball with exp_0. The embedding has no
    linguistic content: it is a deterministic feature map (s is real, so X_{N-j} = conj(X_j) and
    half the output mirrors the other half; code points equal modulo 1024 collide)."""

    def __init__(self, curvature: float, temperature: float) -> None:
        self._c = _check_curvature(curvature, "LanguageWaveEncoder")
        t = float(temperature)
        if not (math.isfinite(t) and t > 0):
            raise ValueError(f"LanguageWaveEncoder: temperature must be positive and finite, got {temperature}")
        self._t = t

    def curvature(self) -> float:
        return self._c

    def temperature(self) -> float:
        return self._t

    def _signal(self, text: str) -> list[float]:
        if not isinstance(text, str) or not text:
            raise ValueError("LanguageWaveEncoder: text must be a non-empty string")
        n = len(text)
        return [self._t * ((ord(ch) % 1024) / 1024.0 + abs(math.sin((i + 1) / n))) for i, ch in enumerate(text)]

    def encode_wave(self, text: str) -> ComplexTensor:
        """The DFT X of the text's signal as a (1, N) ComplexTensor, N = number of characters."""
        s = self._signal(text)
        n = len(s)
        # Exact DFT in float64 through the tensor core: X = s @ exp(-2 pi i j m / N).
        idx = _core.arange(n, dtype=_f64)
        ang = (idx.reshape(n, 1) * idx.reshape(1, n)) * (-2.0 * math.pi / n)
        st_s = _core.tensor([s], dtype=_f64)
        re = _core.matmul(st_s, _core.cos(ang)).reshape(-1).tolist()
        im = _core.matmul(st_s, _core.sin(ang)).reshape(-1).tolist()
        return ComplexTensor(1, n, [complex(a, b) for a, b in zip(re, im)])

    def encode_z_space(self, text: str) -> Any:
        """The text as a (1, 2N) float32 point inside the ball of curvature ``curvature()``."""
        sqrt_k = math.sqrt(-self._c)
        coords: list[float] = []
        for z in self.encode_wave(text).data():
            r = math.tanh(sqrt_k * abs(z))
            theta = cmath.phase(z)
            coords += [r * math.cos(theta), r * math.sin(theta)]
        # tanh saturates to exactly 1 in floating point for large spectra: clip back inside the
        # open ball so the point stays valid for the ball's log map and distance.
        point = _geo.clip_to_ball(_geo.expmap0(_core.tensor([coords], dtype=_f64), self._c), self._c)
        return point.to(_core.dtype.float32)


class GradientSummary:
    """Statistics of a gradient's finite entries (accumulated in float64)."""

    def __init__(self, values: Iterable[float]) -> None:
        vals = [float(v) for v in values]
        self._v = [v for v in vals if math.isfinite(v)]

    @staticmethod
    def from_values(values: Iterable[float]) -> GradientSummary:
        return GradientSummary(values)

    def count(self) -> int:
        return len(self._v)

    def sum(self) -> float:
        return math.fsum(self._v)

    def l1(self) -> float:
        return math.fsum(abs(v) for v in self._v)

    def sum_squares(self) -> float:
        return math.fsum(v * v for v in self._v)

    def l2(self) -> float:
        return math.sqrt(self.sum_squares())

    def linf(self) -> float:
        return max((abs(v) for v in self._v), default=0.0)

    def mean(self) -> float:
        return self.sum() / len(self._v) if self._v else 0.0

    def mean_abs(self) -> float:
        return self.l1() / len(self._v) if self._v else 0.0

    def rms(self) -> float:
        return self.l2() / math.sqrt(len(self._v)) if self._v else 0.0

    def min(self) -> float:
        return min(self._v, default=0.0)

    def max(self) -> float:
        return max(self._v, default=0.0)

    def support_width(self) -> float:
        return self.max() - self.min()

    def positive_count(self) -> int:
        return sum(1 for v in self._v if v > 0)

    def negative_count(self) -> int:
        return sum(1 for v in self._v if v < 0)

    def zero_count(self) -> int:
        return len(self._v) - self.positive_count() - self.negative_count()

    def near_zero_count(self) -> int:
        return sum(1 for v in self._v if abs(v) <= 1e-5)

    def activation(self) -> float:
        """The fraction of entries with |g| > 1e-5."""
        return 1.0 - self.near_zero_count() / len(self._v) if self._v else 0.0

    def variance(self) -> float:
        """Population variance."""
        if not self._v:
            return 0.0
        m = self.mean()
        return math.fsum((v - m) ** 2 for v in self._v) / len(self._v)

    def std(self) -> float:
        return math.sqrt(self.variance())

    def as_dict(self) -> dict[str, float]:
        names = ("count", "sum", "l1", "l2", "linf", "mean", "mean_abs", "rms", "min", "max", "support_width",
                 "activation", "variance", "std")
        return {n: getattr(self, n)() for n in names}

    def __repr__(self) -> str:
        return f"GradientSummary(count={self.count()}, l2={self.l2():.6g}, mean_abs={self.mean_abs():.6g})"


def _shape_of(t: Any, who: str) -> tuple[int, int]:
    if not isinstance(t, _core.Tensor):
        raise TypeError(f"{who}: expected a spiraltorch.Tensor, got {type(t).__name__}")
    shape = tuple(t.shape)
    return shape if len(shape) == 2 else (1, int(t.numel())) if len(shape) == 1 else shape


class _Tape:
    """A (rows, cols) Euclidean gradient buffer in float64."""

    def __init__(self, learning_rate: float, rows: int, cols: int, who: str) -> None:
        lr = float(learning_rate)
        if not (math.isfinite(lr) and lr > 0):
            raise ValueError(f"{who}: learning_rate must be positive and finite, got {learning_rate}")
        if not (isinstance(rows, int) and isinstance(cols, int) and rows > 0 and cols > 0):
            raise ValueError(f"{who}: rows and cols must be positive ints, got ({rows}, {cols})")
        self._who, self._lr, self._rows, self._cols = who, lr, rows, cols
        self._g = _core.zeros(rows, cols, dtype=_f64)

    def shape(self) -> tuple[int, int]:
        return (self._rows, self._cols)

    def learning_rate(self) -> float:
        return self._lr

    def scale_learning_rate(self, factor: float) -> None:
        """Multiplies the learning rate by ``factor`` (ignored unless positive and finite)."""
        if math.isfinite(factor) and factor > 0:
            self._lr *= factor

    def gradient(self) -> list[float]:
        """The accumulated gradient, flattened row-major."""
        return self._g.reshape(-1).tolist()

    def summary(self) -> GradientSummary:
        return GradientSummary(self.gradient())

    def reset(self) -> None:
        self._g = _core.zeros(self._rows, self._cols, dtype=_f64)

    def _as_matrix(self, t: Any, what: str) -> Any:
        shape = _shape_of(t, f"{self._who}.{what}")
        if shape != (self._rows, self._cols):
            raise ValueError(f"{self._who}.{what}: expected shape ({self._rows}, {self._cols}), got {shape}")
        m = t.detach().to(_f64).reshape(self._rows, self._cols)
        if not bool(_core.isfinite(m).all()):
            raise ValueError(f"{self._who}.{what}: non-finite values")
        return m

    def _add(self, g: Any) -> None:
        new = self._g + g
        if not bool(_core.isfinite(new).all()):
            raise ValueError(f"{self._who}: the accumulated gradient would overflow; nothing was added")
        self._g = new

    def accumulate_wave(self, wave: Any) -> None:
        """Adds ``wave`` (a gradient of the tape's shape) to the tape."""
        self._add(self._as_matrix(wave, "accumulate_wave"))

    def accumulate_complex_wave(self, wave: ComplexTensor) -> None:
        """Adds ``wave.to_tensor()`` (interleaved re/im) to the tape."""
        self.accumulate_wave(wave.to_tensor())

    def accumulate_pair(self, prediction: Any, target: Any) -> None:
        """Adds prediction - target, the gradient of 1/2 |prediction - target|^2."""
        self._add(self._as_matrix(prediction, "accumulate_pair") - self._as_matrix(target, "accumulate_pair"))

    def scale_gradient(self, factor: float) -> None:
        """Multiplies the tape by ``factor`` (a non-finite factor resets it)."""
        if not math.isfinite(factor):
            self.reset()
        else:
            self._g = self._g * float(factor)

    def rescale_rms(self, target: float) -> float:
        """Scales the tape to RMS ``target``; returns the factor (0 and a reset for target <= 0,
        0 when the tape is empty, 1 for a non-finite target)."""
        if not math.isfinite(target):
            return 1.0
        if target <= 0:
            self.reset()
            return 0.0
        rms = self.summary().rms()
        if rms <= 1e-12:
            return 0.0
        factor = target / rms
        self._g = self._g * factor
        return factor

    def _commit(self, weights: Any, new: Any, who: str) -> Any:
        if not bool(_core.isfinite(new).all()):
            raise ValueError(f"{who}: the update is not finite; weights and tape are unchanged")
        with _core_no_grad():
            weights.copy_(new.to(weights.dtype).reshape(tuple(weights.shape)))
        self.reset()
        return weights


def _core_no_grad() -> Any:
    from .autograd import no_grad

    return no_grad()


class Hypergrad(_Tape):
    """A Riemannian SGD tape on the Poincaré ball of curvature ``curvature``: gradients
    accumulate in Euclidean coordinates; ``apply(weights)`` moves each row x of ``weights`` to
    exp_x(-lr (1 - k|x|^2)^2 g) (the metric normalised to the identity at the origin, so a step
    from 0 is exp_0(-lr g)), keeps it inside the ball, writes it back in place and clears the
    tape. An empty tape leaves points where they are (after clipping them into the ball)."""

    def __init__(self, curvature: float, learning_rate: float, rows: int, cols: int) -> None:
        self._c = _check_curvature(curvature, "Hypergrad")
        super().__init__(learning_rate, rows, cols, "Hypergrad")

    def curvature(self) -> float:
        return self._c

    def absorb_text(self, encoder: LanguageWaveEncoder, text: str) -> None:
        """Accumulates ``encoder.encode_z_space(text)``; the encoder's curvature must match and the
        encoding (1, 2 * len(text)) must have the tape's shape."""
        if abs(encoder.curvature() - self._c) > 1e-6:
            raise ValueError(f"Hypergrad.absorb_text: encoder curvature {encoder.curvature()} differs from the "
                             f"tape's {self._c}")
        self.accumulate_wave(encoder.encode_z_space(text))

    def retune(self, curvature: float, learning_rate: float) -> None:
        """New curvature and learning rate; clears the tape."""
        c = _check_curvature(curvature, "Hypergrad.retune")
        lr = float(learning_rate)
        if not (math.isfinite(lr) and lr > 0):
            raise ValueError(f"Hypergrad.retune: learning_rate must be positive and finite, got {learning_rate}")
        self._c, self._lr = c, lr
        self.reset()

    def apply(self, weights: Any) -> Any:
        """One Riemannian SGD step on ``weights`` (mutated in place and returned)."""
        w = self._as_matrix(weights, "apply")
        new = _geo.rsgd_step(_geo.clip_to_ball(w, self._c), self._g, self._c, self._lr)
        return self._commit(weights, new, "Hypergrad.apply")


class Realgrad(_Tape):
    """The Euclidean SGD tape: ``apply(weights)`` does weights -= lr * g in place and clears the tape."""

    def __init__(self, learning_rate: float, rows: int, cols: int) -> None:
        super().__init__(learning_rate, rows, cols, "Realgrad")

    def absorb_text(self, encoder: LanguageWaveEncoder, text: str) -> None:
        """Accumulates ``encoder.encode_z_space(text)`` (it must have the tape's shape)."""
        self.accumulate_wave(encoder.encode_z_space(text))

    def apply(self, weights: Any) -> Any:
        """One SGD step on ``weights`` (mutated in place and returned)."""
        w = self._as_matrix(weights, "apply")
        return self._commit(weights, w - self._g * self._lr, "Realgrad.apply")
