"""PyTorch's ``torch.utils.data`` names over ``spiraltorch.data``: ``DataLoader``,
``TensorDataset``, ``Dataset`` and ``default_collate``."""

from __future__ import annotations

from typing import Any

from ..data import DataLoader, TensorDataset, default_collate

__all__ = ["DataLoader", "Dataset", "TensorDataset", "default_collate"]


class Dataset:
    """Base of map-style datasets: subclasses define ``__len__`` and ``__getitem__``."""

    def __getitem__(self, index: int) -> Any:
        raise NotImplementedError(f"{type(self).__name__} must define __getitem__")

    def __len__(self) -> int:
        raise NotImplementedError(f"{type(self).__name__} must define __len__")
