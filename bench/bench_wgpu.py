"""SpiralTorch's wgpu backend vs its CPU backend, PyTorch on the CPU and, where CUDA exists,
SpiralTorch's CUDA backend and PyTorch's CUDA, one fresh process per column.

Each column runs in its own interpreter, as a user of one backend runs: on the H200 the Vulkan
4096^3 GEMM ran at 6.5 TFLOP/s in the one-process bench (beside the CUDA columns) and at 31.8
TFLOP/s in a process that never touched CUDA (2026-12-05, same build).

Usage: python bench/bench_wgpu.py [--quick] [--n 4096] [--out bench/results/wgpu_<machine>.md]

Rows: matmul fp32 (n x n, GFLOP/s), elementwise add (effective GB/s: 3 n floats moved), a sum
reduction (GB/s), and one training step of an MLP (784-1024-1024-10, batch 256, Adam). Each
wgpu time is the median of wall-clock runs that end with ``st.wgpu.synchronize()`` (the one
host sync point); the CPU and CUDA columns are timed the same way with their own syncs.
Ratios are wgpu time / other time (below 1: wgpu faster). On GPUs the bandwidth rows (add, copy,
sum) time 20 calls per host sync, so they measure the device rather than the sync. The issue's targets on a GPU:
matmul >= 50% of the CUDA fp32 path (cuBLAS, TF32 off), elementwise/reductions >= 70% of the
device's copy bandwidth (``copy`` row: a device-to-device tensor copy), MLP step within 2x of
CUDA."""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

import numpy as np

import spiraltorch as st
import spiraltorch.nn.functional  # noqa: F401

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def sync_for(dev: str):
    if dev == "wgpu":
        return st.wgpu.synchronize
    if dev.startswith("cuda"):
        return lambda: st.cuda.synchronize()
    return lambda: None


# Calls per host sync in the bandwidth rows on a GPU: one sync costs about as much as a
# 2^26-element add there (~67 us through Vulkan on the H200), so timing each call with its own
# sync would measure the sync, not the device's bandwidth.
BANDWIDTH_CALLS_PER_SYNC = 20


def calls_per_sync(dev: str) -> int:
    return 1 if dev in ("cpu", "torch-cpu") else BANDWIDTH_CALLS_PER_SYNC


def timed(fn, dev: str, reps: int, warm: int = 2, per_sync: int = 1, sync=None) -> float:
    """Median seconds per call of ``fn`` on ``dev``: each timed round runs ``per_sync`` calls
    and then the device's sync (``sync`` when given), and counts as round time / per_sync."""
    sync = sync or sync_for(dev)
    for _ in range(warm):
        fn()
    sync()
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter()
        for _ in range(per_sync):
            fn()
        sync()
        ts.append((time.perf_counter() - t0) / per_sync)
    return statistics.median(ts)


def devices() -> list[str]:
    out = ["cpu"]
    if st.wgpu.is_available():
        out.append("wgpu")
    if st.cuda.is_available():
        out.append("cuda")
    return out


def bench_matmul(dev: str, n: int, reps: int) -> float:
    a = st.tensor(np.random.default_rng(0).standard_normal((n, n), dtype=np.float32)).to(dev)
    b = st.tensor(np.random.default_rng(1).standard_normal((n, n), dtype=np.float32)).to(dev)
    t = timed(lambda: a @ b, dev, reps)
    return 2.0 * n ** 3 / t / 1e9  # GFLOP/s


def bench_add(dev: str, n: int, reps: int) -> float:
    a = st.ones(n).to(dev)
    b = st.ones(n).to(dev)
    t = timed(lambda: a + b, dev, reps, per_sync=calls_per_sync(dev))
    return 3 * 4 * n / t / 1e9  # GB/s


def bench_copy(dev: str, n: int, reps: int) -> float:
    a = st.ones(n).to(dev)
    t = timed(lambda: a.clone(), dev, reps, per_sync=calls_per_sync(dev))
    return 2 * 4 * n / t / 1e9


def bench_sum(dev: str, n: int, reps: int) -> float:
    a = st.ones(n).to(dev)
    t = timed(lambda: a.sum(), dev, reps, per_sync=calls_per_sync(dev))
    return 4 * n / t / 1e9


def bench_mlp(dev: str, batch: int, reps: int) -> float:
    st.manual_seed(0)
    model = st.nn.Sequential(st.nn.Linear(784, 1024), st.nn.ReLU(), st.nn.Linear(1024, 1024), st.nn.ReLU(),
                             st.nn.Linear(1024, 10)).to(dev)
    opt = st.optim.Adam(model.parameters(), lr=1e-3)
    x = st.tensor(np.random.default_rng(2).random((batch, 784), dtype=np.float32)).to(dev)
    y = st.tensor(np.arange(batch) % 10).to(dev)

    def step():
        opt.zero_grad()
        loss = st.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()

    return timed(step, dev, reps) * 1e3  # ms


def torch_devices() -> list[str]:
    """PyTorch's devices to run alongside ("torch-cpu", "torch-cuda" where a GPU answers)."""
    try:
        import torch
    except ImportError:
        return []
    return ["torch-cpu"] + (["torch-cuda"] if torch.cuda.is_available() else [])


def torch_row(kind: str, dev: str, size: int, reps: int) -> float:
    """The same measurement as the SpiralTorch rows, with PyTorch on ``dev`` ("cpu"/"cuda")."""
    import torch

    torch.backends.cuda.matmul.allow_tf32 = False
    sync = torch.cuda.synchronize if dev == "cuda" else (lambda: None)

    def tm(fn, per_sync=1):
        return timed(fn, "torch-" + dev, reps, per_sync=per_sync, sync=sync)

    if kind == "matmul":
        a = torch.randn(size, size, device=dev)
        b = torch.randn(size, size, device=dev)
        return 2.0 * size ** 3 / tm(lambda: a @ b) / 1e9
    if kind in ("add", "copy", "sum"):
        a = torch.ones(size, device=dev)
        b = torch.ones(size, device=dev)
        fn = {"add": lambda: a + b, "copy": lambda: a.clone(), "sum": lambda: a.sum()}[kind]
        moved = {"add": 12, "copy": 8, "sum": 4}[kind]
        return moved * size / tm(fn, calls_per_sync("torch-" + dev)) / 1e9
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(784, 1024), torch.nn.ReLU(), torch.nn.Linear(1024, 1024),
                                torch.nn.ReLU(), torch.nn.Linear(1024, 10)).to(dev)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    x = torch.rand(size, 784, device=dev)
    y = (torch.arange(size) % 10).to(dev)

    def step():
        opt.zero_grad()
        torch.nn.functional.cross_entropy(model(x), y).backward()
        opt.step()

    return tm(step) * 1e3


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="small sizes and few repetitions (lavapipe, CI)")
    ap.add_argument("--n", type=int, default=None, help="matmul size (default 4096, 512 with --quick)")
    ap.add_argument("--out", default=None, help="also write the table (markdown) here")
    ap.add_argument("--column", default=None, help=argparse.SUPPRESS)  # child: one column, JSON out
    args = ap.parse_args()
    n = args.n or (512 if args.quick else 4096)
    reps = 3 if args.quick else 10
    elems = (1 << 20) if args.quick else (1 << 26)
    batch = 64 if args.quick else 256
    rows = [
        (f"matmul fp32 n={n}", "GFLOP/s", True, lambda d: bench_matmul(d, n, reps), ("matmul", n)),
        (f"add fp32 {elems} elements", "GB/s", True, lambda d: bench_add(d, elems, reps), ("add", elems)),
        (f"copy fp32 {elems} elements", "GB/s", True, lambda d: bench_copy(d, elems, reps), ("copy", elems)),
        (f"sum fp32 {elems} elements", "GB/s", True, lambda d: bench_sum(d, elems, reps), ("sum", elems)),
        (f"MLP step 784-1024-1024-10 batch {batch} (Adam)", "ms", False, lambda d: bench_mlp(d, batch, reps),
         ("mlp", batch)),
    ]
    if args.column == "list":  # child: the columns and the adapter (the parent opens no GPU API)
        info = st.wgpu.adapter_info() if st.wgpu.is_available() else None
        print("COLUMN " + json.dumps({"cols": devices() + torch_devices(), "adapter": info,
                                      "why": None if info else st.wgpu.unavailable_reason()}))
        return
    if args.column:  # child: this column's values, nothing else touched
        col = args.column
        if col == "cuda":
            st.cuda.set_allow_tf32(False)  # the reference: SpiralTorch's CUDA fp32 path without TF32
        vals = [torch_row(kind, col.split("-")[1], size, reps) if col.startswith("torch-") else fn(col)
                for _, _, _, fn, (kind, size) in rows]
        print("COLUMN " + json.dumps(vals))
        return

    def child(col):
        cmd = [sys.executable, os.path.abspath(__file__), "--column", col, "--n", str(n)] + (["--quick"] if args.quick else [])
        res = subprocess.run(cmd, capture_output=True, text=True, check=False)
        line = [ln for ln in res.stdout.splitlines() if ln.startswith("COLUMN ")]
        if res.returncode != 0 or not line:
            sys.exit(f"column {col} failed:\n{res.stdout}\n{res.stderr}")
        return json.loads(line[-1][len("COLUMN "):])

    listing = child("list")
    cols, info = listing["cols"], listing["adapter"]
    if info is None:
        print(f"wgpu is not available: {listing['why']}")
    values = {col: child(col) for col in cols}
    others = [d for d in cols if d != "wgpu"]
    header = "| row | unit | " + " | ".join(cols) + " | " + " | ".join(f"wgpu/{d}" for d in others) + " |"
    lines = [header, "|" + "---|" * (2 + len(cols) + len(others))]
    print(header)
    for i, (name, unit, higher_better, _, _) in enumerate(rows):
        vals = {d: values[d][i] for d in cols}
        # Ratio of wgpu's throughput to the other device's (or of its time, for "ms" rows).
        ratios = []
        for d in others:
            if "wgpu" not in vals:
                ratios.append("n/a")
            else:
                r = vals["wgpu"] / vals[d]
                ratios.append(f"{r:.2f}x" + ("" if higher_better else " time"))
        line = f"| {name} | {unit} | " + " | ".join(f"{vals[d]:.2f}" for d in cols) + " | " + " | ".join(ratios) + " |"
        print(line, flush=True)
        lines.append(line)
    if info is not None:
        machine = f"wgpu adapter: {info['name']} ({info['backend']}, {info['adapter_type']}, driver {info['driver']})"
        print(machine)
        lines.append("")
        lines.append(machine)
    if args.out:
        with open(args.out, "w") as f:
            f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
