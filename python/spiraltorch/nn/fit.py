"""A modern training loop: ``fit(model, loss, optimizer, train_loader, ...)``.

On a terminal each epoch shows a progress bar (``spiraltorch.utils.progress``: tqdm when it is
installed, a one-line counter otherwise) with ETA, samples/s and the running loss. Each epoch
reports the mean training loss, and, with ``val_loader``, the validation loss and
(for integer class targets) accuracy. ``writer`` (a ``spiraltorch.utils.tensorboard.SummaryWriter``)
receives ``train/loss`` per batch and ``epoch/*`` per epoch. ``EarlyStopping`` stops when the monitored
value has not improved for ``patience`` epochs; ``restore_best`` puts back the
weights of the best epoch; ``checkpoint_path`` saves them with ``spiraltorch.nn.save``
when that is available.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence

from .. import _core
from ..autograd import no_grad
from ..utils.progress import Progress, batch_samples, epoch_samples

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
    ``min_delta`` for ``patience`` epochs."""

    def __init__(self, patience: int = 3, min_delta: float = 0.0, monitor: str = "val_loss") -> None:
        if patience < 0 or not math.isfinite(min_delta):
            raise _core.SpiralValueError("EarlyStopping: patience must be >= 0 and min_delta finite")
        self.patience, self.min_delta, self.monitor = patience, max(0.0, min_delta), monitor
        self.best = math.inf
        self.stale = 0

    def on_epoch_end(self, result: EpochResult, history: FitHistory) -> bool:
        value = getattr(result, self.monitor)
        if value is None:
            value = result.train_loss
        if value + self.min_delta < self.best:
            self.best, self.stale = value, 0
        else:
            self.stale += 1
        return self.stale > self.patience


def evaluate(model: Any, loss: Callable[[Tensor, Tensor], Tensor], loader: Iterable) -> Dict[str, Optional[float]]:
    """Mean loss over ``loader`` and, for integer targets with (N, C) predictions, accuracy."""
    was_training = model.training
    model.eval()
    total, batches, correct, seen = 0.0, 0, 0, 0
    try:
        with no_grad():
            for x, y in loader:
                pred = model(x)
                total += float(loss(pred, y).item())
                batches += 1
                if y.dtype == _core.dtype.int64 and pred.ndim == 2:
                    correct += int((pred.argmax(dim=1) == y).sum().item())
                    seen += y.shape[0]
    finally:
        model.train(was_training)
    return {
        "loss": total / batches if batches else None,
        "accuracy": correct / seen if seen else None,
    }


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

    Each step: ``optimizer.zero_grad()``, forward, ``loss(pred, target).backward()``,
    ``optimizer.step()``. A batch whose loss is not finite is skipped (no update) and
    counted in ``skipped_steps``. ``scheduler.step()`` runs once per epoch when given.
    ``progress`` shows a bar on a terminal and the per-epoch lines (through ``log``).
    ``writer`` (a ``SummaryWriter``) gets ``train/loss`` at each update (step = batches seen,
    from 1) and, at step = epoch, ``epoch/train_loss``, ``epoch/val_loss``,
    ``epoch/val_accuracy``, ``epoch/lr`` (the first parameter group's) and ``epoch/samples_per_second``.
    """
    if epochs < 1:
        raise _core.SpiralValueError(f"fit: epochs must be >= 1, got {epochs}")
    history = FitHistory()
    best_state = None
    global_step = 0
    for epoch in range(1, epochs + 1):
        model.train(True)
        start = time.perf_counter()
        total, batches, skipped = 0.0, 0, 0
        with Progress(epoch_samples(train_loader), desc=f"epoch {epoch}/{epochs}", enable=progress) as bar:
            for x, y in train_loader:
                global_step += 1
                optimizer.zero_grad()
                value = loss(model(x), y)
                scalar = float(value.item())
                bar.update(batch_samples(x))
                if not math.isfinite(scalar):
                    skipped += 1
                    continue
                value.backward()
                stepped = optimizer.step()
                # False, or a StepResult whose verdict is False (None: an optimizer without one)
                if stepped is not None and not stepped:
                    skipped += 1
                    continue
                total += scalar
                batches += 1
                if writer is not None:
                    writer.add_scalar("train/loss", scalar, global_step)
                if bar.shown:
                    bar.set_postfix(loss=total / batches)
            seen = bar.n
        if scheduler is not None:
            scheduler.step()
        result = EpochResult(epoch, total / batches if batches else math.nan, time.perf_counter() - start,
                             skipped_steps=skipped)
        if val_loader is not None:
            metrics = evaluate(model, loss, val_loader)
            result.val_loss, result.val_accuracy = metrics["loss"], metrics["accuracy"]
        history.epochs.append(result)
        if writer is not None:
            _write_epoch(writer, result, optimizer, seen)
        line = f"epoch {epoch}/{epochs}  train_loss {result.train_loss:.4f}"
        if result.val_loss is not None:
            line += f"  val_loss {result.val_loss:.4f}"
        if result.val_accuracy is not None:
            line += f"  val_acc {result.val_accuracy:.4f}"
        line += f"  ({result.seconds:.1f} s)"
        if progress:
            log(line)
        score = result.val_loss if result.val_loss is not None else result.train_loss
        if math.isfinite(score) and (history.best_score is None or score < history.best_score):
            history.best_score, history.best_epoch = score, epoch
            if restore_best or checkpoint_path:
                best_state = {k: v.clone() for k, v in model.state_dict().items()}
                if checkpoint_path:
                    from . import save  # type: ignore[attr-defined]

                    save(checkpoint_path, model)
        if any(cb.on_epoch_end(result, history) for cb in callbacks):
            history.stopped_early = True
            break
    if restore_best and best_state is not None:
        model.load_state_dict(best_state)
    return history
