"""torch.special's names over the native ops (each computed in C++; compositions noted).

Provided: expit, logit, xlogy, xlog1py, log1p, expm1, exp2, erf, gammaln, digamma, psi,
multigammaln, entr, sinc, round, logsumexp, softmax, log_softmax. Not provided (no accurate native
kernel yet): erfc, erfcx, erfinv, ndtr, log_ndtr, ndtri, i0/i1, polygamma, zeta, bessel functions.
"""

from __future__ import annotations

import math
from typing import Any, Optional

from . import _core
from ._core import Tensor

_st = _core


def _t(x: Any) -> Tensor:
    return x if isinstance(x, Tensor) else _core.tensor(x)


def expit(input: Tensor) -> Tensor:
    """The logistic sigmoid 1 / (1 + exp(-x))."""
    return _st.sigmoid(_t(input))


def logit(input: Tensor, eps: Optional[float] = None) -> Tensor:
    """log(p / (1 - p)), p clamped to [eps, 1 - eps] when eps is given."""
    import spiraltorch as st

    return st.logit(_t(input), eps)


def xlogy(input: Any, other: Any) -> Tensor:
    """x * log(y), 0 where x == 0 (also for y == 0)."""
    import spiraltorch as st

    return st.xlogy(input, other)


def xlog1py(input: Any, other: Any) -> Tensor:
    """x * log1p(y), 0 where x == 0 (NaN y stays NaN)."""
    x, y = _t(input), _t(other)
    value = x * _st.log1p(y)
    return _st.where((x == 0) & ~_st.isnan(y), _core.zeros_like(value), value)


def log1p(input: Tensor) -> Tensor:
    """log(1 + x), accurate for small x."""
    return _st.log1p(_t(input))


def expm1(input: Tensor) -> Tensor:
    """exp(x) - 1, accurate for small x."""
    return _st.expm1(_t(input))


def exp2(input: Tensor) -> Tensor:
    """2 ** x."""
    x = _t(input)
    return _st.exp(x * math.log(2.0))


def erf(input: Tensor) -> Tensor:
    """The error function."""
    return _st.erf(_t(input))


def gammaln(input: Tensor) -> Tensor:
    """log |Gamma(x)| (the native lgamma)."""
    return _st.lgamma(_t(input))


def digamma(input: Tensor) -> Tensor:
    """d/dx log Gamma(x) (the native digamma)."""
    return _st.digamma(_t(input))


psi = digamma


def multigammaln(input: Tensor, p: int) -> Tensor:
    """The multivariate log-gamma of dimension p: p (p - 1) / 4 log(pi) + sum_i lgamma(a - i / 2)
    for i < p; every element of a must exceed (p - 1) / 2 (ValueError otherwise, as in PyTorch)."""
    a = _t(input)
    if p < 1:
        raise _core.SpiralValueError(f"multigammaln: p must be at least 1, got {p}")
    if bool((a <= (p - 1) / 2).any()):
        raise _core.SpiralValueError(f"multigammaln: all elements must be greater than (p-1)/2 = {(p - 1) / 2}")
    total = _st.lgamma(a)
    for i in range(1, p):
        total = total + _st.lgamma(a - i / 2)
    return total + p * (p - 1) / 4 * math.log(math.pi)


def entr(input: Tensor) -> Tensor:
    """Elementwise entropy -x log(x): 0 at 0, -inf for x < 0, NaN for NaN."""
    x = _t(input)
    safe = _st.where(x > 0, x, _core.ones_like(x))
    value = -x * _st.log(safe)
    value = _st.where(x == 0, _core.zeros_like(value), value)
    return _st.where(x < 0, _core.full_like(value, -math.inf), value)


def sinc(input: Tensor) -> Tensor:
    """sin(pi x) / (pi x), 1 at 0."""
    import spiraltorch as st

    return st.sinc(_t(input))


def round(input: Tensor, decimals: int = 0) -> Tensor:  # noqa: A001 - torch.special's name
    """Rounds half to even (to `decimals` places: round(x * 10**decimals) / 10**decimals, as PyTorch)."""
    x = _t(input)
    if not decimals:
        return _st.round(x)
    scale = 10.0 ** decimals
    return _st.round(x * scale) / scale


def logsumexp(input: Tensor, dim: Any, keepdim: bool = False) -> Tensor:
    """log(sum(exp(x))) along dim, computed stably."""
    import spiraltorch as st

    return st.logsumexp(_t(input), dim, keepdim)


def softmax(input: Tensor, dim: int, dtype: Any = None) -> Tensor:
    """exp(x) / sum(exp(x)) along dim (in dtype when given)."""
    x = _t(input) if dtype is None else _t(input).to(dtype)
    return _st.softmax(x, dim)


def log_softmax(input: Tensor, dim: int, dtype: Any = None) -> Tensor:
    """x - logsumexp(x) along dim (in dtype when given)."""
    x = _t(input) if dtype is None else _t(input).to(dtype)
    return _st.log_softmax(x, dim)


__all__ = ["digamma", "entr", "erf", "exp2", "expit", "expm1", "gammaln", "log1p", "log_softmax", "logit",
           "logsumexp", "multigammaln", "psi", "round", "sinc", "softmax", "xlog1py", "xlogy"]
