"""A modern training loop: ``fit(model, loss, optimizer, train_loader, ...)``.

The loop is the C++ training engine (``include/spiraltorch/optim/training_engine.h``, the one that
also runs ``ModuleTrainer``, ``ZSpaceTrainer`` and the Z-space sessions): each step, the epochs,
validation, the scheduler and the best-epoch bookkeeping run there; this module is the glue that
turns its per-epoch reports into ``EpochResult``/``FitHistory`` and calls Python callbacks.

On a terminal each epoch shows a progress bar (``spiraltorch.utils.progress``: tqdm when it is
installed, a one-line counter otherwise) with ETA, samples/s and the running loss, following the
engine's ``TrainerStep`` events. Each epoch reports the mean training loss, and, with
``val_loader``, the validation loss and (for integer class targets) accuracy. ``writer`` (a
``spiraltorch.utils.tensorboard.SummaryWriter``) receives ``train/loss`` per batch and ``epoch/*``
per epoch. ``EarlyStopping`` stops when the monitored value has not improved for ``patience``
epochs; ``restore_best`` puts back the weights of the best epoch; ``checkpoint_path`` saves them
with ``spiraltorch.nn.save`` when that is available.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence

from .. import _core
from ..utils._observe import StepWatch
from ..utils.progress import epoch_samples

Tensor = _core.Tensor


@dataclass
class EpochResult:
    """What one epoch of ``fit`` measured."""

    epoch: int
    train_loss: float
    seconds: float
    val_loss: Optional[float] = None
    val_accuracy: Optional[float] = None
    skipped_steps: int = 0

    def as_dict(self) -> Dict[str, Any]:
        return dict(self.__dict__)


@dataclass
class FitHistory:
    """Per-epoch results plus where the best epoch was."""

    epochs: List[EpochResult] = field(default_factory=list)
    best_epoch: Optional[int] = None
    best_score: Optional[float] = None
    stopped_early: bool = False


class Callback:
    """Hook points of ``fit``; return True from ``on_epoch_end`` to stop training."""

    def on_epoch_end(self, result: EpochResult, history: FitHistory) -> bool:
        return False


class EarlyStopping(Callback):
    """Stops when ``monitor`` ("val_loss" or "train_loss") has not improved by more than
    ``min_delta`` for ``patience`` epochs (the training engine's ``EarlyStopping``)."""

    def __init__(self, patience: int = 3, min_delta: float = 0.0, monitor: str = "val_loss") -> None:
        # Any EpochResult field may be monitored here; the engine's own policy knows the two losses.
        native_monitor = monitor if monitor in ("val_loss", "train_loss") else "val_loss"
        self._native = _core.nn._EarlyStopping(patience, min_delta, native_monitor)
        self.monitor = monitor

    patience = property(lambda self: self._native.patience)
    min_delta = property(lambda self: self._native.min_delta)
    best = property(lambda self: self._native.best, doc="The best monitored value so far.")
    stale = property(lambda self: self._native.stale, doc="Epochs since the last improvement.")

    def on_epoch_end(self, result: EpochResult, history: FitHistory) -> bool:
        value = getattr(result, self.monitor)
        return self._native.observe(result.train_loss if value is None else value)


def evaluate(model: Any, loss: Callable[[Tensor, Tensor], Tensor], loader: Iterable) -> Dict[str, Optional[float]]:
    """Mean loss over ``loader`` and, for integer targets with (N, C) predictions, accuracy (the
    training engine's evaluation: eval mode, no gradients)."""
    return _core.nn._evaluate(model, loss, loader)


def _write_epoch(writer: Any, result: EpochResult, optimizer: Any, samples: int) -> None:
    """The epoch's scalars, at step = epoch."""
    step = result.epoch
    if math.isfinite(result.train_loss):
        writer.add_scalar("epoch/train_loss", result.train_loss, step)
    if result.val_loss is not None:
        writer.add_scalar("epoch/val_loss", result.val_loss, step)
    if result.val_accuracy is not None:
        writer.add_scalar("epoch/val_accuracy", result.val_accuracy, step)
    try:
        lr = float(optimizer.param_groups[0]["lr"])
    except (AttributeError, IndexError, KeyError, TypeError, ValueError):
        lr = None
    if lr is not None:
        writer.add_scalar("epoch/lr", lr, step)
    if result.seconds > 0 and samples:
        writer.add_scalar("epoch/samples_per_second", samples / result.seconds, step)
    writer.flush()


def fit(
    model: Any,
    loss: Callable[[Tensor, Tensor], Tensor],
    optimizer: Any,
    train_loader: Iterable,
    epochs: int = 1,
    val_loader: Optional[Iterable] = None,
    callbacks: Sequence[Callback] = (),
    scheduler: Any = None,
    restore_best: bool = False,
    checkpoint_path: Optional[str] = None,
    progress: bool = True,
    log: Callable[[str], None] = print,
    writer: Any = None,
) -> FitHistory:
    """Trains ``model`` for ``epochs`` epochs and returns a ``FitHistory``.

    Each step (in the C++ training engine): ``optimizer.zero_grad()``, forward,
    ``loss(pred, target).backward()``, ``optimizer.step()``; native modules, losses and optimizers
    are called in C++, Python ones through Python. Batches are ``(input, target)`` pairs; the target
    is a tensor or array-like (converted); a native module's input likewise, while a Python model
    receives a non-tensor input as the loader gave it (a tuple or dict for a multi-input model). A batch whose loss is not finite is skipped (no update) and
    counted in ``skipped_steps``. ``scheduler.step()`` runs once per epoch when given.
    ``progress`` shows a bar on a terminal and the per-epoch lines (through ``log``).
    ``writer`` (a ``SummaryWriter``) gets ``train/loss`` at each update (step = batches seen,
    from 1) and, at step = epoch, ``epoch/train_loss``, ``epoch/val_loss``,
    ``epoch/val_accuracy``, ``epoch/lr`` (the first parameter group's) and ``epoch/samples_per_second``.
    """
    if epochs < 1:
        raise _core.SpiralValueError(f"fit: epochs must be >= 1, got {epochs}")
    history = FitHistory()
    best_state: Optional[Dict[str, Tensor]] = None
    watch: Optional[StepWatch] = None
    total = epoch_samples(train_loader)

    def on_epoch_start(epoch: int) -> None:
        nonlocal watch
        watch = StepWatch(total, f"epoch {epoch}/{epochs}", progress, writer)
        watch.__enter__()

    def on_epoch_end(report: Dict[str, Any]) -> bool:
        nonlocal best_state, watch
        done, watch = watch, None
        if done is not None:
            done.__exit__(None, None, None)
        epoch = report["epoch"]
        result = EpochResult(epoch, report["train_loss"], report["seconds"], report["val_loss"],
                             report["val_accuracy"], report["skipped_steps"])
        history.epochs.append(result)
        if writer is not None:
            _write_epoch(writer, result, optimizer, report["samples"])
        if progress:
            log(_epoch_line(result, epochs))
        if report["improved"]:
            history.best_score, history.best_epoch = report["score"], epoch
            if restore_best or checkpoint_path:
                best_state = {k: v.clone() for k, v in model.state_dict().items()}
                if checkpoint_path:
                    from . import save  # type: ignore[attr-defined]

                    save(checkpoint_path, model)
        return any(cb.on_epoch_end(result, history) for cb in callbacks)

    try:
        history.stopped_early = _core.nn._fit(model, loss, optimizer, train_loader, epochs, val_loader, scheduler,
                                              on_epoch_start, on_epoch_end)
    finally:
        if watch is not None:
            watch.__exit__(None, None, None)
    if restore_best and best_state is not None:
        model.load_state_dict(best_state)
    return history


def _epoch_line(result: EpochResult, epochs: int) -> str:
    line = f"epoch {result.epoch}/{epochs}  train_loss {result.train_loss:.4f}"
    if result.val_loss is not None:
        line += f"  val_loss {result.val_loss:.4f}"
    if result.val_accuracy is not None:
        line += f"  val_acc {result.val_accuracy:.4f}"
    return line + f"  ({result.seconds:.1f} s)"
