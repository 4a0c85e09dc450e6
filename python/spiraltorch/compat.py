"""``capture`` and ``share``: move a tensor between SpiralTorch and other frameworks by naming the
target, on top of ``spiraltorch.ecosystem``.

``capture(value)`` gives a SpiralTorch tensor for a SpiralTorch tensor (a clone), a PyTorch,
JAX, TensorFlow or CuPy tensor (shared through DLPack where possible), or anything exposing
``__dlpack__`` (NumPy arrays included); nested Python lists become a new tensor.
``share(value, target)`` hands ``value`` to ``target`` ("spiraltorch"/"st", "torch", "jax",
"tensorflow"/"tf", "cupy"), returning it unchanged when it already belongs there.
"""

from __future__ import annotations

from typing import Any

from . import _core, ecosystem

__all__ = ["capture", "share"]

_TARGETS = {"spiraltorch": "spiraltorch", "spiral": "spiraltorch", "st": "spiraltorch", "tensor": "spiraltorch",
            "torch": "torch", "pytorch": "torch", "jax": "jax", "tensorflow": "tensorflow", "tf": "tensorflow",
            "cupy": "cupy"}


def _framework(value: Any) -> str | None:
    if isinstance(value, _core.Tensor):
        return "spiraltorch"
    root = type(value).__module__.split(".")[0]
    return {"torch": "torch", "jax": "jax", "jaxlib": "jax", "tensorflow": "tensorflow", "cupy": "cupy"}.get(root)


def capture(value: Any) -> Any:
    """A ``spiraltorch.Tensor`` holding ``value`` (see the module docs for what is shared)."""
    fw = _framework(value)
    if fw == "spiraltorch":
        return value.clone()
    if fw == "torch":
        return ecosystem.torch_to_tensor(value)
    if fw == "jax":
        return ecosystem.jax_to_tensor(value)
    if fw == "tensorflow":
        return ecosystem.tensorflow_to_tensor(value)
    if fw == "cupy":
        return ecosystem.cupy_to_tensor(value)
    if hasattr(value, "__dlpack__"):
        return _core.from_dlpack(value)
    if isinstance(value, (list, tuple, int, float)):
        return _core.tensor(value)
    raise TypeError(f"capture: cannot turn a {type(value).__module__}.{type(value).__name__} into a tensor")


def share(value: Any, target: str) -> Any:
    """``value`` as a tensor of ``target``."""
    key = _TARGETS.get(str(target).lower())
    if key is None:
        raise ValueError(f"share: unknown target {target!r}, expected one of {', '.join(sorted(set(_TARGETS)))}")
    if _framework(value) == key:
        return value
    t = value if isinstance(value, _core.Tensor) else capture(value)
    if key == "spiraltorch":
        return t
    if t.requires_grad:
        t = t.detach()
    return {"torch": ecosystem.tensor_to_torch, "jax": ecosystem.tensor_to_jax,
            "tensorflow": ecosystem.tensor_to_tensorflow, "cupy": ecosystem.tensor_to_cupy}[key](t)
