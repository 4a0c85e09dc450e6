"""Training curves of a byte-level GPT-2-small-shaped model on Debian's fortunes text, float32 (TF32
matmuls) against bf16 autocast: does bf16 train as well as fp32?

Usage: python bench/train_fortunes_curve.py [--steps 2000] [--batch 8] [--T 1024] [--device cuda]
                                            [--modes fp32,bf16] [--out bench/results/fortunes_curve_<card>.md]

The model is bench_cuda_models.py's GPT (pre-norm transformer, GELU MLP, learned positions) at
GPT-2 small's shape (12 layers, d=768, 12 heads, T=1024) with a byte vocabulary (256). Both modes
start from the same initial weights (one seed) and see the same batches (random windows of the
training split, one NumPy seed); AdamW (lr 6e-4 after 100 warm-up steps, cosine decay to 6e-5,
weight decay 0.1, gradient norm clipped to 1.0). Every `--eval-every` steps the validation loss is
the mean over fixed windows of the validation split (spiraltorch.datasets.fortunes_text: every tenth
entry). Prints and writes a table of training loss (mean of the last `--eval-every` steps) and
validation loss per mode, and the largest |bf16 - fp32| validation gap.
"""
import argparse
import math
import os
import subprocess
import sys
import time

import numpy as np

import spiraltorch as st
import spiraltorch.nn.functional as sF
from spiraltorch.datasets import fortunes_text

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_cuda_models import st_gpt  # noqa: E402


def windows(data, starts, T):
    """Inputs and next-byte targets (int64, [B, T]) of the windows beginning at `starts`."""
    idx = starts[:, None] + np.arange(T + 1)[None, :]
    chunk = data[idx].astype(np.int64)
    return chunk[:, :-1], chunk[:, 1:]


def lr_at(step, args):
    if step < args.warmup:
        return args.lr * (step + 1) / args.warmup
    progress = (step - args.warmup) / max(1, args.steps - args.warmup)
    return args.lr * 0.1 + 0.5 * (args.lr - args.lr * 0.1) * (1.0 + math.cos(math.pi * progress))


def run(mode, train, val, args):
    """Trains one mode from the shared seed; returns [(step, train_loss, val_loss)] and seconds."""
    st.manual_seed(0)
    T, B, dev = args.T, args.batch, args.device
    model = st_gpt(256, args.d, args.heads, args.layers, T, device=dev).to(dev)
    opt = st.optim.AdamW(model.parameters(), lr=args.lr, betas=(0.9, 0.95), weight_decay=0.1)
    rng = np.random.default_rng(1234)
    val_starts = np.random.default_rng(99).integers(0, len(val) - T - 1, args.val_windows)
    autocast = mode == "bf16"

    def loss_of(x, y):
        logits = model(x)
        return sF.cross_entropy(logits.reshape(-1, 256).float(), y.reshape(-1))

    def forward_loss(x, y):
        if autocast:
            with st.autocast(dev, dtype=st.bfloat16):
                return loss_of(x, y)
        return loss_of(x, y)

    def to_dev(a):
        return st.tensor(a, dtype=st.int64).to(dev)

    def val_loss():
        total = 0.0
        with st.no_grad():
            for i in range(0, len(val_starts), B):
                x, y = windows(val, val_starts[i:i + B], T)
                total += forward_loss(to_dev(x), to_dev(y)).item() * len(x)
        return total / len(val_starts)

    rows, recent = [], []
    t0 = time.perf_counter()
    for step in range(args.steps):
        for g in opt.param_groups:
            g["lr"] = lr_at(step, args)
        x, y = windows(train, rng.integers(0, len(train) - T - 1, B), T)
        opt.zero_grad()
        loss = forward_loss(to_dev(x), to_dev(y))
        loss.backward()
        st.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        recent.append(loss)
        if (step + 1) % args.eval_every == 0 or step + 1 == args.steps:
            train_loss = sum(t.item() for t in recent) / len(recent)
            recent = []
            v = val_loss()
            rows.append((step + 1, train_loss, v))
            print(f"{mode:>5} step {step + 1:5d}  train {train_loss:.4f}  val {v:.4f}  "
                  f"({time.perf_counter() - t0:.0f} s)", flush=True)
    return rows, time.perf_counter() - t0


def device_name(dev):
    if dev.startswith("cuda"):
        try:
            return subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"], capture_output=True,
                                  text=True, check=True).stdout.splitlines()[0].strip()
        except (OSError, subprocess.CalledProcessError, IndexError):
            return "CUDA GPU"
    return "CPU"


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=2000)
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--T", type=int, default=1024)
    p.add_argument("--layers", type=int, default=12)
    p.add_argument("--d", type=int, default=768)
    p.add_argument("--heads", type=int, default=12)
    p.add_argument("--lr", type=float, default=6e-4)
    p.add_argument("--warmup", type=int, default=100)
    p.add_argument("--eval-every", type=int, default=100)
    p.add_argument("--val-windows", type=int, default=32)
    p.add_argument("--device", default="cuda")
    p.add_argument("--modes", default="fp32,bf16")
    p.add_argument("--out", default=None)
    args = p.parse_args()
    if args.device.startswith("cuda"):
        st.backends.cuda.matmul.allow_tf32 = True
    train = np.frombuffer(fortunes_text("train"), dtype=np.uint8)
    val = np.frombuffer(fortunes_text("validation"), dtype=np.uint8)
    print(f"fortunes: {len(train):,} training bytes, {len(val):,} validation bytes; {device_name(args.device)}")
    results = {}
    for mode in args.modes.split(","):
        results[mode] = run(mode, train, val, args)
    modes = list(results)
    lines = [f"## Fortunes byte-level GPT ({args.layers}x{args.d}, {args.heads} heads, T={args.T}, batch {args.batch}, "
             f"{args.steps} steps) on {device_name(args.device)}", "",
             "| step | " + " | ".join(f"{m} train | {m} val" for m in modes) + " |",
             "|---:|" + "---:|---:|" * len(modes)]
    for i, (step, _, _) in enumerate(results[modes[0]][0]):
        cells = " | ".join(f"{results[m][0][i][1]:.4f} | {results[m][0][i][2]:.4f}" for m in modes)
        lines.append(f"| {step} | {cells} |")
    lines.append("")
    lines.append("Wall time: " + ", ".join(f"{m} {results[m][1]:.0f} s" for m in modes) + ".")
    if "fp32" in results and "bf16" in results:
        gaps = [abs(a[2] - b[2]) for a, b in zip(results["fp32"][0], results["bf16"][0])]
        final = results["bf16"][0][-1][2] - results["fp32"][0][-1][2]
        lines.append(f"Largest |bf16 - fp32| validation-loss gap over the curve: {max(gaps):.4f}; "
                     f"final (bf16 - fp32): {final:+.4f} nats/byte.")
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        with open(args.out, "a") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    main()
