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
import platform
import statistics
import subprocess
import time


def run(binary: str, ops: int, repeats: int, *extra: str) -> dict[str, float]:
    out = subprocess.run([binary, str(ops), str(repeats), *extra], capture_output=True, text=True, check=True).stdout
    fields = dict(kv.split("=") for kv in out.split()[1:])
    return {k: float(v) for k, v in fields.items()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default="build/test")
    ap.add_argument("--ops", type=int, default=100_000)
    ap.add_argument("--repeats", type=int, default=15, help="timed repeats per process")
    ap.add_argument("--rounds", type=int, default=8, help="alternating process pairs")
    ap.add_argument("--out", default=None, help="write a Markdown report here")
    args = ap.parse_args()
    check = os.path.join(args.build, "bench_op_events")
    base = os.path.join(args.build, "bench_op_events_baseline")
    with_check, without, listened = [], [], []
    for _ in range(args.rounds):  # alternate so machine drift hits both
        with_check.append(run(check, args.ops, args.repeats)["median_ns"])
        without.append(run(base, args.ops, args.repeats)["median_ns"])
    for _ in range(max(1, args.rounds // 4)):
        listened.append(run(check, args.ops // 10, args.repeats, "--listener")["median_ns"])
    c, b, lst = statistics.median(with_check), statistics.median(without), statistics.median(listened)
    ratio = c / b
    lines = [
        "# TensorOp event check on a tiny op (CPU)",
        "",
        f"{time.strftime('%Y-%m-%d', time.gmtime())}, {platform.processor() or platform.machine()}, "
        f"{os.cpu_count()} logical CPUs (shared machine). Command: `python bench/bench_op_events.py "
        f"--build {args.build}`.",
        "",
        f"`st::add` of two 4-element float32 tensors, {args.ops} ops per repeat, {args.repeats} repeats per process, "
        f"median per process, median over {args.rounds} alternating process pairs.",
        "",
        "| variant | ns per add | per-process medians |",
        "|---|---:|---|",
        f"| ops without the check (`SPIRALTORCH_NO_OP_EVENTS`) | {b:.1f} | {', '.join(f'{v:.1f}' for v in without)} |",
        f"| ops with the check, nobody listening | {c:.1f} | {', '.join(f'{v:.1f}' for v in with_check)} |",
        f"| ops with the check, one C++ TensorOp listener | {lst:.1f} | {', '.join(f'{v:.1f}' for v in listened)} |",
        "",
        f"**Overhead with no listener: {100 * (ratio - 1):+.2f}%** (ratio {ratio:.4f}; goal: at most +1%).",
    ]
    report = "\n".join(lines) + "\n"
    print(report)
    if args.out:
        with open(args.out, "w") as f:
            f.write(report)


if __name__ == "__main__":
    main()
