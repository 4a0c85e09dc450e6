"""Custom operators: register Python functions as named SpiralTorch operators.

An operator is a ``forward(inputs) -> Tensor | list[Tensor]`` and, optionally, a
``backward(inputs, outputs, grad_outputs) -> Tensor | list[Tensor | None]`` (one gradient per
input). ``execute`` runs the forward without recording its internals and, when a backward is
registered and an input requires grad, records one autograd node per output that calls the
backward, so ``.backward()`` flows through custom operators like through built-in ones.
(With several outputs, the backward is called once per output with the other output gradients
zero; a backward is a vector-Jacobian product, linear in ``grad_outputs``, so the sum is exact.)

Declared input/output counts are checked when they are positive (0 means "any").
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable

from . import _core, plugin
from .autograd import no_grad

__all__ = ["backward", "describe", "execute", "list_operators", "metadata", "register", "signature", "unregister"]

Tensor = _core.Tensor


@dataclass
class _Operator:
    name: str
    num_inputs: int
    num_outputs: int
    forward: Callable[..., Any]
    backward: Callable[..., Any] | None
    description: str | None
    backends: list[str]
    attributes: dict[str, str] = field(default_factory=dict)
    supports_inplace: bool = False


_REGISTRY: dict[str, _Operator] = {}
_LOCK = threading.Lock()


def signature(num_inputs: int, num_outputs: int) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Decorator recording the input/output counts on a forward function for ``register``."""
    def mark(fn: Callable[..., Any]) -> Callable[..., Any]:
        fn.__spiral_num_inputs__ = int(num_inputs)
        fn.__spiral_num_outputs__ = int(num_outputs)
        return fn
    return mark


def _count(value: Any, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"ops.register: {what} must be a non-negative int, got {value!r}")
    return value


def register(name: str, *args: Any, backward: Callable[..., Any] | None = None, num_inputs: int | None = None,
             num_outputs: int | None = None, description: str | None = None, backends: Iterable[str] | None = None,
             attributes: dict[str, str] | None = None, supports_inplace: bool = False,
             differentiable: bool | None = None, replace: bool = False) -> None:
    """Registers operator ``name``: ``register(name, forward, backward=None, *, num_inputs=...,
    num_outputs=..., description=..., backends=..., attributes=...)`` or the positional form
    ``register(name, num_inputs, num_outputs, forward[, backward])``. Counts default to the
    ``@signature`` decorator's, else 0 (unchecked). A registered name is refused unless
    ``replace=True``."""
    if not isinstance(name, str) or not name:
        raise ValueError(f"ops.register: name must be a non-empty string, got {name!r}")
    args = list(args)
    if args and isinstance(args[0], int) and not isinstance(args[0], bool):
        if len(args) < 3:
            raise TypeError("ops.register: the positional form is register(name, num_inputs, num_outputs, forward"
                            "[, backward])")
        num_inputs, num_outputs, forward = args[0], args[1], args[2]
        rest = args[3:]
    else:
        if not args:
            raise TypeError("ops.register: missing the forward function")
        forward, rest = args[0], args[1:]
    if rest:
        if backward is not None or len(rest) > 1:
            raise TypeError("ops.register: backward given twice or too many positional arguments")
        backward = rest[0]
    if not callable(forward):
        raise TypeError(f"ops.register: forward must be callable, got {type(forward).__name__}")
    if backward is not None and not callable(backward):
        raise TypeError(f"ops.register: backward must be callable, got {type(backward).__name__}")
    if differentiable is False and backward is not None:
        raise ValueError(f"ops.register: operator '{name}' has a backward but differentiable=False")
    if differentiable is True and backward is None:
        raise ValueError(f"ops.register: operator '{name}' is differentiable but has no backward")
    n_in = _count(num_inputs if num_inputs is not None else getattr(forward, "__spiral_num_inputs__", 0),
                  "num_inputs")
    n_out = _count(num_outputs if num_outputs is not None else getattr(forward, "__spiral_num_outputs__", 0),
                   "num_outputs")
    attrs = dict(attributes or {})
    if not all(isinstance(k, str) and isinstance(v, str) for k, v in attrs.items()):
        raise TypeError("ops.register: attributes must map str to str")
    op = _Operator(name, n_in, n_out, forward, backward, description,
                   list(backends) if backends is not None else ["python"], attrs, bool(supports_inplace))
    with _LOCK:
        if name in _REGISTRY and not replace:
            raise ValueError(f"Operator '{name}' is already registered (pass replace=True to redefine it)")
        _REGISTRY[name] = op


def unregister(name: str) -> bool:
    """Removes operator ``name``; True when it was registered."""
    with _LOCK:
        return _REGISTRY.pop(name, None) is not None


def list_operators() -> list[str]:
    """The registered operator names, sorted."""
    with _LOCK:
        return sorted(_REGISTRY)


def _get(name: str) -> _Operator:
    with _LOCK:
        op = _REGISTRY.get(name)
    if op is None:
        raise ValueError(f"ops: no operator named '{name}' (registered: {', '.join(list_operators()) or 'none'})")
    return op


def metadata(name: str) -> dict[str, Any]:
    """The registration record of ``name`` as a dict."""
    op = _get(name)
    return {"name": op.name, "num_inputs": op.num_inputs, "num_outputs": op.num_outputs,
            "supports_inplace": op.supports_inplace, "differentiable": op.backward is not None,
            "description": op.description, "backends": list(op.backends), "attributes": dict(op.attributes)}


def describe(name: str) -> str:
    """One line: ``name(num_inputs -> num_outputs)`` then description, backends and attributes."""
    op = _get(name)
    parts = [f"{op.name}({op.num_inputs} -> {op.num_outputs})"]
    if op.description:
        parts.append(op.description)
    if op.backends:
        parts.append("backends: " + ", ".join(op.backends))
    if op.attributes:
        parts.append(f"attrs: {op.attributes}")
    return " | ".join(parts)


def _tensors(value: Any, what: str, name: str) -> list[Any]:
    items = [value] if isinstance(value, Tensor) else list(value)
    for i, t in enumerate(items):
        if not isinstance(t, Tensor):
            raise TypeError(f"ops '{name}': {what} {i} is a {type(t).__name__}, expected a spiraltorch.Tensor")
    return items


def _inputs(args: tuple[Any, ...], inputs: Any, name: str) -> list[Any]:
    if inputs is not None:
        if args:
            raise TypeError(f"ops.execute('{name}'): pass inputs positionally or as inputs=, not both")
        return _tensors(inputs, "input", name)
    if len(args) == 1 and not isinstance(args[0], Tensor):
        return _tensors(args[0], "input", name)
    return _tensors(args, "input", name)


def execute(name: str, *args: Any, inputs: Any = None, return_single: bool = False) -> Any:
    """Runs operator ``name`` on tensors given positionally, as one list, or as ``inputs=``.
    Returns the list of outputs (the single output when ``return_single`` and there is one)."""
    op = _get(name)
    xs = _inputs(args, inputs, name)
    if op.num_inputs and len(xs) != op.num_inputs:
        raise ValueError(f"ops '{name}': expected {op.num_inputs} inputs, got {len(xs)}")
    # The forward's own built-in ops stay silent on the event bus: this operator is one TensorOp.
    with no_grad(), _core._SilentOps():
        try:
            result = op.forward(list(xs))
        except Exception as exc:
            # The callback's own exception propagates with its type (a ValueError stays
            # catchable as one); a note names the operator it came from.
            if hasattr(exc, "add_note"):
                exc.add_note(f"in the forward callback of operator '{name}'")
            raise
    outs = _tensors(result, "output", name)
    if not outs:
        raise ValueError(f"ops '{name}': forward returned no outputs")
    if op.num_outputs and len(outs) != op.num_outputs:
        raise ValueError(f"ops '{name}': expected {op.num_outputs} outputs, got {len(outs)}")
    if op.backward is not None and any(x.requires_grad for x in xs) and _core.is_grad_enabled():
        outs = _attach(op, xs, outs)
    plugin._emit("TensorOp", op_name=name, input_shape=list(xs[0].shape) if xs else [],
                 output_shape=list(outs[0].shape))
    if return_single and len(outs) == 1:
        return outs[0]
    return outs


def _attach(op: _Operator, xs: list[Any], outs: list[Any]) -> list[Any]:
    """The outputs with one autograd node for all of them (st::autograd::apply_function), whose
    backward calls op.backward once with every output's gradient (zeros for unused outputs)."""
    # An output that is an input's own memory is copied: the result never aliases an input.
    outs = [o.clone() if any(o.data_ptr() == x.data_ptr() and o.shape == x.shape for x in xs) else o for o in outs]
    detached = [o.detach() for o in outs]

    def grad_fn(grads: list[Any]) -> list[Any]:
        return backward(op.name, xs, detached, grads)

    ctx = _core._FunctionCtx(f"{op.name}Backward")
    recorded = _core._apply_function(ctx, list(xs), lambda: list(outs), grad_fn, False)
    return [o if r is None else r for o, r in zip(outs, recorded)]


def backward(name: str, inputs: Any, outputs: Any, grad_outputs: Any, *, return_single: bool = False) -> Any:
    """Calls the registered backward of ``name``: one gradient (or None) per input."""
    op = _get(name)
    if op.backward is None:
        raise ValueError(f"ops '{name}': operator has no backward (register one to differentiate through it)")
    xs, ys, gs = (_tensors(v, what, name) for v, what in ((inputs, "input"), (outputs, "output"),
                                                          (grad_outputs, "grad_output")))
    if op.num_outputs and len(gs) != op.num_outputs:
        raise ValueError(f"ops '{name}': expected {op.num_outputs} grad_outputs, got {len(gs)}")
    result = op.backward(list(xs), list(ys), list(gs))
    grads = [result] if isinstance(result, Tensor) or result is None else list(result)
    if len(grads) != len(xs):
        raise ValueError(f"ops '{name}': backward returned {len(grads)} gradients for {len(xs)} inputs")
    for i, gr in enumerate(grads):
        if gr is not None and not isinstance(gr, Tensor):
            raise TypeError(f"ops '{name}': gradient {i} is a {type(gr).__name__}, expected a Tensor or None")
        if gr is not None and tuple(gr.shape) != tuple(xs[i].shape):
            raise ValueError(f"ops '{name}': gradient {i} has shape {tuple(gr.shape)}, input {i} has "
                             f"{tuple(xs[i].shape)}")
    if return_single and len(grads) == 1:
        return grads[0]
    return grads
