"""Parameter initialisation (``spiraltorch.nn.init``, like ``torch.nn.init``).

Every initialiser fills its tensor in place under ``no_grad`` (so it works on leaf
parameters that require grad) and returns the same tensor. The random ones draw from
the global generator (``spiraltorch.manual_seed``) or from ``generator=`` (a
``spiraltorch.Generator``). The formulas, defaults and fan conventions are PyTorch's:
``fan_in = size(1) * prod(size()[2:])`` and ``fan_out = size(0) * prod(size()[2:])``.

This module is pure-Python glue over native tensor ops; the only host-side (NumPy) work
is the QR factorisation in :func:`orthogonal_` and the index pattern of :func:`dirac_`,
both one-off initialisation costs.
"""

from __future__ import annotations

import math
import warnings
from typing import Any, Literal, Optional, Tuple, Union

from .. import _core
from .._core import Tensor
from ..autograd import no_grad

__all__ = [
    "calculate_gain",
    "uniform_",
    "normal_",
    "trunc_normal_",
    "constant_",
    "ones_",
    "zeros_",
    "eye_",
    "dirac_",
    "xavier_uniform_",
    "xavier_normal_",
    "kaiming_uniform_",
    "kaiming_normal_",
    "orthogonal_",
    "sparse_",
]

_FanMode = Literal["fan_in", "fan_out"]
_Generator = Optional[Any]  # a spiraltorch.Generator, or None for the global generator

_LINEAR_FNS = (
    "linear",
    "conv1d",
    "conv2d",
    "conv3d",
    "conv_transpose1d",
    "conv_transpose2d",
    "conv_transpose3d",
)
_NONLINEARITIES = _LINEAR_FNS + ("sigmoid", "tanh", "relu", "leaky_relu", "selu")
_FLOATING = (_core.dtype.float32, _core.dtype.float64, _core.dtype.float16, _core.dtype.bfloat16)
_HALF = (_core.dtype.float16, _core.dtype.bfloat16)


# --------------------------------------------------------------------------- helpers
def _value_error(fn: str, message: str) -> Exception:
    """A ``spiraltorch.SpiralValueError`` (a ``ValueError``) prefixed with the function name."""
    return _core.SpiralValueError(f"{fn}: {message}")


def _check_tensor(fn: str, tensor: Any) -> None:
    """Raises ``TypeError`` naming ``fn`` when ``tensor`` is not a spiraltorch Tensor."""
    if not isinstance(tensor, Tensor):
        raise TypeError(f"{fn}: expected a spiraltorch.Tensor, got {type(tensor).__name__}")


def _check_floating(fn: str, tensor: Tensor) -> None:
    """Raises naming ``fn`` when ``tensor`` is not floating-point (random fills need one)."""
    _check_tensor(fn, tensor)
    if tensor.dtype not in _FLOATING:
        raise _value_error(fn, f"expected a floating-point tensor, got dtype {tensor.dtype.name}")


def _standard(kind: str, tensor: Tensor, generator: _Generator, dtype: Any = None) -> Tensor:
    """A fresh tensor shaped like ``tensor`` holding standard uniform [0, 1) (``kind='uniform'``)
    or standard normal (``kind='normal'``) draws, on ``tensor``'s device, in ``dtype`` (default
    ``tensor.dtype``), from ``generator`` or the global generator."""
    kwargs: dict = {"dtype": tensor.dtype if dtype is None else dtype, "device": tensor.device}
    if generator is not None:
        kwargs["generator"] = generator
    factory = _core.rand if kind == "uniform" else _core.randn
    return factory(tuple(tensor.shape), **kwargs)


def _uniform_into(tensor: Tensor, a: float, b: float, generator: _Generator) -> Tensor:
    """Fills ``tensor`` with U(a, b) draws (caller holds no_grad); returns it."""
    if generator is None:
        tensor.uniform_(a, b)
        return tensor
    tensor.copy_(_standard("uniform", tensor, generator) * (b - a) + a)
    return tensor


def _normal_into(tensor: Tensor, mean: float, std: float, generator: _Generator) -> Tensor:
    """Fills ``tensor`` with N(mean, std^2) draws (caller holds no_grad); returns it."""
    if generator is None:
        tensor.normal_(mean, std)
        return tensor
    tensor.copy_(_standard("normal", tensor, generator) * std + mean)
    return tensor


def _fans(fn: str, tensor: Tensor) -> Tuple[int, int]:
    """``(fan_in, fan_out)`` of ``tensor``; errors name ``fn``."""
    _check_tensor(fn, tensor)
    shape = tuple(tensor.shape)
    if len(shape) < 2:
        raise _value_error(
            fn,
            "fan in and fan out can not be computed for a tensor with fewer than 2 dimensions "
            f"(got shape {shape})",
        )
    receptive_field_size = 1
    for s in shape[2:]:
        receptive_field_size *= int(s)
    return int(shape[1]) * receptive_field_size, int(shape[0]) * receptive_field_size


def _correct_fan(fn: str, tensor: Tensor, mode: str) -> int:
    """``fan_in`` or ``fan_out`` of ``tensor`` as ``mode`` selects; errors name ``fn``."""
    mode_l = mode.lower() if isinstance(mode, str) else mode
    valid_modes = ["fan_in", "fan_out"]
    if mode_l not in valid_modes:
        raise _value_error(fn, f"mode {mode!r} not supported, please use one of {valid_modes}")
    fan_in, fan_out = _fans(fn, tensor)
    return fan_in if mode_l == "fan_in" else fan_out


def _gain(fn: str, nonlinearity: str, param: Optional[Union[int, float]]) -> float:
    """:func:`calculate_gain` with errors naming ``fn``."""
    if nonlinearity in _LINEAR_FNS or nonlinearity == "sigmoid":
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            negative_slope = 0.01
        elif (not isinstance(param, bool) and isinstance(param, int)) or isinstance(param, float):
            negative_slope = param
        else:
            raise _value_error(fn, f"negative_slope {param!r} is not a valid number")
        return math.sqrt(2.0 / (1 + negative_slope**2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise _value_error(
        fn, f"unsupported nonlinearity {nonlinearity!r}; expected one of {list(_NONLINEARITIES)}"
    )


# --------------------------------------------------------------------------- public API
def _calculate_fan_in_and_fan_out(tensor: Tensor) -> Tuple[int, int]:
    """Returns ``(fan_in, fan_out)`` of a weight tensor with at least 2 dimensions:
    ``fan_in = size(1) * receptive_field`` and ``fan_out = size(0) * receptive_field`` where
    ``receptive_field`` is the product of the sizes after the first two (1 for a 2-D tensor).

    Raises ``SpiralValueError`` (a ``ValueError``) for a tensor with fewer than 2 dimensions.
    """
    return _fans("_calculate_fan_in_and_fan_out", tensor)


def _calculate_correct_fan(tensor: Tensor, mode: _FanMode) -> int:
    """Returns ``fan_in`` (``mode='fan_in'``) or ``fan_out`` (``mode='fan_out'``) of ``tensor``;
    raises ``SpiralValueError`` for any other mode."""
    return _correct_fan("_calculate_correct_fan", tensor, mode)


def calculate_gain(nonlinearity: str, param: Optional[Union[int, float]] = None) -> float:
    """Returns the recommended gain for a nonlinearity (``torch.nn.init.calculate_gain``):
    1 for linear/conv*/sigmoid, 5/3 for tanh, sqrt(2) for relu,
    sqrt(2 / (1 + negative_slope^2)) for leaky_relu (``param`` = negative slope, default 0.01)
    and 3/4 for selu.

    Raises ``SpiralValueError`` (a ``ValueError``) for an unknown nonlinearity or a
    non-numeric leaky_relu slope.
    """
    return _gain("calculate_gain", nonlinearity, param)


def uniform_(tensor: Tensor, a: float = 0.0, b: float = 1.0, generator: _Generator = None) -> Tensor:
    """Fills ``tensor`` in place with draws from the uniform distribution U(a, b) and returns it."""
    _check_floating("uniform_", tensor)
    a, b = float(a), float(b)
    if not a <= b:
        raise _value_error("uniform_", f"expected a <= b, got a={a}, b={b}")
    with no_grad():
        _uniform_into(tensor, a, b, generator)
        return tensor


def normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0, generator: _Generator = None) -> Tensor:
    """Fills ``tensor`` in place with draws from the normal distribution N(mean, std^2) and
    returns it."""
    _check_floating("normal_", tensor)
    mean, std = float(mean), float(std)
    if not std >= 0.0:
        raise _value_error("normal_", f"expected std >= 0, got std={std}")
    with no_grad():
        _normal_into(tensor, mean, std, generator)
        return tensor


def trunc_normal_(
    tensor: Tensor,
    mean: float = 0.0,
    std: float = 1.0,
    a: float = -2.0,
    b: float = 2.0,
    generator: _Generator = None,
) -> Tensor:
    """Fills ``tensor`` in place with draws from the normal distribution N(mean, std^2)
    truncated to ``[a, b]`` (the bounds are absolute values, not multiples of ``std``) and
    returns it.

    Exact rejection sampling with tensor ops, as PyTorch does: when the interval holds more
    than 30% of the normal mass, normal draws outside ``[a, b]`` are redrawn; otherwise
    uniform proposals on ``[a, b]`` are accepted with probability pdf(x) / pdf(mode). Every
    round redraws only the rejected positions (through ``where``) and the loop ends when none
    is left. float16/bfloat16 tensors are sampled in float32 and rounded (rounding is
    monotone, so values stay within the bounds rounded to that dtype).

    Raises ``SpiralValueError`` for ``std <= 0``, ``a > b``, or a one-sided infinite
    interval holding at most 30% of the mass (a uniform proposal needs finite bounds).
    """
    fn = "trunc_normal_"
    _check_floating(fn, tensor)
    mean, std, a, b = float(mean), float(std), float(a), float(b)
    if not std > 0.0:
        raise _value_error(fn, f"expected std > 0, got std={std}")
    if math.isnan(a) or math.isnan(b) or math.isnan(mean) or a > b:
        raise _value_error(fn, f"expected a <= b (and no NaN), got a={a}, b={b}, mean={mean}")
    if (mean < a - 2 * std) or (mean > b + 2 * std):
        warnings.warn(
            "trunc_normal_: mean is more than 2 std from [a, b]; the distribution of values "
            "may be incorrect.",
            stacklevel=2,
        )

    def norm_cdf(x: float) -> float:
        """The standard normal CDF at ``x``."""
        return (1.0 + math.erf(x / math.sqrt(2.0))) / 2.0

    with no_grad():
        if tensor.numel() == 0:
            return tensor
        if a == b:
            tensor.fill_(a)
            return tensor
        work_dtype = _core.dtype.float32 if tensor.dtype in _HALF else tensor.dtype
        # Bounds rounded to the working dtype, so the rejection test matches stored values.
        lo = float(_core.tensor(a, dtype=work_dtype).item())
        hi = float(_core.tensor(b, dtype=work_dtype).item())
        p = norm_cdf((b - mean) / std) - norm_cdf((a - mean) / std)

        if p > 0.3:
            result = _standard("normal", tensor, generator, work_dtype) * std + mean
            while True:
                mask = result.lt(lo).logical_or(result.gt(hi))
                if not bool(mask.any().item()):
                    break
                fresh = _standard("normal", tensor, generator, work_dtype) * std + mean
                result = fresh.where(mask, result)
        else:
            if math.isinf(a) or math.isinf(b):
                raise _value_error(
                    fn,
                    f"the interval [{a}, {b}] holds only {p:.3g} of the N({mean}, {std}^2) mass "
                    "and is unbounded; give finite bounds for such a narrow truncation",
                )
            mode = max(a, min(mean, b))
            log_peak = -0.5 * ((mode - mean) / std) ** 2

            def log_ratio(x: Tensor) -> Tensor:
                """log(pdf(x) / pdf(mode)), which is <= 0 on [a, b]."""
                return ((x - mean) / std).square() * -0.5 - log_peak

            def propose() -> Tensor:
                """Uniform proposals on [a, b], one per element."""
                return (_standard("uniform", tensor, generator, work_dtype) * (b - a) + a).clamp(lo, hi)

            result = propose()
            pending = _standard("uniform", tensor, generator, work_dtype).log().gt(log_ratio(result))
            while bool(pending.any().item()):
                candidates = propose()
                result = candidates.where(pending, result)
                rejected = _standard("uniform", tensor, generator, work_dtype).log().gt(log_ratio(candidates))
                pending = pending.logical_and(rejected)
        tensor.copy_(result)
        return tensor


def constant_(tensor: Tensor, val: float) -> Tensor:
    """Fills ``tensor`` in place with the value ``val`` and returns it."""
    _check_tensor("constant_", tensor)
    with no_grad():
        tensor.fill_(val)
        return tensor


def ones_(tensor: Tensor) -> Tensor:
    """Fills ``tensor`` in place with ones and returns it."""
    _check_tensor("ones_", tensor)
    with no_grad():
        tensor.fill_(1)
        return tensor


def zeros_(tensor: Tensor) -> Tensor:
    """Fills ``tensor`` in place with zeros and returns it."""
    _check_tensor("zeros_", tensor)
    with no_grad():
        tensor.zero_()
        return tensor


def eye_(tensor: Tensor) -> Tensor:
    """Fills the 2-D ``tensor`` in place with the identity matrix (ones on the main diagonal,
    zeros elsewhere; rectangular shapes allowed) and returns it. Preserves the identity of
    the inputs in linear layers.

    Raises ``SpiralValueError`` for a tensor that is not 2-D.
    """
    _check_tensor("eye_", tensor)
    if tensor.dim() != 2:
        raise _value_error("eye_", f"only tensors with 2 dimensions are supported (got shape {tuple(tensor.shape)})")
    rows, cols = (int(s) for s in tensor.shape)
    with no_grad():
        tensor.copy_(_core.eye(rows, cols, dtype=tensor.dtype, device=tensor.device))
        return tensor


def dirac_(tensor: Tensor, groups: int = 1) -> Tensor:
    """Fills the 3-, 4- or 5-D convolution weight ``tensor`` in place with the Dirac delta
    (``weight[g*out_per_group + d, d, centre...] = 1``, zeros elsewhere), which preserves the
    identity of the inputs of a convolution (as many input channels as possible per group);
    returns it. The index pattern is built with NumPy on the host and copied in once.

    Raises ``SpiralValueError`` for another rank or when ``size(0)`` is not divisible by
    ``groups``.
    """
    import numpy as np

    _check_tensor("dirac_", tensor)
    shape = tuple(int(s) for s in tensor.shape)
    if len(shape) not in (3, 4, 5):
        raise _value_error("dirac_", f"only tensors with 3, 4, or 5 dimensions are supported (got shape {shape})")
    if not isinstance(groups, int) or groups < 1 or shape[0] % groups != 0:
        raise _value_error("dirac_", f"dim 0 (size {shape[0]}) must be divisible by groups (got groups={groups!r})")
    out_chans_per_grp = shape[0] // groups
    min_dim = min(out_chans_per_grp, shape[1])
    pattern = np.zeros(shape, dtype=np.float64)
    centre = tuple(s // 2 for s in shape[2:])
    for g in range(groups):
        for d in range(min_dim):
            pattern[(g * out_chans_per_grp + d, d) + centre] = 1.0
    with no_grad():
        tensor.copy_(_core.tensor(pattern, dtype=tensor.dtype, device=tensor.device))
        return tensor


def _xavier_std(op: str, tensor: Tensor, gain: float) -> float:
    """Glorot's std, gain * sqrt(2 / (fan_in + fan_out)), after the checks both Xavier fills share."""
    fan_in, fan_out = _fans(op, tensor)
    _check_floating(op, tensor)
    return gain * math.sqrt(2.0 / float(fan_in + fan_out))


def xavier_uniform_(tensor: Tensor, gain: float = 1.0, generator: _Generator = None) -> Tensor:
    """Fills ``tensor`` in place with Xavier/Glorot uniform draws U(-bound, bound),
    ``bound = gain * sqrt(6 / (fan_in + fan_out))``, and returns it.

    Raises ``SpiralValueError`` for a tensor with fewer than 2 dimensions.
    """
    bound = math.sqrt(3.0) * _xavier_std("xavier_uniform_", tensor, gain)
    with no_grad():
        _uniform_into(tensor, -bound, bound, generator)
        return tensor


def xavier_normal_(tensor: Tensor, gain: float = 1.0, generator: _Generator = None) -> Tensor:
    """Fills ``tensor`` in place with Xavier/Glorot normal draws N(0, std^2),
    ``std = gain * sqrt(2 / (fan_in + fan_out))``, and returns it.

    Raises ``SpiralValueError`` for a tensor with fewer than 2 dimensions.
    """
    std = _xavier_std("xavier_normal_", tensor, gain)
    with no_grad():
        _normal_into(tensor, 0.0, std, generator)
        return tensor


def _kaiming_std(fn: str, tensor: Tensor, a: float, mode: str, nonlinearity: str) -> Optional[float]:
    """The Kaiming std ``gain / sqrt(fan)`` of ``tensor`` for ``fn``, or None (with a warning
    at the caller of ``fn``) for a zero-element tensor, which is left as it is."""
    _check_floating(fn, tensor)
    if 0 in tuple(tensor.shape):
        warnings.warn(f"{fn}: initializing zero-element tensors is a no-op", stacklevel=3)
        return None
    fan = _correct_fan(fn, tensor, mode)
    return _gain(fn, nonlinearity, a) / math.sqrt(fan)


def kaiming_uniform_(
    tensor: Tensor,
    a: float = 0,
    mode: _FanMode = "fan_in",
    nonlinearity: str = "leaky_relu",
    generator: _Generator = None,
) -> Tensor:
    """Fills ``tensor`` in place with Kaiming/He uniform draws U(-bound, bound),
    ``bound = gain * sqrt(3 / fan)`` with ``gain = calculate_gain(nonlinearity, a)`` and
    ``fan`` the fan_in or fan_out (``mode``), and returns it. A zero-element tensor is
    returned unchanged with a warning.

    Raises ``SpiralValueError`` for a tensor with fewer than 2 dimensions, an unknown
    ``mode`` or an unknown ``nonlinearity``.
    """
    std = _kaiming_std("kaiming_uniform_", tensor, a, mode, nonlinearity)
    if std is None:
        return tensor
    bound = math.sqrt(3.0) * std
    with no_grad():
        _uniform_into(tensor, -bound, bound, generator)
        return tensor


def kaiming_normal_(
    tensor: Tensor,
    a: float = 0,
    mode: _FanMode = "fan_in",
    nonlinearity: str = "leaky_relu",
    generator: _Generator = None,
) -> Tensor:
    """Fills ``tensor`` in place with Kaiming/He normal draws N(0, std^2),
    ``std = gain / sqrt(fan)`` with ``gain = calculate_gain(nonlinearity, a)`` and ``fan`` the
    fan_in or fan_out (``mode``), and returns it. A zero-element tensor is returned unchanged
    with a warning.

    Raises ``SpiralValueError`` for a tensor with fewer than 2 dimensions, an unknown
    ``mode`` or an unknown ``nonlinearity``.
    """
    std = _kaiming_std("kaiming_normal_", tensor, a, mode, nonlinearity)
    if std is None:
        return tensor
    with no_grad():
        _normal_into(tensor, 0.0, std, generator)
        return tensor


def orthogonal_(tensor: Tensor, gain: float = 1, generator: _Generator = None) -> Tensor:
    """Fills ``tensor`` (2 or more dimensions, viewed as ``size(0) x numel/size(0)``) in place
    with a (semi-)orthogonal matrix scaled by ``gain`` and returns it: the rows are orthonormal
    when rows <= cols (``W W^T = I``), the columns otherwise (``W^T W = I``).

    As in PyTorch, the matrix is the Q factor of the QR decomposition of a standard normal
    matrix, with columns sign-corrected by ``sign(diag(R))`` so it is Haar-distributed.
    spiraltorch has no native QR, so the normal matrix is drawn with spiraltorch's RNG
    (``generator`` or the global one), factorised with NumPy's ``numpy.linalg.qr`` on the
    host in float64, and copied in: acceptable for one-off initialisation.

    Raises ``SpiralValueError`` for a tensor with fewer than 2 dimensions.
    """
    import numpy as np

    fn = "orthogonal_"
    _check_floating(fn, tensor)
    if tensor.dim() < 2:
        raise _value_error(fn, f"only tensors with 2 or more dimensions are supported (got shape {tuple(tensor.shape)})")
    if tensor.numel() == 0:
        return tensor
    rows = int(tensor.shape[0])
    cols = tensor.numel() // rows
    kwargs: dict = {"dtype": _core.dtype.float64}
    if generator is not None:
        kwargs["generator"] = generator
    flattened = np.array(_core.randn((rows, cols), **kwargs).numpy(), dtype=np.float64)
    if rows < cols:
        flattened = flattened.T
    q, r = np.linalg.qr(flattened)
    d = np.sign(np.diag(r))
    d[d == 0] = 1.0
    q = q * d[None, :]
    if rows < cols:
        q = q.T
    q = np.ascontiguousarray(q.reshape(tuple(int(s) for s in tensor.shape)) * float(gain))
    with no_grad():
        tensor.copy_(_core.tensor(q, dtype=tensor.dtype, device=tensor.device))
        return tensor


def sparse_(tensor: Tensor, sparsity: float, std: float = 0.01, generator: _Generator = None) -> Tensor:
    """Fills the 2-D ``tensor`` in place as a sparse matrix: N(0, std^2) draws with
    ``ceil(sparsity * rows)`` randomly chosen entries of every column set to zero; returns it.
    The zero positions come from ranking uniform draws within each column (tensor ops).

    Raises ``SpiralValueError`` for a tensor that is not 2-D or a sparsity outside [0, 1].
    """
    fn = "sparse_"
    _check_floating(fn, tensor)
    if tensor.dim() != 2:
        raise _value_error(fn, f"only tensors with 2 dimensions are supported (got shape {tuple(tensor.shape)})")
    sparsity = float(sparsity)
    if not 0.0 <= sparsity <= 1.0:
        raise _value_error(fn, f"expected 0 <= sparsity <= 1, got {sparsity}")
    rows = int(tensor.shape[0])
    num_zeros = int(math.ceil(sparsity * rows))
    with no_grad():
        _normal_into(tensor, 0.0, float(std), generator)
        if num_zeros > 0:
            keys = _standard("uniform", tensor, generator, _core.dtype.float32)
            rank = keys.argsort(dim=0).argsort(dim=0)  # rank of each entry within its column
            tensor.masked_fill_(rank.lt(num_zeros), 0.0)
    return tensor
