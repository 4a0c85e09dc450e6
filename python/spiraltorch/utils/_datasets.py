"""Dataset combinators with ``torch.utils.data``'s names and semantics: ``Subset``,
``ConcatDataset``, ``IterableDataset`` and ``random_split``."""

from __future__ import annotations

import bisect
import math
import warnings
from typing import Any, Iterable, Iterator, List, Sequence, Union

from .. import _core

__all__ = ["Dataset", "IterableDataset", "Subset", "ConcatDataset", "random_split"]


class Dataset:
    """Base of map-style datasets: subclasses define ``__len__`` and ``__getitem__``;
    ``a + b`` is ``ConcatDataset([a, b])``."""

    def __getitem__(self, index: int) -> Any:
        raise NotImplementedError(f"{type(self).__name__} must define __getitem__")

    def __len__(self) -> int:
        raise NotImplementedError(f"{type(self).__name__} must define __len__")

    def __add__(self, other: "Dataset") -> "ConcatDataset":
        return ConcatDataset([self, other])


class IterableDataset(Dataset):
    """Base of iterable-style datasets: subclasses define ``__iter__``, which yields samples; a
    ``DataLoader`` batches them in the order they come (no sampler or shuffle)."""

    def __iter__(self) -> Iterator[Any]:
        raise NotImplementedError(f"{type(self).__name__} must define __iter__")

    def __add__(self, other: Any) -> Any:
        raise TypeError("IterableDataset: concatenate iterable datasets with itertools.chain, not +")


class Subset(Dataset):
    """The items of ``dataset`` at ``indices``: ``subset[i] == dataset[indices[i]]``."""

    def __init__(self, dataset: Any, indices: Sequence[int]) -> None:
        self.dataset = dataset
        self.indices = indices

    def __getitem__(self, idx: Union[int, List[int]]) -> Any:
        if isinstance(idx, list):
            return self.dataset[[self.indices[i] for i in idx]]
        return self.dataset[self.indices[idx]]

    def __len__(self) -> int:
        return len(self.indices)


class ConcatDataset(Dataset):
    """The datasets one after another: item ``i`` comes from the dataset whose cumulative length
    first exceeds ``i`` (``cumulative_sizes``). Negative indices count from the end."""

    def __init__(self, datasets: Iterable[Any]) -> None:
        self.datasets = list(datasets)
        if not self.datasets:
            raise _core.SpiralValueError("ConcatDataset: datasets should not be an empty iterable")
        for d in self.datasets:
            if isinstance(d, IterableDataset):
                raise _core.DtypeError("ConcatDataset: does not support IterableDataset")
        self.cumulative_sizes: List[int] = []
        total = 0
        for d in self.datasets:
            total += len(d)
            self.cumulative_sizes.append(total)

    def __len__(self) -> int:
        return self.cumulative_sizes[-1]

    def __getitem__(self, idx: int) -> Any:
        n = len(self)
        if idx < 0:
            if -idx > n:
                raise _core.SpiralValueError(
                    f"ConcatDataset: absolute value of index {idx} should not exceed dataset length {n}")
            idx += n
        if idx >= n:
            raise IndexError(f"ConcatDataset: index {idx} is out of range for length {n}")
        which = bisect.bisect_right(self.cumulative_sizes, idx)
        start = self.cumulative_sizes[which - 1] if which > 0 else 0
        return self.datasets[which][idx - start]


def random_split(dataset: Any, lengths: Sequence[Union[int, float]], generator: Any = None) -> List[Subset]:
    """Splits ``dataset`` into non-overlapping ``Subset``s of the given lengths, over a random
    permutation drawn from ``generator`` (the global one when None), so a seeded generator gives
    the same split. ``lengths`` may be fractions summing to 1: each gets ``floor(n * f)`` items and
    the remainder is dealt one by one round-robin from the first split (torch's rule)."""
    n = len(dataset)
    lengths = list(lengths)
    total = sum(lengths)
    if math.isclose(total, 1) and total <= 1:
        sizes: List[int] = []
        for i, frac in enumerate(lengths):
            if frac < 0 or frac > 1:
                raise _core.SpiralValueError(f"random_split: fraction at index {i} is not between 0 and 1: {frac}")
            sizes.append(int(math.floor(n * frac)))
        for i in range(n - sum(sizes)):
            sizes[i % len(sizes)] += 1
        for i, size in enumerate(sizes):
            if size == 0:
                warnings.warn(f"random_split: length of split at index {i} is 0; this split will be empty",
                              stacklevel=2)
        lengths = sizes
    if any(isinstance(x, float) and not float(x).is_integer() for x in lengths) or any(x < 0 for x in lengths):
        raise _core.SpiralValueError(f"random_split: lengths must be non-negative integers or fractions summing to 1, "
                                     f"got {lengths}")
    lengths = [int(x) for x in lengths]
    if sum(lengths) != n:
        raise _core.SpiralValueError(
            f"random_split: sum of input lengths ({sum(lengths)}) does not equal the length of the dataset ({n})")
    order = _core.data.permutation(n, generator=generator)
    out: List[Subset] = []
    offset = 0
    for size in lengths:
        out.append(Subset(dataset, order[offset:offset + size]))
        offset += size
    return out
