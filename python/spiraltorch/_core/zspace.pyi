"""Z-space: text encoding, gradient tapes and the latent trainer."""

from collections.abc import Callable, Iterable, Sequence
from typing import Any, overload

import numpy
import numpy.typing

import spiraltorch._core
import spiraltorch._core.nn


class ComplexTensor:
    """
    A (rows, cols) matrix of complex numbers, complex128 (default) or complex64;
    to_tensor interleaves [re, im] per entry. complex64 results are computed in double
    and rounded once to complex64; mixed dtypes give complex128, as in NumPy.
    """

    def __init__(self, rows: int, cols: int, data: numpy.typing.ArrayLike | None = None, *, dtype: numpy.typing.DTypeLike = 'complex128') -> None:
        """
        A (rows, cols) matrix: zeros when data is None, else rows * cols complex numbers (row-major, any iterable or array; complex() of each). dtype 'complex64' or 'complex128' (DtypeError otherwise).
        """

    @staticmethod
    def from_numpy(array: numpy.typing.ArrayLike) -> ComplexTensor:
        """
        A ComplexTensor from a 2-d array (complex64 stays complex64, anything else complex128).
        """

    @property
    def dtype(self) -> str:
        """'complex64' or 'complex128'."""

    def to(self, dtype: numpy.typing.DTypeLike) -> ComplexTensor:
        """The same values in another dtype (rounded when narrowing)."""

    def numpy(self) -> numpy.ndarray:
        """A NumPy array of the tensor's dtype (a copy)."""

    def shape(self) -> tuple[int, int]:
        """(rows, cols)."""

    def data(self) -> list[complex]:
        """The entries as a flat row-major list of complex."""

    def to_tensor(self) -> spiraltorch._core.Tensor:
        """
        The real (rows, 2 * cols) tensor [re, im, re, im, ...] per row (float32).
        """

    def conj(self) -> ComplexTensor:
        """The complex conjugate."""

    def abs(self) -> spiraltorch._core.Tensor:
        """|z| per entry as a (rows, cols) float64 tensor."""

    def fft(self) -> ComplexTensor:
        """
        The unnormalised DFT of each row (radix-2 FFT for power-of-two widths, the direct sum otherwise).
        """

    def ifft(self) -> ComplexTensor:
        """The inverse of fft (with the 1/cols factor)."""

    def __add__(self, arg: ComplexTensor, /) -> ComplexTensor: ...

    def __sub__(self, arg: ComplexTensor, /) -> ComplexTensor: ...

    def __mul__(self, arg: ComplexTensor, /) -> ComplexTensor: ...

    def __matmul__(self, arg: ComplexTensor, /) -> ComplexTensor: ...

    def __repr__(self) -> str: ...

class GradientSummary:
    """Statistics of a gradient's finite entries (accumulated in float64)."""

    def __init__(self, values: Iterable[float]) -> None:
        """
        The statistics of values (float() of each item); non-finite values are dropped.
        """

    @staticmethod
    def from_values(values: Iterable[float]) -> GradientSummary:
        """Same as GradientSummary(values)."""

    def count(self) -> int:
        """The number of finite entries."""

    def sum(self) -> float:
        """The exactly rounded sum (as math.fsum)."""

    def l1(self) -> float:
        """sum |g|."""

    def sum_squares(self) -> float:
        """sum g^2."""

    def l2(self) -> float:
        """sqrt(sum g^2)."""

    def linf(self) -> float:
        """max |g|."""

    def mean(self) -> float:
        """sum / count."""

    def mean_abs(self) -> float:
        """l1 / count."""

    def rms(self) -> float:
        """sqrt(sum_squares / count)."""

    def min(self) -> float:
        """The smallest entry."""

    def max(self) -> float:
        """The largest entry."""

    def support_width(self) -> float:
        """max - min."""

    def positive_count(self) -> int:
        """Entries > 0."""

    def negative_count(self) -> int:
        """Entries < 0."""

    def zero_count(self) -> int:
        """Entries == 0."""

    def near_zero_count(self) -> int:
        """Entries with |g| <= 1e-5."""

    def activation(self) -> float:
        """The fraction of entries with |g| > 1e-5."""

    def variance(self) -> float:
        """Population variance."""

    def std(self) -> float:
        """Population standard deviation."""

    def sign_lean(self) -> float:
        """(positive - negative) / count."""

    def sign_entropy(self) -> float:
        """
        Shannon entropy of the positive/negative/zero fractions over ln(number of non-empty bins).
        """

    def kurtosis(self) -> float:
        """
        Non-excess kurtosis (central 4th moment / variance^2); 0 when degenerate.
        """

    def as_dict(self) -> dict[str, float]:
        """
        {name: value} for count, sum, l1, l2, linf, mean, mean_abs, rms, min, max, support_width, activation, variance, std, sign_lean, sign_entropy, kurtosis.
        """

    def __repr__(self) -> str: ...

class LanguageWaveEncoder:
    """
    Text -> a point of Z-space (a character-codepoint DFT embedding).

    For character i of N with code point u: s_i = T * ((u mod 1024)/1024 + |sin((i+1)/N)|);
    X = DFT(s) (unnormalised); bin X_j becomes the 2-d point tanh(sqrt(k)|X_j|) (cos arg X_j,
    sin arg X_j); the 2N coordinates are mapped into the ball with exp_0. The embedding has no
    linguistic content: it is a deterministic feature map (s is real, so X_{N-j} = conj(X_j) and
    half the output mirrors the other half; code points equal modulo 1024 collide).
    """

    def __init__(self, curvature: float, temperature: float) -> None: ...

    def curvature(self) -> float:
        """The ball's curvature (< 0)."""

    def temperature(self) -> float:
        """T, the signal's scale."""

    def encode_wave(self, text: str) -> ComplexTensor:
        """
        The DFT X of the text's signal as a (1, N) ComplexTensor, N = number of characters.
        """

    def encode_z_space(self, text: str) -> spiraltorch._core.Tensor:
        """
        The text as a (1, 2N) float32 point inside the ball of curvature curvature().
        """

class GradientTape:
    """
    A (rows, cols) Euclidean gradient buffer in float64 (the base of Hypergrad and Realgrad).

    apply uses the accumulated gradient once. Afterwards the tape still reports it through
    gradient()/summary() (applied() is then True, so code that reads the gradient after
    the step sees what was applied); the next accumulate_* starts again from zero, and apply
    without new accumulation does not move the weights. pending_gradient() is what the next
    apply would use.
    """

    def shape(self) -> tuple[int, int]:
        """(rows, cols) of the tape."""

    def learning_rate(self) -> float:
        """The step size of apply()."""

    def scale_learning_rate(self, factor: float) -> None:
        """
        Multiplies the learning rate by factor (ignored unless positive and finite).
        """

    def set_learning_rate(self, learning_rate: float) -> None:
        """Sets the learning rate (positive and finite)."""

    def gradient(self) -> list[float]:
        """
        The tape's gradient, flattened row-major: the one accumulated since the last apply,
        or, when nothing has been accumulated since, the gradient that apply last used.
        """

    def applied(self) -> bool:
        """
        True when gradient() is the last applied gradient (nothing accumulated since).
        """

    def pending_gradient(self) -> list[float]:
        """The gradient the next apply would use (zeros right after an apply)."""

    def summary(self) -> GradientSummary:
        """GradientSummary of gradient()."""

    def reset(self) -> None:
        """Clears the gradient (pending and last applied)."""

    def accumulate_wave(self, wave: spiraltorch._core.Tensor) -> None:
        """Adds wave (a gradient of the tape's shape) to the tape."""

    def accumulate_barycenter_path(self, intermediates: Sequence[spiraltorch._core.BarycenterIntermediate]) -> None:
        """
        Adds rho_0 - rho_K of z_space_barycenter(...).intermediates() (each of the tape's shape): a
        Euclidean step with learning rate 1 from rho_0 lands on the barycenter rho_K.
        """

    def accumulate_complex_wave(self, wave: ComplexTensor) -> None:
        """Adds wave.to_tensor() (interleaved re/im) to the tape."""

    def accumulate_pair(self, prediction: spiraltorch._core.Tensor, target: spiraltorch._core.Tensor) -> None:
        """Adds prediction - target, the gradient of 1/2 |prediction - target|^2."""

    def absorb_text(self, encoder: LanguageWaveEncoder, text: str) -> None:
        """
        Accumulates encoder.encode_z_space(text) (it must have the tape's shape; Hypergrad also
        requires the encoder's curvature to match).
        """

    def scale_gradient(self, factor: float) -> None:
        """Multiplies the tape by factor (a non-finite factor resets it)."""

    def rescale_rms(self, target: float) -> float:
        """
        Scales the tape to RMS target; returns the factor (0 and a reset for target <= 0,
        0 when the tape is empty, 1 for a non-finite target).
        """

    def apply(self, weights: spiraltorch._core.Tensor) -> spiraltorch._core.Tensor:
        """One step on weights (mutated in place and returned)."""

    def _as_matrix(self, t: spiraltorch._core.Tensor, what: str) -> spiraltorch._core.Tensor: ...

    def _pending(self) -> spiraltorch._core.Tensor: ...

    def _commit(self, weights: object, updated: spiraltorch._core.Tensor, who: str) -> object: ...

    def _mark_applied(self) -> None: ...

    def topos(self) -> spiraltorch._core.OpenCartesianTopos | None:
        """The OpenCartesianTopos guarding every step of this tape, or None."""

class Hypergrad(GradientTape):
    """
    A Riemannian SGD tape on the Poincare ball of curvature `curvature`: gradients
    accumulate in Euclidean coordinates; apply(weights) moves each row x of weights to
    exp_x(-lr (1 - k|x|^2)^2 g) (the metric normalised to the identity at the origin, so a
    step from 0 is exp_0(-lr g)), keeps it inside the ball, writes it back in place and
    clears the tape. An empty tape leaves points where they are (after clipping them into
    the ball).

    With topos (an OpenCartesianTopos of the same curvature) the guard runs on every step:
    the tape must fit topos.max_volume (ShapeError), every accumulated entry passes through
    the topos' monotone saturation, absorbed text must be shorter than max_depth, and each
    updated weight is saturated, then clipped into the ball, before it is written.
    """

    def __init__(self, curvature: float, learning_rate: float, rows: int, cols: int, *, topos: spiraltorch._core.OpenCartesianTopos | None = None) -> None: ...

    def curvature(self) -> float:
        """The ball's curvature (< 0)."""

    def retune(self, curvature: float, learning_rate: float) -> None:
        """New curvature and learning rate; clears the tape."""

class Realgrad(GradientTape):
    """
    The Euclidean SGD tape: apply(weights) does weights -= lr * g in place and clears the tape.
    """

    def __init__(self, learning_rate: float, rows: int, cols: int, *, topos: spiraltorch._core.OpenCartesianTopos | None = None) -> None:
        """
        With topos every step is guarded (volume, finite values, saturation of the accumulated gradient and
        of the updated weights).
        """

class ZSpaceTrainer:
    """
    Adam on a latent vector z (length z_dim, starting at zero), steered by observed training metrics; see spiraltorch.ZSpaceTrainer. With topos every updated z is saturated by it.

    Example: t = ZSpaceTrainer(z_dim=4); t.step({'speed': 0.2, 'memory': 0.1, 'stability': 0.9, 'gradient': [0.1, -0.2]}); t.state
    """

    def __init__(self, z_dim: int = 4, *, alpha: float = 0.35, lam_speed: float = 0.5, lam_mem: float = 0.3, lam_stab: float = 0.2, lam_frac: float = 0.1, lam_drs: float = 0.0, lr: float = 0.01, beta1: float = 0.9, beta2: float = 0.999, eps: float = 1e-08, gradient_projection: str = 'tile_or_truncate', topos: spiraltorch._core.OpenCartesianTopos | None = None) -> None: ...

    @property
    def topos(self) -> spiraltorch._core.OpenCartesianTopos | None:
        """
        The OpenCartesianTopos guarding every step (z saturated after each update), or None.
        """

    @property
    def z_dim(self) -> int:
        """The length of z."""

    @property
    def alpha(self) -> float:
        """The order of the fractional spectral penalty R_alpha(z)."""

    @property
    def lr(self) -> float:
        """Adam's step size."""

    @property
    def beta1(self) -> float:
        """Adam's first-moment decay."""

    @property
    def beta2(self) -> float:
        """Adam's second-moment decay."""

    @property
    def eps(self) -> float:
        """Adam's denominator epsilon."""

    @property
    def lam_frac(self) -> float:
        """The weight of the fractional penalty in the objective and the update."""

    @property
    def lambdas(self) -> dict[str, float]:
        """The objective's weights {'speed', 'memory', 'stability', 'drs'}."""

    @property
    def gradient_projection(self) -> str:
        """
        'tile_or_truncate' (the gradient metric is tiled/truncated to z_dim) or 'exact' (it must be z_dim long).
        """

    @property
    def state(self) -> list[float]:
        """The latent z."""

    def reset(self) -> None:
        """
        z, Adam's moments, the step count and the last inference back to their initial values.
        """

    def step(self, metrics: dict[str, float | Iterable[float]]) -> float:
        """
        One Adam step on z. metrics: speed, memory, stability, drs (or their aliases) as numbers and an optional 'gradient' sequence; the direction is tanh(gradient) (tiled or truncated to z_dim) plus lam_frac times the penalty direction. Returns the objective before the update (lam_speed tanh(speed) + lam_mem tanh(memory) + lam_stab tanh(stability) + lam_drs tanh(drs) + lam_frac R_alpha(z)). ValueError for an unknown or non-finite metric; a non-finite update raises and changes nothing.
        """

    def step_batch(self, samples: Iterable[dict[str, Any]]) -> list[float]:
        """
        step() on each sample in turn; returns the objectives. All or nothing: a refused sample leaves the
        trainer as it was before the batch.
        """

    def _infer_partial(self, partial: object, smoothing: float, telemetry: object | None) -> dict: ...

    def _step_partial(self, partial: object, smoothing: float, telemetry: object | None) -> tuple: ...

    def state_dict(self) -> dict[str, Any]:
        """
        {'version': 1, 'z', 'moment', 'velocity' (lists of z_dim floats), 'step', 'hyperparams'}.
        """

    def load_state_dict(self, state: dict[str, Any], *, strict: bool = True) -> None:
        """
        Restores a state_dict() (or the original's checkpoint). Everything is checked before anything is written: CheckpointError for an unknown version, a missing vector (strict; otherwise the current one stays), a vector that is not z_dim long or not finite, a negative velocity entry or step.
        """

STATE_VERSION: int = 1

UPSTREAM_CONTRACT: str = 'spiraltorch.zspace_meta_optimizer.v2'

class DesireGradientInterpretation:
    """
    How the hyperbolic gradient H and the Euclidean gradient R relate: pressures (mean |g|),
    balance (RMS ratio, clamped to [0, 16]), sharpness (|kurtosis - 3|, <= 4), stability (1 minus the
    relative pressure gap), saturation (largest |g|), activation, sign alignment and entropy.
    """

    def __init__(self, hyper: GradientSummary, real: GradientSummary) -> None: ...

    def penalty_gain(self) -> float:
        """
        1 + weighted imbalance, instability, sharpness, sign mismatch and dormancy, in [1, 3.5].
        """

    @property
    def hyper_pressure(self) -> float:
        """mean |H|."""

    @property
    def real_pressure(self) -> float:
        """mean |R|."""

    @property
    def balance(self) -> float:
        """rms(H) / rms(R), clamped to [0, 16]."""

    @property
    def sharpness(self) -> float:
        """|kurtosis - 3| of the gradients, at most 4."""

    @property
    def stability(self) -> float:
        """1 minus the relative gap between the two pressures."""

    @property
    def saturation(self) -> float:
        """The largest |g| of either gradient."""

    @property
    def activation(self) -> float:
        """The mean fraction of entries with |g| > 1e-5."""

    @property
    def sign_alignment(self) -> float:
        """1 - |sign_lean(H) - sign_lean(R)| / 2, in [0, 1]."""

    @property
    def sign_entropy(self) -> float:
        """The mean sign entropy of H and R, in [0, 1]."""

    @property
    def hyper_std(self) -> float:
        """std(H)."""

    @property
    def real_std(self) -> float:
        """std(R)."""

class DesireGradientControl:
    """
    Rate scales for the two tapes (and the penalty gain) derived from an interpretation; a labelled
    heuristic (clamped blends of gradient statistics), not a learned or optimal rule.
    """

    def __init__(self, interpretation: DesireGradientInterpretation, gain: float = 1.0) -> None: ...

    def hyper_rate_scale(self) -> float:
        """The factor applied to the Hypergrad tape's base rate."""

    def real_rate_scale(self) -> float:
        """The factor applied to the Realgrad tape's base rate."""

    def penalty_gain(self) -> float:
        """The interpretation's penalty gain."""

    def events(self) -> list[str]:
        """
        'lr_increase' or 'lr_decrease', then 'quality_weight' when the quality gain is positive.
        """

    @property
    def quality_gain(self) -> float:
        """The weight of the quality term (the gain argument, clamped)."""

    @property
    def interpretation(self) -> DesireGradientInterpretation:
        """The DesireGradientInterpretation it was derived from."""

    def __repr__(self) -> str: ...

def desire_control(hyper: GradientSummary, real: GradientSummary, gain: float = 1.0) -> DesireGradientControl:
    """DesireGradientControl from the two gradient summaries."""

class Amegagrad:
    """
    Hypergrad and Realgrad tapes stepped together (see spiraltorch.optim.Amegagrad).
    """

    def __init__(self, rows: int, cols: int, curvature: float = -1.0, hyper_learning_rate: float = 0.05, real_learning_rate: float = 0.01, gain: float = 1.0, topos: spiraltorch._core.OpenCartesianTopos | None = None) -> None: ...

    @property
    def topos(self) -> spiraltorch._core.OpenCartesianTopos | None:
        """The guard of both tapes, or None."""

    def shape(self) -> tuple[int, int]:
        """(rows, cols) of the tapes."""

    @property
    def curvature(self) -> float:
        """The Hypergrad tape's curvature (< 0)."""

    @property
    def hyper_learning_rate(self) -> float:
        """The Hypergrad tape's base rate."""

    @property
    def real_learning_rate(self) -> float:
        """The Realgrad tape's base rate."""

    @property
    def gain(self) -> float:
        """The default gain of desire_control()."""

    @property
    def hyper(self) -> Hypergrad:
        """The Hypergrad tape (a live reference)."""

    @property
    def real(self) -> Realgrad:
        """The Realgrad tape (a live reference)."""

    @property
    def last_control(self) -> DesireGradientControl | None:
        """The control the last tune()/step() applied, or None."""

    def zero_grad(self) -> None:
        """Clears both tapes."""

    def reset(self) -> None:
        """Same as zero_grad()."""

    def accumulate_wave(self, wave: spiraltorch._core.Tensor) -> None:
        """Adds wave to both tapes."""

    def accumulate_pair(self, prediction: spiraltorch._core.Tensor, target: spiraltorch._core.Tensor) -> None:
        """Adds prediction - target to both tapes."""

    def absorb_text(self, encoder: LanguageWaveEncoder, text: str) -> None:
        """
        Encodes text and adds it to both tapes, zero-padded or truncated to rows * cols.
        """

    def desire_control(self, *, gain: float | None = None) -> DesireGradientControl:
        """
        The control computed from the two tapes' pending gradients (what step would apply).
        """

    def tune(self, control: DesireGradientControl | None = None, *, gain: float | None = None) -> DesireGradientControl:
        """
        Sets the tapes' rates to base rate x control scale; returns the control.
        """

    def step(self, weights: spiraltorch._core.Tensor, *, tune: bool = True, gain: float | None = None, control: DesireGradientControl | None = None) -> spiraltorch._core.Tensor:
        """One combined step on weights (mutated in place and returned)."""

class AmegagradSession:
    """
    Steps a model (forward, loss, backward, Amegagrad or Hypergrad update) or a weights tensor and
    records one Atlas frame per step; see spiraltorch.AmegagradSession.
    """

    @overload
    def __init__(self, model: spiraltorch._core.nn.Module, loss: Callable, *, hyper_only: bool, curvature: float, hyper_learning_rate: float, real_learning_rate: float, gain: float, tune: bool, topos: spiraltorch._core.OpenCartesianTopos | None, telemetry_bound: int, z_dim: int, z_lr: float, z_lam_frac: float, trace_path: str | None = None) -> None: ...

    @overload
    def __init__(self, rows: int, cols: int, *, weights: spiraltorch._core.Tensor | None, hyper_only: bool, curvature: float, hyper_learning_rate: float, real_learning_rate: float, gain: float, tune: bool, topos: spiraltorch._core.OpenCartesianTopos | None, telemetry_bound: int, z_dim: int, z_lr: float, z_lam_frac: float, trace_path: str | None = None) -> None: ...

    def _step(self, input: spiraltorch._core.Tensor, target: spiraltorch._core.Tensor, note: str) -> dict: ...

    def _apply(self, note: str) -> dict: ...

    def _step_wave(self, wave: spiraltorch._core.Tensor, note: str) -> dict: ...

    def _step_pair(self, prediction: spiraltorch._core.Tensor, target: spiraltorch._core.Tensor, note: str) -> dict: ...

    def _step_text(self, encoder: LanguageWaveEncoder, text: str, note: str) -> dict: ...

    def zero_grad(self) -> None:
        """Clears the tapes (weights sessions)."""

    def accumulate_wave(self, wave: spiraltorch._core.Tensor) -> None:
        """Adds wave to the tapes (weights sessions)."""

    def accumulate_pair(self, prediction: spiraltorch._core.Tensor, target: spiraltorch._core.Tensor) -> None:
        """Adds prediction - target to the tapes (weights sessions)."""

    def absorb_text(self, encoder: LanguageWaveEncoder, text: str) -> None:
        """Adds the encoded text to the tapes (weights sessions)."""

    @property
    def is_model_session(self) -> bool:
        """True when it steps a model, False when it steps a weights tensor."""

    @property
    def hyper_only(self) -> bool:
        """True when only the Hypergrad tape steps (a HypergradSession)."""

    @property
    def curvature(self) -> float:
        """The Hypergrad curvature (< 0)."""

    @property
    def topos(self) -> spiraltorch._core.OpenCartesianTopos | None:
        """The guard of every step, or None."""

    @property
    def telemetry_bound(self) -> int:
        """How many Atlas frames are kept (0: all)."""

    @property
    def weights(self) -> spiraltorch._core.Tensor:
        """The weights tensor of a weights session (stepped in place)."""

    @property
    def optimizers(self) -> list[Amegagrad]:
        """
        One Amegagrad per parameter (named_parameters order; one for a weights session).
        """

    @property
    def parameter_names(self) -> list[str]:
        """The model's parameter names, in optimizers order."""

    @property
    def ztrainer_state(self) -> list[float] | None:
        """The latent z of the session's ZSpaceTrainer (None when z_dim is 0)."""

    @property
    def steps(self) -> int:
        """Steps taken (skipped ones included)."""

    @property
    def skipped_steps(self) -> int:
        """Steps skipped for a non-finite loss or gradient."""

    @property
    def trace_path(self) -> str | None:
        """The JSONL trace file (docs/traces.md), or None."""

    @property
    def trace_errors(self) -> int:
        """Trace writes that failed (the steps went on)."""

    def _frames(self) -> list: ...

def decode_zspace(z: Iterable[float], alpha: float = 0.35) -> dict[str, float]:
    """The metrics a latent z stands for (see spiraltorch.decode_zspace)."""

def fractional_penalty(z: Iterable[float], alpha: float) -> tuple[float, list[float]]:
    """
    R_alpha(z) over the one-sided spectrum and its gradient scaled to max-abs <= 1.
    """

def canonical_metrics(metrics: dict[str, float | Iterable[float]], who: str) -> dict[str, Any]:
    """
    The metrics dict under canonical names (aliases resolved), checked: known names, each once, finite.
    """

def barycentric_weights(metrics: dict[str, float]) -> tuple[float, float, float]:
    """
    softplus(speed, memory, stability) of metrics (0 when absent), normalised to sum 1.
    """

def infer(z: Iterable[float], alpha: float, observed: dict[str, float | Iterable[float]], smoothing: float, telemetry: dict[str, float] | None, who: str) -> dict[str, Any]:
    """
    The posterior completion of partial observations at z, as a dict of ZSpaceInference's fields.
    """

def dft(values: Iterable[float]) -> list[complex]:
    """
    The unnormalised DFT X_k = sum_j x_j exp(-2 pi i k j / n) of a real sequence, in float64.
    """
