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
