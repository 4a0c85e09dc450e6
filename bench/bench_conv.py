"""Conv2d / pooling forward+backward: SpiralTorch vs PyTorch, side by side in one process.

Run: PYTHONPATH=python python bench/bench_conv.py [--repeats N] [--threads T]
Prints the median (or with --stat min, the best) milliseconds per forward and per
forward+backward step and the ratio st/torch (< 1 means SpiralTorch is faster).
SPIRALTORCH_CONV_BACKEND=im2col times SpiralTorch's own im2col + OpenBLAS path instead of oneDNN.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
import torch
import torch.nn.functional as F

import spiraltorch as st
import spiraltorch.nn as snn

CASES = [
    # name, N, C_in, C_out, H, W, kernel, stride, padding, groups
    ("3->32 28x28 k3 p1", 32, 3, 32, 28, 28, 3, 1, 1, 1),
    ("32->64 28x28 k3 p1", 32, 32, 64, 28, 28, 3, 1, 1, 1),
    ("3->32 32x32 k3 p1", 32, 3, 32, 32, 32, 3, 1, 1, 1),
    ("32->64 32x32 k3 p1", 32, 32, 64, 32, 32, 3, 1, 1, 1),
    ("64->64 16x16 k3 s2", 32, 64, 64, 16, 16, 3, 2, 1, 1),
    ("64->128 16x16 k1", 32, 64, 128, 16, 16, 1, 1, 0, 1),
    ("64 dw 16x16 k3 g64", 32, 64, 64, 16, 16, 3, 1, 1, 64),
    # the two convolutions of the Fashion-MNIST CNN (bench_fashion.py) at its batch size
    ("1->32 28x28 k3 p1 b128", 128, 1, 32, 28, 28, 3, 1, 1, 1),
    ("32->64 14x14 k3 p1 b128", 128, 32, 64, 14, 14, 3, 1, 1, 1),
]


CLOCK = time.perf_counter
STAT = statistics.median


def timeit_pair(st_fn, torch_fn, repeats: int):
    """Milliseconds per call of both functions; their repeats alternate so that drift of a
    shared machine (other processes, clock changes) affects both libraries alike."""
    fns = (st_fn, torch_fn)
    for f in fns:
        f()
        f()
    times = ([], [])
    for _ in range(repeats):
        for f, ts in zip(fns, times):
            t0 = CLOCK()
            f()
            ts.append(CLOCK() - t0)
    return [STAT(ts) * 1e3 for ts in times]


def bench_conv(case, repeats: int):
    name, n, cin, cout, h, w, k, s, p, g = case
    rng = np.random.default_rng(0)
    x = rng.standard_normal((n, cin, h, w)).astype(np.float32)
    wt = (rng.standard_normal((cout, cin // g, k, k)) * 0.1).astype(np.float32)
    b = rng.standard_normal(cout).astype(np.float32)

    tx = torch.tensor(x, requires_grad=True)
    tw = torch.tensor(wt, requires_grad=True)
    tb = torch.tensor(b, requires_grad=True)

    def torch_step():
        tx.grad = tw.grad = tb.grad = None
        F.conv2d(tx, tw, tb, stride=s, padding=p, groups=g).sum().backward()

    sx = st.tensor(x, requires_grad=True)
    sw = st.tensor(wt, requires_grad=True)
    sb = st.tensor(b, requires_grad=True)

    def st_step():
        sx.grad = sw.grad = sb.grad = None
        snn.conv2d(sx, sw, sb, stride=s, padding=p, groups=g).sum().backward()

    def torch_fwd():
        with torch.no_grad():
            F.conv2d(tx, tw, tb, stride=s, padding=p, groups=g)

    def st_fwd():
        with st.no_grad():
            snn.conv2d(sx, sw, sb, stride=s, padding=p, groups=g)

    return (*timeit_pair(st_fwd, torch_fwd, repeats), *timeit_pair(st_step, torch_step, repeats))


def bench_pool(repeats: int):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((32, 64, 32, 32)).astype(np.float32)
    tx = torch.tensor(x, requires_grad=True)
    sx = st.tensor(x, requires_grad=True)
    rows = []
    for name, tf, sf in [
        ("max_pool2d k2 s2", lambda t: F.max_pool2d(t, 2), lambda t: snn.max_pool2d(t, 2)),
        ("max_pool2d k3 s2 p1", lambda t: F.max_pool2d(t, 3, 2, 1), lambda t: snn.max_pool2d(t, 3, 2, 1)),
        ("avg_pool2d k2 s2", lambda t: F.avg_pool2d(t, 2), lambda t: snn.avg_pool2d(t, 2)),
    ]:
        def torch_step(tf=tf):
            tx.grad = None
            tf(tx).sum().backward()

        def st_step(sf=sf):
            sx.grad = None
            sf(sx).sum().backward()

        rows.append((name, *timeit_pair(st_step, torch_step, repeats)))
    return rows


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=10)
    ap.add_argument("--threads", type=int, default=0, help="threads for both libraries (0 = defaults)")
    ap.add_argument("--pool", action=argparse.BooleanOptionalAction, default=True, help="also time pooling")
    ap.add_argument("--cpu-time", action="store_true",
                    help="measure process CPU time instead of wall time (meaningful with --threads 1 on a busy "
                         "machine, where wall time counts waiting for a core)")
    ap.add_argument("--stat", choices=("median", "min"), default="median",
                    help="statistic over the repeats (min filters out other processes on a shared machine)")
    args = ap.parse_args()
    global CLOCK, STAT
    STAT = min if args.stat == "min" else statistics.median
    if args.cpu_time:
        CLOCK = time.process_time
    if args.threads:
        torch.set_num_threads(args.threads)
        st.set_num_threads(args.threads)
    clock = "CPU" if args.cpu_time else "wall"
    info = st.describe_device("cpu")
    conv = f"oneDNN {info['onednn']}" if info["onednn"] and info["conv_backend"] != "im2col" else "im2col + OpenBLAS"
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads; SpiralTorch conv: {conv}; "
          f"float32, batch 32 unless named; {args.stat} {clock} ms")
    print(f"{'conv2d':24s} {'st fwd':>8s} {'pt fwd':>8s} {'ratio':>6s} | {'st f+b':>8s} {'pt f+b':>8s} {'ratio':>6s}")
    for case in CASES:
        sf, tf, sfb, tfb = bench_conv(case, args.repeats)
        print(f"{case[0]:24s} {sf:8.2f} {tf:8.2f} {sf / tf:6.2f} | {sfb:8.2f} {tfb:8.2f} {sfb / tfb:6.2f}")
    if not args.pool:
        return
    print(f"{'pooling (64ch 32x32)':24s} {'st f+b':>8s} {'pt f+b':>8s} {'ratio':>6s}")
    for name, s_ms, t_ms in bench_pool(args.repeats):
        print(f"{name:24s} {s_ms:8.2f} {t_ms:8.2f} {s_ms / t_ms:6.2f}")


if __name__ == "__main__":
    main()
