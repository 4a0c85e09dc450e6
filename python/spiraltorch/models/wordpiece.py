"""BERT WordPiece tokenizer (pure Python), reading a ``vocab.txt``.

Basic tokenisation as in BERT: clean control characters, split CJK characters, optional
lower-casing with accent stripping (NFD, drop combining marks), split on whitespace and
punctuation; then greedy longest-match-first WordPiece with ``##`` continuations and
``[UNK]`` for words that cannot be covered (or longer than ``max_input_chars_per_word``).
"""

from __future__ import annotations

import unicodedata
from pathlib import Path
from typing import Iterable, Sequence

__all__ = ["WordPieceTokenizer"]


def _is_whitespace(ch: str) -> bool:
    if ch in (" ", "\t", "\n", "\r"):
        return True
    return unicodedata.category(ch) == "Zs"


def _is_control(ch: str) -> bool:
    if ch in ("\t", "\n", "\r"):
        return False
    return unicodedata.category(ch) in ("Cc", "Cf")


def _is_punctuation(ch: str) -> bool:
    cp = ord(ch)
    if 33 <= cp <= 47 or 58 <= cp <= 64 or 91 <= cp <= 96 or 123 <= cp <= 126:
        return True
    return unicodedata.category(ch).startswith("P")


def _is_cjk(cp: int) -> bool:
    return (
        0x4E00 <= cp <= 0x9FFF or 0x3400 <= cp <= 0x4DBF or 0x20000 <= cp <= 0x2A6DF or 0x2A700 <= cp <= 0x2B73F
        or 0x2B740 <= cp <= 0x2B81F or 0x2B820 <= cp <= 0x2CEAF or 0xF900 <= cp <= 0xFAFF or 0x2F800 <= cp <= 0x2FA1F
    )


class WordPieceTokenizer:
    """BERT's WordPiece tokenizer over a vocabulary (a ``vocab.txt`` path or a list of tokens, the
    id being the position). ``tokenize`` gives the WordPiece tokens, ``encode`` the ids wrapped in
    ``[CLS]``/``[SEP]``, ``decode`` the text back, and calling it on texts gives the padded batch
    dict (``input_ids``, ``attention_mask``, ``token_type_ids``) ``BertModel`` takes. A special token
    missing from the vocabulary raises ``ValueError``."""

    def __init__(
        self,
        vocab: str | Path | Sequence[str],
        *,
        do_lower_case: bool = True,
        strip_accents: bool | None = None,
        unk_token: str = "[UNK]",
        cls_token: str = "[CLS]",
        sep_token: str = "[SEP]",
        pad_token: str = "[PAD]",
        max_input_chars_per_word: int = 100,
        model_max_length: int = 512,
    ) -> None:
        if isinstance(vocab, (str, Path)):
            tokens = Path(vocab).read_text(encoding="utf-8").split("\n")
            if tokens and tokens[-1] == "":
                tokens = tokens[:-1]
        else:
            tokens = list(vocab)
        self.vocab = {t.rstrip("\r"): i for i, t in enumerate(tokens)}
        self.inv_vocab = {i: t for t, i in self.vocab.items()}
        self.do_lower_case = do_lower_case
        self.strip_accents = do_lower_case if strip_accents is None else strip_accents
        self.unk_token, self.cls_token, self.sep_token, self.pad_token = unk_token, cls_token, sep_token, pad_token
        for tok in (unk_token, cls_token, sep_token, pad_token):
            if tok not in self.vocab:
                raise ValueError(f"WordPieceTokenizer: special token {tok!r} is not in the vocabulary")
        self.max_input_chars_per_word = max_input_chars_per_word
        self.model_max_length = model_max_length

    @classmethod
    def from_directory(cls, path: str | Path, **kw) -> "WordPieceTokenizer":
        """Reads ``vocab.txt`` and (if present) ``tokenizer_config.json`` for do_lower_case."""
        import json

        path = Path(path)
        cfg_path = path / "tokenizer_config.json"
        if cfg_path.exists():
            cfg = json.loads(cfg_path.read_text())
            kw.setdefault("do_lower_case", cfg.get("do_lower_case", True))
            if isinstance(cfg.get("model_max_length"), int) and cfg["model_max_length"] < 10**6:
                kw.setdefault("model_max_length", cfg["model_max_length"])
        return cls(path / "vocab.txt", **kw)

    # ---- basic tokenizer ----
    def _clean(self, text: str) -> str:
        out = []
        for ch in text:
            cp = ord(ch)
            if cp == 0 or cp == 0xFFFD or _is_control(ch):
                continue
            if _is_cjk(cp):
                out.append(f" {ch} ")
            elif _is_whitespace(ch):
                out.append(" ")
            else:
                out.append(ch)
        return "".join(out)

    def basic_tokenize(self, text: str) -> list[str]:
        words = []
        for word in self._clean(text).split():
            if self.do_lower_case:
                word = word.lower()
            if self.strip_accents:
                word = "".join(c for c in unicodedata.normalize("NFD", word) if unicodedata.category(c) != "Mn")
            current = []
            for ch in word:
                if _is_punctuation(ch):
                    if current:
                        words.append("".join(current))
                        current = []
                    words.append(ch)
                else:
                    current.append(ch)
            if current:
                words.append("".join(current))
        return words

    # ---- WordPiece ----
    def wordpiece(self, word: str) -> list[str]:
        if len(word) > self.max_input_chars_per_word:
            return [self.unk_token]
        pieces, start = [], 0
        while start < len(word):
            end, piece = len(word), None
            while start < end:
                sub = word[start:end]
                if start > 0:
                    sub = "##" + sub
                if sub in self.vocab:
                    piece = sub
                    break
                end -= 1
            if piece is None:
                return [self.unk_token]
            pieces.append(piece)
            start = end
        return pieces

    def tokenize(self, text: str) -> list[str]:
        return [p for w in self.basic_tokenize(text) for p in self.wordpiece(w)]

    def convert_tokens_to_ids(self, tokens: Iterable[str]) -> list[int]:
        unk = self.vocab[self.unk_token]
        return [self.vocab.get(t, unk) for t in tokens]

    def encode(self, text: str, max_length: int | None = None) -> list[int]:
        """[CLS] tokens [SEP], truncated to ``max_length`` (default: model_max_length)."""
        limit = max_length or self.model_max_length
        ids = self.convert_tokens_to_ids(self.tokenize(text))[: max(limit - 2, 0)]
        return [self.vocab[self.cls_token], *ids, self.vocab[self.sep_token]]

    def decode(self, ids: Iterable[int]) -> str:
        out: list[str] = []
        for i in ids:
            tok = self.inv_vocab.get(int(i), self.unk_token)
            if tok in (self.cls_token, self.sep_token, self.pad_token):
                continue
            if tok.startswith("##") and out:
                out[-1] += tok[2:]
            else:
                out.append(tok)
        return " ".join(out)

    def __call__(self, texts: str | Sequence[str], max_length: int | None = None) -> dict[str, list[list[int]]]:
        """Batch encoding padded to the longest: {"input_ids", "attention_mask", "token_type_ids"}."""
        if isinstance(texts, str):
            texts = [texts]
        encoded = [self.encode(t, max_length) for t in texts]
        width = max(len(e) for e in encoded)
        pad = self.vocab[self.pad_token]
        return {
            "input_ids": [e + [pad] * (width - len(e)) for e in encoded],
            "attention_mask": [[1] * len(e) + [0] * (width - len(e)) for e in encoded],
            "token_type_ids": [[0] * width for _ in encoded],
        }
