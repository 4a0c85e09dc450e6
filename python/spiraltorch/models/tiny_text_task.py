"""A tiny built-in binary sentiment task (40 hand-written sentences) and a LoRA
fine-tune of a sentence encoder on it: the encoder is frozen, LoRA adapters go on the
attention query/value projections, and a small Linear head classifies the pooled,
normalised sentence embedding.
"""

from __future__ import annotations

from typing import Any

from .. import _core, nn, optim
from ..nn import functional as F
from ..nn.lora import apply_lora, freeze, trainable_parameters

__all__ = ["SENTENCES", "LABELS", "LoraClassifier", "finetune_lora"]

POSITIVE = [
    "I loved this movie, it was wonderful.",
    "What a fantastic and delightful experience.",
    "The food was delicious and the staff were friendly.",
    "This is the best book I have read all year.",
    "Absolutely brilliant performance by the whole cast.",
    "I am so happy with my new phone.",
    "The hotel room was clean, bright and comfortable.",
    "Great service, I will definitely come back.",
    "The concert was amazing and full of energy.",
    "A charming story with a heartwarming ending.",
    "My team did an excellent job today.",
    "The garden looks beautiful in the spring sun.",
    "This app is fast, simple and a pleasure to use.",
    "We had a lovely time at the beach.",
    "The new update fixed everything, superb work.",
    "Her kindness made my day so much better.",
    "The coffee here is rich and perfect.",
    "An inspiring lecture that I truly enjoyed.",
    "The kids had a wonderful, joyful holiday.",
    "Fantastic value for money, highly recommended.",
]
NEGATIVE = [
    "I hated this movie, it was terrible.",
    "What an awful and disappointing experience.",
    "The food was cold and the staff were rude.",
    "This is the worst book I have read all year.",
    "A dreadful performance by the whole cast.",
    "I am so angry with my new phone.",
    "The hotel room was dirty, dark and uncomfortable.",
    "Horrible service, I will never come back.",
    "The concert was boring and far too loud.",
    "A tedious story with a depressing ending.",
    "My team made a mess of everything today.",
    "The garden looks dead and neglected.",
    "This app is slow, confusing and painful to use.",
    "We had a miserable time at the beach.",
    "The new update broke everything, useless work.",
    "His rudeness ruined my whole day.",
    "The coffee here is bitter and stale.",
    "A dull lecture that I could barely sit through.",
    "The kids had a sad, rainy and awful holiday.",
    "A waste of money, I do not recommend it.",
]
SENTENCES = POSITIVE + NEGATIVE
LABELS = [1] * len(POSITIVE) + [0] * len(NEGATIVE)


class LoraClassifier(nn.Module):
    """Frozen BERT encoder with LoRA on query/value + a trainable Linear head."""

    def __init__(self, encoder: Any, rank: int = 4, alpha: float = 8.0, num_classes: int = 2) -> None:
        super().__init__()
        self.bert = encoder.model
        self.tokenizer = encoder.tokenizer
        self.replaced = apply_lora(self.bert, ("query", "value"), rank=rank, alpha=alpha)
        self.head = nn.Linear(self.bert.config.hidden_size, num_classes)
        freeze(self, keep=("head::",))

    def forward(self, input_ids: Any, attention_mask: Any) -> Any:
        return self.head(self.bert.embed(input_ids, attention_mask) * 10.0)

    def logits(self, texts: list[str]) -> Any:
        enc = self.tokenizer(texts)
        ids = _core.tensor(enc["input_ids"], dtype=_core.dtype.int64)
        mask = _core.tensor(enc["attention_mask"], dtype=_core.dtype.int64)
        return self.forward(ids, mask)

    def trainable_state_dict(self) -> dict:
        """Adapters + head: everything fine-tuning changed."""
        state = dict(self.adapter_state_dict())
        state.update({k: v for k, v in self.state_dict().items() if k.startswith("head::")})
        return state


def finetune_lora(encoder: Any, steps: int = 12, lr: float = 5e-3, rank: int = 4, alpha: float = 8.0,
                  seed: int = 0, batch_size: int = 40) -> tuple[LoraClassifier, list[float]]:
    """Fine-tunes ``LoraClassifier`` with Adam on the tiny task; returns (model, per-step losses)."""
    _core.manual_seed(seed)
    model = LoraClassifier(encoder, rank=rank, alpha=alpha)
    model.train()
    opt = optim.Adam(trainable_parameters(model), lr=lr)
    enc = model.tokenizer(SENTENCES)
    ids = _core.tensor(enc["input_ids"], dtype=_core.dtype.int64)
    mask = _core.tensor(enc["attention_mask"], dtype=_core.dtype.int64)
    labels = _core.tensor(LABELS, dtype=_core.dtype.int64)
    losses: list[float] = []
    n = len(SENTENCES)
    for step in range(steps):
        start = (step * batch_size) % n
        idx = [(start + j) % n for j in range(min(batch_size, n))]
        sel = _core.tensor(idx, dtype=_core.dtype.int64)
        logits = model(ids.index_select(0, sel), mask.index_select(0, sel))
        loss = F.cross_entropy(logits, labels.index_select(0, sel))
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(float(loss.item()))
    model.eval()
    return model, losses
