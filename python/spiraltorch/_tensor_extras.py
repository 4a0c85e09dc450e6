"""Pure-Python parts of the Tensor surface: the callable shape tuple, repr, and
the seed's 2-D conveniences. They are attached to the native class at import."""

from __future__ import annotations

import collections
from typing import Any, Optional

from . import _core


class Size(tuple):
    """A shape tuple that can also be called: ``t.shape == t.shape() == (rows, cols)``.

    The seed's API spells the shape as a method, PyTorch as an attribute; this
    object satisfies both.
    """

    def __call__(self) -> "Size":
        return self

    def numel(self) -> int:
        n = 1
        for d in self:
            n *= d
        return n

    def __repr__(self) -> str:
        return f"spiraltorch.Size({list(self)})"


return_types = collections.namedtuple("return_types", ["values", "indices"])


def _format_number(v: Any, is_float: bool, width_digits: int) -> str:
    if isinstance(v, bool):
        return "True" if v else "False"
    if not is_float:
        return str(v)
    if v != v:
        return "nan"
    if v in (float("inf"), float("-inf")):
        return "inf" if v > 0 else "-inf"
    if float(v).is_integer() and abs(v) < 1e8:
        return f"{v:.0f}."
    return f"{v:.{width_digits}f}"


def _format(values: Any, is_float: bool, indent: int, digits: int) -> str:
    if not isinstance(values, list):
        return _format_number(values, is_float, digits)
    if not values:
        return "[]"
    if not isinstance(values[0], list):
        items = [_format_number(v, is_float, digits) for v in values]
        width = max(len(s) for s in items)
        return "[" + ", ".join(s.rjust(width) for s in items) + "]"
    sep = ",\n" + " " * (indent + 1)
    return "[" + sep.join(_format(v, is_float, indent + 1, digits) for v in values) + "]"


def tensor_repr(t: "_core.Tensor") -> str:
    """PyTorch-style repr: ``tensor([[1., 2.]], dtype=spiraltorch.float64, requires_grad=True)``."""
    is_float = t.dtype in (_core.dtype.float32, _core.dtype.float64, _core.dtype.float16, _core.dtype.bfloat16)
    flat_needs_digits = False
    # An empty tensor prints as [] with its size (like PyTorch), without listing 2**47 empty rows.
    values = [] if t.numel() == 0 else t.detach().tolist()
    if is_float:
        def walk(v: Any) -> None:
            nonlocal flat_needs_digits
            if isinstance(v, list):
                for x in v:
                    walk(x)
            elif v == v and abs(v) != float("inf") and not float(v).is_integer():
                flat_needs_digits = True
        walk(values)
    body = _format(values, is_float, len("tensor("), 4 if flat_needs_digits else 0)
    extras = []
    if t.numel() == 0 and t.ndim != 1:
        extras.append(f"size={tuple(t.shape)}")
    if t.dtype not in (_core.dtype.float32, _core.dtype.int64, _core.dtype.bool):
        extras.append(f"dtype=spiraltorch.{t.dtype.name}")
    if t.grad_fn is not None:
        extras.append(f"grad_fn=<{t.grad_fn}>")
    elif t.requires_grad:
        extras.append("requires_grad=True")
    return "tensor(" + body + "".join(", " + e for e in extras) + ")"


def _rand(*args: int, seed: Optional[int] = None, **kwargs: Any) -> "_core.Tensor":
    """``Tensor.rand(rows, cols, seed=3)``: uniform [0, 1) values; a seed gives a fixed
    stream without touching the global generator."""
    if seed is not None:
        if len(args) != 2:
            raise _core.ShapeError(f"Tensor.rand: expected (rows, cols) with seed=, got {args}")
        return _core._rand_seeded(int(args[0]), int(args[1]), int(seed))
    return _core.rand(*args, **kwargs)


def _randn(*args: int, seed: Optional[int] = None, **kwargs: Any) -> "_core.Tensor":
    """``Tensor.randn(rows, cols, seed=None)``: standard normal values."""
    if seed is not None:
        state = _core._get_rng_state()
        _core.manual_seed(int(seed))
        try:
            return _core.randn(*args, **kwargs)
        finally:
            _core._set_rng_state(*state)
    return _core.randn(*args, **kwargs)


def _zeros(*args: int, **kwargs: Any) -> "_core.Tensor":
    return _core.zeros(*args, **kwargs)


def _iter(self: "_core.Tensor"):
    """Iterates over the first dimension, like a sequence of sub-tensors."""
    return (self[i] for i in range(len(self)))


def _contains(self: "_core.Tensor", value: Any) -> bool:
    """``value in t``: whether any element equals ``value``."""
    return bool((self == value).any())


def _dtype_repr(self: "_core.dtype") -> str:
    return f"spiraltorch.{self.name}"


_FLOATING = ("float32", "float64", "float16", "bfloat16")
_ITEMSIZE = {"bool": 1, "uint8": 1, "int32": 4, "int64": 8, "float16": 2, "bfloat16": 2, "float32": 4, "float64": 8}


def _dtype_is_floating_point(self: "_core.dtype") -> bool:
    """Whether the dtype is one of the floating-point types."""
    return self.name in _FLOATING


def _dtype_itemsize(self: "_core.dtype") -> int:
    """Bytes per element."""
    return _ITEMSIZE[self.name]


def _tensor_is_floating_point(self: "_core.Tensor") -> bool:
    """Whether the tensor's dtype is floating-point."""
    return self.dtype.name in _FLOATING


def install() -> None:
    T = _core.Tensor
    _core._set_size_type(Size)
    T.__repr__ = tensor_repr
    T.__str__ = tensor_repr
    T.rand = staticmethod(_rand)
    T.randn = staticmethod(_randn)
    T.zeros = staticmethod(_zeros)
    T.__iter__ = _iter
    T.__contains__ = _contains
    T.is_floating_point = _tensor_is_floating_point
    _core.dtype.__repr__ = _dtype_repr
    _core.dtype.__str__ = _dtype_repr
    _core.dtype.is_floating_point = property(_dtype_is_floating_point)
    _core.dtype.itemsize = property(_dtype_itemsize)
