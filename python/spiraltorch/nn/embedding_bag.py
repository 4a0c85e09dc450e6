"""torch.nn.EmbeddingBag: a weight parameter around the native ``functional.embedding_bag``
(C++, src/nn/embedding_bag.cpp)."""

from __future__ import annotations

from typing import Any, Optional

from .. import _core
from .._core import Tensor
from . import Module, Parameter  # defined in __init__ before this module is imported


class EmbeddingBag(Module):
    """Sums, means or maxima of bags of embeddings without the padded (bags, length, dim) block of
    ``Embedding`` + a reduction. The weight (num_embeddings, embedding_dim) is N(0, 1) like
    PyTorch's (the padding_idx row zero); ``forward(input, offsets=None, per_sample_weights=None)``
    returns (bags, embedding_dim)."""

    def __init__(self, num_embeddings: int, embedding_dim: int, max_norm: Optional[float] = None,
                 norm_type: float = 2.0, scale_grad_by_freq: bool = False, mode: str = "mean", sparse: bool = False,
                 _weight: Optional[Tensor] = None, include_last_offset: bool = False,
                 padding_idx: Optional[int] = None, device: Optional[str] = None, dtype: Any = None,
                 name: str = "") -> None:
        super().__init__(name)
        if num_embeddings <= 0 or embedding_dim <= 0:
            raise _core.SpiralValueError(f"EmbeddingBag: num_embeddings and embedding_dim must be positive, got "
                                         f"{num_embeddings} and {embedding_dim}")
        if mode not in ("sum", "mean", "max"):
            raise _core.SpiralValueError(f"EmbeddingBag: mode must be 'sum', 'mean' or 'max', got {mode!r}")
        if max_norm is not None or scale_grad_by_freq or sparse:
            raise _core.SpiralValueError("EmbeddingBag: max_norm, scale_grad_by_freq and sparse are not supported")
        if padding_idx is not None:
            if not -num_embeddings <= padding_idx < num_embeddings:
                raise _core.SpiralValueError(
                    f"EmbeddingBag: padding_idx {padding_idx} is out of range for {num_embeddings} embeddings")
            padding_idx = padding_idx % num_embeddings
        self.num_embeddings, self.embedding_dim = num_embeddings, embedding_dim
        self.max_norm, self.norm_type, self.scale_grad_by_freq, self.sparse = max_norm, norm_type, False, False
        self.mode, self.include_last_offset, self.padding_idx = mode, include_last_offset, padding_idx
        if _weight is not None:
            if tuple(_weight.shape) != (num_embeddings, embedding_dim):
                raise _core.ShapeError(f"EmbeddingBag: _weight of shape {tuple(_weight.shape)} does not match "
                                       f"({num_embeddings}, {embedding_dim})")
            weight = _weight
        else:
            kind = dtype if dtype is not None else _core.dtype.float32
            weight = _core.randn(num_embeddings, embedding_dim, dtype=kind).to(device or "cpu")
            if padding_idx is not None:
                weight[padding_idx] = 0.0
        self.weight = Parameter(weight)

    @classmethod
    def from_pretrained(cls, embeddings: Tensor, freeze: bool = True, max_norm: Optional[float] = None,
                        norm_type: float = 2.0, scale_grad_by_freq: bool = False, mode: str = "mean",
                        sparse: bool = False, include_last_offset: bool = False,
                        padding_idx: Optional[int] = None) -> "EmbeddingBag":
        """An EmbeddingBag whose weight is ``embeddings`` (2-D); ``freeze`` turns its gradient off."""
        if embeddings.dim() != 2:
            raise _core.ShapeError(f"EmbeddingBag.from_pretrained: embeddings must be 2-D, got shape "
                                   f"{tuple(embeddings.shape)}")
        bag = cls(embeddings.shape[0], embeddings.shape[1], max_norm, norm_type, scale_grad_by_freq, mode, sparse,
                  embeddings, include_last_offset, padding_idx)
        bag.weight.requires_grad = not freeze
        return bag

    def forward(self, input: Tensor, offsets: Optional[Tensor] = None,
                per_sample_weights: Optional[Tensor] = None) -> Tensor:
        return _core.nn.embedding_bag(input, self.weight, offsets, None, self.norm_type, False, self.mode, False,
                                      per_sample_weights, self.include_last_offset, self.padding_idx)

    def extra_repr(self) -> str:
        s = f"{self.num_embeddings}, {self.embedding_dim}, mode='{self.mode}'"
        if self.padding_idx is not None:
            s += f", padding_idx={self.padding_idx}"
        return s


__all__ = ["EmbeddingBag"]
