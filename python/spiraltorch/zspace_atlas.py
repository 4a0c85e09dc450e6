"""Atlas adapters: JSONL traces and trainer events into ``telemetry.AtlasRoute`` summaries.

Each trace event that carries metrics becomes one ``telemetry.AtlasFrame`` at the event's timestamp
(its notes kept), so the route's districts group the metrics by their root token
(``trainer.*``/``desire.*`` -> Concourse, ``z*``/``geometry.*``/``realgrad.*`` -> Substrate,
``session.*``/``canvas.*`` -> Surface, see ``telemetry``).
"""

from __future__ import annotations

import os
from typing import Any, Iterable, Mapping, Sequence

from . import _core
from .telemetry import AtlasFrame, AtlasMetric, AtlasRoute
from .zspace_trace import Trace, TraceEvent, _as_trace, _pyplot, _save_lines

__all__ = ["event_to_atlas_frame", "plot_atlas_route", "trace_atlas_summary", "trace_to_atlas_route",
           "trainer_events_to_atlas_route"]


def event_to_atlas_frame(event: TraceEvent | Mapping[str, Any]) -> AtlasFrame | None:
    """The frame of one trace event: its metrics (non-finite ones dropped, as AtlasFrame does) and
    notes at its timestamp; None when the event has neither metrics nor notes."""
    e = event if isinstance(event, TraceEvent) else TraceEvent.from_dict(event)
    metrics = [AtlasMetric(k, v) for k, v in e.metrics.items() if v == v and abs(v) != float("inf")]
    if not metrics and not e.notes:
        return None
    return AtlasFrame(e.timestamp, metrics, e.notes)


def trace_to_atlas_route(trace: Trace | str | os.PathLike[str] | Iterable[Any], bound: int = 0,
                         event: str | None = "step", route: AtlasRoute | None = None) -> AtlasRoute:
    """Pushes one frame per ``event`` event (every event when None) of ``trace`` (a Trace, a path
    or events) into ``route`` (a new ``AtlasRoute`` when None), keeping the last ``bound`` frames
    (0 keeps all); returns the route."""
    if bound < 0:
        raise _core.SpiralValueError(f"trace_to_atlas_route: bound must be >= 0, got {bound}")
    t = _as_trace(trace)
    route = AtlasRoute() if route is None else route
    for e in t.events:
        if event is None or e.event == event:
            frame = event_to_atlas_frame(e)
            if frame is not None:
                route.push_bounded(frame, bound)
    return route


def trainer_events_to_atlas_route(events: Trace | str | os.PathLike[str] | Iterable[Any], bound: int = 0,
                                  per: str = "epoch") -> AtlasRoute:
    """A route of a trainer trace: one frame per ``epoch`` event (``per="epoch"``, the default), per
    ``step`` (``per="step"``) or both with ``eval`` (``per="all"``)."""
    if per not in ("epoch", "step", "all"):
        raise _core.SpiralValueError(f"trainer_events_to_atlas_route: per must be 'epoch', 'step' or 'all', got {per!r}")
    if per == "all":
        t = _as_trace(events)
        return trace_to_atlas_route(Trace([e for e in t.events if e.event in ("step", "epoch", "eval")]), bound,
                                    event=None)
    return trace_to_atlas_route(events, bound, event=per)


def trace_atlas_summary(trace: Trace | str | os.PathLike[str] | Iterable[Any], bound: int = 0,
                        event: str | None = "step") -> dict[str, Any]:
    """``trace_to_atlas_route(trace, bound, event).summary()``: frames, districts and their focus metrics."""
    return trace_to_atlas_route(trace, bound, event).summary()


def plot_atlas_route(route: AtlasRoute, path: str | os.PathLike[str], districts: Sequence[str] | None = None) -> str:
    """Plots each district's per-frame mean metric value against the frame timestamp (relative to the
    first frame), writes a PNG to ``path`` and returns it. Needs matplotlib (``ImportError`` saying
    ``pip install matplotlib`` when missing)."""
    if route.is_empty:
        raise _core.SpiralValueError("plot_atlas_route: the route has no frames")
    series: dict[str, list[tuple[float, float]]] = {}
    frames = route.frames
    t0 = frames[0].timestamp
    for f in frames:
        for d in f.districts():
            if districts is None or d["name"] in districts:
                series.setdefault(d["name"], []).append((f.timestamp - t0, d["mean"]))
    if not series:
        raise _core.SpiralValueError(f"plot_atlas_route: none of the districts {list(districts or [])!r} appear")
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(6, 3.2))
    try:
        for name, pts in series.items():
            ax.plot(*zip(*pts), marker=".", label=name)
        return _save_lines(fig, ax, path, "seconds since the first frame", "district mean")
    finally:
        plt.close(fig)
