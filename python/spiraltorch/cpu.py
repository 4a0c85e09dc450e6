"""``spiraltorch.cpu``: host memory held by CPU tensors, with the same calls as
``spiraltorch.cuda``'s allocator statistics.

The counts cover every storage SpiralTorch allocates on the CPU (tensors, gradients,
optimizer state, autograd's saved tensors); memory wrapped from NumPy or DLPack belongs to
its producer and is not counted."""

from __future__ import annotations

from . import _core

__all__ = ["memory_allocated", "max_memory_allocated", "reset_peak_memory_stats", "memory_cached", "empty_cache"]


def memory_allocated() -> int:
    """Bytes currently held by live CPU storages."""
    return _core._cpu_memory_allocated()


def max_memory_allocated() -> int:
    """Peak of ``memory_allocated()`` since start or the last ``reset_peak_memory_stats()``."""
    return _core._cpu_max_memory_allocated()


def reset_peak_memory_stats() -> None:
    """Restarts the peak at the current ``memory_allocated()``."""
    _core._cpu_reset_peak_memory_stats()


def memory_cached() -> int:
    """Bytes of freed large blocks kept for reuse (not counted in ``memory_allocated``)."""
    return _core._cpu_memory_cached()


def empty_cache() -> int:
    """Returns the cached blocks to the system; gives the bytes released."""
    return _core._cpu_empty_cache()
