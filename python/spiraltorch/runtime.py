"""Device descriptions and backend selection."""

from __future__ import annotations

from typing import Any, Dict

from . import _core

KNOWN_BACKENDS = ("cpu", "cuda", "wgpu", "hip", "mps", "auto")


def describe_device(backend: str = "cpu") -> Dict[str, Any]:
    """Describes a backend: ``backend``, ``device``, ``available`` and what is known of
    the hardware. ``"auto"`` describes the backend ``auto`` resolves to here (the CPU in
    this build) and records why. Unknown names raise ``ValueError``."""
    name = str(backend).lower()
    if name not in KNOWN_BACKENDS:
        raise _core.SpiralValueError(
            f"describe_device: unknown backend '{backend}' (known: {', '.join(KNOWN_BACKENDS)})"
        )
    if name == "cuda" or (name == "auto" and _core._cuda_is_available()):
        if not _core._cuda_is_available():
            return {"backend": "cuda", "device": "cuda", "available": False,
                    "reason": _core._cuda_unavailable_reason()}
        props = _core._cuda_properties(0)
        free, total = _core._cuda_mem_get_info(0)
        info = {
            "backend": "cuda",
            "device": "cuda:0",
            "available": True,
            "device_name": props["name"],
            "device_count": _core._cuda_device_count(),
            "compute_capability": f"{props['major']}.{props['minor']}",
            "total_memory": props["total_memory"],
            "free_memory": free,
            "multi_processor_count": props["multi_processor_count"],
            "l2_cache_size": props["l2_cache_size"],
            "driver_version": props["driver_version"],
            "runtime_version": props["runtime_version"],
            "blas": "cuBLAS",
            "allow_tf32": _core._cuda_allow_tf32(),
            "dtypes": ("float32", "float64", "bfloat16", "float16", "int64", "int32", "uint8", "bool"),
        }
        if name == "auto":
            info["requested"] = "auto"
        return info
    if name in ("cpu", "auto"):
        info = _core._describe_cpu()
        if name == "auto":
            info["requested"] = "auto"
            info["fallback_reason"] = ("CUDA is not available (" + _core._cuda_unavailable_reason()
                                       + "); using the CPU")
        return info
    return {
        "backend": name,
        "device": name,
        "available": False,
        "reason": f"the {name} backend is not compiled into this build",
    }


def _require_backend(backend: str, op: str) -> str:
    """Resolves a requested backend for ``op``: ``auto``/``cpu`` run on the CPU;
    anything else raises ``DeviceUnavailableError`` (or ``ValueError`` if unknown)."""
    name = str(backend).lower()
    if name in ("auto", "cpu"):
        return "cpu"
    if name == "cuda":
        if not _core._cuda_is_available():
            raise _core.DeviceUnavailableError(f"{op}: backend 'cuda' is not available: "
                                               + _core._cuda_unavailable_reason())
        return "cuda"
    if name not in KNOWN_BACKENDS:
        raise _core.SpiralValueError(f"{op}: unknown backend '{backend}'")
    raise _core.DeviceUnavailableError(f"{op}: backend '{name}' is not available in this build")
