"""Following native training from Python without a second loop: the C++ training engine (behind
``nn.fit`` and ``ModuleTrainer``) publishes a ``TrainerStep`` event per step on the event bus (while
something listens), and ``StepWatch`` turns those events into a progress bar and TensorBoard
scalars."""

from __future__ import annotations

import threading
from typing import Any, Optional

from .progress import Progress


class StepWatch:
    """For the length of a ``with`` block: advances a bar by each batch's samples and writes each
    update's loss to ``writer`` as ``tag`` at the event's step. Only events published on the
    entering thread count (listeners run on the publishing thread), so trainers running on other
    threads are not mixed in. Subscribes only when a bar is shown or a writer is given."""

    def __init__(self, total: Optional[int], desc: str, progress: Any, writer: Any, tag: str = "train/loss") -> None:
        self.bar = Progress(total, desc=desc, enable=progress)
        self.writer, self.tag = writer, tag
        self.loss_sum, self.updates = 0.0, 0
        self._sub: Optional[int] = None
        self._thread = threading.get_ident()

    def _on_step(self, event: dict) -> None:
        if threading.get_ident() != self._thread:
            return
        self.bar.update(int(event.get("samples", 1)))
        if event.get("skipped"):
            return
        loss = float(event["loss"])
        self.loss_sum += loss
        self.updates += 1
        if self.writer is not None:
            self.writer.add_scalar(self.tag, loss, int(event["step"]))
        if self.bar.shown:
            self.bar.set_postfix(loss=self.loss_sum / self.updates)

    def __enter__(self) -> "StepWatch":
        if self.bar.shown or self.writer is not None:
            from .. import plugin

            self._thread = threading.get_ident()
            self._sub = plugin.subscribe("TrainerStep", self._on_step)
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._sub is not None:
            from .. import plugin

            plugin.unsubscribe("TrainerStep", self._sub)
            self._sub = None
        self.bar.close()
