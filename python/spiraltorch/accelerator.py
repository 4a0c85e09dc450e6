"""PyTorch's ``torch.accelerator`` and ``torch.device`` spellings.

``accelerator.is_available()`` is True when a CUDA device is usable in this process;
``current_accelerator()`` returns that device (``device("cuda:0")``) or None. Nothing
reports a device that is not there.
"""

from __future__ import annotations

from typing import Optional, Union

from . import cuda as _cuda

__all__ = ["current_accelerator", "device", "device_count", "is_available"]


class device:
    """A device name: ``device("cuda:1")``, ``device("cuda", 1)``, ``device("cpu")``, ``device("wgpu")``.
    ``str(d)`` is what every SpiralTorch ``device=`` argument accepts; ``d.type`` and
    ``d.index`` split it."""

    __slots__ = ("type", "index")

    def __init__(self, spec: Union[str, "device"], index: Optional[int] = None) -> None:
        text = str(spec)
        kind, _, idx = text.partition(":")
        if kind not in ("cpu", "cuda", "wgpu"):
            raise ValueError(f"device: unknown device type {kind!r} (expected 'cpu', 'cuda' or 'wgpu')")
        if idx and index is not None:
            raise ValueError(f"device: index given twice in device({text!r}, {index})")
        self.type = kind
        self.index = int(idx) if idx else index
        if self.index is not None and self.index < 0:
            raise ValueError(f"device: index must be non-negative, got {self.index}")

    def __str__(self) -> str:
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __repr__(self) -> str:
        return f"device(type='{self.type}'" + ("" if self.index is None else f", index={self.index}") + ")"

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (device, str)):
            return str(self) == str(other)
        return NotImplemented

    def __hash__(self) -> int:
        return hash(str(self))


def is_available() -> bool:
    """True when an accelerator (a CUDA device) can run SpiralTorch tensors here."""
    return _cuda.is_available()


def device_count() -> int:
    """How many accelerator devices this process sees (0 without one)."""
    return _cuda.device_count() if _cuda.is_available() else 0


def current_accelerator() -> Optional[device]:
    """The current accelerator device, or None when there is none."""
    return device("cuda", _cuda.current_device()) if _cuda.is_available() else None
