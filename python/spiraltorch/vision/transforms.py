"""Image transforms (torchvision's names)."""

from __future__ import annotations

from typing import Any

from .. import _core

__all__ = ["ToTensor"]


class ToTensor:
    """Converts a ``(H, W)`` or ``(H, W, C)`` uint8 image (a tensor or NumPy array) into a
    float32 ``(C, H, W)`` tensor scaled to [0, 1], like torchvision's ToTensor."""

    def __call__(self, image: Any) -> Any:
        t = image if isinstance(image, _core.Tensor) else _core.tensor(image)
        if t.dim() == 2:
            t = t.unsqueeze(0)
        elif t.dim() == 3:
            t = t.permute(2, 0, 1)
        else:
            raise _core.ShapeError(f"ToTensor: expected an (H, W) or (H, W, C) image, got shape {tuple(t.shape)}")
        if t.dtype == _core.dtype.uint8:
            return t.float() / 255.0
        return t.float()

    def __repr__(self) -> str:
        return "ToTensor()"
