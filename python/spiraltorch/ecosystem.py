"""Bridges between SpiralTorch tensors and PyTorch, JAX, TensorFlow and CuPy.

Every bridge goes through DLPack, so a tensor crosses without a copy whenever both sides can
address the same memory: same device, a dtype both know, a layout the consumer accepts. The
calls that must copy say so in their docstrings (a host tensor handed to CuPy; conversions
asked for with ``dtype=``/``device=``/``copy=True``).

CUDA stream order follows the DLPack protocol: the consumer names the stream it will read on
and the producer makes that stream wait for the work it has queued on the data. ``stream=``
in the CuPy bridges picks the CuPy stream that plays this part.

The frameworks are imported on first use; a missing one raises ``ImportError`` naming it.
"""

from __future__ import annotations

import importlib
from typing import Any

from . import _core

__all__ = [
    "cupy_to_tensor",
    "jax_to_tensor",
    "tensor_to_cupy",
    "tensor_to_jax",
    "tensor_to_tensorflow",
    "tensor_to_torch",
    "tensorflow_to_tensor",
    "torch_to_tensor",
]


def _import(name: str, package: str) -> Any:
    try:
        return importlib.import_module(name)
    except ImportError as exc:
        raise ImportError(f"spiraltorch.ecosystem: '{name}' is not installed (pip install {package}); "
                          f"the {name} bridge needs it") from exc


def _check_tensor(tensor: Any, fn: str) -> None:
    if not isinstance(tensor, _core.Tensor):
        raise TypeError(f"{fn}: expected a spiraltorch.Tensor, got {type(tensor).__name__}")


def _exportable(tensor: Any, fn: str) -> Any:
    """The tensor to hand to a consumer: DLPack cannot carry autograd history, so a tensor that
    requires grad is refused rather than silently detached."""
    _check_tensor(tensor, fn)
    if tensor.requires_grad:
        raise ValueError(f"{fn}: the tensor requires grad; DLPack does not carry autograd history, "
                         "so call .detach() first")
    return tensor


# ---------------------------------------------------------------- PyTorch

def tensor_to_torch(tensor: Any, *, dtype: Any = None, device: Any = None, requires_grad: bool | None = None,
                    copy: bool | None = None, memory_format: Any = None) -> Any:
    """A ``torch.Tensor`` holding ``tensor``'s values.

    Without keyword arguments the result shares memory with ``tensor`` (same device, same
    strides): writes on either side are seen by the other. ``dtype``, ``device`` and
    ``memory_format`` convert afterwards with ``Tensor.to`` (a copy only where they change
    something, or always with ``copy=True``); ``requires_grad`` makes the result a leaf that
    requires grad (floating dtypes only)."""
    src = _exportable(tensor, "tensor_to_torch")  # a wrong argument is a TypeError with or without torch
    torch = _import("torch", "torch")
    out = torch.from_dlpack(src)
    if dtype is not None or device is not None or copy or memory_format is not None:
        kwargs: dict[str, Any] = {"copy": bool(copy)}
        if dtype is not None:
            kwargs["dtype"] = dtype
        if device is not None:
            kwargs["device"] = device
        if memory_format is not None:
            kwargs["memory_format"] = memory_format
        out = out.to(**kwargs)
    if requires_grad is not None:
        out.requires_grad_(bool(requires_grad))
    return out


def torch_to_tensor(tensor: Any, *, dtype: Any = None, device: Any = None, ensure_cpu: bool | None = None,
                    copy: bool | None = None, require_contiguous: bool | None = None) -> Any:
    """A ``spiraltorch.Tensor`` holding a ``torch.Tensor``'s values (its autograd history is
    not carried over: the tensor is detached first).

    Shares memory with the torch tensor (CPU or CUDA, any strides) unless asked otherwise:
    ``dtype``/``device`` convert on the torch side first, ``ensure_cpu=True`` moves a GPU tensor
    to the host, ``copy=True`` clones, ``require_contiguous=True`` makes the layout row-major."""
    torch = _import("torch", "torch")
    if not isinstance(tensor, torch.Tensor):
        raise TypeError(f"torch_to_tensor: expected a torch.Tensor, got {type(tensor).__name__}")
    t = tensor.detach()
    if dtype is not None or device is not None:
        kwargs: dict[str, Any] = {}
        if dtype is not None:
            kwargs["dtype"] = dtype
        if device is not None:
            kwargs["device"] = device
        t = t.to(**kwargs)
    elif ensure_cpu and t.device.type != "cpu":
        t = t.cpu()
    if copy:
        t = t.clone()
    if require_contiguous:
        t = t.contiguous()
    return _core.from_dlpack(t)


# ---------------------------------------------------------------- JAX

def tensor_to_jax(tensor: Any) -> Any:
    """A ``jax.Array`` holding ``tensor``'s values, through ``jax.numpy.from_dlpack`` (zero-copy
    where JAX accepts the layout and device; JAX copies otherwise, e.g. for non-row-major
    strides). JAX arrays are immutable: do not write to ``tensor`` while the array is in use."""
    _import("jax", "jax")
    jnp = _import("jax.numpy", "jax")
    return jnp.from_dlpack(_exportable(tensor, "tensor_to_jax"))


def jax_to_tensor(array: Any) -> Any:
    """A ``spiraltorch.Tensor`` holding a ``jax.Array``'s values, sharing its buffer. JAX treats
    the buffer as immutable: write to a ``.clone()`` of the result, not to the result itself."""
    jax = _import("jax", "jax")
    if not isinstance(array, jax.Array):
        raise TypeError(f"jax_to_tensor: expected a jax.Array, got {type(array).__name__}")
    return _core.from_dlpack(array)


# ---------------------------------------------------------------- TensorFlow

def tensor_to_tensorflow(tensor: Any) -> Any:
    """A ``tf.Tensor`` holding ``tensor``'s values, through ``tf.experimental.dlpack`` (shares
    memory for row-major host tensors; TensorFlow refuses other layouts, so those are made
    contiguous first, a copy)."""
    tf = _import("tensorflow", "tensorflow")
    t = _exportable(tensor, "tensor_to_tensorflow")
    if not t.is_contiguous():
        t = t.contiguous()
    return tf.experimental.dlpack.from_dlpack(t.__dlpack__())


def tensorflow_to_tensor(value: Any) -> Any:
    """A ``spiraltorch.Tensor`` holding a ``tf.Tensor``'s values, sharing its buffer."""
    tf = _import("tensorflow", "tensorflow")
    return _core.from_dlpack(tf.experimental.dlpack.to_dlpack(value))


# ---------------------------------------------------------------- CuPy

def _cupy_stream(cupy: Any, stream: Any, fn: str) -> Any:
    """The CuPy stream that ``stream`` names: None (CuPy's current stream), "current"/"auto",
    "null"/"default" (the legacy default stream), a CuPy stream object, or a raw
    ``cudaStream_t`` handle as an int (wrapped in ``cupy.cuda.ExternalStream``)."""
    if stream is None:
        return cupy.cuda.get_current_stream()
    if isinstance(stream, str):
        key = stream.lower()
        if key in ("current", "auto"):
            return cupy.cuda.get_current_stream()
        if key in ("null", "default"):
            return cupy.cuda.Stream.null
        raise ValueError(f"{fn}: stream must be 'current', 'auto', 'null', 'default', a CuPy stream or an int "
                         f"handle, got {stream!r}")
    if hasattr(stream, "ptr") and hasattr(stream, "__enter__"):
        return stream
    if isinstance(stream, bool) or not isinstance(stream, int):
        raise TypeError(f"{fn}: stream must be a string alias, a CuPy stream or an int handle, got "
                        f"{type(stream).__name__}")
    return cupy.cuda.ExternalStream(stream)


def tensor_to_cupy(tensor: Any, *, stream: Any = None) -> Any:
    """A ``cupy.ndarray`` holding ``tensor``'s values, ready to use on ``stream`` (see
    ``_cupy_stream`` for the accepted values).

    A CUDA tensor is shared without a copy: CuPy passes ``stream`` to ``__dlpack__``, which
    makes it wait for SpiralTorch's queued work on the tensor. A host tensor is copied to the
    current CUDA device on ``stream`` (CuPy arrays live on a GPU)."""
    cupy = _import("cupy", "cupy-cuda13x")
    t = _exportable(tensor, "tensor_to_cupy")
    with _cupy_stream(cupy, stream, "tensor_to_cupy"):
        if t.device.startswith("cuda"):
            return cupy.from_dlpack(t)
        import numpy as np

        return cupy.asarray(np.from_dlpack(t))


def cupy_to_tensor(array: Any, *, stream: Any = None) -> Any:
    """A CUDA ``spiraltorch.Tensor`` sharing a ``cupy.ndarray``'s memory. ``stream`` names the
    CuPy stream on which the array's pending work was queued (default: CuPy's current stream);
    SpiralTorch's current stream is made to wait for it before any kernel reads the result."""
    cupy = _import("cupy", "cupy-cuda13x")
    if not isinstance(array, cupy.ndarray):
        raise TypeError(f"cupy_to_tensor: expected a cupy.ndarray, got {type(array).__name__}")
    with _cupy_stream(cupy, stream, "cupy_to_tensor"):
        return _core.from_dlpack(array)
