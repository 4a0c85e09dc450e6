"""In-memory datasets of (input, target) tensor pairs and a ``DataLoader`` pipeline builder:
``shuffle(seed)``, fixed ``batched(n)`` or row-budget ``dynamic_batch_by_rows(max_rows)`` batches,
and ``prefetch(depth)`` (a background C++ thread assembles up to ``depth`` batches ahead): a view
of the native pipeline ``spiraltorch._core.data``.

Batches concatenate the samples' tensors along the first dim (an (R, C) sample contributes R
rows). Each ``DataLoader`` method returns a new loader; ``len(loader)`` is the number of samples.
Also the byte-level language-model helpers (``byte_lm_windows``...).
"""

from __future__ import annotations

import queue
import threading
from typing import Any, Callable, Iterable, Iterator, Sequence, TypeVar

from . import _core

__all__ = ["BYTE_LM_VOCAB", "DataLoader", "Dataset", "byte_lm_corpus_windows", "byte_lm_sample_stats",
           "byte_lm_windows", "from_vec", "interleave_replay_samples", "prefetch_iter"]

Pair = tuple[Any, Any]
T = TypeVar("T")


def _as_tensor(v: Any) -> Any:
    if isinstance(v, _core.Tensor):
        return v
    if hasattr(v, "__dlpack__"):
        return _core.from_dlpack(v)
    return _core.tensor(v)


def _as_pair(sample: Any, i: int, who: str = "dataset") -> Pair:
    """The (input, target) coercion of every sample SpiralTorch's loaders and sessions take: a
    2-sequence of tensors or anything ``st.tensor``/DLPack accepts, as two tensors."""
    items = list(sample) if not isinstance(sample, _core.Tensor) else [sample]
    if len(items) != 2:
        raise TypeError(f"{who}: sample {i} has {len(items)} values, expected (input, target)")
    return _as_tensor(items[0]), _as_tensor(items[1])


class _SampleCount:
    """Size queries shared by Dataset and DataLoader (both count samples, not batches)."""

    _samples: list[Pair]

    def __len__(self) -> int:
        return len(self._samples)

    def len(self) -> int:
        return len(self._samples)

    def is_empty(self) -> bool:
        return not self._samples


class Dataset(_SampleCount):
    """A list of (input, target) tensor pairs."""

    def __init__(self) -> None:
        self._samples: list[Pair] = []

    @staticmethod
    def from_samples(samples: Iterable[Any] | None = None) -> Dataset:
        ds = Dataset()
        for i, s in enumerate(samples or []):
            ds._samples.append(_as_pair(s, i))
        return ds

    def push(self, input: Any, target: Any) -> None:  # noqa: A002 - the seed's argument name
        self._samples.append((_as_tensor(input), _as_tensor(target)))

    def samples(self) -> list[Pair]:
        return list(self._samples)

    def __iter__(self) -> Iterator[Pair]:
        return iter(self.loader())

    def iter(self) -> Iterator[Pair]:
        return iter(self)

    def loader(self) -> DataLoader:
        return DataLoader(self._samples)


def _rows(t: Any) -> int:
    return int(t.shape[0]) if t.dim() > 0 else 1


class _Store:
    """The samples of a loader family and their native concatenation (built on first iteration,
    shared by every loader derived from the same samples)."""

    def __init__(self, samples: Sequence[Pair]) -> None:
        self.samples = list(samples)
        self._native: Any = None

    def native(self) -> Any:
        """``_core.data.TensorDataset`` of two fields (inputs, targets): each field is the samples'
        tensors concatenated along dim 0 (a 0-d tensor counts as one row), with row offsets."""
        if self._native is None:
            fields, offsets = [], []
            for k in (0, 1):
                parts = [s[k] if s[k].dim() > 0 else s[k].reshape(1) for s in self.samples]
                offs = [0]
                for p in parts:
                    offs.append(offs[-1] + int(p.shape[0]))
                fields.append(_core.cat(parts, 0))
                offsets.append(offs)
            self._native = _core.data.TensorDataset(fields, offsets)
        return self._native


class DataLoader(_SampleCount):
    """An immutable pipeline over samples; see the module docs. Iteration runs in the native
    pipeline (``spiraltorch._core.data``): batches are gathered in C++, prefetching on a C++ thread."""

    def __init__(self, samples: Sequence[Pair] | _Store, *, order: list[int] | None = None, batch: int = 1,
                 max_rows: int | None = None, depth: int = 0) -> None:
        self._store = samples if isinstance(samples, _Store) else _Store(samples)
        self._samples = self._store.samples
        self._order = order if order is not None else list(range(len(self._samples)))
        self._batch, self._max_rows, self._depth = batch, max_rows, depth

    def _with(self, **kw: Any) -> DataLoader:
        args = {"order": list(self._order), "batch": self._batch, "max_rows": self._max_rows, "depth": self._depth}
        args.update(kw)
        return DataLoader(self._store, **args)

    @staticmethod
    def from_samples(samples: Iterable[Any] | None = None) -> DataLoader:
        return Dataset.from_samples(samples).loader()

    def batch_size(self) -> int:
        return self._max_rows if self._max_rows is not None else self._batch

    def prefetch_depth(self) -> int:
        return self._depth

    def shuffle(self, seed: int) -> DataLoader:
        """One fixed permutation (Philox Fisher-Yates under ``seed``, ``_core.data.permutation``):
        iterating the returned loader twice gives the same order."""
        return self._with(order=_core.data.permutation(len(self._samples), seed=int(seed)))

    def batched(self, batch_size: int) -> DataLoader:
        """Consecutive groups of ``batch_size`` samples (the last one may be smaller)."""
        if not isinstance(batch_size, int) or batch_size <= 0:
            raise ValueError(f"DataLoader.batched: batch_size must be a positive int, got {batch_size!r}")
        return self._with(batch=batch_size, max_rows=None)

    def dynamic_batch_by_rows(self, max_rows: int) -> DataLoader:
        """Batches holding at most ``max_rows`` input rows (a larger sample forms a batch alone)."""
        if not isinstance(max_rows, int) or max_rows <= 0:
            raise ValueError(f"DataLoader.dynamic_batch_by_rows: max_rows must be a positive int, got {max_rows!r}")
        return self._with(max_rows=max_rows)

    def prefetch(self, depth: int) -> DataLoader:
        """Assemble up to ``depth`` batches ahead on a background C++ thread (0: on demand)."""
        if not isinstance(depth, int) or depth < 0:
            raise ValueError(f"DataLoader.prefetch: depth must be a non-negative int, got {depth!r}")
        return self._with(depth=depth)

    def __iter__(self) -> Iterator[Pair]:
        """(input, target) batches: the samples' tensors concatenated along dim 0."""
        if not self._samples:
            return iter(())
        loader = _core.data.DataLoader(self._store.native(), batch_size=self._batch, max_rows=self._max_rows,
                                       prefetch=self._depth, device=str(self._samples[0][0].device))
        return loader.epoch(order=self._order)

    def iter(self) -> Iterator[Pair]:
        return iter(self)


def prefetch_iter(make_items: Callable[[], Iterable[T]], depth: int) -> Iterator[T]:
    """Iterates ``make_items()`` on a background thread that stays up to ``depth`` items ahead of
    the consumer (a bounded queue); items come out in order, an exception raised while producing
    is re-raised in the consumer, and closing the iterator early stops the producer. ``depth=0``
    iterates in the caller's thread."""
    if not isinstance(depth, int) or isinstance(depth, bool) or depth < 0:
        raise ValueError(f"prefetch: depth must be a non-negative int, got {depth!r}")
    if depth == 0:
        yield from make_items()
        return
    q: queue.Queue = queue.Queue(maxsize=depth)
    stop = threading.Event()

    def work() -> None:
        try:
            for item in make_items():
                if stop.is_set():
                    return
                q.put(("ok", item))
            q.put(("end", None))
        except BaseException as exc:  # handed to the consumer, raised there
            q.put(("err", exc))

    thread = threading.Thread(target=work, name="spiraltorch-prefetch", daemon=True)
    thread.start()
    try:
        while True:
            kind, item = q.get()
            if kind == "end":
                return
            if kind == "err":
                raise item
            yield item
    finally:
        stop.set()
        while thread.is_alive():  # unblock a producer waiting on a full queue
            try:
                q.get_nowait()
            except queue.Empty:
                thread.join(0.01)


def from_vec(samples: Iterable[Any]) -> DataLoader:
    """A ``DataLoader`` over ``samples``, each an (input, target) pair of tensors or of anything
    ``st.tensor`` accepts (the original's name for ``DataLoader.from_samples``)."""
    return DataLoader.from_samples(samples)


BYTE_LM_VOCAB = 256


def byte_lm_windows(text: str | bytes, context: int) -> list[Pair]:
    """Next-byte training windows: for each start s, input = one-hot rows of bytes [s, s+context),
    target = one-hot rows of [s+1, s+context] (both context x 256, float32)."""
    if not isinstance(context, int) or context <= 0:
        raise ValueError(f"byte_lm_windows: context must be a positive int, got {context!r}")
    data = text.encode("utf-8") if isinstance(text, str) else bytes(text)
    if len(data) <= context:
        return []
    codes = _core.tensor(list(data), dtype=_core.dtype.int64)
    eye = _core.eye(BYTE_LM_VOCAB)
    out = []
    for s in range(len(data) - context):
        out.append((_core.index_select(eye, 0, codes[s:s + context]),
                    _core.index_select(eye, 0, codes[s + 1:s + context + 1])))
    return out


def byte_lm_corpus_windows(docs: Iterable[str | bytes], context: int) -> list[Pair]:
    """``byte_lm_windows`` of each document, concatenated (no window crosses documents)."""
    out: list[Pair] = []
    for d in docs:
        out += byte_lm_windows(d, context)
    return out


def byte_lm_sample_stats(samples: Sequence[Pair]) -> dict[str, int]:
    """Counts over (input, target) samples: ``{"samples": n, "active_rows": input rows summed,
    "target_rows": target rows summed}`` (a 0-d tensor counts as one row)."""
    return {"samples": len(samples), "active_rows": sum(_rows(x) for x, _ in samples),
            "target_rows": sum(_rows(y) for _, y in samples)}


def interleave_replay_samples(target: Sequence[Any], replay: Sequence[Any], *, target_per_replay: int = 1) -> list[Any]:
    """After every ``target_per_replay`` target samples, the next replay sample (cycling)."""
    if target_per_replay <= 0:
        raise ValueError(f"interleave_replay_samples: target_per_replay must be positive, got {target_per_replay}")
    if not replay:
        return list(target)
    out, r = [], 0
    for i, s in enumerate(target, 1):
        out.append(s)
        if i % target_per_replay == 0:
            out.append(replay[r % len(replay)])
            r += 1
    return out
