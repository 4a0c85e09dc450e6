"""Atlas telemetry: timestamped frames of named metrics, grouped into districts, and a bounded
route of frames that summarises how each district and metric moves over time.

A metric's district comes from its name's root token (``psi.total`` -> ``psi`` -> Concourse)
unless given explicitly: Surface (py, python, bindings, session, timeline, config, psychoid,
canvas), Concourse (trainer, maintainer, atlas, loop, chrono, policy, resonator, softlogic, psi,
desire), Substrate (tensor, backend, core, z, collapse, geometry, kdsl, realgrad), else Unknown.
"""

from __future__ import annotations

import math
import re
import time
from dataclasses import dataclass
from typing import Any, Iterable

__all__ = ["AtlasFragment", "AtlasFrame", "AtlasMetric", "AtlasRoute", "infer_district", "metric_root_token",
           "training_telemetry_projection"]

_DISTRICTS = {
    "Surface": {"py", "python", "bindings", "session", "timeline", "config", "psychoid", "canvas"},
    "Concourse": {"trainer", "maintainer", "atlas", "loop", "chrono", "policy", "resonator", "softlogic", "psi",
                  "desire"},
    "Substrate": {"tensor", "backend", "core", "z", "collapse", "geometry", "kdsl", "realgrad"},
}


def metric_root_token(name: str) -> str:
    """The first non-empty piece of ``name`` when split at any of the characters ``.:/-_``,
    lower-cased ("" if none)."""
    for piece in re.split(r"[.:/\-_]", name):
        if piece.strip():
            return piece.strip().lower()
    return ""


def infer_district(name: str) -> str:
    """The district a metric name belongs to by its root token."""
    root = metric_root_token(name)
    for district, roots in _DISTRICTS.items():
        if root in roots:
            return district
    return "Unknown"


@dataclass(frozen=True)
class AtlasMetric:
    """One named value of an ``AtlasFrame``; ``district`` None means the district follows from
    the name's root token (``resolved_district``)."""

    name: str
    value: float
    district: str | None = None

    def resolved_district(self) -> str:
        return self.district or infer_district(self.name)


class AtlasFragment:
    """Metrics and notes being collected for one frame."""

    def __init__(self, timestamp: float | None = None) -> None:
        self.timestamp = timestamp
        self._metrics: dict[tuple[str, str | None], AtlasMetric] = {}
        self._notes: list[str] = []

    def set_timestamp(self, timestamp: float) -> None:
        self.timestamp = timestamp

    @property
    def is_empty(self) -> bool:
        return not self._metrics and not self._notes

    def push_metric(self, name: str, value: float, district: str | None = None) -> None:
        """Adds (or replaces, by name and district) a metric; non-finite values are dropped."""
        value = float(value)
        if math.isfinite(value):
            self._metrics.pop((name, district), None)
            self._metrics[(name, district)] = AtlasMetric(name, value, district)

    def push_note(self, note: str) -> None:
        """Adds a note (trimmed; empty ones ignored; a repeated note moves to the end)."""
        note = str(note).strip()
        if note:
            if note in self._notes:
                self._notes.remove(note)
            self._notes.append(note)

    def metrics(self) -> list[AtlasMetric]:
        return list(self._metrics.values())

    def notes(self) -> list[str]:
        return list(self._notes)

    def to_frame(self) -> AtlasFrame | None:
        """The frame, or None when empty or without a non-negative timestamp."""
        if self.is_empty or self.timestamp is None or not self.timestamp >= 0:
            return None
        return AtlasFrame(float(self.timestamp), self.metrics(), self.notes())


class AtlasFrame:
    """Metrics and notes at one timestamp (float seconds)."""

    def __init__(self, timestamp: float, metrics: Iterable[AtlasMetric] = (), notes: Iterable[str] = ()) -> None:
        if not math.isfinite(timestamp):
            raise ValueError(f"AtlasFrame: timestamp must be finite, got {timestamp}")
        self.timestamp = float(timestamp)
        self._metrics = list(metrics)
        self._notes = list(notes)

    @staticmethod
    def from_metrics(metrics: dict[str, float], *, timestamp: float | None = None) -> AtlasFrame:
        """A frame holding ``metrics`` (non-finite values dropped) at ``timestamp`` (default: now)."""
        ts = time.time() if timestamp is None else float(timestamp)
        if not math.isfinite(ts):
            raise ValueError(f"AtlasFrame.from_metrics: timestamp must be finite, got {timestamp}")
        frag = AtlasFragment(ts)
        for name, value in metrics.items():
            frag.push_metric(str(name), value)
        return AtlasFrame(ts, frag.metrics(), frag.notes())

    def metric_value(self, name: str) -> float | None:
        for m in reversed(self._metrics):
            if m.name == name:
                return m.value
        return None

    def metrics(self) -> list[AtlasMetric]:
        return list(self._metrics)

    def metrics_with_prefix(self, prefix: str) -> list[AtlasMetric]:
        return sorted((m for m in self._metrics if m.name.startswith(prefix)), key=lambda m: m.name)

    def notes(self) -> list[str]:
        return list(self._notes)

    def districts(self) -> list[dict[str, Any]]:
        """Per district of this frame: mean of its metrics, span (max - min), the metrics."""
        groups: dict[str, list[AtlasMetric]] = {}
        for m in self._metrics:
            groups.setdefault(m.resolved_district(), []).append(m)
        out = []
        for name in sorted(groups):
            vals = [m.value for m in groups[name]]
            out.append({"name": name, "mean": sum(vals) / len(vals),
                        "span": max(vals) - min(vals) if len(vals) >= 2 else 0.0, "metrics": groups[name]})
        return out

    def __repr__(self) -> str:
        return f"AtlasFrame(timestamp={self.timestamp}, metrics={len(self._metrics)}, notes={len(self._notes)})"


def _stats(series: list[float]) -> dict[str, float]:
    n = len(series)
    mean = sum(series) / n
    return {"coverage": n, "mean": mean, "latest": series[-1], "min": min(series), "max": max(series),
            "delta": series[-1] - series[0], "std_dev": math.sqrt(sum((v - mean) ** 2 for v in series) / n)}


class AtlasRoute:
    """The last ``bound`` frames and what they say per district and per metric."""

    def __init__(self) -> None:
        self._frames: list[AtlasFrame] = []

    @property
    def is_empty(self) -> bool:
        return not self._frames

    def __len__(self) -> int:
        return len(self._frames)

    @property
    def frames(self) -> list[AtlasFrame]:
        """The kept frames, oldest first (a copy of the list)."""
        return list(self._frames)

    @property
    def latest_timestamp(self) -> float | None:
        return self._frames[-1].timestamp if self._frames else None

    def push_bounded(self, frame: AtlasFrame, bound: int) -> None:
        """Appends ``frame`` (ignored when its timestamp is negative) and keeps the last ``bound``
        frames (0 keeps all)."""
        if not isinstance(frame, AtlasFrame):
            raise TypeError(f"AtlasRoute.push_bounded: expected an AtlasFrame, got {type(frame).__name__}")
        if bound < 0:
            raise ValueError(f"AtlasRoute.push_bounded: bound must be >= 0, got {bound}")
        if frame.timestamp >= 0:
            self._frames.append(frame)
            if bound and len(self._frames) > bound:
                del self._frames[:len(self._frames) - bound]

    def _district_series(self) -> dict[str, list[float]]:
        series: dict[str, list[float]] = {}
        for f in self._frames:
            for d in f.districts():
                series.setdefault(d["name"], []).append(d["mean"])
        return series

    def _focus(self, district: str) -> list[dict[str, Any]]:
        per_metric: dict[str, list[float]] = {}
        for f in self._frames:
            for m in f.metrics():
                if m.resolved_district() == district:
                    per_metric.setdefault(m.name, []).append(m.value)
        focus = []
        for name, vals in per_metric.items():
            s = _stats(vals)
            focus.append({"name": name, "coverage": s["coverage"], "mean": s["mean"], "latest": s["latest"],
                          "delta": s["delta"], "momentum": s["delta"] / s["coverage"], "std_dev": s["std_dev"]})
        focus.sort(key=lambda x: (-x["coverage"], -x["latest"], x["name"]))
        return focus[:8]

    def summary(self) -> dict[str, Any]:
        """Frame count, latest timestamp, notes, and per district (most covered first): coverage,
        mean/latest/min/max/delta/std_dev of the per-frame district means, and the focus metrics."""
        notes: list[str] = []
        for f in self._frames:
            for n in f.notes():
                if n in notes:
                    notes.remove(n)
                notes.append(n)
        districts = []
        for name, series in self._district_series().items():
            districts.append({"name": name, **_stats(series), "focus": self._focus(name)})
        districts.sort(key=lambda d: (-d["coverage"], d["name"]))
        return {"frames": len(self._frames), "latest_timestamp": self.latest_timestamp,
                "total_notes": sum(len(f.notes()) for f in self._frames), "latest_notes": notes[-16:],
                "districts": districts}

    def perspective_for(self, district: str, focus_prefixes: Iterable[str] | None = None) -> dict[str, Any] | None:
        """How ``district`` moves (None if it never appeared): coverage, mean, latest, delta,
        momentum (delta / coverage), volatility (std dev), stability (1 / (1 + volatility)), the focus
        metrics (filtered to ``focus_prefixes`` when any match) and a one-line guidance."""
        series = self._district_series().get(district)
        if series is None:
            return None
        s = _stats(series)
        momentum = s["delta"] / s["coverage"]
        stability = 1.0 / (1.0 + abs(s["std_dev"]))
        focus = self._focus(district)
        prefixes = [p for p in (focus_prefixes or []) if p]
        if prefixes:
            chosen = [f for f in focus if any(f["name"].startswith(p) for p in prefixes)]
            focus = chosen or focus
        trend = "is steady" if abs(s["delta"]) <= 1e-6 else ("is rising" if s["delta"] > 0 else "is cooling")
        grade = "stable" if stability >= 0.75 else ("adaptive" if stability >= 0.45 else "turbulent")
        moving = [f"{f['name']} ({f['delta']:+.3f})" for f in focus if abs(f["delta"]) > 1e-6][:3]
        guidance = (f"{district} district {trend} with {grade} stability (momentum {momentum:+.3f}, volatility "
                    f"{s['std_dev']:.3f}); focus on {', '.join(moving) if moving else 'baseline flow'}.")
        return {"district": district, "coverage": s["coverage"], "mean": s["mean"], "latest": s["latest"],
                "delta": s["delta"], "momentum": momentum, "volatility": s["std_dev"], "stability": stability,
                "guidance": guidance, "focus": focus}

    def beacons(self, limit: int = 8) -> list[dict[str, Any]]:
        """The metrics that moved most (intensity = max(|delta|, |momentum|)), strongest first."""
        out = []
        for district in self._district_series():
            for f in self._focus(district):
                intensity = max(abs(f["delta"]), abs(f["momentum"]))
                if intensity > 1e-6:
                    trend = "rising" if f["delta"] > 0 else ("falling" if f["delta"] < 0 else "steady")
                    out.append({"district": district, "metric": f["name"], "coverage": f["coverage"],
                                "mean": f["mean"], "latest": f["latest"], "delta": f["delta"],
                                "momentum": f["momentum"], "volatility": f["std_dev"], "intensity": intensity,
                                "trend": trend,
                                "narrative": f"{f['name']} in {district} is {trend} ({f['delta']:+.3f} over "
                                             f"{f['coverage']} frames)"})
        out.sort(key=lambda b: (-b["intensity"], b["metric"]))
        return out[:max(0, limit)]


def training_telemetry_projection(*, step: float | None = None, max_steps: float | None = None,
                                  epoch: float | None = None, loss: float | None = None,
                                  previous_loss: float | None = None, grad_norm: float | None = None,
                                  learning_rate: float | None = None, desire_gain: float = 1.0,
                                  psi_gain: float = 1.0, learning_rate_scale: float = 10_000.0) -> dict[str, Any]:
    """Projects the scalars a training log has (step, max_steps, epoch, loss, previous_loss,
    grad_norm, learning_rate; any may be missing) onto Z-space partial metrics and telemetry.

    Heuristic (a labelled mapping, not a derived quantity; each metric appears only when its inputs
    are given):

    * ``speed = tanh(desire_gain * (previous_loss - loss) / max(|previous_loss|, 1e-12))`` -- how fast
      the loss falls (negative when it rises);
    * ``memory = 2 * step / max_steps - 1`` -- training progress mapped to [-1, 1];
    * ``stability = 1 / (1 + psi_gain * grad_norm)`` -- 1 for a vanishing gradient, towards 0 as it grows;
    * ``drs = tanh(learning_rate * learning_rate_scale)`` -- the step-size drive.

    Returns a dict: ``"observation"`` (the given scalars), ``"metrics"`` (the partial metrics),
    ``"telemetry"`` (``{"trainer.<name>": value}``: the scalars plus ``progress``, ``loss_delta`` and
    ``relative_improvement`` when defined) and ``"partial"`` (a ZSpacePartialBundle of both, origin
    ``"training_telemetry"``), ready for ``ZSpaceTrainer.step_partial`` or a
    ``ZSpaceInferencePipeline``. Negative or non-finite inputs where they make no sense (max_steps <= 0,
    step or epoch < 0, step > max_steps, grad_norm or learning_rate < 0, non-positive gains or scale)
    raise ``SpiralValueError`` naming the values."""
    from . import _core
    from .zspace import ZSpacePartialBundle

    op = "training_telemetry_projection"
    given = {k: v for k, v in (("step", step), ("max_steps", max_steps), ("epoch", epoch), ("loss", loss),
                               ("previous_loss", previous_loss), ("grad_norm", grad_norm),
                               ("learning_rate", learning_rate)) if v is not None}
    obs: dict[str, float] = {}
    for k, v in given.items():
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(float(v)):
            raise _core.SpiralValueError(f"{op}: {k} must be a finite number, got {v!r}")
        obs[k] = float(v)
    for k, v in (("desire_gain", desire_gain), ("psi_gain", psi_gain), ("learning_rate_scale", learning_rate_scale)):
        if not (isinstance(v, (int, float)) and math.isfinite(v) and v > 0):
            raise _core.SpiralValueError(f"{op}: {k} must be positive and finite, got {v!r}")
    for k in ("step", "epoch", "grad_norm", "learning_rate"):
        if obs.get(k, 0.0) < 0:
            raise _core.SpiralValueError(f"{op}: {k} must be >= 0, got {obs[k]}")
    if "max_steps" in obs and obs["max_steps"] <= 0:
        raise _core.SpiralValueError(f"{op}: max_steps must be > 0, got {obs['max_steps']}")
    if "step" in obs and "max_steps" in obs and obs["step"] > obs["max_steps"]:
        raise _core.SpiralValueError(f"{op}: step {obs['step']} exceeds max_steps {obs['max_steps']}")
    metrics: dict[str, float] = {}
    tele = {f"trainer.{k}": v for k, v in obs.items()}
    if "loss" in obs and "previous_loss" in obs:
        delta = obs["previous_loss"] - obs["loss"]
        rel = delta / max(abs(obs["previous_loss"]), 1e-12)
        metrics["speed"] = math.tanh(desire_gain * rel)
        tele.update({"trainer.loss_delta": delta, "trainer.relative_improvement": rel})
    if "step" in obs and "max_steps" in obs:
        progress = obs["step"] / obs["max_steps"]
        metrics["memory"] = 2.0 * progress - 1.0
        tele["trainer.progress"] = progress
    if "grad_norm" in obs:
        metrics["stability"] = 1.0 / (1.0 + psi_gain * obs["grad_norm"])
    if "learning_rate" in obs:
        metrics["drs"] = math.tanh(obs["learning_rate"] * learning_rate_scale)
    return {"observation": obs, "metrics": metrics, "telemetry": tele,
            "partial": ZSpacePartialBundle(dict(metrics), 1.0, "training_telemetry", dict(tele))}
