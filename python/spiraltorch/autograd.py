"""Reverse-mode autograd entry points (``spiraltorch.autograd``)."""

from __future__ import annotations

from typing import Optional, Sequence, Union

from . import _core

Tensor = _core.Tensor
_Tensors = Union[Tensor, Sequence[Tensor]]


def _as_list(x: Optional[_Tensors]) -> list:
    if x is None:
        return []
    if isinstance(x, Tensor):
        return [x]
    return list(x)


def grad(
    outputs: _Tensors,
    inputs: _Tensors,
    grad_outputs: Optional[_Tensors] = None,
    retain_graph: Optional[bool] = None,
    create_graph: bool = False,
    allow_unused: bool = False,
) -> tuple:
    """Computes and returns d(outputs)/d(inputs) without touching any ``.grad``.

    Returns a tuple with one gradient per input (``None`` for unused inputs when
    ``allow_unused=True``).
    """
    outs = _as_list(outputs)
    ins = _as_list(inputs)
    gos = _as_list(grad_outputs)
    gos = gos + [None] * (len(outs) - len(gos))
    keep = create_graph if retain_graph is None else retain_graph
    return tuple(_core._autograd_grad(outs, ins, gos, keep, create_graph, allow_unused))


def backward(tensors: _Tensors, grad_tensors: Optional[_Tensors] = None, retain_graph: bool = False) -> None:
    """Accumulates gradients of ``tensors`` into the ``.grad`` of the leaves."""
    outs = _as_list(tensors)
    gos = _as_list(grad_tensors)
    gos = gos + [None] * (len(outs) - len(gos))
    _core._backward_many(outs, gos, retain_graph)


class no_grad:
    """Context manager and decorator that disables graph recording."""

    def __enter__(self) -> None:
        self._prev = _core.is_grad_enabled()
        _core.set_grad_enabled(False)

    def __exit__(self, *exc: object) -> None:
        _core.set_grad_enabled(self._prev)

    def __call__(self, fn):  # type: ignore[no-untyped-def]
        import functools

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):  # type: ignore[no-untyped-def]
            with self.__class__():
                return fn(*args, **kwargs)

        return wrapper


class enable_grad(no_grad):
    """Context manager and decorator that re-enables graph recording."""

    def __enter__(self) -> None:
        self._prev = _core.is_grad_enabled()
        _core.set_grad_enabled(True)


class set_grad_enabled(no_grad):
    """``with set_grad_enabled(flag):`` records the graph only when ``flag`` is true."""

    def __init__(self, mode: bool) -> None:
        self._mode = bool(mode)

    def __enter__(self) -> None:
        self._prev = _core.is_grad_enabled()
        _core.set_grad_enabled(self._mode)

    def __call__(self, fn):  # type: ignore[no-untyped-def]
        import functools

        mode = self._mode

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):  # type: ignore[no-untyped-def]
            with set_grad_enabled(mode):
                return fn(*args, **kwargs)

        return wrapper
