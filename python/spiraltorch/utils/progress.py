"""Terminal progress for long work, one helper for every caller (``nn.fit``, the trainers, the
model-zoo recipes, dataset preparation, ``spiral-run``'s ranks).

``progress(total, desc=..., unit="samples")`` returns a bar: a ``tqdm`` bar when ``tqdm`` is
installed, else a plain one-line counter::

    epoch 1: 3840/60000 samples   6% [0:02 < ETA 0:31, 1795.3 samples/s, loss=0.6123]

Both show the count, the estimated time left (when the total is known) and the throughput.
Nothing is printed (the bar is a no-op) when

* the caller passes ``enable=False`` (``progress=False`` in ``nn.fit`` and the trainers),
* the stream (``file``, default ``sys.stderr``) is not a terminal,
* ``SPIRALTORCH_PROGRESS=0`` is set, or
* this process is not rank 0 of a multi-process job (``RANK`` set and not ``"0"``).

``SPIRALTORCH_PROGRESS=1`` shows the bar on a stream that is not a terminal too; ``spiral-run``
sets it for its ranks when its own stderr is a terminal (their streams are pipes to mpirun), so
rank 0 shows one bar.

``track(iterable, ...)`` yields the items of ``iterable`` and advances the bar by
``count(item)`` (default 1) once each item has been handled.
"""

from __future__ import annotations

import os
import sys
import time
from typing import Any, Callable, Iterable, Iterator, Optional, TextIO, TypeVar

__all__ = ["ENV", "Progress", "batch_samples", "enabled", "epoch_samples", "format_seconds", "progress", "track"]

#: The environment variable: "0" switches every bar off, "1" shows bars on non-terminal streams.
ENV = "SPIRALTORCH_PROGRESS"

_OFF = {"0", "false", "off", "no"}
_ON = {"1", "true", "on", "yes", "force"}

T = TypeVar("T")


def enabled(enable: Any = True, file: Optional[TextIO] = None) -> bool:
    """Whether a bar asked for with ``enable`` on ``file`` (default ``sys.stderr``) is shown."""
    if not enable:
        return False
    env = os.environ.get(ENV, "").strip().lower()
    if env in _OFF:
        return False
    if os.environ.get("RANK", "0").strip() not in ("", "0"):
        return False
    if env in _ON:
        return True
    stream = sys.stderr if file is None else file
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError, OSError):  # no isatty, or a closed stream
        return False


def format_seconds(seconds: float) -> str:
    """``M:SS`` (``H:MM:SS`` from an hour on); ``?`` for an unknown or infinite time."""
    if seconds is None or seconds != seconds or seconds in (float("inf"), float("-inf")) or seconds < 0:
        return "?"
    s = int(round(seconds))
    h, rem = divmod(s, 3600)
    m, s = divmod(rem, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m}:{s:02d}"


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


class _Counter:
    """The plain one-line counter: rewrites one line (``\\r``) at most every ``min_interval`` s."""

    def __init__(self, total: Optional[int], desc: str, unit: str, file: TextIO, leave: bool,
                 min_interval: float, initial: int = 0) -> None:
        self.total, self.desc, self.unit, self.file, self.leave = total, desc, unit, file, leave
        self.min_interval = min_interval
        self.n = initial
        self.postfix: dict = {}
        self.start = time.perf_counter()
        self._last_draw = -float("inf")
        self._width = 0
        self._draw()

    def line(self) -> str:
        elapsed = time.perf_counter() - self.start
        rate = self.n / elapsed if elapsed > 0 else 0.0
        head = f"{self.desc}: " if self.desc else ""
        post = "".join(f", {k}={_fmt(v)}" for k, v in self.postfix.items())
        if self.total:
            pct = 100.0 * self.n / self.total
            eta = (self.total - self.n) / rate if rate > 0 else None
            return (f"{head}{self.n}/{self.total} {self.unit} {pct:3.0f}% [{format_seconds(elapsed)} < ETA "
                    f"{format_seconds(eta) if eta is not None else '?'}, {rate:.1f} {self.unit}/s{post}]")
        return f"{head}{self.n} {self.unit} [{format_seconds(elapsed)}, {rate:.1f} {self.unit}/s{post}]"

    def _draw(self, force: bool = False) -> None:
        now = time.perf_counter()
        if not force and now - self._last_draw < self.min_interval:
            return
        self._last_draw = now
        text = self.line()
        pad = max(0, self._width - len(text))
        self.file.write("\r" + text + " " * pad)
        self.file.flush()
        self._width = len(text)

    def update(self, n: int = 1) -> None:
        self.n += n
        self._draw(force=self.total is not None and self.n >= self.total)

    def set_postfix(self, **metrics: Any) -> None:
        self.postfix = metrics
        self._draw()

    def print(self, text: str, out: TextIO) -> None:
        self.file.write("\r" + " " * self._width + "\r")
        self.file.flush()
        self._width = 0
        print(text, file=out, flush=True)
        self._draw(force=True)

    def close(self) -> None:
        if self.leave:
            self._draw(force=True)
            self.file.write("\n")
        else:
            self.file.write("\r" + " " * self._width + "\r")
        self.file.flush()


class _Tqdm:
    """A tqdm bar behind the same four methods."""

    def __init__(self, tqdm: Any, total: Optional[int], desc: str, unit: str, file: TextIO, leave: bool,
                 min_interval: float, initial: int = 0) -> None:
        self.bar = tqdm(total=total, desc=desc or None, unit=unit, file=file, leave=leave, mininterval=min_interval,
                        dynamic_ncols=True, initial=initial)

    def update(self, n: int = 1) -> None:
        self.bar.update(n)

    def set_postfix(self, **metrics: Any) -> None:
        self.bar.set_postfix({k: _fmt(v) for k, v in metrics.items()}, refresh=False)

    def print(self, text: str, out: TextIO) -> None:
        self.bar.write(text, file=out)

    def close(self) -> None:
        self.bar.close()


class Progress:
    """One bar (see the module docs); use it as a context manager or call ``close()``.

    ``update(n)`` advances by ``n`` units, ``set_postfix(loss=...)`` shows metrics after the rate,
    ``print(...)`` prints a line above the bar,
    ``n`` is the count so far (also counted while the bar is not shown), ``shown`` whether
    anything is printed, ``backend`` ``"tqdm"``, ``"counter"`` or ``None``."""

    def __init__(self, total: Optional[int] = None, *, desc: str = "", unit: str = "samples", enable: Any = True,
                 file: Optional[TextIO] = None, leave: bool = False, min_interval: float = 0.1,
                 initial: int = 0) -> None:
        self.total = None if total is None else int(total)
        self.n = int(initial)
        self._bar: Any = None
        self.backend: Optional[str] = None
        stream = sys.stderr if file is None else file
        if not enabled(enable, stream):
            return
        try:
            from tqdm import tqdm  # type: ignore
        except ImportError:
            tqdm = None
        if tqdm is not None:
            self._bar = _Tqdm(tqdm, self.total, desc, unit, stream, leave, min_interval, self.n)
            self.backend = "tqdm"
        else:
            self._bar = _Counter(self.total, desc, unit, stream, leave, min_interval, self.n)
            self.backend = "counter"

    @property
    def shown(self) -> bool:
        return self._bar is not None

    def update(self, n: int = 1) -> None:
        self.n += n
        if self._bar is not None:
            self._bar.update(n)

    def set_postfix(self, **metrics: Any) -> None:
        if self._bar is not None:
            self._bar.set_postfix(**metrics)

    def print(self, *parts: Any, file: Optional[TextIO] = None) -> None:
        """``print(*parts)`` (to ``file``, default ``sys.stdout``) without tearing the bar: the bar
        line is cleared first and drawn again below the text."""
        text = " ".join(str(p) for p in parts)
        out = sys.stdout if file is None else file
        if self._bar is None:
            print(text, file=out, flush=True)
        else:
            self._bar.print(text, out)

    def close(self) -> None:
        if self._bar is not None:
            bar, self._bar = self._bar, None
            bar.close()

    def __enter__(self) -> "Progress":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def batch_samples(x: Any) -> int:
    """Samples in a batch: the first dim of its input (the first tensor of a tuple, list or dict);
    1 for a scalar or anything without a shape."""
    if isinstance(x, dict):
        x = next(iter(x.values()), None)
    elif isinstance(x, (tuple, list)) and x and hasattr(x[0], "shape"):
        x = x[0]
    shape = getattr(x, "shape", None)
    try:
        return int(shape[0]) if shape is not None and len(shape) else 1
    except (TypeError, IndexError):
        return 1


def epoch_samples(loader: Any) -> Optional[int]:
    """Samples one pass over ``loader`` yields, where that is known without iterating it: a
    ``DataLoader`` with a sized dataset or sampler (``drop_last`` honoured), or a list/tuple of
    (input, target) batches; None otherwise (a bar then shows no ETA)."""
    if isinstance(loader, (list, tuple)):
        try:
            return sum(batch_samples(b[0]) for b in loader)
        except (TypeError, IndexError, KeyError):
            return None
    bs = getattr(loader, "batch_size", None)
    if getattr(loader, "batch_sampler", None) is not None or not isinstance(bs, int) or bs <= 0:
        return None
    source = getattr(loader, "sampler", None)
    if source is None:
        source = getattr(loader, "dataset", None)
    try:
        n = len(source)  # type: ignore[arg-type]
    except TypeError:
        return None
    return n // bs * bs if getattr(loader, "drop_last", False) else n


def progress(total: Optional[int] = None, *, desc: str = "", unit: str = "samples", enable: Any = True,
             file: Optional[TextIO] = None, leave: bool = False, min_interval: float = 0.1) -> Progress:
    """A ``Progress`` bar of ``total`` units (None: unknown)."""
    return Progress(total, desc=desc, unit=unit, enable=enable, file=file, leave=leave, min_interval=min_interval)


def track(iterable: Iterable[T], total: Optional[int] = None, *, desc: str = "", unit: str = "it",
          count: Optional[Callable[[T], int]] = None, enable: Any = True, file: Optional[TextIO] = None,
          leave: bool = False, postfix: Optional[Callable[[], dict]] = None) -> Iterator[T]:
    """Yields the items of ``iterable`` and advances a bar by ``count(item)`` (1 by default) once
    the caller is done with each item; ``total`` defaults to ``len(iterable)`` when counting items.
    ``postfix()``, when given, supplies the metrics shown after each item. The bar closes when the
    loop ends, breaks or raises."""
    if total is None and count is None:
        try:
            total = len(iterable)  # type: ignore[arg-type]
        except TypeError:
            total = None
    bar = Progress(total, desc=desc, unit=unit, enable=enable, file=file, leave=leave)
    if not bar.shown:
        yield from iterable
        return
    try:
        for item in iterable:
            yield item
            bar.update(count(item) if count is not None else 1)
            if postfix is not None:
                bar.set_postfix(**postfix())
    finally:
        bar.close()
