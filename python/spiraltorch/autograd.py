"""Reverse-mode autograd entry points (``spiraltorch.autograd``)."""

from __future__ import annotations

import functools
import inspect
from typing import Any, Callable, List, Optional, Sequence, Tuple, TypeVar, Union

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


class AutogradTensor:
    """The original's explicit autograd handle over a tensor, run by the native engine.

    ``AutogradTensor(value, requires_grad=True)`` (or ``.variable(t)`` / ``.constant(t)``)
    wraps a tensor; ``add``, ``sub``, ``hadamard``, ``matmul``, ``scale``, ``transpose``,
    ``sum``, ``mean``, ``dot`` and ``mean_squared_error`` build new handles whose values are
    computed by native ops and recorded on the autograd tape. ``backward(seed=None)``
    accumulates gradients into every handle that requires grad, intermediates included
    (as the original does); ``grad()`` reads them. Forward values must be finite.
    """

    def __init__(self, value: Tensor, requires_grad: bool = True, *, _op: str = "leaf",
                 _parents: Sequence["AutogradTensor"] = ()) -> None:
        if not isinstance(value, Tensor):
            raise TypeError(f"AutogradTensor: expected a Tensor, got {type(value).__name__}")
        if value.is_floating_point() and not bool(value.isfinite().all().item()):
            raise _core.SpiralValueError(f"AutogradTensor.{_op}: the value holds non-finite entries")
        self._parents = tuple(_parents)
        self._op = _op if any(p.requires_grad() for p in self._parents) or not self._parents else "leaf"
        if not self._parents:
            v = value.detach()
            if requires_grad:
                v.requires_grad = True
        else:
            v = value
            if v.requires_grad:
                v.retain_grad()
        self._value = v

    @classmethod
    def variable(cls, value: Tensor) -> "AutogradTensor":
        """A leaf that requires grad."""
        return cls(value, True)

    @classmethod
    def constant(cls, value: Tensor) -> "AutogradTensor":
        """A leaf that needs no gradient."""
        return cls(value, False)

    def id(self) -> int:
        """An identifier unique among live handles."""
        return id(self)

    def shape(self) -> tuple:
        return tuple(self._value.shape)

    def requires_grad(self) -> bool:
        return bool(self._value.requires_grad)

    def operation_name(self) -> str:
        """'leaf' or the op that made this handle (a node none of whose inputs need
        grad is a constant leaf)."""
        return self._op

    def value(self) -> Tensor:
        return self._value.detach()

    def grad(self) -> Optional[Tensor]:
        return self._value.grad

    def detach(self) -> "AutogradTensor":
        return AutogradTensor(self._value.detach(), False)

    def zero_grad(self) -> None:
        self._value.grad = None

    def zero_grad_graph(self) -> None:
        """Clears the gradient of this handle and of everything it was computed from."""
        seen = set()
        stack = [self]
        while stack:
            node = stack.pop()
            if id(node) in seen:
                continue
            seen.add(id(node))
            node.zero_grad()
            stack.extend(node._parents)

    def _make(self, value: Tensor, op: str, *parents: "AutogradTensor") -> "AutogradTensor":
        return AutogradTensor(value, _op=op, _parents=(self,) + parents)

    def _same_shape(self, other: "AutogradTensor", op: str) -> None:
        if self.shape() != other.shape():
            raise _core.ShapeError(f"AutogradTensor.{op}: shapes {self.shape()} and {other.shape()} differ")

    def add(self, other: "AutogradTensor") -> "AutogradTensor":
        self._same_shape(other, "add")
        return self._make(self._value + other._value, "add", other)

    def sub(self, other: "AutogradTensor") -> "AutogradTensor":
        self._same_shape(other, "sub")
        return self._make(self._value - other._value, "sub", other)

    def hadamard(self, other: "AutogradTensor") -> "AutogradTensor":
        self._same_shape(other, "hadamard")
        return self._make(self._value * other._value, "hadamard", other)

    def matmul(self, other: "AutogradTensor") -> "AutogradTensor":
        return self._make(self._value @ other._value, "matmul", other)

    def scale(self, factor: float) -> "AutogradTensor":
        return self._make(self._value * float(factor), "scale")

    def transpose(self) -> "AutogradTensor":
        return self._make(self._value.transpose(0, 1), "transpose")

    def sum(self) -> "AutogradTensor":
        """Sum of all entries, as a 1x1 handle."""
        return self._make(self._value.sum().reshape(1, 1), "sum")

    def mean(self) -> "AutogradTensor":
        """Mean of all entries, as a 1x1 handle."""
        return self._make(self._value.mean().reshape(1, 1), "mean")

    def dot(self, other: "AutogradTensor") -> "AutogradTensor":
        return self.hadamard(other).sum()

    def mean_squared_error(self, target: "AutogradTensor") -> "AutogradTensor":
        diff = self.sub(target)
        return diff.hadamard(diff).mean()

    def item(self) -> float:
        if self.shape() != (1, 1):
            raise _core.ShapeError(f"AutogradTensor.item: needs a 1x1 value, got {self.shape()}")
        return float(self._value.item())

    def __add__(self, other: "AutogradTensor") -> "AutogradTensor":
        return self.add(other)

    def __sub__(self, other: "AutogradTensor") -> "AutogradTensor":
        return self.sub(other)

    def __matmul__(self, other: "AutogradTensor") -> "AutogradTensor":
        return self.matmul(other)

    def _seed(self, seed: Optional[Tensor]) -> Tensor:
        if seed is None:
            if self.shape() != (1, 1):
                raise _core.SpiralValueError(
                    f"AutogradTensor.backward: a {self.shape()} output needs an explicit output gradient (seed)")
            return _core.ones_like(self._value)
        if tuple(seed.shape) != self.shape():
            raise _core.ShapeError(f"AutogradTensor.backward: seed shape {tuple(seed.shape)} != output {self.shape()}")
        return seed

    def backward(self, seed: Optional[Tensor] = None) -> dict:
        """Accumulates d(self)/d(node) into every node that requires grad; returns a
        receipt (node_count, leaf_count, trainable_leaf_count, max_depth, seed_l2)."""
        g = self._seed(seed)
        if self.requires_grad():
            self._value.backward(g, retain_graph=True)
        summary = self.graph_summary()
        summary["seed_l2"] = float(g.double().square().sum().sqrt().item())
        return summary

    def vector_jacobian_product(self, input: "AutogradTensor", seed: Optional[Tensor] = None) -> Tensor:
        """seed^T d(self)/d(input), without touching stored gradients (zeros when disconnected)."""
        g = self._seed(seed)
        if not (self.requires_grad() and input.requires_grad()):
            return _core.zeros_like(input._value)
        (out,) = grad([self._value], [input._value], [g], retain_graph=True, allow_unused=True)
        return _core.zeros_like(input._value) if out is None else out

    def graph_summary(self) -> dict:
        """Counts over the graph below this handle: nodes, operations, leaves, trainable
        leaves and the longest path (max_depth)."""
        seen = {}
        stack = [(self, 0)]
        while stack:
            node, depth = stack.pop()
            if id(node) in seen and seen[id(node)][1] >= depth:
                continue
            seen[id(node)] = (node, depth)
            stack.extend((p, depth + 1) for p in node._parents)
        nodes = [n for n, _ in seen.values()]
        leaves = [n for n in nodes if not n._parents]
        return {
            "node_count": len(nodes),
            "operation_count": len(nodes) - len(leaves),
            "leaf_count": len(leaves),
            "trainable_leaf_count": sum(1 for n in leaves if n.requires_grad()),
            "max_depth": max(d for _, d in seen.values()),
        }

    def __repr__(self) -> str:
        return f"AutogradTensor(op={self._op}, shape={self.shape()}, requires_grad={self.requires_grad()})"


# ---------------------------------------------------------------------------
# Custom differentiable functions (PyTorch's torch.autograd.Function)
# ---------------------------------------------------------------------------
#
# How a call is recorded: ``Cls.apply(*args)`` binds the arguments, then hands ``forward`` and
# ``backward`` to the native ``st::autograd::apply_function`` (``_core._apply_function``), which runs
# ``forward`` with recording off and records one node for all its differentiable outputs: the node's
# backward gets every output's gradient at once (zeros, or ``None`` without materialization, for one
# the pass did not reach) and calls the user's ``backward`` once per pass, as PyTorch does. The
# differentiable outputs come back as fresh aliases carrying the node, so the tensors ``forward`` saw,
# returned and saved never point back at it (no reference cycle through the native graph), and an
# input returned as it is keeps its own history. Gradient checks (count, shape, dtype, device) and the
# saved-tensor version checks are the native ones; Python keeps only what concerns Python objects.

_F = TypeVar("_F", bound=Callable[..., Any])


class FunctionCtx(_core._FunctionCtx):
    """The ``ctx`` object passed to a :class:`Function`'s ``forward``/``setup_context`` and ``backward``.

    Besides the methods below, any attribute may be set on it in ``forward`` and read back in
    ``backward`` (``ctx.dim = dim``). Tensors ``backward`` needs should go through
    :meth:`save_for_backward`, which also checks they were not modified in place meanwhile.
    The state lives in the native ``st::autograd::FunctionCtx``.
    """

    def __init__(self, name: str = "Function", needs_input_grad: Tuple[bool, ...] = ()) -> None:
        super().__init__(name)
        self._st_saved: Tuple[Optional[Tensor], ...] = ()
        self.needs_input_grad: Tuple[bool, ...] = tuple(needs_input_grad)
        """One bool per positional argument of ``apply``: whether it is a Tensor that requires grad."""

    def save_for_backward(self, *tensors: Optional[Tensor]) -> None:
        """Saves tensors (or ``None``) for ``backward``, read back as :attr:`saved_tensors`.

        Call it at most once per forward (a second call replaces the first). Each tensor's
        version is remembered: reading ``saved_tensors`` after one of them was modified in place
        raises ``SpiralError``.
        """
        for i, t in enumerate(tensors):
            if t is not None and not isinstance(t, Tensor):
                raise TypeError(f"save_for_backward can only save tensors, but argument {i} is of type "
                                f"{type(t).__name__}")
        self._save(tensors)
        self._st_saved = tuple(tensors)  # the very objects, so identity holds in backward

    @property
    def saved_tensors(self) -> Tuple[Optional[Tensor], ...]:
        """The tensors given to :meth:`save_for_backward`, in order.

        Raises ``SpiralError`` when one of them was modified in place after it was saved.
        """
        self._check_saved()
        return self._st_saved

    def mark_non_differentiable(self, *tensors: Tensor) -> None:
        """Marks outputs (the very tensor objects ``forward`` returns) as non-differentiable.

        They are returned with ``requires_grad=False``; ``backward`` still gets an argument for
        each of them (zeros, or ``None`` when materialization is off). Outputs that are not
        floating point (indices, masks) are non-differentiable without being marked.
        """
        for i, t in enumerate(tensors):
            if not isinstance(t, Tensor):
                raise TypeError(f"mark_non_differentiable expects tensors, but argument {i} is of type "
                                f"{type(t).__name__}")
        self._mark_non_differentiable(list(tensors))

    def mark_dirty(self, *tensors: Tensor) -> None:
        """Not supported: in-place custom functions cannot be recorded by SpiralTorch (raises)."""
        raise NotImplementedError(
            f"{self._st_name}: ctx.mark_dirty (an in-place autograd.Function) is not supported; return a new "
            f"tensor from forward instead")

    def __repr__(self) -> str:
        return f"<FunctionCtx of {self._st_name}>"


class Function:
    """Base class of custom differentiable operations (PyTorch's ``torch.autograd.Function``).

    Subclass it with two static methods and call the class's :meth:`apply`::

        class Exp(spiraltorch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                y = x.exp()
                ctx.save_for_backward(y)
                return y

            @staticmethod
            def backward(ctx, grad_y):
                (y,) = ctx.saved_tensors
                return grad_y * y

        y = Exp.apply(x)

    ``forward(ctx, *args)`` runs with gradient recording off on the arguments as given and
    returns a Tensor or a tuple/list of outputs (non-Tensor outputs pass through undifferentiated).
    ``backward(ctx, *grad_outputs)`` gets one gradient per output and returns one value per
    positional argument of ``apply``: a Tensor of that argument's shape (a gradient that
    broadcasts to it is summed down; another dtype is cast) or ``None``, which is required for
    non-Tensor arguments; extra trailing ``None`` values are ignored. ``backward`` runs with grad
    mode on under ``create_graph=True``, so a backward written with differentiable ops supports
    higher-order gradients (see :func:`once_differentiable` for one that does not).

    Instead of taking ``ctx``, ``forward(*args)`` may leave the bookkeeping to a
    ``setup_context(ctx, inputs, output)`` static method (PyTorch 2 style); ``apply`` then binds
    keyword and default arguments to ``forward``'s signature first. See :class:`FunctionCtx` for
    ``ctx``.
    """

    @staticmethod
    def forward(ctx: Any, *args: Any, **kwargs: Any) -> Any:
        """Computes the outputs from the arguments (override it)."""
        raise NotImplementedError("You must implement the forward function for a custom autograd.Function.")

    @staticmethod
    def setup_context(ctx: FunctionCtx, inputs: Tuple[Any, ...], output: Any) -> None:
        """Optional: fills ``ctx`` from the inputs and output of a ``forward`` that takes no ctx."""
        raise NotImplementedError("setup_context is not implemented.")

    @staticmethod
    def backward(ctx: Any, *grad_outputs: Any) -> Any:
        """Maps the gradients of the outputs to one gradient (or None) per argument (override it)."""
        raise NotImplementedError("You must implement either the backward or vjp method for your custom "
                                  "autograd.Function to use it with backward mode AD.")

    vjp = backward

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise TypeError(f"{type(self).__name__} instances are not callable: call the class's static "
                        f"{type(self).__name__}.apply(...) instead")

    @classmethod
    def _st_backward_fn(cls) -> Callable[..., Any]:
        backward = cls.backward
        if backward is Function.backward and cls.vjp is not Function.vjp:
            return cls.vjp
        return backward

    @classmethod
    def _st_bind(cls, args: Tuple[Any, ...], kwargs: dict, with_defaults: bool) -> Tuple[Tuple[Any, ...], dict]:
        """Keyword arguments that fill forward's next positional parameters become positional."""
        try:
            sig = inspect.signature(cls.forward)
        except (TypeError, ValueError):  # pragma: no cover - builtins without a signature
            return args, kwargs
        params = list(sig.parameters.values())
        if not with_defaults:
            params = params[1:]  # ctx
            sig = sig.replace(parameters=params)
        bound = sig.bind(*args, **kwargs)  # a TypeError names a wrong call
        if with_defaults:
            bound.apply_defaults()
            return tuple(bound.args), dict(bound.kwargs)
        args, kwargs = list(args), dict(kwargs)
        positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
        for p in params[len(args):]:
            if p.kind not in positional or p.name not in kwargs:
                break
            args.append(kwargs.pop(p.name))
        return tuple(args), kwargs

    @classmethod
    def apply(cls, *args: Any, **kwargs: Any) -> Any:
        """Runs ``forward`` on the arguments and records ``backward`` for the outputs.

        Arguments may mix Tensors, Python numbers, ``None`` and other objects; only Tensor
        positional arguments are differentiated (keyword arguments that fill ``forward``'s next
        positional parameters count as positional). The graph is recorded when grad mode is on
        and a Tensor argument requires grad; differentiable outputs (floating point, not marked
        non-differentiable) then require grad. Returns what ``forward`` returned, with its
        differentiable outputs replaced by tensors holding the same data and the recorded
        history.
        """
        if cls is Function:
            raise TypeError("autograd.Function.apply: subclass Function and call the subclass's apply")
        name = f"{cls.__name__}Backward"
        custom_setup = cls.setup_context is not Function.setup_context
        if custom_setup:
            args, kwargs = cls._st_bind(args, kwargs, with_defaults=True)
        elif kwargs:
            args, kwargs = cls._st_bind(args, kwargs, with_defaults=False)
        needs = tuple(isinstance(a, Tensor) and bool(a.requires_grad) for a in args)
        ctx = FunctionCtx(name, needs)
        raw_box: List[Any] = []

        def forward() -> List[Optional[Tensor]]:
            if custom_setup:
                raw = cls.forward(*args, **kwargs)
                cls.setup_context(ctx, args, raw)
            else:
                raw = cls.forward(ctx, *args, **kwargs)
            raw_box.append(raw)
            outs = raw if isinstance(raw, (tuple, list)) else [raw]
            return [o if isinstance(o, Tensor) else None for o in outs]

        backward_fn = cls._st_backward_fn()

        def backward(grad_outputs: List[Optional[Tensor]]) -> List[Any]:
            return _gradient_list(backward_fn(ctx, *grad_outputs))

        inputs = [a if isinstance(a, Tensor) else None for a in args]
        recorded = _core._apply_function(ctx, inputs, forward, backward,
                                         bool(getattr(backward_fn, "_st_once_differentiable", False)))
        raw = raw_box[0]
        if not isinstance(raw, (tuple, list)):
            return raw if recorded[0] is None else recorded[0]
        results = [o if r is None else r for o, r in zip(raw, recorded)]
        return results if isinstance(raw, list) else tuple(results)


def _gradient_list(result: Any) -> List[Any]:
    """What a backward returned as a list (a single value is the gradient of the single argument);
    the native side checks it against the arguments."""
    return list(result) if isinstance(result, (tuple, list)) else [result]


def once_differentiable(fn: _F) -> _F:
    """Decorator for a ``backward`` that is not itself differentiable: it runs under ``no_grad``.

    Under ``create_graph=True`` with gradients that require grad, the gradients it returns carry
    a node that raises ``SpiralError`` if a higher-order backward ever reaches it (as PyTorch's
    ``once_differentiable`` does), instead of silently yielding wrong higher-order gradients.
    (The native ``apply_function`` does both for a :class:`Function` whose backward carries it.)
    """

    @functools.wraps(fn)
    def wrapper(ctx: Any, *args: Any) -> Any:
        with no_grad():
            return fn(ctx, *args)

    wrapper._st_once_differentiable = True  # type: ignore[attr-defined]
    return wrapper  # type: ignore[return-value]
