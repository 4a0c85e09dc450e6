"""Learning-rate schedules (``spiraltorch.optim.lr_scheduler``, like ``torch.optim.lr_scheduler``).

All are native (``spiraltorch._core.optim``) and follow torch's step rules, so a sequence of
``step()`` calls gives the same rates as torch's schedule with the same arguments. ``LambdaLR`` and
``MultiplicativeLR`` call the given Python callables; ``ReduceLROnPlateau.step(metric)`` takes the
epoch's metric.
"""

from __future__ import annotations

from .. import _core

_o = _core.optim
LRScheduler = _o.LRScheduler
StepLR = _o.StepLR
CosineAnnealingLR = _o.CosineAnnealingLR
LinearWarmup = _o.LinearWarmup
OneCycleLR = _o.OneCycleLR
MultiStepLR = _o.MultiStepLR
ExponentialLR = _o.ExponentialLR
LinearLR = _o.LinearLR
ConstantLR = _o.ConstantLR
PolynomialLR = _o.PolynomialLR
CosineAnnealingWarmRestarts = _o.CosineAnnealingWarmRestarts
LambdaLR = _o.LambdaLR
MultiplicativeLR = _o.MultiplicativeLR
SequentialLR = _o.SequentialLR
ChainedScheduler = _o.ChainedScheduler
ReduceLROnPlateau = _o.ReduceLROnPlateau
del _o

__all__ = ["LRScheduler", "StepLR", "CosineAnnealingLR", "LinearWarmup", "OneCycleLR", "MultiStepLR",
           "ExponentialLR", "LinearLR", "ConstantLR", "PolynomialLR", "CosineAnnealingWarmRestarts", "LambdaLR",
           "MultiplicativeLR", "SequentialLR", "ChainedScheduler", "ReduceLROnPlateau"]
