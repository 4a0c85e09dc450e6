"""torch.nn.CTCLoss over the native ``functional.ctc_loss`` (C++, src/nn/ctc_loss.cpp)."""

from __future__ import annotations

from typing import Any

from .. import _core
from .._core import Tensor
from . import Module  # defined in __init__ before this module is imported


class CTCLoss(Module):
    """Connectionist Temporal Classification loss: ``forward(log_probs, targets, input_lengths,
    target_lengths)`` returns the negative log-likelihood of the targets summed over all
    alignments, reduced by ``reduction`` ('mean' divides each loss by its target length first)."""

    def __init__(self, blank: int = 0, reduction: str = "mean", zero_infinity: bool = False, name: str = "") -> None:
        super().__init__(name)
        if reduction not in ("mean", "sum", "none"):
            raise _core.SpiralValueError(f"CTCLoss: reduction must be 'mean', 'sum' or 'none', got {reduction!r}")
        self.blank, self.reduction, self.zero_infinity = blank, reduction, zero_infinity

    def forward(self, log_probs: Tensor, targets: Any, input_lengths: Any, target_lengths: Any) -> Tensor:
        return _core.nn.ctc_loss(log_probs, targets, input_lengths, target_lengths, self.blank, self.reduction,
                                 self.zero_infinity)

    def extra_repr(self) -> str:
        return f"blank={self.blank}, reduction='{self.reduction}', zero_infinity={self.zero_infinity}"


__all__ = ["CTCLoss"]
