"""Datasets and a batching DataLoader over tensors (``spiraltorch.data``)."""

from __future__ import annotations

import gzip
import os
import struct
from typing import Any, Callable, Iterator, List, Optional, Sequence, Tuple

from . import _core
from .dataset import prefetch_iter

__all__ = ["DataLoader", "DistributedSampler", "FASHION_CLASSES", "TensorDataset", "default_collate", "find_fashion_mnist", "load_fashion_mnist"]

Tensor = _core.Tensor


class TensorDataset:
    """Rows of equally long tensors: item ``i`` is ``tuple(t[i] for t in tensors)``.

    A view of the native ``_core.data.TensorDataset`` (built on first use), which the
    ``DataLoader`` batches in C++."""

    def __init__(self, *tensors: Tensor) -> None:
        if not tensors:
            raise _core.SpiralValueError("TensorDataset: need at least one tensor")
        n = tensors[0].shape[0]
        for t in tensors:
            if t.shape[0] != n:
                raise _core.ShapeError(
                    f"TensorDataset: all tensors need the same first dim, got {[tuple(x.shape) for x in tensors]}"
                )
        self.tensors = tensors
        self._native: Any = None

    @property
    def native(self) -> Any:
        """The native dataset (``spiraltorch._core.data.TensorDataset``) over the same storage."""
        if self._native is None:
            self._native = _core.data.TensorDataset(list(self.tensors))
        return self._native

    def __len__(self) -> int:
        return self.tensors[0].shape[0]

    def __getitem__(self, index: int) -> Tuple[Tensor, ...]:
        return tuple(t[index] for t in self.tensors)

    def samples(self) -> List[Tuple[Tensor, ...]]:
        """Every item as a list: ``[dataset[i] for i in range(len(dataset))]`` (views of the rows)."""
        return [self[i] for i in range(len(self))]


def default_collate(items: Sequence[Any]) -> Any:
    """Stacks a list of samples into a batch like PyTorch's default collate: tensors are
    stacked along a new first dim, Python ints become an int64 tensor, floats a float32
    tensor, and tuples/lists/dicts are collated field by field."""
    first = items[0]
    if isinstance(first, Tensor):
        return _core.stack(list(items), 0)
    if isinstance(first, bool):
        return _core.tensor(list(items), dtype=_core.dtype.bool)
    if isinstance(first, int):
        return _core.tensor(list(items), dtype=_core.dtype.int64)
    if isinstance(first, float):
        return _core.tensor(list(items), dtype=_core.dtype.float32)
    if isinstance(first, dict):
        return {k: default_collate([it[k] for it in items]) for k in first}
    if isinstance(first, (tuple, list)):
        width = len(first)
        if any(len(it) != width for it in items):
            raise _core.ShapeError("default_collate: samples of a batch have different lengths")
        return [default_collate([it[i] for it in items]) for i in range(width)]
    raise _core.DtypeError(f"default_collate: cannot batch samples of type {type(first).__name__}")


class DistributedSampler:
    """PyTorch's ``DistributedSampler``: the share of a dataset's indices one rank reads per epoch.

    Each of ``num_replicas`` ranks gets ``ceil(n / num_replicas)`` indices (``floor`` with
    ``drop_last``; without it the order wraps around to fill the last ranks), taking positions
    ``rank, rank + num_replicas, ...`` of the order: ``0..n-1``, or with ``shuffle`` a permutation
    fixed by ``(seed, epoch)`` alone, so all ranks agree without communicating. Call
    ``set_epoch(e)`` before each epoch for a new order. ``num_replicas``/``rank`` default to the
    default process group's. Pass it to ``DataLoader(sampler=...)``. Computed in C++
    (``_core.data.distributed_shard``).
    """

    def __init__(self, dataset: Any, num_replicas: Optional[int] = None, rank: Optional[int] = None,
                 shuffle: bool = True, seed: int = 0, drop_last: bool = False) -> None:
        if num_replicas is None or rank is None:
            if not _core.distributed.is_initialized():
                raise _core.SpiralError("DistributedSampler: pass num_replicas and rank, or call "
                                        "spiraltorch.distributed.init_process_group first")
            num_replicas = _core.distributed.get_world_size() if num_replicas is None else num_replicas
            rank = _core.distributed.get_rank() if rank is None else rank
        self.dataset = dataset
        self.num_replicas, self.rank = int(num_replicas), int(rank)
        self.shuffle, self.seed, self.drop_last = bool(shuffle), int(seed), bool(drop_last)
        self.epoch = 0
        self._indices(0)  # checks the arguments now

    def _indices(self, epoch: int) -> List[int]:
        return _core.data.distributed_shard(len(self.dataset), self.rank, self.num_replicas, shuffle=self.shuffle,
                                            seed=self.seed, epoch=epoch, drop_last=self.drop_last)

    def set_epoch(self, epoch: int) -> None:
        """Selects the shuffled order of epoch ``epoch`` (every rank must pass the same value)."""
        if not isinstance(epoch, int) or epoch < 0:
            raise _core.SpiralValueError(f"DistributedSampler.set_epoch: epoch must be a non-negative int, got {epoch!r}")
        self.epoch = epoch

    def __iter__(self) -> Iterator[int]:
        return iter(self._indices(self.epoch))

    def __len__(self) -> int:
        n = len(self.dataset)
        return n // self.num_replicas if self.drop_last else -(-n // self.num_replicas)


class DataLoader:
    """Iterates a dataset in batches.

    A ``TensorDataset`` with the default collate runs in the native pipeline
    (``spiraltorch._core.data``): each batch is gathered into contiguous tensors in C++, and
    ``prefetch=N`` assembles up to N batches ahead on a C++ thread that never holds the GIL.
    ``device="cuda"`` delivers batches there through pinned host buffers and asynchronous
    copies issued ahead of use. Any other map-style dataset (``__len__`` and ``__getitem__``,
    like PyTorch's) is read item by item and batched with ``collate_fn`` (``default_collate``);
    its ``prefetch`` runs on a Python thread (``spiraltorch.dataset.prefetch_iter``), since it
    calls Python. ``shuffle`` draws a new permutation each epoch from ``generator`` or the
    global one (Philox, so the order does not depend on threads). ``sampler`` (an iterable of
    indices such as ``DistributedSampler``) gives the order instead; it excludes ``shuffle``.
    ``batch_sampler`` (an iterable of index lists such as ``BatchSampler``) gives whole batches
    and excludes ``batch_size``, ``shuffle``, ``sampler`` and ``drop_last``. An
    ``IterableDataset`` is read in its own order and cut into batches of ``batch_size``.

    PyTorch's worker options: ``num_workers=N`` (N > 0) loads ahead on one background thread,
    ``prefetch_factor * N`` batches deep (default 2 per worker) unless ``prefetch`` is given: the data
    is read concurrently with training as with PyTorch's worker processes, but in this process (no
    worker processes, so ``worker_init_fn`` is not taken). ``pin_memory``, ``persistent_workers``,
    ``timeout`` and ``multiprocessing_context`` are accepted and change nothing (batches for CUDA go
    through pinned buffers with ``device="cuda"``).
    """

    def __init__(self, dataset: Any, batch_size: int = 1, shuffle: bool = False, drop_last: bool = False,
                 collate_fn: Optional[Callable[[List[Any]], Any]] = None, generator: Any = None,
                 prefetch: Optional[int] = None, device: Any = None, sampler: Any = None, batch_sampler: Any = None,
                 num_workers: int = 0, pin_memory: bool = False, prefetch_factor: Optional[int] = None,
                 persistent_workers: bool = False, timeout: float = 0, multiprocessing_context: Any = None,
                 pin_memory_device: str = "") -> None:
        from .utils._datasets import IterableDataset

        if not isinstance(num_workers, int) or isinstance(num_workers, bool) or num_workers < 0:
            raise _core.SpiralValueError(f"DataLoader: num_workers must be a non-negative int, got {num_workers!r}")
        if prefetch_factor is not None and (num_workers == 0 or not isinstance(prefetch_factor, int)
                                            or prefetch_factor < 1):
            raise _core.SpiralValueError("DataLoader: prefetch_factor needs num_workers > 0 and must be a positive "
                                         f"int, got {prefetch_factor!r}")
        if prefetch is None:
            prefetch = (prefetch_factor or 2) * num_workers if num_workers else 0
        self.num_workers = num_workers
        self.pin_memory = bool(pin_memory)

        if sampler is not None and shuffle:
            raise _core.SpiralValueError("DataLoader: sampler and shuffle=True exclude each other (the sampler orders)")
        if batch_sampler is not None and (batch_size != 1 or shuffle or sampler is not None or drop_last):
            raise _core.SpiralValueError("DataLoader: batch_sampler option is mutually exclusive with batch_size, "
                                         "shuffle, sampler, and drop_last")
        if not isinstance(batch_size, int) or batch_size <= 0:
            raise _core.SpiralValueError(f"DataLoader: batch_size must be a positive int, got {batch_size!r}")
        if not isinstance(prefetch, int) or isinstance(prefetch, bool) or prefetch < 0:
            raise _core.SpiralValueError(f"DataLoader: prefetch must be a non-negative int, got {prefetch!r}")
        self._iterable = isinstance(dataset, IterableDataset)
        if self._iterable:
            if shuffle or sampler is not None or batch_sampler is not None:
                raise _core.SpiralValueError("DataLoader: an IterableDataset takes no shuffle, sampler or batch_sampler "
                                             "(it yields its own order)")
        elif not (hasattr(dataset, "__len__") and hasattr(dataset, "__getitem__")):
            raise _core.DtypeError(
                f"DataLoader: expected a map-style dataset (__len__ and __getitem__), got {type(dataset).__name__}")
        self.dataset = dataset
        self.batch_size = batch_size
        self.shuffle = shuffle
        self.drop_last = drop_last
        self.collate_fn = collate_fn or default_collate
        self.generator = generator
        self.prefetch = prefetch
        self.device = device
        self.sampler = sampler
        self.batch_sampler = batch_sampler

    def __len__(self) -> int:
        if self.batch_sampler is not None:
            return len(self.batch_sampler)
        n = len(self.sampler) if self.sampler is not None else len(self.dataset)
        return n // self.batch_size if self.drop_last else (n + self.batch_size - 1) // self.batch_size

    def _is_native(self) -> bool:
        return isinstance(self.dataset, TensorDataset) and self.collate_fn is default_collate

    def __iter__(self) -> Iterator[Any]:
        if self._iterable or self.batch_sampler is not None:
            if self.device is not None:
                raise _core.SpiralValueError("DataLoader: device= needs a TensorDataset with the default collate")
            if self._iterable:
                batches = self._iterable_batches
            else:
                plan = [list(b) for b in self.batch_sampler]  # drawn in the caller's thread, as _order()
                batches = lambda: self._sampled_batches(plan)  # noqa: E731
            return prefetch_iter(batches, self.prefetch) if self.prefetch else batches()
        if self._is_native():
            device = str(self.device) if self.device is not None else str(self.dataset.tensors[0].device)
            loader = _core.data.DataLoader(self.dataset.native, batch_size=self.batch_size, shuffle=self.shuffle,
                                           drop_last=self.drop_last, prefetch=self.prefetch, device=device)
            if self.sampler is not None:
                return loader.epoch(order=[int(i) for i in self.sampler])
            return loader.epoch(generator=self.generator)
        if self.device is not None:
            raise _core.SpiralValueError("DataLoader: device= needs a TensorDataset with the default collate")
        # The permutation is drawn here, in the caller's thread, so shuffling stays tied to the
        # caller's generator state; only batch assembly moves to the background thread.
        order = self._order()
        if self.prefetch:
            return prefetch_iter(lambda: self._batches(order), self.prefetch)
        return self._batches(order)

    def _order(self) -> List[int]:
        if self.sampler is not None:
            return [int(i) for i in self.sampler]
        n = len(self.dataset)
        return _core.data.permutation(n, generator=self.generator) if self.shuffle else list(range(n))

    def _iterable_batches(self) -> Iterator[Any]:
        batch: List[Any] = []
        for item in self.dataset:
            batch.append(item)
            if len(batch) == self.batch_size:
                yield self.collate_fn(batch)
                batch = []
        if batch and not self.drop_last:
            yield self.collate_fn(batch)

    def _sampled_batches(self, plan: List[List[int]]) -> Iterator[Any]:
        for indices in plan:
            yield self.collate_fn([self.dataset[int(i)] for i in indices])

    def _batches(self, order: List[int]) -> Iterator[Any]:
        n = len(order)
        for start in range(0, n, self.batch_size):
            stop = min(start + self.batch_size, n)
            if self.drop_last and stop - start < self.batch_size:
                break
            yield self.collate_fn([self.dataset[i] for i in order[start:stop]])


FASHION_MNIST_DIRS = ("/usr/share/fashion-mnist", "/usr/share/dataset-fashion-mnist", "/usr/share/datasets/fashion-mnist")
FASHION_CLASSES = ("T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt", "Sneaker", "Bag", "Ankle boot")


def _read_idx(path: str) -> Tuple[Tuple[int, ...], bytes]:
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        data = f.read()
    if len(data) < 4:
        raise _core.CheckpointError(f"read_idx: {path} is truncated")
    zero, dtype_code, ndim = struct.unpack(">HBB", data[:4])
    if zero != 0 or dtype_code != 0x08:
        raise _core.CheckpointError(f"read_idx: {path} is not an unsigned-byte IDX file")
    dims = struct.unpack(">" + "I" * ndim, data[4 : 4 + 4 * ndim])
    body = data[4 + 4 * ndim :]
    count = 1
    for d in dims:
        count *= d
    if len(body) != count:
        raise _core.CheckpointError(f"read_idx: {path} holds {len(body)} bytes, expected {count}")
    return dims, body


def find_fashion_mnist(root: Optional[str] = None) -> Optional[str]:
    """The directory holding the Fashion-MNIST IDX files (Debian's ``dataset-fashion-mnist``), or None."""
    candidates = [root] if root else [os.environ.get("SPIRALTORCH_FASHION_MNIST", "")] + list(FASHION_MNIST_DIRS)
    for d in candidates:
        if d and os.path.isdir(d):
            for dirpath, _, files in os.walk(d):
                if any(f.startswith("train-images-idx3-ubyte") for f in files):
                    return dirpath
    return None


def load_fashion_mnist(root: Optional[str] = None, split: str = "train", *, scaled: bool = True) -> Tuple[Tensor, Tensor]:
    """Loads Fashion-MNIST from its IDX files: ``(images, labels)`` with images
    ``(N, 1, 28, 28)`` (float32 scaled to [0, 1], or the raw uint8 with scaled=False) and
    labels int64 ``(N,)``."""
    base = find_fashion_mnist(root)
    if base is None:
        raise FileNotFoundError(
            "Fashion-MNIST not found: install Debian's dataset-fashion-mnist or set SPIRALTORCH_FASHION_MNIST"
        )
    prefix = "train" if split == "train" else "t10k"

    def pick(stem: str) -> str:
        for name in (stem, stem + ".gz"):
            p = os.path.join(base, name)
            if os.path.exists(p):
                return p
        raise FileNotFoundError(f"load_fashion_mnist: {stem} missing in {base}")

    dims, pixels = _read_idx(pick(f"{prefix}-images-idx3-ubyte"))
    ldims, labels = _read_idx(pick(f"{prefix}-labels-idx1-ubyte"))
    if dims[0] != ldims[0]:
        raise _core.CheckpointError("load_fashion_mnist: image and label counts differ")
    images = _bytes_to_tensor(pixels)
    images = images.reshape(dims[0], 1, dims[1], dims[2])
    if scaled:
        images = (images.float() / 255.0).contiguous()
    target = _bytes_to_tensor(labels).long()
    return images, target


def _bytes_to_tensor(raw: bytes) -> Tensor:
    """A uint8 tensor holding a copy of ``raw`` (through the buffer protocol, no Python loop)."""
    return _core.from_numpy(memoryview(bytearray(raw))).clone()
