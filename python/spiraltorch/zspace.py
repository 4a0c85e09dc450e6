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
from .autograd import no_grad

__all__ = ["ComplexTensor", "GradientSummary", "Hypergrad", "LanguageWaveEncoder", "Realgrad", "ZSpaceInference",
           "ZSpaceTrainer", "decode_zspace"]

_geo = _core.geometry
_f64 = _core.dtype.float64


def _check_curvature(c: float, who: str) -> float:
    c = float(c)
    if not (math.isfinite(c) and c < 0):
        raise ValueError(f"{who}: curvature must be negative and finite (a hyperbolic ball), got {c}")
    return c


def _dft(values: Sequence[float]) -> list[complex]:
    """The unnormalised DFT X_k = sum_j x_j exp(-2 pi i k j / n) of a real sequence, in float64
    through the tensor core (two matrix products)."""
    n = len(values)
    idx = _core.arange(n, dtype=_f64)
    ang = (idx.reshape(n, 1) * idx.reshape(1, n)) * (-2.0 * math.pi / n)
    x = _core.tensor([list(values)], dtype=_f64)
    re = _core.matmul(x, _core.cos(ang)).reshape(-1).tolist()
    im = _core.matmul(x, _core.sin(ang)).reshape(-1).tolist()
    return [complex(a, b) for a, b in zip(re, im)]


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
        return ComplexTensor(1, len(s), _dft(s))

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

    def sign_lean(self) -> float:
        """(positive - negative) / count."""
        return (self.positive_count() - self.negative_count()) / len(self._v) if self._v else 0.0

    def sign_entropy(self) -> float:
        """Shannon entropy of the positive/negative/zero fractions over ln(number of non-empty bins)."""
        n = len(self._v)
        fr = [c / n for c in (self.positive_count(), self.negative_count(), self.zero_count()) if c] if n else []
        if len(fr) <= 1:
            return 0.0
        return -sum(p * math.log(p) for p in fr) / math.log(len(fr))

    def kurtosis(self) -> float:
        """Non-excess kurtosis (central 4th moment / variance^2); 0 when degenerate."""
        var = self.variance()
        if len(self._v) < 2 or var <= 1e-12:
            return 0.0
        m = self.mean()
        return math.fsum((v - m) ** 4 for v in self._v) / len(self._v) / var ** 2

    def as_dict(self) -> dict[str, float]:
        names = ("count", "sum", "l1", "l2", "linf", "mean", "mean_abs", "rms", "min", "max", "support_width",
                 "activation", "variance", "std", "sign_lean", "sign_entropy", "kurtosis")
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
        with no_grad():
            weights.copy_(new.to(weights.dtype).reshape(tuple(weights.shape)))
        self.reset()
        return weights


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


# ---------------------------------------------------------------- ZSpaceTrainer

_METRIC_ALIASES = {"speed": "speed", "velocity": "speed", "memory": "memory", "mem": "memory",
                   "stability": "stability", "stab": "stability", "drs": "drs", "drift": "drs", "frac": "frac",
                   "gradient": "gradient", "grad": "gradient"}
_BASE_METRICS = ("speed", "memory", "stability", "drs", "frac")


def _canonical_metrics(metrics: Any, who: str) -> dict[str, Any]:
    if isinstance(metrics, ZSpaceInference):
        return dict(metrics.metrics, gradient=list(metrics.gradient))
    if not isinstance(metrics, dict):
        raise TypeError(f"{who}: metrics must be a dict, got {type(metrics).__name__}")
    out: dict[str, Any] = {}
    for key, value in metrics.items():
        name = _METRIC_ALIASES.get(str(key).lower())
        if name is None:
            raise ValueError(f"{who}: unknown metric {key!r} (expected speed, memory, stability, drs, frac, gradient)")
        if name in out:
            raise ValueError(f"{who}: metric {name!r} given twice (through an alias)")
        if name == "gradient":
            vals = [float(v) for v in value]
            if not all(math.isfinite(v) for v in vals):
                raise ValueError(f"{who}: the gradient has non-finite entries")
            out[name] = vals
        else:
            v = float(value)
            if not math.isfinite(v):
                raise ValueError(f"{who}: metric {name!r} is not finite ({value})")
            out[name] = v
    return out




def _fractional_penalty(z: Sequence[float], alpha: float) -> tuple[float, list[float]]:
    """R_alpha(z) = (1/B) sum_{k<B} (k/(B-1))^(2 alpha) |Z_k|^2 over the one-sided spectrum
    (B = n//2 + 1 bins of the unnormalised DFT Z), and its gradient scaled to max-abs <= 1."""
    n = len(z)
    if n <= 1:
        return 0.0, [0.0] * n
    bins = n // 2 + 1
    spec = _dft(z)
    w = [(k / (bins - 1)) ** (2 * alpha) if k else 0.0 for k in range(bins)]
    r = sum(w[k] * abs(spec[k]) ** 2 for k in range(bins)) / bins
    grad = [2.0 / bins * sum(w[k] * (spec[k].conjugate() * cmath.exp(-2j * math.pi * k * j / n)).real
                              for k in range(bins)) for j in range(n)]
    scale = max(1.0, max(abs(g) for g in grad))
    return r, [g / scale for g in grad]


def decode_zspace(z: Sequence[float], alpha: float = 0.35) -> dict[str, float]:
    """The metrics a latent z stands for: speed = tanh(mean|dz| + |z|/(4n)), memory =
    tanh(mean(z) + |z|^2/(4n)), stability = tanh(1.5 (1/(1 + mean|d2z|) + 1/(1 + mean|dz|)) - 1),
    frac = tanh(E_alpha/|z|^2) and drs = tanh((E_high - E_low)/(E_high + E_low)) from the
    Parseval-normalised one-sided power spectrum (frequencies w_k = 2k/n, split at w = 0.5)."""
    n = len(z)
    d1 = [z[i + 1] - z[i] for i in range(n - 1)]
    d2 = [d1[i + 1] - d1[i] for i in range(len(d1) - 1)]
    mean_abs = lambda xs: sum(abs(x) for x in xs) / len(xs) if xs else 0.0  # noqa: E731
    sq = sum(v * v for v in z)
    norm = math.sqrt(sq)
    spec = _dft(z)
    e_alpha = e_low = e_high = 0.0
    for k in range(n // 2 + 1):
        mult = 1.0 if k == 0 or 2 * k == n else 2.0
        p = mult * abs(spec[k]) ** 2 / n
        omega = 2.0 * k / n
        e_alpha += omega ** (2 * alpha) * p if k else 0.0
        if omega < 0.5:
            e_low += p
        else:
            e_high += p
    return {"speed": math.tanh(mean_abs(d1) + 0.25 * norm / n),
            "memory": math.tanh(sum(z) / n + 0.25 * sq / n),
            "stability": math.tanh(1.5 * (1.0 / (1.0 + mean_abs(d2)) + 1.0 / (1.0 + mean_abs(d1))) - 1.0),
            "drs": math.tanh((e_high - e_low) / (e_high + e_low)) if e_high + e_low > 0 else 0.0,
            "frac": math.tanh(e_alpha / sq) if sq > 0 else 0.0}


class ZSpaceInference:
    """What ``ZSpaceTrainer.infer_partial`` concluded: ``metrics`` (decoded from z, observed ones
    overriding), ``prior`` (decoded only), ``residual`` (RMS of observed - decoded over the observed
    base metrics), ``confidence`` = exp(-residual), ``gradient`` (the gradient of the fit loss
    1/2 sum (decoded - observed)^2 with respect to z), ``observed``."""

    def __init__(self, metrics: dict[str, float], prior: dict[str, float], observed: dict[str, float],
                 gradient: list[float], residual: float) -> None:
        self.metrics, self.prior, self.observed = metrics, prior, observed
        self.gradient, self.residual = gradient, residual
        self.confidence = math.exp(-residual)

    def as_dict(self) -> dict[str, Any]:
        return {"metrics": dict(self.metrics), "prior": dict(self.prior), "observed": dict(self.observed),
                "gradient": list(self.gradient), "residual": self.residual, "confidence": self.confidence}

    def __repr__(self) -> str:
        return f"ZSpaceInference(residual={self.residual:.6f}, confidence={self.confidence:.6f})"


class ZSpaceTrainer:
    """Adam on a latent vector z (length ``z_dim``, starting at zero).

    ``step(metrics)``: the update direction is tanh of the supplied ``gradient`` (tiled or truncated
    to z_dim, or exactly z_dim long with ``gradient_projection="exact"``) plus ``lam_frac`` times the
    direction of the fractional spectral penalty R_alpha(z); the returned value is the objective
    *before* the update: lam_speed tanh(speed) + lam_mem tanh(memory) + lam_stab tanh(stability) +
    lam_drs tanh(drs) + lam_frac R_alpha(z) -- a weighted squash of the caller's metrics plus the
    penalty, not something the update minimises.

    ``step_partial(partial)`` fits z to partially observed metrics: it decodes z (``decode_zspace``),
    compares with the observed ones (``last_inference``), and steps along the gradient of
    1/2 sum (decoded - observed)^2 (by central differences) plus the supplied gradient and the
    penalty direction, so repeated calls reduce the residual."""

    def __init__(self, z_dim: int = 4, *, alpha: float = 0.35, lam_speed: float = 0.5, lam_mem: float = 0.3,
                 lam_stab: float = 0.2, lam_frac: float = 0.1, lam_drs: float = 0.0, lr: float = 1e-2,
                 beta1: float = 0.9, beta2: float = 0.999, eps: float = 1e-8,
                 gradient_projection: str = "tile_or_truncate") -> None:
        if not isinstance(z_dim, int) or z_dim <= 0:
            raise ValueError(f"ZSpaceTrainer: z_dim must be a positive int, got {z_dim!r}")
        if gradient_projection not in ("tile_or_truncate", "exact"):
            raise ValueError("ZSpaceTrainer: gradient_projection must be 'tile_or_truncate' or 'exact'")
        if not (lr > 0 and 0 <= beta1 < 1 and 0 <= beta2 < 1 and eps > 0):
            raise ValueError("ZSpaceTrainer: need lr > 0, 0 <= beta1, beta2 < 1 and eps > 0")
        self.z_dim, self.alpha, self.lr, self.beta1, self.beta2, self.eps = z_dim, alpha, lr, beta1, beta2, eps
        self.lambdas = {"speed": lam_speed, "memory": lam_mem, "stability": lam_stab, "drs": lam_drs}
        self.lam_frac, self.gradient_projection = lam_frac, gradient_projection
        self.last_inference: ZSpaceInference | None = None
        self.reset()

    def reset(self) -> None:
        self._z = [0.0] * self.z_dim
        self._m = [0.0] * self.z_dim
        self._v = [0.0] * self.z_dim
        self._t = 0
        self.last_inference = None

    @property
    def state(self) -> list[float]:
        """The latent z."""
        return list(self._z)

    def _project(self, grad: list[float]) -> list[float]:
        if not grad:
            return [0.0] * self.z_dim
        if self.gradient_projection == "exact" and len(grad) != self.z_dim:
            raise ValueError(f"ZSpaceTrainer: the gradient has {len(grad)} entries, z_dim is {self.z_dim}")
        return [math.tanh(grad[i % len(grad)]) for i in range(self.z_dim)]

    def _objective(self, metrics: dict[str, Any], penalty: float) -> float:
        return sum(lam * math.tanh(metrics.get(name, 0.0)) for name, lam in self.lambdas.items()) \
            + self.lam_frac * penalty

    def _adam(self, g: list[float]) -> None:
        t = self._t + 1
        m = [self.beta1 * a + (1 - self.beta1) * b for a, b in zip(self._m, g)]
        v = [self.beta2 * a + (1 - self.beta2) * b * b for a, b in zip(self._v, g)]
        c1, c2 = -math.expm1(t * math.log(self.beta1)) if self.beta1 > 0 else 1.0, \
            -math.expm1(t * math.log(self.beta2)) if self.beta2 > 0 else 1.0
        z = [zi - self.lr * (mi / c1) / (math.sqrt(vi / c2) + self.eps) for zi, mi, vi in zip(self._z, m, v)]
        if not all(math.isfinite(x) for x in z + m + v):
            raise ValueError("ZSpaceTrainer: the update is not finite; the state is unchanged")
        self._z, self._m, self._v, self._t = z, m, v, t

    def step(self, metrics: Any) -> float:
        """One Adam step on z; returns the objective before the update (see the class docs)."""
        obs = _canonical_metrics(metrics, "ZSpaceTrainer.step")
        penalty, dpen = _fractional_penalty(self._z, self.alpha)
        objective = self._objective(obs, penalty)
        proj = self._project(obs.get("gradient", []))
        self._adam([p + self.lam_frac * d for p, d in zip(proj, dpen)])
        return objective

    def infer_partial(self, partial: Any) -> ZSpaceInference:
        """Decodes z, overrides with the observed metrics and measures the disagreement."""
        obs = _canonical_metrics(partial, "ZSpaceTrainer.infer_partial")
        observed = {k: v for k, v in obs.items() if k in _BASE_METRICS}
        prior = decode_zspace(self._z, self.alpha)

        def fit(z: list[float]) -> float:
            d = decode_zspace(z, self.alpha)
            return 0.5 * sum((d[k] - v) ** 2 for k, v in observed.items())

        h, grad = 1e-6, []
        for i in range(self.z_dim):
            up, down = list(self._z), list(self._z)
            up[i] += h
            down[i] -= h
            grad.append((fit(up) - fit(down)) / (2 * h))
        residual = math.sqrt(sum((prior[k] - v) ** 2 for k, v in observed.items()) / len(observed)) if observed \
            else 0.0
        return ZSpaceInference(dict(prior, **observed), prior, observed, grad, residual)

    def step_partial(self, partial: Any) -> float:
        """``infer_partial``, then one Adam step along the fit gradient plus the supplied gradient
        (tanh, tiled) and the penalty direction; returns the objective before the update, on the
        inferred metrics. The inference is kept in ``last_inference``."""
        obs = _canonical_metrics(partial, "ZSpaceTrainer.step_partial")
        inference = self.infer_partial(partial)
        penalty, dpen = _fractional_penalty(self._z, self.alpha)
        objective = self._objective(inference.metrics, penalty)
        proj = self._project(obs.get("gradient", []))
        self._adam([f + p + self.lam_frac * d for f, p, d in zip(inference.gradient, proj, dpen)])
        self.last_inference = inference
        return objective

    def state_dict(self) -> dict[str, Any]:
        return {"z": list(self._z), "moment": list(self._m), "velocity": list(self._v), "step": self._t,
                "hyperparams": {"alpha": self.alpha, "lambda": dict(self.lambdas), "lam_frac": self.lam_frac,
                                "lr": self.lr, "beta1": self.beta1, "beta2": self.beta2, "eps": self.eps,
                                "gradient_projection": self.gradient_projection}}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        vecs = [list(map(float, state[k])) for k in ("z", "moment", "velocity")]
        if any(len(v) != self.z_dim for v in vecs):
            raise ValueError(f"ZSpaceTrainer.load_state_dict: vectors must have z_dim={self.z_dim} entries")
        self._z, self._m, self._v = vecs
        self._t = int(state.get("step", 0))
