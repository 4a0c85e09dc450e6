"""torchvision's ``datasets`` and ``transforms`` spellings for the data SpiralTorch reads
locally (``datasets.FashionMNIST`` from Debian's dataset-fashion-mnist; nothing is
downloaded)."""

from . import datasets, transforms  # noqa: F401

__all__ = ["datasets", "transforms"]
