"""Samplers with ``torch.utils.data``'s names and semantics: iterables of dataset indices (or,
for ``BatchSampler``, of index lists) that a ``DataLoader`` reads through ``sampler=`` or
``batch_sampler=``. Random orders come from spiraltorch's Philox generators (the global one
unless ``generator=`` is given), so a seeded generator reproduces them; they are not torch's
random streams."""

from __future__ import annotations

import bisect
import math
from typing import Any, Generic, Iterable, Iterator, List, Optional, Sequence, Sized, TypeVar

from .. import _core

__all__ = ["Sampler", "SequentialSampler", "RandomSampler", "SubsetRandomSampler", "WeightedRandomSampler",
           "BatchSampler"]

T_co = TypeVar("T_co", covariant=True)


def _positive_int(value: Any, who: str, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise _core.SpiralValueError(f"{who}: {name} should be a positive integer value, but got {name}={value!r}")
    return value


def _check_bool(value: Any, who: str, name: str) -> bool:
    if not isinstance(value, bool):
        raise TypeError(f"{who}: {name} should be a boolean value, but got {name}={value!r}")
    return value


class Sampler(Generic[T_co]):
    """Base of samplers: subclasses define ``__iter__`` (the indices of one epoch) and usually
    ``__len__``."""

    def __init__(self, data_source: Optional[Sized] = None) -> None:
        pass

    def __iter__(self) -> Iterator[T_co]:
        raise NotImplementedError(f"{type(self).__name__} must define __iter__")


class SequentialSampler(Sampler[int]):
    """Yields ``0, 1, ..., len(data_source) - 1``."""

    def __init__(self, data_source: Sized) -> None:
        self.data_source = data_source

    def __iter__(self) -> Iterator[int]:
        return iter(range(len(self.data_source)))

    def __len__(self) -> int:
        return len(self.data_source)


class RandomSampler(Sampler[int]):
    """Random indices of ``data_source``: a permutation (``num_samples`` beyond the length
    continues with fresh permutations), or with ``replacement`` ``num_samples`` independent uniform
    draws. ``num_samples`` defaults to ``len(data_source)``; each epoch draws anew from
    ``generator`` (or the global generator)."""

    def __init__(self, data_source: Sized, replacement: bool = False, num_samples: Optional[int] = None,
                 generator: Any = None) -> None:
        self.data_source = data_source
        self.replacement = _check_bool(replacement, "RandomSampler", "replacement")
        self._num_samples = num_samples
        self.generator = generator
        _positive_int(self.num_samples, "RandomSampler", "num_samples")

    @property
    def num_samples(self) -> int:
        """How many indices one epoch yields."""
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self) -> Iterator[int]:
        n = len(self.data_source)
        if self.replacement:
            draws = _core.randint(0, n, (self.num_samples,), generator=self.generator, dtype=_core.dtype.int64)
            return iter(int(i) for i in draws.tolist())
        order: List[int] = []
        while len(order) < self.num_samples:
            order.extend(_core.data.permutation(n, generator=self.generator))
        return iter(order[: self.num_samples])

    def __len__(self) -> int:
        return self.num_samples


class SubsetRandomSampler(Sampler[int]):
    """The given ``indices`` in a random order, drawn anew each epoch."""

    def __init__(self, indices: Sequence[int], generator: Any = None) -> None:
        self.indices = indices
        self.generator = generator

    def __iter__(self) -> Iterator[int]:
        return iter([self.indices[i] for i in _core.data.permutation(len(self.indices), generator=self.generator)])

    def __len__(self) -> int:
        return len(self.indices)


class WeightedRandomSampler(Sampler[int]):
    """``num_samples`` indices of ``range(len(weights))`` drawn with probability proportional to
    ``weights``: independently (``replacement=True``), or without replacement (each index at most
    once, as successive draws renormalised over the rest; weighted keys ``u ** (1 / w)``)."""

    def __init__(self, weights: Sequence[float], num_samples: int, replacement: bool = True,
                 generator: Any = None) -> None:
        _positive_int(num_samples, "WeightedRandomSampler", "num_samples")
        _check_bool(replacement, "WeightedRandomSampler", "replacement")
        w = weights.tolist() if isinstance(weights, _core.Tensor) else list(weights)
        if any(isinstance(x, (list, tuple)) for x in w):
            raise _core.ShapeError("WeightedRandomSampler: weights should be a 1d sequence")
        w = [float(x) for x in w]
        if not w or any(not math.isfinite(x) or x < 0 for x in w) or sum(w) <= 0:
            raise _core.SpiralValueError("WeightedRandomSampler: weights must be finite, non-negative and not all zero")
        if not replacement and num_samples > sum(1 for x in w if x > 0):
            raise _core.SpiralValueError(
                f"WeightedRandomSampler: cannot draw {num_samples} samples without replacement from "
                f"{sum(1 for x in w if x > 0)} non-zero weights")
        self.weights = w
        self.num_samples = num_samples
        self.replacement = replacement
        self.generator = generator

    def __iter__(self) -> Iterator[int]:
        u = _core.rand(self.num_samples if self.replacement else len(self.weights), generator=self.generator,
                       dtype=_core.dtype.float64).tolist()
        if self.replacement:
            cum, total = [], 0.0
            for x in self.weights:
                total += x
                cum.append(total)
            last = max(i for i, x in enumerate(self.weights) if x > 0)
            return iter(min(bisect.bisect_right(cum, r * total), last) for r in u)
        # Efraimidis-Spirakis: the largest keys u ** (1 / w) are a weighted sample without replacement.
        keys = [(r ** (1.0 / x) if x > 0 else -1.0, i) for i, (r, x) in enumerate(zip(u, self.weights))]
        keys.sort(reverse=True)
        return iter(i for _, i in keys[: self.num_samples])

    def __len__(self) -> int:
        return self.num_samples


class BatchSampler(Sampler[List[int]]):
    """Groups the indices of ``sampler`` into lists of ``batch_size``; the last, shorter one is
    dropped with ``drop_last``."""

    def __init__(self, sampler: Iterable[int], batch_size: int, drop_last: bool) -> None:
        self.sampler = sampler
        self.batch_size = _positive_int(batch_size, "BatchSampler", "batch_size")
        self.drop_last = _check_bool(drop_last, "BatchSampler", "drop_last")

    def __iter__(self) -> Iterator[List[int]]:
        batch: List[int] = []
        for idx in self.sampler:
            batch.append(idx)
            if len(batch) == self.batch_size:
                yield batch
                batch = []
        if batch and not self.drop_last:
            yield batch

    def __len__(self) -> int:
        n = len(self.sampler)  # type: ignore[arg-type]
        return n // self.batch_size if self.drop_last else (n + self.batch_size - 1) // self.batch_size
