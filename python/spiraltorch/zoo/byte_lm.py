"""Byte-level language models on English text (Debian's ``fortunes``), shared by the
``wave_rnn_lm`` recipe and ``bench/bench_byte_lm.py``.

Architectures (``--arch``), sized to about the same parameter count (~0.25 M):
  wave_rnn     Embedding -> WaveRnn (causal conv + gated recurrence, Poincare-ball outputs) -> Linear
  wave_gate    Embedding -> 3 x [ZSpaceMixer (causal depthwise mix) -> WaveGate] -> Linear
  lstm         Embedding -> LSTM -> Linear
  transformer  Embedding + learned positions -> 2 pre-norm causal TransformerEncoderLayers -> LayerNorm -> Linear

Training draws random windows of ``seq + 1`` bytes from the training split; validation bits
per byte is the mean cross-entropy (in bits) of next-byte prediction over consecutive
windows of the validation split. The unigram baseline is the cross-entropy of the training
split's byte frequencies (add-one smoothed) on the validation split.
"""

from __future__ import annotations

import argparse
import json
import math
import time
from typing import Any, Dict, Optional, Sequence

import spiraltorch as st
from spiraltorch import nn, optim
from spiraltorch.utils.progress import progress

ARCHS = ("wave_rnn", "wave_gate", "lstm", "transformer")
VOCAB = 256


class ByteLM(nn.Module):
    """One of :data:`ARCHS` over byte tokens (batch, seq) -> logits (batch, seq, 256)."""

    def __init__(self, arch: str, seq: int) -> None:
        super().__init__()
        if arch not in ARCHS:
            raise ValueError(f"ByteLM: arch must be one of {ARCHS}, got {arch!r}")
        self.arch = arch
        if arch == "wave_rnn":
            self.embed = nn.Embedding(VOCAB, 64)
            self.body = nn.WaveRnn(64, 192, kernel_size=3, name="rnn")
            width = 192
        elif arch == "wave_gate":
            self.embed = nn.Embedding(VOCAB, 160)
            layers = []
            for i in range(3):
                layers += [nn.ZSpaceMixer(160, kernel_size=4, name=f"mix{i}"), nn.WaveGate(160, name=f"gate{i}")]
            self.body = nn.Sequential(*layers)
            width = 160
        elif arch == "lstm":
            self.embed = nn.Embedding(VOCAB, 64)
            self.body = nn.LSTM(64, 192, batch_first=True)
            width = 192
        else:
            self.embed = nn.Embedding(VOCAB, 128)
            self.pos = nn.Embedding(seq, 128)
            self.layers = nn.Sequential(*[
                nn.TransformerEncoderLayer(128, 4, dim_feedforward=128, dropout=0.0, norm_first=True, batch_first=True)
                for _ in range(2)])
            self.norm = nn.LayerNorm(128)
            width = 128
        self.head = nn.Linear(width, VOCAB)

    def forward(self, tokens: st.Tensor) -> st.Tensor:
        x = self.embed(tokens)
        if self.arch in ("wave_rnn", "lstm"):
            x, _ = self.body(x)
        elif self.arch == "wave_gate":
            x = self.body(x)
        else:
            x = x + self.pos(st.arange(tokens.shape[1], device=tokens.device)).unsqueeze(0)
            for layer in self.layers:
                x = layer(x, is_causal=True)
            x = self.norm(x)
        return self.head(x)


def parameter_count(model: Any) -> int:
    """The number of trainable scalars."""
    return sum(p.numel() for p in model.parameters())


def unigram_bits_per_byte(train: bytes, valid: bytes) -> float:
    """Cross-entropy (bits per byte) on ``valid`` of the add-one smoothed byte frequencies of ``train``."""
    counts = [1] * VOCAB
    for b in train:
        counts[b] += 1
    total = sum(counts)
    hist = [0] * VOCAB
    for b in valid:
        hist[b] += 1
    return -sum(h * math.log2(counts[i] / total) for i, h in enumerate(hist) if h) / len(valid)


def byte_tensor(data: bytes) -> st.Tensor:
    """The bytes as an int64 tensor."""
    import numpy as np

    return st.from_numpy(np.frombuffer(data, dtype=np.uint8).astype(np.int64))


def evaluate(model: Any, valid: st.Tensor, seq: int, batch: int = 64, max_windows: Optional[int] = None) -> float:
    """Mean next-byte cross-entropy in bits over consecutive ``seq``-byte windows of ``valid``."""
    windows = (valid.shape[0] - 1) // seq
    if max_windows is not None:
        windows = min(windows, max_windows)
    loss_fn = nn.CategoricalCrossEntropy()
    total, count = 0.0, 0
    model.eval()
    with st.no_grad():
        for start in range(0, windows, batch):
            n = min(batch, windows - start)
            offs = (st.arange(n) + start).unsqueeze(1) * seq + st.arange(seq + 1).unsqueeze(0)
            chunk = valid[offs.reshape(-1)].reshape(n, seq + 1)
            logits = model(chunk[:, :-1])
            total += float(loss_fn(logits.reshape(-1, VOCAB), chunk[:, 1:].reshape(-1))) * n * seq
            count += n * seq
    model.train()
    return total / count / math.log(2)


def train(arch: str, steps: int, batch: int = 32, seq: int = 128, lr: float = 3e-3, seed: int = 0,
          eval_windows: Optional[int] = None, log_every: int = 0, jsonl: Optional[str] = None) -> Dict[str, Any]:
    """Trains ``arch`` for ``steps`` Adam steps on random training windows and returns
    ``{arch, params, steps, train_loss_bits, valid_bits_per_byte, unigram_bits_per_byte,
    tokens_per_second, seconds}``; with ``jsonl`` each logged step and the result are appended there."""
    st.manual_seed(seed)
    train_bytes = st.datasets.fortunes_text("train")
    valid_bytes = st.datasets.fortunes_text("validation")
    data, valid = byte_tensor(train_bytes), byte_tensor(valid_bytes)
    model = ByteLM(arch, seq)
    opt = optim.Adam(model.parameters(), lr=lr)
    loss_fn = nn.CategoricalCrossEntropy()
    gen = st.Generator().manual_seed(seed)
    out = open(jsonl, "a") if jsonl else None
    began = time.perf_counter()
    recent = []
    bar = progress(steps * batch, desc=arch, unit="windows")
    for step in range(1, steps + 1):
        starts = st.randint(0, data.shape[0] - seq - 1, (batch,), generator=gen)
        offs = starts.unsqueeze(1) + st.arange(seq + 1).unsqueeze(0)
        chunk = data[offs.reshape(-1)].reshape(batch, seq + 1)
        loss = loss_fn(model(chunk[:, :-1]).reshape(-1, VOCAB), chunk[:, 1:].reshape(-1))
        opt.zero_grad()
        loss.backward()
        optim.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        recent.append(float(loss) / math.log(2))
        recent = recent[-50:]
        bar.update(batch)
        bar.set_postfix(bits=sum(recent) / len(recent))
        if log_every and step % log_every == 0:
            line = {"arch": arch, "step": step, "train_bits": sum(recent) / len(recent),
                    "seconds": time.perf_counter() - began}
            bar.print(json.dumps(line))
            if out:
                out.write(json.dumps(line) + "\n")
    bar.close()
    seconds = time.perf_counter() - began
    result = {
        "arch": arch, "params": parameter_count(model), "steps": steps, "batch": batch, "seq": seq,
        "train_loss_bits": sum(recent) / len(recent),
        "valid_bits_per_byte": evaluate(model, valid, seq, max_windows=eval_windows),
        "unigram_bits_per_byte": unigram_bits_per_byte(train_bytes, valid_bytes),
        "tokens_per_second": steps * batch * seq / seconds, "seconds": seconds,
    }
    if out:
        out.write(json.dumps(result) + "\n")
        out.close()
    return result


def cli(argv: Optional[Sequence[str]] = None, default_arch: str = "wave_rnn") -> Dict[str, Any]:
    """The command line of the byte-LM recipes: parses ``argv`` (default ``sys.argv[1:]``; ``--arch``
    defaults to ``default_arch``), runs ``train`` and prints and returns its result (parameters,
    bytes/s, validation and unigram bits per byte)."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--arch", choices=ARCHS, default=default_arch)
    parser.add_argument("--steps", type=int, default=600)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--seq", type=int, default=128)
    parser.add_argument("--lr", type=float, default=3e-3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--eval-windows", type=int, default=None, help="validation windows (default: all)")
    parser.add_argument("--log-every", type=int, default=100)
    parser.add_argument("--jsonl", default=None, help="append per-step metrics and the result as JSON lines")
    args = parser.parse_args(argv)
    r = train(args.arch, args.steps, args.batch, args.seq, args.lr, args.seed, args.eval_windows, args.log_every,
              args.jsonl)
    print(f"{r['arch']}: {r['params']} parameters, {r['steps']} steps in {r['seconds']:.1f} s "
          f"({r['tokens_per_second']:.0f} bytes/s); validation {r['valid_bits_per_byte']:.3f} bits/byte "
          f"(unigram baseline {r['unigram_bits_per_byte']:.3f})")
    return r


if __name__ == "__main__":
    cli()
