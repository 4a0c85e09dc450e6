"""JSONL traces of training runs: load, summarise, compare run-to-run, plot.

Trainers and sessions write the traces in C++ as they run (``AmegagradSession(..., trace_path=...)``,
``nn.ModuleTrainer.set_trace(path)``, or a ``TraceWriter`` of your own); this module reads them.

Schema (version 1; the full text is ``docs/traces.md``). One JSON object per line::

    {"schema": "spiraltorch.trace", "version": 1, "event": "step", "source": "AmegagradSession",
     "timestamp": 1764792000.25, "step": 3, "epoch": 1,
     "metrics": {"hypergrad.l2": 0.12, "zspace.loss": 0.27}, "config": {...}, "notes": ["..."]}

``schema``, ``version``, ``event``, ``source`` and ``timestamp`` are always present; ``step``, ``epoch``,
``metrics`` (name -> number, ``null`` for a non-finite value, read back as NaN), ``config`` and ``notes``
when they apply. Events: ``run_start`` (``config``: the writer's settings), ``step`` (one update),
``epoch`` (an epoch's aggregates), ``eval`` (an evaluation pass). A reader refuses lines of another
schema or of a newer version, naming the file and line.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Sequence

from . import _core
from ._atomic import atomic_write

__all__ = ["SCHEMA", "VERSION", "Trace", "TraceEvent", "TraceWriter", "compare", "load_trace", "plot_trace",
           "summarize"]

SCHEMA: str = _core._trace.SCHEMA
VERSION: int = _core._trace.VERSION
TraceWriter = _core._trace.TraceWriter


@dataclass
class TraceEvent:
    """One line of a trace."""

    event: str
    source: str = ""
    timestamp: float = 0.0
    step: int | None = None
    epoch: int | None = None
    metrics: dict[str, float] = field(default_factory=dict)
    config: dict[str, float] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any], where: str = "event") -> TraceEvent:
        """Validates one decoded line (schema, version, field types) and builds the event;
        ``SpiralValueError`` naming ``where`` when it does not fit the schema."""
        if not isinstance(d, Mapping):
            raise _core.SpiralValueError(f"{where}: expected a JSON object, got {type(d).__name__}")
        if d.get("schema") != SCHEMA:
            raise _core.SpiralValueError(f"{where}: schema is {d.get('schema')!r}, expected {SCHEMA!r}")
        version = d.get("version")
        if not isinstance(version, int) or isinstance(version, bool) or version < 1:
            raise _core.SpiralValueError(f"{where}: version must be a positive int, got {version!r}")
        if version > VERSION:
            raise _core.SpiralValueError(f"{where}: version {version} is newer than this reader's {VERSION}")
        event = d.get("event")
        if not isinstance(event, str) or not event:
            raise _core.SpiralValueError(f"{where}: event must be a non-empty string, got {event!r}")

        def numbers(key: str) -> dict[str, float]:
            raw = d.get(key, {})
            if not isinstance(raw, Mapping):
                raise _core.SpiralValueError(f"{where}: {key} must be an object, got {type(raw).__name__}")
            out = {}
            for k, v in raw.items():
                if v is None:
                    out[str(k)] = math.nan
                elif isinstance(v, (int, float)) and not isinstance(v, bool):
                    out[str(k)] = float(v)
                else:
                    raise _core.SpiralValueError(f"{where}: {key}[{k!r}] must be a number or null, got {v!r}")
            return out

        def opt_int(key: str) -> int | None:
            v = d.get(key)
            if v is None:
                return None
            if not isinstance(v, int) or isinstance(v, bool):
                raise _core.SpiralValueError(f"{where}: {key} must be an int, got {v!r}")
            return v

        notes = d.get("notes", [])
        if not isinstance(notes, list) or not all(isinstance(n, str) for n in notes):
            raise _core.SpiralValueError(f"{where}: notes must be a list of strings")
        ts = d.get("timestamp", 0.0)
        if not isinstance(ts, (int, float)) or isinstance(ts, bool):
            raise _core.SpiralValueError(f"{where}: timestamp must be a number, got {ts!r}")
        return cls(event=event, source=str(d.get("source", "")), timestamp=float(ts), step=opt_int("step"),
                   epoch=opt_int("epoch"), metrics=numbers("metrics"), config=numbers("config"), notes=list(notes))

    def to_dict(self) -> dict[str, Any]:
        """The event as the schema's JSON object (non-finite metrics as None)."""
        d: dict[str, Any] = {"schema": SCHEMA, "version": VERSION, "event": self.event, "source": self.source,
                             "timestamp": self.timestamp}
        if self.step is not None:
            d["step"] = self.step
        if self.epoch is not None:
            d["epoch"] = self.epoch
        if self.metrics:
            d["metrics"] = {k: (v if math.isfinite(v) else None) for k, v in self.metrics.items()}
        if self.config:
            d["config"] = {k: (v if math.isfinite(v) else None) for k, v in self.config.items()}
        if self.notes:
            d["notes"] = list(self.notes)
        return d


class Trace:
    """The events of one trace file (or event list), in file order."""

    def __init__(self, events: Iterable[TraceEvent | Mapping[str, Any]], path: str | None = None) -> None:
        self.events: list[TraceEvent] = [e if isinstance(e, TraceEvent) else TraceEvent.from_dict(e, f"event {i}")
                                         for i, e in enumerate(events)]
        self.path = path

    def __len__(self) -> int:
        return len(self.events)

    def __repr__(self) -> str:
        return f"Trace(path={self.path!r}, events={len(self.events)}, sources={self.sources()})"

    def sources(self) -> list[str]:
        """The writers that appear, in order of first appearance."""
        return list(dict.fromkeys(e.source for e in self.events))

    def of(self, event: str) -> list[TraceEvent]:
        """The events named ``event`` ("step", "epoch", ...)."""
        return [e for e in self.events if e.event == event]

    def metric_names(self, event: str | None = "step") -> list[str]:
        """Metric names of the ``event`` events (all events when None), in order of first appearance."""
        names: dict[str, None] = {}
        for e in self.events:
            if event is None or e.event == event:
                names.update(dict.fromkeys(e.metrics))
        return list(names)

    def series(self, name: str, event: str = "step") -> list[tuple[int, float]]:
        """(x, value) for each ``event`` event carrying metric ``name``; x is the event's step, else
        its epoch, else its position among those events (from 1)."""
        out = []
        for i, e in enumerate(e for e in self.events if e.event == event):
            if name in e.metrics:
                x = e.step if e.step is not None else (e.epoch if e.epoch is not None else i + 1)
                out.append((x, e.metrics[name]))
        return out

    def config(self) -> dict[str, float]:
        """The config of the first ``run_start`` event ({} when there is none)."""
        starts = self.of("run_start")
        return dict(starts[0].config) if starts else {}

    def summary(self) -> dict[str, Any]:
        """``summarize(self)``."""
        return summarize(self)

    def to_atlas_route(self, bound: int = 0, event: str | None = "step") -> Any:
        """``zspace_atlas.trace_to_atlas_route(self, bound, event)``."""
        from .zspace_atlas import trace_to_atlas_route

        return trace_to_atlas_route(self, bound=bound, event=event)

    def plot(self, path: str | os.PathLike[str], metrics: Sequence[str] | None = None) -> str:
        """``plot_trace(self, path, metrics)``."""
        return plot_trace(self, path, metrics)


def load_trace(source: str | os.PathLike[str] | Iterable[str]) -> Trace:
    """Reads a JSONL trace from a path (or from an iterable of lines). Blank lines are skipped; a line
    that is not JSON or not of the schema raises ``SpiralValueError`` naming the file and line
    (a missing file raises ``FileNotFoundError``)."""
    if isinstance(source, (str, os.PathLike)):
        path = os.fspath(source)
        with open(path, encoding="utf-8") as f:
            lines = f.read().splitlines()
        label = path
    else:
        path, label, lines = None, "<lines>", list(source)
    events = []
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            d = json.loads(line)
        except json.JSONDecodeError as e:
            raise _core.SpiralValueError(f"load_trace: {label}:{n}: not JSON ({e.msg})") from None
        events.append(TraceEvent.from_dict(d, f"load_trace: {label}:{n}"))
    return Trace(events, path)


def _as_trace(x: Trace | str | os.PathLike[str] | Iterable[Any]) -> Trace:
    if isinstance(x, Trace):
        return x
    if isinstance(x, (str, os.PathLike)):
        return load_trace(x)
    return Trace(list(x))


def _stats(values: list[float]) -> dict[str, float]:
    finite = [v for v in values if math.isfinite(v)]
    if not finite:
        return {"count": len(values), "finite": 0, "first": math.nan, "last": math.nan, "min": math.nan,
                "max": math.nan, "mean": math.nan, "delta": math.nan}
    return {"count": len(values), "finite": len(finite), "first": finite[0], "last": finite[-1], "min": min(finite),
            "max": max(finite), "mean": sum(finite) / len(finite), "delta": finite[-1] - finite[0]}


def summarize(trace: Trace | str | os.PathLike[str] | Iterable[Any], event: str = "step") -> dict[str, Any]:
    """What a trace says: ``{"events": {name: count}, "sources": [...], "steps": number of ``event``
    events, "duration": last - first timestamp (seconds), "config": the run_start config, "metrics":
    {name: {count, finite, first, last, min, max, mean, delta}}}`` where each metric's statistics are
    over its finite values in the ``event`` events (first/last: the first and last finite value)."""
    t = _as_trace(trace)
    counts: dict[str, int] = {}
    for e in t.events:
        counts[e.event] = counts.get(e.event, 0) + 1
    times = [e.timestamp for e in t.events if e.timestamp > 0]
    metrics = {name: _stats([v for _, v in t.series(name, event)]) for name in t.metric_names(event)}
    return {"events": counts, "sources": t.sources(), "steps": counts.get(event, 0),
            "duration": (max(times) - min(times)) if times else 0.0, "config": t.config(), "metrics": metrics}


def compare(a: Trace | str | os.PathLike[str] | Iterable[Any], b: Trace | str | os.PathLike[str] | Iterable[Any],
            event: str = "step") -> dict[str, Any]:
    """Run-to-run deltas of two traces: for each metric in both, ``{"a": a's last, "b": b's last,
    "delta": b - a, "relative": (b - a) / |a| (None when a is 0), "mean_delta": b's mean - a's mean,
    "min_delta": b's min - a's min}``; plus ``"steps": (a's, b's)``, ``"only_in_a"``/``"only_in_b"``
    (metric names) and ``"config_changes"`` ({name: (a, b)} for run_start settings that differ)."""
    sa, sb = summarize(a, event), summarize(b, event)
    ma, mb = sa["metrics"], sb["metrics"]
    metrics = {}
    for name in (n for n in ma if n in mb):
        x, y = ma[name], mb[name]
        delta = y["last"] - x["last"]
        metrics[name] = {"a": x["last"], "b": y["last"], "delta": delta,
                         "relative": delta / abs(x["last"]) if x["last"] not in (0.0,) and math.isfinite(x["last"])
                         else None,
                         "mean_delta": y["mean"] - x["mean"], "min_delta": y["min"] - x["min"]}
    ca, cb = sa["config"], sb["config"]
    changes = {k: (ca.get(k), cb.get(k)) for k in dict.fromkeys([*ca, *cb])
               if ca.get(k) != cb.get(k) and not (k in ca and k in cb and math.isnan(ca[k]) and math.isnan(cb[k]))}
    return {"steps": (sa["steps"], sb["steps"]), "metrics": metrics, "only_in_a": [n for n in ma if n not in mb],
            "only_in_b": [n for n in mb if n not in ma], "config_changes": changes}


def _pyplot() -> Any:
    """matplotlib.pyplot on the Agg backend, or ImportError naming the package to install."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as e:
        raise ImportError("plotting traces needs matplotlib, which is not installed: pip install matplotlib") from e
    return plt


def _save(fig: Any, path: str | os.PathLike[str]) -> str:
    """Saves a figure as PNG atomically (``spiraltorch._atomic``: fresh temporary, fsync, rename)."""
    return atomic_write(path, lambda f: fig.savefig(f, format="png", dpi=100))


def _save_lines(fig: Any, ax: Any, path: str | os.PathLike[str], xlabel: str, ylabel: str) -> str:
    """Labels, grids and keys a one-panel line plot, then saves it (``_save``)."""
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    return _save(fig, path)


def plot_trace(trace: Trace | str | os.PathLike[str], path: str | os.PathLike[str],
               metrics: Sequence[str] | None = None, event: str = "step") -> str:
    """Plots each metric of ``metrics`` (default: every metric of the ``event`` events, at most 8)
    against the step in its own panel and writes a PNG to ``path``; returns the path. Needs matplotlib
    (``ImportError`` saying ``pip install matplotlib`` when missing); ``SpiralValueError`` when there
    is nothing to plot or a named metric is absent."""
    t = _as_trace(trace)
    names = list(metrics) if metrics is not None else t.metric_names(event)[:8]
    missing = [n for n in names if not t.series(n, event)]
    if not names or missing:
        raise _core.SpiralValueError(f"plot_trace: nothing to plot (metrics {names!r}, absent: {missing!r})")
    plt = _pyplot()
    fig, axes = plt.subplots(len(names), 1, figsize=(6, 1.8 * len(names)), squeeze=False, sharex=True)
    try:
        for ax, name in zip(axes[:, 0], names):
            xs, ys = zip(*t.series(name, event))
            ax.plot(xs, ys, marker="." if len(xs) < 50 else None)
            ax.set_ylabel(name, fontsize=8)
            ax.grid(alpha=0.3)
        axes[-1, 0].set_xlabel(event)
        fig.suptitle(f"{', '.join(t.sources()) or 'trace'}: {len(t.of(event))} {event} events", fontsize=9)
        fig.tight_layout()
        return _save(fig, path)
    finally:
        plt.close(fig)
