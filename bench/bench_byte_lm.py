"""Byte-level language models on English text (Debian's fortunes): validation bits per byte
and training throughput for WaveRnn, WaveGate+ZSpaceMixer, LSTM and Transformer in
SpiralTorch, and the LSTM and Transformer also in PyTorch — same data, same batches (one
NumPy stream of window offsets feeds both libraries), same step budget, ~0.25 M parameters
each (architectures in spiraltorch/zoo/byte_lm.py). For the two shared architectures the
libraries step alternately in one process; time per step is the median.

Run: PYTHONPATH=python python bench/bench_byte_lm.py [--steps 600] [--threads 2]
"""

from __future__ import annotations

import argparse
import math
import statistics
import time

import numpy as np
import torch

import spiraltorch as st
from machine import cpu_model
from spiraltorch.zoo import byte_lm


class TorchByteLM(torch.nn.Module):
    """The PyTorch twin of byte_lm.ByteLM for 'lstm' and 'transformer'."""

    def __init__(self, arch: str, seq: int) -> None:
        super().__init__()
        self.arch = arch
        if arch == "lstm":
            self.embed = torch.nn.Embedding(256, 64)
            self.body = torch.nn.LSTM(64, 192, batch_first=True)
            width = 192
        else:
            self.embed = torch.nn.Embedding(256, 128)
            self.pos = torch.nn.Embedding(seq, 128)
            self.layers = torch.nn.ModuleList([
                torch.nn.TransformerEncoderLayer(128, 4, dim_feedforward=128, dropout=0.0, batch_first=True,
                                                 norm_first=True) for _ in range(2)])
            self.norm = torch.nn.LayerNorm(128)
            self.register_buffer("mask", torch.nn.Transformer.generate_square_subsequent_mask(seq))
            width = 128
        self.head = torch.nn.Linear(width, 256)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        x = self.embed(tokens)
        if self.arch == "lstm":
            x, _ = self.body(x)
        else:
            x = x + self.pos(torch.arange(tokens.shape[1])).unsqueeze(0)
            for layer in self.layers:
                x = layer(x, src_mask=self.mask, is_causal=True)
            x = self.norm(x)
        return self.head(x)


def st_step(model, opt, chunk):
    loss = st.nn.CategoricalCrossEntropy()(model(chunk[:, :-1]).reshape(-1, 256), chunk[:, 1:].reshape(-1))
    opt.zero_grad()
    loss.backward()
    st.optim.clip_grad_norm_(model.parameters(), 1.0)
    opt.step()
    return float(loss)


def torch_step(model, opt, chunk):
    logits = model(chunk[:, :-1])
    loss = torch.nn.functional.cross_entropy(logits.reshape(-1, 256), chunk[:, 1:].reshape(-1))
    opt.zero_grad()
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    opt.step()
    return loss.item()


def torch_valid_bits(model, valid: np.ndarray, seq: int, windows: int) -> float:
    model.eval()
    total = 0.0
    with torch.no_grad():
        for start in range(0, windows, 64):
            n = min(64, windows - start)
            offs = (np.arange(n) + start)[:, None] * seq + np.arange(seq + 1)[None]
            chunk = torch.from_numpy(valid[offs])
            logits = model(chunk[:, :-1])
            total += float(torch.nn.functional.cross_entropy(logits.reshape(-1, 256), chunk[:, 1:].reshape(-1))) * n * seq
    model.train()
    return total / (windows * seq) / math.log(2)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--steps", type=int, default=600)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--seq", type=int, default=128)
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--eval-windows", type=int, default=None, help="validation windows (default: all)")
    ap.add_argument("--archs", default=",".join(byte_lm.ARCHS))
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    st.set_num_threads(args.threads)
    train_b, valid_b = st.datasets.fortunes_text("train"), st.datasets.fortunes_text("validation")
    train = np.frombuffer(train_b, dtype=np.uint8).astype(np.int64)
    valid = np.frombuffer(valid_b, dtype=np.uint8).astype(np.int64)
    windows = (len(valid) - 1) // args.seq
    if args.eval_windows:
        windows = min(windows, args.eval_windows)
    unigram = byte_lm.unigram_bits_per_byte(train_b, valid_b)
    print(f"CPU: {cpu_model()}; {args.threads} threads; torch {torch.__version__}; corpus: Debian fortunes, "
          f"{len(train)} train / {len(valid)} validation bytes; {args.steps} Adam steps of {args.batch} x "
          f"{args.seq} bytes, lr {args.lr}; unigram baseline {unigram:.3f} bits/byte")
    rows = []
    for arch in args.archs.split(","):
        rng = np.random.default_rng(0)
        st.manual_seed(0)
        torch.manual_seed(0)
        sm = byte_lm.ByteLM(arch, args.seq)
        sopt = st.optim.Adam(sm.parameters(), lr=args.lr)
        tm = TorchByteLM(arch, args.seq) if arch in ("lstm", "transformer") else None
        topt = torch.optim.Adam(tm.parameters(), lr=args.lr) if tm is not None else None
        st_times, torch_times = [], []
        for _ in range(args.steps):
            offs = rng.integers(0, len(train) - args.seq - 1, args.batch)[:, None] + np.arange(args.seq + 1)[None]
            chunk = train[offs]
            t0 = time.perf_counter()
            st_step(sm, sopt, st.from_numpy(chunk))
            st_times.append(time.perf_counter() - t0)
            if tm is not None:
                t0 = time.perf_counter()
                torch_step(tm, topt, torch.from_numpy(chunk))
                torch_times.append(time.perf_counter() - t0)
        s_bits = byte_lm.evaluate(sm, byte_lm.byte_tensor(valid_b), args.seq, max_windows=windows)
        s_ms = statistics.median(st_times) * 1e3
        row = {"arch": arch, "params": byte_lm.parameter_count(sm), "st_bits": s_bits, "st_ms": s_ms}
        if tm is not None:
            row["torch_bits"] = torch_valid_bits(tm, valid, args.seq, windows)
            row["torch_ms"] = statistics.median(torch_times) * 1e3
            row["torch_params"] = sum(p.numel() for p in tm.parameters())
        rows.append(row)
        print(row, flush=True)
    tok = args.batch * args.seq
    print("\n| model | params | SpiralTorch bits/byte | SpiralTorch bytes/s | PyTorch bits/byte | PyTorch bytes/s |"
          " time per step st/torch |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        if "torch_ms" in r:
            print(f"| {r['arch']} | {r['params']:,} | {r['st_bits']:.3f} | {tok / r['st_ms'] * 1e3:,.0f} | "
                  f"{r['torch_bits']:.3f} | {tok / r['torch_ms'] * 1e3:,.0f} | {r['st_ms'] / r['torch_ms']:.2f}x |")
        else:
            print(f"| {r['arch']} | {r['params']:,} | {r['st_bits']:.3f} | {tok / r['st_ms'] * 1e3:,.0f} | – | – | – |")
    print(f"| unigram baseline | | {unigram:.3f} | | | | |")


if __name__ == "__main__":
    main()
