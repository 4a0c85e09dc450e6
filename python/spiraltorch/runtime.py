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
    if name in ("cpu", "auto"):
        info = _core._describe_cpu()
        if name == "auto":
            info["requested"] = "auto"
            info["fallback_reason"] = "no GPU backend is compiled into this build; using the CPU"
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
    if name not in KNOWN_BACKENDS:
        raise _core.SpiralValueError(f"{op}: unknown backend '{backend}'")
    raise _core.DeviceUnavailableError(f"{op}: backend '{name}' is not available in this build")
