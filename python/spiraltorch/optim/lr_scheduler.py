"""Learning-rate schedules (``spiraltorch.optim.lr_scheduler``, like ``torch.optim.lr_scheduler``)."""

from __future__ import annotations

from .. import _core

LRScheduler = _core.optim.LRScheduler
StepLR = _core.optim.StepLR
CosineAnnealingLR = _core.optim.CosineAnnealingLR
LinearWarmup = _core.optim.LinearWarmup
OneCycleLR = _core.optim.OneCycleLR

__all__ = ["LRScheduler", "StepLR", "CosineAnnealingLR", "LinearWarmup", "OneCycleLR"]
