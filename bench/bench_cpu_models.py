"""Whole training steps of real model shapes on the CPU: SpiralTorch vs PyTorch side by side.

Usage: python bench/bench_cpu_models.py [--threads 2] [--rounds 5] [--only lm,lm_bf16,cnn,lstm] [--out FILE]

The four models of issue #20 (a causal LM with 2 pre-norm layers, the same LM under bfloat16 autocast,
a CNN with batch norm, a 2-layer LSTM), built with the same shapes and optimizer in both libraries.
Steps alternate between the libraries in `rounds` rounds; each round times `reps` steps of one library
and then the other; the table shows the median step time per library and the ratio.
"""
import argparse
import os
import statistics
import sys
import time

import torch

import spiraltorch as st
import spiraltorch.nn.functional as sF

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_cuda_models import TorchGPT, st_gpt  # noqa: E402
from machine import cpu_model  # noqa: E402

rows = []


def time_both(st_step, torch_step, rounds, reps, warm=2):
    for _ in range(warm):
        st_step()
        torch_step()
    a, b = [], []
    for _ in range(rounds):
        for fn, out in ((st_step, a), (torch_step, b)):
            t0 = time.perf_counter()
            for _ in range(reps):
                fn()
            out.append((time.perf_counter() - t0) / reps * 1e3)
    return statistics.median(a), statistics.median(b)


def report(name, st_step, torch_step, args, reps):
    ms_st, ms_t = time_both(st_step, torch_step, args.rounds, reps)
    rows.append((name, ms_st, ms_t))
    print(f"{name:56s} st={ms_st:8.2f} ms torch={ms_t:8.2f} ms ratio={ms_st / ms_t:5.2f}", flush=True)


def lm(args, bf16):
    vocab, d, heads, layers, B, T = 4096, 256, 4, 2, 8, 128
    sm = st_gpt(vocab, d, heads, layers, T, device="cpu")
    tm = TorchGPT(vocab, d, heads, layers, T)
    so = st.optim.AdamW(sm.parameters(), lr=3e-4)
    to = torch.optim.AdamW(tm.parameters(), lr=3e-4)
    tx = torch.randint(0, vocab, (B, T))
    ty = torch.randint(0, vocab, (B, T))
    sx, sy = st.tensor(tx.numpy()), st.tensor(ty.numpy())

    def st_step():
        so.zero_grad()
        with st.autocast("cpu", dtype=st.bfloat16, enabled=bf16):
            loss = sF.cross_entropy(sm(sx).reshape(B * T, vocab), sy.reshape(B * T))
        loss.backward()
        so.step()

    def torch_step():
        to.zero_grad()
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
            loss = torch.nn.functional.cross_entropy(tm(tx).reshape(B * T, vocab), ty.reshape(B * T))
        loss.backward()
        to.step()

    label = "bf16 autocast" if bf16 else "fp32"
    report(f"causal LM 2x{d} h{heads} B={B} T={T} V={vocab} AdamW {label}", st_step, torch_step, args, reps=3)


def cnn(args):
    B = 32
    chans = (3, 32, 64, 128, 128)

    def build(mod):
        layers = []
        for i in range(4):
            layers += [mod.Conv2d(chans[i], chans[i + 1], 3, padding=1), mod.BatchNorm2d(chans[i + 1]), mod.ReLU()]
            if i % 2 == 1:
                layers.append(mod.MaxPool2d(2))
        layers += [mod.AdaptiveAvgPool2d(1), mod.Flatten(), mod.Linear(chans[-1], 10)]
        return mod.Sequential(*layers)

    sm, tm = build(st.nn), build(torch.nn)
    so = st.optim.SGD(sm.parameters(), lr=0.05, momentum=0.9)
    to = torch.optim.SGD(tm.parameters(), lr=0.05, momentum=0.9)
    tx = torch.randn(B, 3, 32, 32)
    ty = torch.randint(0, 10, (B,))
    sx, sy = st.tensor(tx.numpy()), st.tensor(ty.numpy())

    def st_step():
        so.zero_grad()
        sF.cross_entropy(sm(sx), sy).backward()
        so.step()

    def torch_step():
        to.zero_grad()
        torch.nn.functional.cross_entropy(tm(tx), ty).backward()
        to.step()

    report(f"CNN+BN 3-32-64-128-128, B={B}, 32x32, SGD", st_step, torch_step, args, reps=3)


def lstm(args):
    B, T, H = 16, 64, 256
    sm, tm = st.nn.LSTM(H, H, num_layers=2, batch_first=True), torch.nn.LSTM(H, H, num_layers=2, batch_first=True)
    so, to = st.optim.Adam(sm.parameters(), lr=1e-3), torch.optim.Adam(tm.parameters(), lr=1e-3)
    tx, ty = torch.randn(B, T, H), torch.randn(B, T, H)
    sx, sy = st.tensor(tx.numpy()), st.tensor(ty.numpy())

    def st_step():
        so.zero_grad()
        sF.mse_loss(sm(sx)[0], sy).backward()
        so.step()

    def torch_step():
        to.zero_grad()
        torch.nn.functional.mse_loss(tm(tx)[0], ty).backward()
        to.step()

    report(f"2-layer LSTM {H}, B={B}, T={T}, Adam", st_step, torch_step, args, reps=3)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--only", default="lm,lm_bf16,cnn,lstm")
    p.add_argument("--out", default=None)
    args = p.parse_args()
    st.set_num_threads(args.threads)
    torch.set_num_threads(args.threads)
    st.manual_seed(0)
    torch.manual_seed(0)
    cpu = cpu_model()
    onednn = st.describe_device("cpu").get("onednn")
    print(f"{cpu}, {args.threads} threads, torch {torch.__version__}, SpiralTorch oneDNN {onednn}", flush=True)
    for name, fn in (("lm", lambda: lm(args, False)), ("lm_bf16", lambda: lm(args, True)), ("cnn", lambda: cnn(args)),
                     ("lstm", lambda: lstm(args))):
        if name in args.only.split(","):
            fn()
    if args.out:
        with open(args.out, "w") as f:
            f.write(f"# Whole training steps on the CPU ({cpu}, {args.threads} threads)\n\n")
            f.write(f"torch {torch.__version__}, SpiralTorch oneDNN {onednn}; median of {args.rounds} alternating rounds. "
                    f"Command: `python bench/bench_cpu_models.py --threads {args.threads}`.\n\n")
            f.write("| model | SpiralTorch ms | PyTorch ms | time ratio |\n|---|---:|---:|---:|\n")
            for name, a, b in rows:
                f.write(f"| {name} | {a:.1f} | {b:.1f} | {a / b:.2f}x |\n")


if __name__ == "__main__":
    main()
