"""The cost of the TensorOp event check when nobody listens: runs bench_op_events (ops with the
check) and bench_op_events_baseline (the same library, ops compiled without it) alternately, each
timing 1e5 additions of two 4-element float32 tensors per repeat, and reports the median time per
op and the ratio. Also times the check build with a TensorOp listener attached (for scale).

    cmake -S . -B build/test -DSPIRALTORCH_BUILD_BENCH=ON ... && ninja -C build/test bench_op_events \\
        bench_op_events_baseline
    python bench/bench_op_events.py --build build/test --out bench/results/op_events_cpu.md
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from machine import cpu_model  # noqa: E402


PIN: list[str] = []  # e.g. ["taskset", "-c", "1"] with --pin: fewer migrations, less noise


def run(binary: str, ops: int, repeats: int, *extra: str) -> dict[str, float]:
    out = subprocess.run([*PIN, binary, str(ops), str(repeats), *extra], capture_output=True, text=True, check=True).stdout
    fields = dict(kv.split("=") for kv in out.split()[1:])
    return {k: float(v) for k, v in fields.items()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default="build/test")
    ap.add_argument("--ops", type=int, default=100_000)
    ap.add_argument("--repeats", type=int, default=15, help="timed repeats per process")
    ap.add_argument("--rounds", type=int, default=8, help="alternating process pairs")
    ap.add_argument("--out", default=None, help="write a Markdown report here")
    ap.add_argument("--pin", default=None, help="run both binaries on this CPU (taskset -c)")
    args = ap.parse_args()
    if args.pin is not None:
        PIN[:] = ["taskset", "-c", args.pin]
    check = os.path.join(args.build, "bench_op_events")
    base = os.path.join(args.build, "bench_op_events_baseline")
    with_check, without, listened, best_c, best_b = [], [], [], [], []
    for _ in range(args.rounds):  # alternate so machine drift hits both
        rc = run(check, args.ops, args.repeats)
        rb = run(base, args.ops, args.repeats)
        with_check.append(rc["median_ns"])
        without.append(rb["median_ns"])
        best_c.append(rc["min_ns"])
        best_b.append(rb["min_ns"])
    for _ in range(max(1, args.rounds // 4)):
        listened.append(run(check, args.ops // 10, args.repeats, "--listener")["median_ns"])
    c, b, lst = statistics.median(with_check), statistics.median(without), statistics.median(listened)
    ratio = c / b
    paired = statistics.median(x / y for x, y in zip(with_check, without))
    best_ratio = min(best_c) / min(best_b)
    best_pairs = statistics.median(x / y for x, y in zip(best_c, best_b))
    lines = [
        "# TensorOp event check on a tiny op (CPU)",
        "",
        f"{time.strftime('%Y-%m-%d', time.gmtime())}, {cpu_model()}, "
        f"{os.cpu_count()} logical CPUs (a shared machine: other builds ran beside it). Command: "
        f"`python bench/bench_op_events.py --build {args.build}{' --pin ' + args.pin if args.pin else ''} "
        f"--rounds {args.rounds} --repeats {args.repeats}`.",
        "",
        f"`st::add` of two 4-element float32 tensors (C++, no Python), {args.ops} adds per repeat, {args.repeats} "
        f"repeats per process, {args.rounds} alternating process pairs. The best repeat of a process is the "
        "least disturbed one; with other load on the machine the medians spread widely, so the best-repeat "
        "ratios are the figure to read.",
        "",
        "| variant | best repeat, ns per add (min over processes) | median of process medians, ns | "
        "per-process best, ns |",
        "|---|---:|---:|---|",
        f"| ops compiled without the check (`SPIRALTORCH_NO_OP_EVENTS`) | {min(best_b):.1f} | {b:.1f} | "
        f"{', '.join(f'{v:.0f}' for v in best_b)} |",
        f"| ops with the check, nobody listening | {min(best_c):.1f} | {c:.1f} | "
        f"{', '.join(f'{v:.0f}' for v in best_c)} |",
        f"| ops with the check, one C++ TensorOp listener | | {lst:.1f} | |",
        "",
        f"**Overhead of the check with no listener: {100 * (best_pairs - 1):+.2f}%** (median over the pairs of "
        f"best(check) / best(no check) = {best_pairs:.4f}; min over all = {best_ratio:.4f}; ratio of the medians "
        f"{ratio:.4f}, per-pair median ratio {paired:.4f}). Goal: at most +1%.",
    ]
    report = "\n".join(lines) + "\n"
    print(report)
    if args.out:
        with open(args.out, "w") as f:
            f.write(report)


if __name__ == "__main__":
    main()
