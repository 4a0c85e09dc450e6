"""PyTorch's ``torch.utils`` spellings: ``spiraltorch.utils.data``, ``checkpoint`` and
``cmake_prefix_path`` (the CMake prefix of the C++ SDK inside the installed package)."""
from __future__ import annotations

from typing import Any, Callable

from .. import _core
from .._sdk import cmake_prefix_path
from . import data  # noqa: F401

__all__ = ["checkpoint", "cmake_prefix_path", "data"]


def checkpoint(function: Callable[..., Any], *args: Any, use_reentrant: Any = None,
               preserve_rng_state: bool = True, **kwargs: Any) -> Any:
    """Activation checkpointing (torch.utils.checkpoint.checkpoint): returns function(*args)
    without keeping the activations inside it; backward recomputes them (same autocast state
    and, with preserve_rng_state, the same dropout masks) and back-propagates through them.
    ``args`` are tensors (non-tensor values are passed through unchanged); ``function`` must
    return one tensor. When no tensor argument requires grad it simply runs ``function``
    (correct gradients, no memory saved). The recording and recompute run in C++
    (``st::checkpoint``); ``use_reentrant`` is accepted for PyTorch compatibility."""
    tensor_pos = [i for i, a in enumerate(args) if isinstance(a, _core.Tensor)]
    if not tensor_pos:
        return function(*args, **kwargs)

    def call(tensors: list) -> Any:
        full = list(args)
        for i, t in zip(tensor_pos, tensors):
            full[i] = t
        out = function(*full, **kwargs)
        if not isinstance(out, _core.Tensor):
            raise TypeError(f"checkpoint: function must return one Tensor, got {type(out).__name__}")
        return out

    return _core._checkpoint(call, [args[i] for i in tensor_pos], preserve_rng_state)
