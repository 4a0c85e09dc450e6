"""``spiraltorch.wgpu``: the WebGPU backend (wgpu-native: Vulkan, Metal, DX12).

Every function works in every build: without the wgpu backend, or on a machine where no adapter
answers, ``is_available()`` is False and ``unavailable_reason()`` says why; functions that need
the device raise ``DeviceUnavailableError``. Tensors live there as ``device="wgpu"``."""

from __future__ import annotations

from typing import Any, Dict

from . import _core

__all__ = ["is_built", "is_available", "unavailable_reason", "adapter_info", "synchronize", "memory_allocated",
           "max_memory_allocated", "memory_reserved", "reset_peak_memory_stats", "empty_cache",
           "pipelines_compiled", "dispatches", "host_reads"]


def is_built() -> bool:
    """True when this build has the wgpu backend (the webgpu.h headers were found at build time)."""
    return bool(_core._wgpu_is_built())


def is_available() -> bool:
    """True when libwgpu_native loaded and an adapter gave a device (created on the first call)."""
    return bool(_core._wgpu_is_available())


def unavailable_reason() -> str:
    """Why ``is_available()`` is False ("" when it is True)."""
    return str(_core._wgpu_unavailable_reason())


def adapter_info() -> Dict[str, Any]:
    """The adapter in use: ``name``, ``vendor``, ``architecture``, ``driver``, ``backend`` (vulkan,
    metal, dx12, ...), ``adapter_type`` (discrete-gpu, integrated-gpu, cpu), ``library`` (the
    libwgpu_native loaded), ``vendor_id``/``device_id``, ``limits`` (dict) and ``features``
    (list of WebGPU feature names). Raises ``DeviceUnavailableError`` when unavailable."""
    return dict(_core._wgpu_adapter_info())


def synchronize() -> None:
    """Submits the queued kernels and waits until the device has run them."""
    _core._wgpu_synchronize()


def memory_allocated() -> int:
    """Bytes the caching allocator has handed out to live tensors."""
    return int(_core._wgpu_memory_allocated())


def max_memory_allocated() -> int:
    """Peak of ``memory_allocated()`` since the start or the last ``reset_peak_memory_stats()``."""
    return int(_core._wgpu_max_memory_allocated())


def memory_reserved() -> int:
    """Bytes held in device buffers: in use plus cached for reuse."""
    return int(_core._wgpu_memory_reserved())


def reset_peak_memory_stats() -> None:
    """Sets the peak of ``max_memory_allocated()`` to the current allocation."""
    _core._wgpu_reset_peak_memory_stats()


def empty_cache() -> None:
    """Waits for the device, then destroys the cached buffers no tensor uses."""
    _core._wgpu_empty_cache()


def pipelines_compiled() -> int:
    """Compute pipelines compiled so far (one per kernel specialisation: op, dtypes, layout)."""
    return int(_core._wgpu_pipelines_compiled())


def dispatches() -> int:
    """Kernel dispatches recorded so far."""
    return int(_core._wgpu_dispatches())


def host_reads() -> int:
    """Device-to-host reads so far (``.item()``, ``.numpy()``, ``.to("cpu")``, checks that read a
    value). Each one submits the queued kernels and waits for the GPU to finish them, so the count
    per training step says how often a step stalls the queue. An optimizer's verdict fetched during the
    next step (which waits for that step's own work only) is not counted."""
    return int(_core._wgpu_host_reads())
