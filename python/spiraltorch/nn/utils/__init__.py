"""Gradient clipping, parameter/vector conversion and sequence packing (``spiraltorch.nn.utils``,
like ``torch.nn.utils``; the packing is in ``spiraltorch.nn.utils.rnn``).

``clip_grad_norm_`` and ``clip_grad_value_`` add PyTorch's argument handling (a single
tensor or any iterable, ``'inf'`` as a string, ``foreach``) around the native
``spiraltorch.optim.clip_grad_norm_`` / ``clip_grad_value_``. ``foreach`` is accepted for
compatibility and ignored: the native kernels already process all gradients in one call.
"""

from __future__ import annotations

import math
import types
import warnings
from typing import Iterable, List, Optional, Union

from ... import _core
from ..._core import Tensor
from ...autograd import no_grad
from . import rnn  # noqa: F401

__all__ = [
    "clip_grad_norm_",
    "clip_grad_value_",
    "clip_grads_with_norm_",
    "get_total_norm",
    "parameters_to_vector",
    "rnn",
    "vector_to_parameters",
]

_TensorOrTensors = Union[Tensor, Iterable[Tensor]]
_native_optim = _core.optim


def _as_list(parameters: _TensorOrTensors) -> List[Tensor]:
    """``[parameters]`` for a single tensor, else ``list(parameters)``."""
    if isinstance(parameters, Tensor):
        return [parameters]
    return list(parameters)


def _norm_type(fn: str, norm_type: Union[float, int, str]) -> float:
    """``float(norm_type)`` (so ``'inf'`` works); a clear error naming ``fn`` otherwise."""
    try:
        return float(norm_type)
    except (TypeError, ValueError):
        raise _core.SpiralValueError(f"{fn}: norm_type must be a number or 'inf', got {norm_type!r}") from None


def get_total_norm(
    tensors: _TensorOrTensors,
    norm_type: Union[float, int, str] = 2.0,
    error_if_nonfinite: bool = False,
    foreach: Optional[bool] = None,
) -> Tensor:
    """Returns the ``norm_type``-norm of ``tensors`` viewed as one concatenated vector (the
    norm of the per-tensor norms) as a 0-d tensor; ``tensor(0.)`` when there is none. Any
    p-norm including 0 (count of non-zeros), ``inf`` and ``-inf`` is supported.

    Raises ``SpiralValueError`` (a ``RuntimeError`` and a ``ValueError``) when
    ``error_if_nonfinite`` and the norm is NaN or infinite. ``foreach`` is ignored.
    """
    del foreach
    ts = _as_list(tensors)
    p = _norm_type("get_total_norm", norm_type)
    if not ts:
        return _core.tensor(0.0)
    with no_grad():
        norms = [t.norm(p) for t in ts]
        dtype = norms[0].dtype
        device = ts[0].device
        norms = [n.to(device).to(dtype) for n in norms]
        total = _core.stack(norms).norm(p)
    if error_if_nonfinite and not math.isfinite(float(total.item())):
        raise _core.SpiralValueError(
            f"get_total_norm: the total norm of order {p} for gradients from `parameters` is "
            "non-finite, so it cannot be clipped; set error_if_nonfinite=False to scale the "
            "gradients by the non-finite norm anyway"
        )
    return total


def clip_grads_with_norm_(
    parameters: _TensorOrTensors,
    max_norm: float,
    total_norm: Union[Tensor, float],
    foreach: Optional[bool] = None,
) -> None:
    """Scales the gradients of ``parameters`` in place by
    ``min(max_norm / (total_norm + 1e-6), 1)`` (PyTorch's formula) given a precomputed
    ``total_norm`` (e.g. from :func:`get_total_norm`); returns ``None``. ``foreach`` is ignored."""
    del foreach
    params = _as_list(parameters)
    grads = [p.grad for p in params if p.grad is not None]
    if not grads:
        return None
    total = float(total_norm.item()) if isinstance(total_norm, Tensor) else float(total_norm)
    coef = min(float(max_norm) / (total + 1e-6), 1.0)
    with no_grad():
        for g in grads:
            g.mul_(coef)
    return None


def clip_grad_norm_(
    parameters: _TensorOrTensors,
    max_norm: float,
    norm_type: Union[float, int, str] = 2.0,
    error_if_nonfinite: bool = False,
    foreach: Optional[bool] = None,
) -> Tensor:
    """Scales the gradients of ``parameters`` (one tensor or an iterable; those without a
    gradient are skipped) in place so that their joint ``norm_type``-norm (``'inf'`` allowed)
    is at most ``max_norm``: every gradient is multiplied by
    ``min(max_norm / (total_norm + 1e-6), 1)``. Returns the total norm before clipping as a
    0-d tensor (``tensor(0.)`` when no parameter has a gradient).

    Runs the native ``spiraltorch.optim.clip_grad_norm_`` (every order, 0 and ``-inf``
    included). Raises ``SpiralValueError`` (a ``RuntimeError`` and a
    ``ValueError``) when ``error_if_nonfinite`` and the total norm is NaN or infinite.
    ``foreach`` is accepted for PyTorch compatibility and ignored.
    """
    del foreach
    is_generator = isinstance(parameters, types.GeneratorType)
    params = _as_list(parameters)
    if is_generator and not params:
        warnings.warn("`parameters` is an empty generator, no gradient clipping will occur.", stacklevel=2)
    p = _norm_type("clip_grad_norm_", norm_type)
    return _native_optim.clip_grad_norm_(params, float(max_norm), p, bool(error_if_nonfinite))


def clip_grad_value_(
    parameters: _TensorOrTensors,
    clip_value: float,
    foreach: Optional[bool] = None,
) -> None:
    """Clamps the gradients of ``parameters`` (one tensor or an iterable; those without a
    gradient are skipped) in place to ``[-clip_value, clip_value]``; returns ``None``.
    Runs the native ``spiraltorch.optim.clip_grad_value_``; ``foreach`` is ignored."""
    del foreach
    params = _as_list(parameters)
    _native_optim.clip_grad_value_(params, float(clip_value))
    return None


def _check_same_device(fn: str, params: List[Tensor]) -> None:
    """Raises ``TypeError`` naming ``fn`` when ``params`` live on more than one device
    (PyTorch raises ``TypeError`` here too)."""
    devices = {str(p.device) for p in params}
    if len(devices) > 1:
        raise TypeError(
            f"{fn}: found parameters on different devices ({sorted(devices)}), "
            "this is currently not supported"
        )


def parameters_to_vector(parameters: Iterable[Tensor]) -> Tensor:
    """Returns a new 1-D tensor holding every tensor of ``parameters`` flattened and
    concatenated in order (differentiable with respect to the parameters, like PyTorch's).

    Raises ``TypeError`` when the parameters live on different devices and
    ``SpiralValueError`` when there are none.
    """
    params = list(parameters)
    for p in params:
        if not isinstance(p, Tensor):
            raise TypeError(f"parameters_to_vector: expected spiraltorch.Tensor parameters, got {type(p).__name__}")
    if not params:
        raise _core.SpiralValueError("parameters_to_vector: got no parameters to flatten")
    _check_same_device("parameters_to_vector", params)
    return _core.cat([p.reshape(-1) for p in params])


def vector_to_parameters(vec: Tensor, parameters: Iterable[Tensor]) -> None:
    """Copies consecutive slices of the 1-D ``vec`` into the tensors of ``parameters`` in
    order (reshaped to each parameter's shape), in place under ``no_grad``; returns ``None``.

    Unlike PyTorch, which rebinds ``param.data`` to views of ``vec``, the values are copied,
    so the parameters keep their own storage (and dtype) and later writes to ``vec`` do not
    show through. A ``vec`` longer than needed is accepted (the tail is unused), as in PyTorch.

    Raises ``TypeError`` when ``vec`` is not a tensor or the parameters live on different
    devices, and ``SpiralValueError`` when ``vec`` is not 1-D or is too short.
    """
    fn = "vector_to_parameters"
    if not isinstance(vec, Tensor):
        raise TypeError(f"{fn}: expected spiraltorch.Tensor, but got: {type(vec).__name__}")
    if vec.dim() != 1:
        raise _core.SpiralValueError(f"{fn}: expected a 1-D vector, got shape {tuple(vec.shape)}")
    params = list(parameters)
    _check_same_device(fn, params)
    needed = sum(p.numel() for p in params)
    if vec.numel() < needed:
        raise _core.SpiralValueError(
            f"{fn}: the vector has {vec.numel()} elements but the parameters need {needed}"
        )
    pointer = 0
    with no_grad():
        for p in params:
            n = p.numel()
            p.copy_(vec.narrow(0, pointer, n).reshape(tuple(p.shape)))
            pointer += n
    return None
