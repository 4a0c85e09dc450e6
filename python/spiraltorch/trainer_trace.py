"""Traces of ``nn.ModuleTrainer`` runs (``trainer.set_trace(path)``): load, summarise, compare, plot.

The trainer writes, per the trace schema (``spiraltorch.zspace_trace``, ``docs/traces.md``), one
``step`` event per batch (``trainer.loss``, ``trainer.skipped``, ``trainer.band_above/here/beneath``,
``trainer.lr_scale``), one ``epoch`` event per ``train_epoch`` (``trainer.average_loss``,
``trainer.total_loss``, ``trainer.batches``, ``trainer.skipped_steps``, ``trainer.seconds``) and one
``eval`` event per ``evaluate_epoch`` (``eval.average_loss``, ``eval.batches``, ``eval.seconds``).
"""

from __future__ import annotations

import math
import os
from typing import Any, Iterable, Mapping

from . import _core
from .zspace_trace import Trace, TraceEvent, _as_trace, _pyplot, _save_lines, load_trace
from .zspace_trace import compare as _compare

__all__ = ["compare", "load_trainer_trace", "plot_trainer_trace", "summarize_trainer_trace_events"]


def load_trainer_trace(path: str | os.PathLike[str]) -> Trace:
    """``zspace_trace.load_trace(path)``, checking that it holds trainer events (a ``step``, ``epoch``
    or ``eval`` event carrying ``trainer.*`` or ``eval.*`` metrics); ``SpiralValueError`` otherwise."""
    t = load_trace(path)
    if not any(any(k.startswith(("trainer.", "eval.")) for k in e.metrics) for e in t.events):
        raise _core.SpiralValueError(f"load_trainer_trace: {os.fspath(path)} holds no trainer events "
                                     f"(sources {t.sources()})")
    return t


def _events(events: Trace | str | os.PathLike[str] | Iterable[TraceEvent | Mapping[str, Any]]) -> list[TraceEvent]:
    return _as_trace(events).events


def _finite(values: list[float]) -> list[float]:
    return [v for v in values if math.isfinite(v)]


def summarize_trainer_trace_events(
        events: Trace | str | os.PathLike[str] | Iterable[TraceEvent | Mapping[str, Any]]) -> dict[str, Any]:
    """Summarises trainer trace events (TraceEvents, schema dicts, a Trace or a path):
    ``{"steps": step events, "skipped": steps with trainer.skipped = 1, "epochs": epoch events,
    "evals": eval events, "loss": {"first", "last", "min", "mean"} of the finite trainer.loss values
    (None without steps), "epoch_losses": trainer.average_loss per epoch, "eval_losses":
    eval.average_loss per eval, "best_epoch": the epoch with the lowest average loss (None without
    epochs), "loss_delta": last - first epoch average (or step loss without epochs), "seconds": the
    summed trainer.seconds}``."""
    evs = _events(events)
    steps = [e for e in evs if e.event == "step"]
    epochs = [e for e in evs if e.event == "epoch"]
    evals = [e for e in evs if e.event == "eval"]
    losses = _finite([e.metrics["trainer.loss"] for e in steps if "trainer.loss" in e.metrics])
    epoch_losses = [e.metrics.get("trainer.average_loss", math.nan) for e in epochs]
    eval_losses = [e.metrics.get("eval.average_loss", math.nan) for e in evals]
    best = None
    finite_epochs = [(v, e.epoch if e.epoch is not None else i + 1) for i, (e, v) in enumerate(zip(epochs, epoch_losses))
                     if math.isfinite(v)]
    if finite_epochs:
        best = min(finite_epochs)[1]
    trend = _finite(epoch_losses) or losses
    return {"steps": len(steps), "skipped": sum(1 for e in steps if e.metrics.get("trainer.skipped", 0.0) == 1.0),
            "epochs": len(epochs), "evals": len(evals),
            "loss": ({"first": losses[0], "last": losses[-1], "min": min(losses), "mean": sum(losses) / len(losses)}
                     if losses else None),
            "epoch_losses": epoch_losses, "eval_losses": eval_losses, "best_epoch": best,
            "loss_delta": (trend[-1] - trend[0]) if trend else None,
            "seconds": sum(_finite([e.metrics.get("trainer.seconds", math.nan) for e in epochs]))}


def compare(a: Any, b: Any) -> dict[str, Any]:
    """Two trainer runs side by side: ``zspace_trace.compare`` of the per-epoch metrics (``"epoch"``)
    and of the per-step ones (``"step"``), plus ``"average_loss_delta"``: b's last epoch average minus
    a's (None when either has no epoch)."""
    ta, tb = _as_trace(a), _as_trace(b)
    by_epoch = _compare(ta, tb, event="epoch")
    m = by_epoch["metrics"].get("trainer.average_loss")
    return {"epoch": by_epoch, "step": _compare(ta, tb, event="step"),
            "average_loss_delta": m["delta"] if m else None}


def plot_trainer_trace(trace: Any, path: str | os.PathLike[str]) -> str:
    """Plots the batch losses against the step with each epoch's average loss (and eval loss) at
    the epoch's last step, writes a PNG to ``path`` and returns it. Needs matplotlib
    (``ImportError`` saying ``pip install matplotlib`` when missing)."""
    t = _as_trace(trace)
    steps = t.series("trainer.loss", "step")
    if not steps:
        raise _core.SpiralValueError("plot_trainer_trace: the trace has no trainer.loss steps")
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(6, 3.2))
    try:
        xs, ys = zip(*steps)
        ax.plot(xs, ys, lw=1, alpha=0.6, label="batch loss")
        # An epoch's marker sits at the last step written before its epoch event.
        last_step, marks, evals = 0, [], []
        for e in t.events:
            if e.event == "step" and e.step is not None:
                last_step = e.step
            elif e.event == "epoch" and "trainer.average_loss" in e.metrics:
                marks.append((last_step, e.metrics["trainer.average_loss"]))
            elif e.event == "eval" and "eval.average_loss" in e.metrics:
                evals.append((last_step, e.metrics["eval.average_loss"]))
        if marks:
            ax.plot(*zip(*marks), "o-", label="epoch average")
        if evals:
            ax.plot(*zip(*evals), "s--", label="eval")
        return _save_lines(fig, ax, path, "step", "loss")
    finally:
        plt.close(fig)
