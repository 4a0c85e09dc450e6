"""
The native data pipeline: datasets of tensors, shuffle, batching, prefetch.
"""

from collections.abc import Sequence

import spiraltorch._core


class TensorDataset:
    """
    Tensors whose rows along dim 0 form the samples; with offsets, sample i of field f is the row segment offsets[f][i]:offsets[f][i+1].
    """

    def __init__(self, tensors: Sequence[spiraltorch._core.Tensor], offsets: Sequence[Sequence[int]] | None = None) -> None:
        """
        A dataset of `tensors` (the fields); without offsets every field has one row per sample along dim 0 (equal first dims), with offsets[f] (n + 1 ascending row starts) sample i of field f spans several rows.
        """

    def __len__(self) -> int: ...

    @property
    def num_fields(self) -> int:
        """The number of tensors (fields) per sample."""

    def field(self, index: int) -> spiraltorch._core.Tensor:
        """The stored tensor of field `index`."""

    def rows(self, field: int, sample: int) -> int:
        """Rows sample `sample` has in `field`."""

    def gather(self, samples: Sequence[int], device: str = 'cpu') -> tuple:
        """
        The rows of `samples` of every field, concatenated along dim 0 (a tuple, one tensor per field).
        """

def permutation(n: int, *, seed: int | None = None, generator: spiraltorch._core.Generator | None = None) -> list[int]:
    """
    A random permutation of range(n) (Philox Fisher-Yates): fixed by `seed`, else drawn from `generator` (the global one when None), which then moves on.
    """

def distributed_shard(n: int, rank: int, world_size: int, *, shuffle: bool, seed: int, epoch: int, drop_last: bool) -> list[int]:
    """
    The sample indices rank `rank` of `world_size` reads in one epoch (see DistributedSampler).
    """

class EpochIterator:
    """One pass over a loader; prefetching runs on a C++ thread."""

    def __iter__(self) -> EpochIterator: ...

    def __next__(self) -> tuple[spiraltorch._core.Tensor, ...]:
        """
        The next batch: one tensor per field, rows of the batch's samples concatenated along dim 0.
        """

    def __len__(self) -> int: ...

    @property
    def produced(self) -> int:
        """Batches assembled so far (by the prefetch thread when prefetching)."""

    def close(self) -> None:
        """Stops the prefetch thread; the iterator then ends."""

class DataLoader:
    """
    Batches of a TensorDataset: shuffle, fixed or row-budget batches, prefetch.
    """

    def __init__(self, dataset: TensorDataset, *, batch_size: int = 1, max_rows: int | None = None, shuffle: bool = False, drop_last: bool = False, prefetch: int = 0, device: str = 'cpu') -> None:
        """
        batch_size samples per batch, or (max_rows) as many samples as fit a budget of rows; drop_last drops a short final batch; prefetch > 0 assembles that many batches ahead on a C++ thread, on `device`.
        """

    def __len__(self) -> int: ...

    def epoch(self, *, generator: spiraltorch._core.Generator | None = None, order: Sequence[int] | None = None) -> EpochIterator:
        """
        An EpochIterator: the natural order, a shuffled one drawn from `generator` (the global one when None), or the given `order` of sample indices.
        """
