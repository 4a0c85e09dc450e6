"""Whole training steps of real model shapes on the CPU: SpiralTorch vs PyTorch side by side, time and
peak resident memory.

Usage: python bench/bench_cpu_models.py [--threads 2] [--rounds 5] [--only lm,lm_bf16,lm_lce,cnn,cnn_bf16,lstm]
                                        [--out FILE] [--no-rss]

The four models of issue #20 (a causal LM with 2 pre-norm layers, the same LM under bfloat16 autocast,
a CNN with batch norm, a 2-layer LSTM), and the CNN under bfloat16 autocast, built with the same shapes
and optimizer in both libraries.

Time: steps alternate between the libraries in `rounds` rounds in one process; each round times `reps`
steps of one library and then the other; the table shows the median step time per library and the ratio.

Memory: each (model, library) pair runs again in a fresh subprocess that imports both libraries, then
builds and trains only that library's model for a few steps. The table shows the peak resident set
(VmHWM) of that process minus its resident set right after the imports, i.e. what the model, its
optimizer state, activations and the library's working memory add; the absolute peak is printed too.
"""
import argparse
import os
import statistics
import subprocess
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


# ---------------------------------------------------------------- models: one factory per library

LM = dict(vocab=4096, d=256, heads=4, layers=2, B=8, T=128)


def lm_st(bf16, fused_head=False):
    c = LM
    sm = st_gpt(c["vocab"], c["d"], c["heads"], c["layers"], c["T"], device="cpu")
    so = st.optim.AdamW(sm.parameters(), lr=3e-4)
    g = torch.Generator().manual_seed(1)
    sx = st.tensor(torch.randint(0, c["vocab"], (c["B"], c["T"]), generator=g).numpy())
    sy = st.tensor(torch.randint(0, c["vocab"], (c["B"], c["T"]), generator=g).numpy())
    n = c["B"] * c["T"]

    def step():
        so.zero_grad()
        with st.autocast("cpu", dtype=st.bfloat16, enabled=bf16):
            if fused_head:  # the head and the loss in chunks of rows: no (n, vocab) logits kept
                h = sm.hidden(sx).reshape(n, c["d"])
                loss = sF.linear_cross_entropy(h, sm.head.weight, sy.reshape(n))
            else:
                loss = sF.cross_entropy(sm(sx).reshape(n, c["vocab"]), sy.reshape(n))
        loss.backward()
        so.step()
    return step


def lm_torch(bf16):
    c = LM
    tm = TorchGPT(c["vocab"], c["d"], c["heads"], c["layers"], c["T"])
    to = torch.optim.AdamW(tm.parameters(), lr=3e-4)
    g = torch.Generator().manual_seed(1)
    tx = torch.randint(0, c["vocab"], (c["B"], c["T"]), generator=g)
    ty = torch.randint(0, c["vocab"], (c["B"], c["T"]), generator=g)
    n = c["B"] * c["T"]

    def step():
        to.zero_grad()
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
            loss = torch.nn.functional.cross_entropy(tm(tx).reshape(n, c["vocab"]), ty.reshape(n))
        loss.backward()
        to.step()
    return step


CNN_B, CNN_CHANS = 32, (3, 32, 64, 128, 128)


def cnn_build(mod):
    layers = []
    for i in range(4):
        layers += [mod.Conv2d(CNN_CHANS[i], CNN_CHANS[i + 1], 3, padding=1), mod.BatchNorm2d(CNN_CHANS[i + 1]),
                   mod.ReLU()]
        if i % 2 == 1:
            layers.append(mod.MaxPool2d(2))
    layers += [mod.AdaptiveAvgPool2d(1), mod.Flatten(), mod.Linear(CNN_CHANS[-1], 10)]
    return mod.Sequential(*layers)


def cnn_data():
    g = torch.Generator().manual_seed(2)
    return torch.randn(CNN_B, 3, 32, 32, generator=g), torch.randint(0, 10, (CNN_B,), generator=g)


def cnn_st(bf16=False):
    sm = cnn_build(st.nn)
    so = st.optim.SGD(sm.parameters(), lr=0.05, momentum=0.9)
    tx, ty = cnn_data()
    sx, sy = st.tensor(tx.numpy()), st.tensor(ty.numpy())

    def step():
        so.zero_grad()
        with st.autocast("cpu", dtype=st.bfloat16, enabled=bf16):
            loss = sF.cross_entropy(sm(sx), sy)
        loss.backward()
        so.step()
    return step


def cnn_torch(bf16=False):
    tm = cnn_build(torch.nn)
    to = torch.optim.SGD(tm.parameters(), lr=0.05, momentum=0.9)
    tx, ty = cnn_data()

    def step():
        to.zero_grad()
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
            loss = torch.nn.functional.cross_entropy(tm(tx), ty)
        loss.backward()
        to.step()
    return step


LSTM_B, LSTM_T, LSTM_H = 16, 64, 256


def lstm_data():
    g = torch.Generator().manual_seed(3)
    return torch.randn(LSTM_B, LSTM_T, LSTM_H, generator=g), torch.randn(LSTM_B, LSTM_T, LSTM_H, generator=g)


def lstm_st():
    sm = st.nn.LSTM(LSTM_H, LSTM_H, num_layers=2, batch_first=True)
    so = st.optim.Adam(sm.parameters(), lr=1e-3)
    tx, ty = lstm_data()
    sx, sy = st.tensor(tx.numpy()), st.tensor(ty.numpy())

    def step():
        so.zero_grad()
        sF.mse_loss(sm(sx)[0], sy).backward()
        so.step()
    return step


def lstm_torch():
    tm = torch.nn.LSTM(LSTM_H, LSTM_H, num_layers=2, batch_first=True)
    to = torch.optim.Adam(tm.parameters(), lr=1e-3)
    tx, ty = lstm_data()

    def step():
        to.zero_grad()
        torch.nn.functional.mse_loss(tm(tx)[0], ty).backward()
        to.step()
    return step


MODELS = {
    "lm": (f"causal LM 2x{LM['d']} h{LM['heads']} B={LM['B']} T={LM['T']} V={LM['vocab']} AdamW fp32",
           lambda: lm_st(False), lambda: lm_torch(False)),
    "lm_bf16": (f"causal LM 2x{LM['d']} h{LM['heads']} B={LM['B']} T={LM['T']} V={LM['vocab']} AdamW bf16 autocast",
                lambda: lm_st(True), lambda: lm_torch(True)),
    "lm_lce": (f"causal LM 2x{LM['d']} h{LM['heads']} B={LM['B']} T={LM['T']} V={LM['vocab']} AdamW fp32, "
               "st: F.linear_cross_entropy head (torch: its composite)",
               lambda: lm_st(False, fused_head=True), lambda: lm_torch(False)),
    "cnn": (f"CNN+BN 3-32-64-128-128, B={CNN_B}, 32x32, SGD", cnn_st, cnn_torch),
    "cnn_bf16": (f"CNN+BN 3-32-64-128-128, B={CNN_B}, 32x32, SGD bf16 autocast", lambda: cnn_st(True),
                 lambda: cnn_torch(True)),
    "lstm": (f"2-layer LSTM {LSTM_H}, B={LSTM_B}, T={LSTM_T}, Adam", lstm_st, lstm_torch),
}


# ---------------------------------------------------------------- peak resident memory, one process per pair

def _status_kib(field):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


def rss_child(key, lib, threads, steps=4):
    """Runs in a fresh process: builds and trains one library's model; prints base and peak KiB."""
    st.set_num_threads(threads)
    torch.set_num_threads(threads)
    st.manual_seed(0)
    torch.manual_seed(0)
    base = _status_kib("VmRSS")
    step = MODELS[key][1 if lib == "st" else 2]()
    for _ in range(steps):
        step()
    print(f"RSS {base} {_status_kib('VmHWM')}", flush=True)


def measure_rss(key, lib, threads):
    out = subprocess.run([sys.executable, os.path.abspath(__file__), "--rss-child", f"{key}:{lib}",
                          "--threads", str(threads)], capture_output=True, text=True, check=True).stdout
    base, peak = (int(v) for v in out.split("RSS ")[1].split())
    return base / 1024, peak / 1024  # MiB


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--only", default="lm,lm_bf16,lm_lce,cnn,cnn_bf16,lstm")
    p.add_argument("--out", default=None)
    p.add_argument("--no-rss", action="store_true")
    p.add_argument("--rss-child", default=None, help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.rss_child:
        key, lib = args.rss_child.split(":")
        rss_child(key, lib, args.threads)
        return
    st.set_num_threads(args.threads)
    torch.set_num_threads(args.threads)
    st.manual_seed(0)
    torch.manual_seed(0)
    cpu = cpu_model()
    onednn = st.describe_device("cpu").get("onednn")
    print(f"{cpu}, {args.threads} threads, torch {torch.__version__}, SpiralTorch oneDNN {onednn}", flush=True)
    for key in args.only.split(","):
        name, st_factory, torch_factory = MODELS[key]
        ms_st, ms_t = time_both(st_factory(), torch_factory(), args.rounds, reps=3)
        rss = None
        if not args.no_rss:
            (sb, sp), (tb, tp) = measure_rss(key, "st", args.threads), measure_rss(key, "torch", args.threads)
            rss = (sp - sb, tp - tb, sp, tp)
        rows.append((name, ms_st, ms_t, rss))
        line = f"{name:56s} st={ms_st:8.2f} ms torch={ms_t:8.2f} ms ratio={ms_st / ms_t:5.2f}"
        if rss:
            line += f"  peak RSS added st={rss[0]:7.1f} MiB torch={rss[1]:7.1f} MiB ratio={rss[0] / rss[1]:5.2f}"
        print(line, flush=True)
    if args.out:
        with open(args.out, "w") as f:
            f.write(f"# Whole training steps on the CPU ({cpu}, {args.threads} threads)\n\n")
            isa = st.describe_device("cpu").get("cpu_isa")
            f.write(f"CPU (lscpu): {cpu}; oneDNN's ISA: {isa}.\n\n")
            f.write(f"torch {torch.__version__}, SpiralTorch oneDNN {onednn}; time: median of {args.rounds} alternating "
                    f"rounds in one process. Command: `python bench/bench_cpu_models.py --threads {args.threads}`.\n\n")
            f.write("Memory: each library's model trained alone for 4 steps in a fresh process that imported both "
                    "libraries; \"added\" is that process's peak resident set (VmHWM) minus its resident set right "
                    "after the imports (model, optimizer state, activations, the library's working memory); the "
                    "absolute peaks include both libraries' code.\n\n")
            f.write("| model | SpiralTorch ms | PyTorch ms | time ratio | ST peak RSS added MiB | PT peak RSS added MiB "
                    "| RSS ratio | ST / PT absolute peak MiB |\n|---|---:|---:|---:|---:|---:|---:|---:|\n")
            for name, a, b, rss in rows:
                if rss:
                    f.write(f"| {name} | {a:.1f} | {b:.1f} | {a / b:.2f}x | {rss[0]:.0f} | {rss[1]:.0f} | "
                            f"{rss[0] / rss[1]:.2f}x | {rss[2]:.0f} / {rss[3]:.0f} |\n")
                else:
                    f.write(f"| {name} | {a:.1f} | {b:.1f} | {a / b:.2f}x | - | - | - | - |\n")


if __name__ == "__main__":
    main()
