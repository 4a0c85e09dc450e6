"""PyTorch's ``torch.utils`` spellings: ``spiraltorch.utils.data``, ``checkpoint`` and
``cmake_prefix_path`` (the CMake prefix of the C++ SDK inside the installed package)."""
from __future__ import annotations

from typing import Any, Callable

from .. import _core
from .._sdk import cmake_prefix_path
from . import data  # noqa: F401

__all__ = ["checkpoint", "cmake_prefix_path", "data"]

_TENSOR = object()  # marks where a tensor stood in a checkpointed function's result


def checkpoint(function: Callable[..., Any], *args: Any, use_reentrant: Any = None,
               preserve_rng_state: bool = True, **kwargs: Any) -> Any:
    """Activation checkpointing (torch.utils.checkpoint.checkpoint): returns function(*args)
    without keeping the activations inside it; backward recomputes them (same autocast state
    and, with preserve_rng_state, the same dropout masks) and back-propagates through them.
    ``args`` are tensors (non-tensor values are passed through unchanged). ``function`` returns
    one tensor or a tuple/list: its floating tensors are the outputs of one recorded node whose
    backward recomputes ``function`` once and receives the gradients of all of them (an output
    that is not used sends none); its other values are returned as the first run gave them.
    When no tensor argument requires grad it simply runs ``function`` (correct gradients, no
    memory saved). The recording and recompute run in C++ (``st::checkpoint``);
    ``use_reentrant`` is accepted for PyTorch compatibility."""
    tensor_pos = [i for i, a in enumerate(args) if isinstance(a, _core.Tensor)]
    if not tensor_pos:
        return function(*args, **kwargs)
    layout: list = []  # the first run's result: its container type and its items

    def call(tensors: list) -> list:
        full = list(args)
        for i, t in zip(tensor_pos, tensors):
            full[i] = t
        out = function(*full, **kwargs)
        if isinstance(out, _core.Tensor):
            items, kind = [out], None
        elif isinstance(out, (tuple, list)):
            items, kind = list(out), type(out)
        else:
            raise TypeError("checkpoint: function must return a Tensor or a tuple/list of them, "
                            f"got {type(out).__name__}")
        if not layout:  # the recompute's result is not kept: it holds the recomputed graph
            layout.extend((kind, [_TENSOR if isinstance(x, _core.Tensor) else x for x in items]))
        return [x for x in items if isinstance(x, _core.Tensor)]

    outs = iter(_core._checkpoint(call, [args[i] for i in tensor_pos], preserve_rng_state))
    kind, items = layout
    layout.clear()
    if kind is None:
        return next(outs)
    values = [next(outs) if x is _TENSOR else x for x in items]
    return kind(*values) if hasattr(kind, "_fields") else kind(values)
