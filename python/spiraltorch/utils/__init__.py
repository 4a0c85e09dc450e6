"""PyTorch's ``torch.utils`` spelling: ``spiraltorch.utils.data``."""

from . import data  # noqa: F401

__all__ = ["data"]
