"""The Python types the native Tensor returns: the callable shape tuple (``Size``) and the named
tuple of ``(values, indices)`` results. The Tensor surface itself (repr, iteration, the seed's
constructors) is bound in python/src."""

from __future__ import annotations

import collections

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


def install() -> None:
    """Makes ``Tensor.shape`` return :class:`Size` (the native class reads the type from here)."""
    _core._set_size_type(Size)
