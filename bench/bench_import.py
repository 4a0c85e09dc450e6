#!/usr/bin/env python
"""Import time of ``import spiraltorch`` against ``import torch``, each in fresh processes.

Usage (from the repository root, dev build):

    PYTHONPATH=python python bench/bench_import.py [--runs 5]

Each library is imported ``--runs`` times, every time in a new interpreter (so nothing is cached
in the process; the OS file cache is warm after the first run of each). Three numbers per library,
each the best of the runs:

- import: ``time.perf_counter()`` around the ``import`` statement inside the child;
- process: the whole ``python -c "import X"`` as the parent sees it (interpreter start-up included,
  what a command-line tool built on the library pays);
- -X importtime: the cumulative microseconds of the top-level module in a separate
  ``python -X importtime`` run (the interpreter's own account of the import, from its stderr).

The runs of the two libraries alternate (st, torch, st, torch, ...) so drifts of the machine hit
both alike. The ratio is spiraltorch's time over torch's (below 1: spiraltorch imports faster).
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from machine import cpu_model  # noqa: E402

_CHILD = "import time; t = time.perf_counter(); import {mod}; print(time.perf_counter() - t)"


def _one(module: str) -> tuple[float, float, float]:
    """(seconds of the import statement, of the whole process, -X importtime cumulative seconds)."""
    t = time.perf_counter()
    r = subprocess.run([sys.executable, "-c", _CHILD.format(mod=module)], capture_output=True, text=True, check=True)
    process = time.perf_counter() - t
    wall = float(r.stdout.strip().splitlines()[-1])
    r = subprocess.run([sys.executable, "-X", "importtime", "-c", f"import {module}"],
                       capture_output=True, text=True, check=True)
    cumulative = None
    for line in r.stderr.splitlines():  # "import time: self [us] | cumulative | imported package"
        m = re.match(r"import time:\s*(\d+)\s*\|\s*(\d+)\s*\|\s*(\S+)\s*$", line)
        if m and m.group(3) == module:
            cumulative = int(m.group(2)) / 1e6
    if cumulative is None:
        raise RuntimeError(f"no -X importtime line for {module}:\n{r.stderr[-2000:]}")
    return wall, process, cumulative


def measure(runs: int) -> dict[str, dict[str, float]]:
    samples: dict[str, list[tuple[float, float, float]]] = {"spiraltorch": [], "torch": []}
    for _ in range(runs):
        for module in samples:
            samples[module].append(_one(module))
    keys = ("import", "process", "importtime")
    return {m: {k: min(x[i] for x in s) for i, k in enumerate(keys)} for m, s in samples.items()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5, help="fresh processes per library (best is kept)")
    args = ap.parse_args()
    res = measure(args.runs)
    st, th = res["spiraltorch"], res["torch"]
    print(f"CPU: {cpu_model()}, {os.cpu_count()} cores; Python {sys.version.split()[0]}; "
          f"best of {args.runs} fresh processes")
    print(f"{'':19s}{'import (ms)':>12s}{'process (ms)':>14s}{'-X importtime (ms)':>20s}")
    for name, r in res.items():
        print(f"import {name:12s}{r['import'] * 1e3:12.1f}{r['process'] * 1e3:14.1f}{r['importtime'] * 1e3:20.1f}")
    print("ratio spiraltorch/torch: " + ", ".join(f"{k} {st[k] / th[k]:.2f}" for k in st))


if __name__ == "__main__":
    main()
