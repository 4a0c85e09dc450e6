"""PyTorch's ``torch.utils.data`` names over ``spiraltorch.data``: ``DataLoader``,
``TensorDataset``, ``Dataset``, ``IterableDataset``, ``Subset``, ``ConcatDataset``,
``random_split``, the samplers (``Sampler``, ``SequentialSampler``, ``RandomSampler``,
``SubsetRandomSampler``, ``WeightedRandomSampler``, ``BatchSampler``, ``DistributedSampler``)
and ``default_collate``."""

from __future__ import annotations

from ...data import DataLoader, DistributedSampler, TensorDataset, default_collate
from .._datasets import ConcatDataset, Dataset, IterableDataset, Subset, random_split
from .._sampler import (BatchSampler, RandomSampler, Sampler, SequentialSampler, SubsetRandomSampler,
                       WeightedRandomSampler)

__all__ = ["BatchSampler", "ConcatDataset", "DataLoader", "Dataset", "DistributedSampler", "IterableDataset",
           "RandomSampler", "Sampler", "SequentialSampler", "Subset", "SubsetRandomSampler", "TensorDataset",
           "WeightedRandomSampler", "default_collate", "random_split"]
