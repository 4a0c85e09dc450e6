"""Data-parallel training steps on the CPU: SpiralTorch DDP over MPI vs PyTorch DDP over gloo.

Usage: python bench/bench_ddp.py [--steps 30] [--batch 64] [--out bench/results/ddp_cpu.md]

The PyTorch-quickstart Fashion-MNIST MLP (784-512-512-10, SGD with momentum, cross-entropy),
the same real images in both libraries, one thread per rank. Six jobs, one after the other, per
library: one plain process (no DDP), DDP with 1 rank and DDP with 2 ranks (SpiralTorch through
``spiral-run`` over Open MPI, PyTorch through ``torch.distributed.run`` over gloo). Each rank
trains on its own batch of ``--batch`` rows, so 2 ranks process twice the samples per step. The
table shows the median step time of rank 0 after warm-up, the 2-rank/1-process ratio of each
library (1.0 = perfect weak scaling; on a machine with fewer free cores than ranks it cannot
be reached) and SpiralTorch/PyTorch per configuration (< 1 = SpiralTorch faster).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Dict, List

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def _fashion(batch: int, steps: int):
    """``steps`` batches of real Fashion-MNIST images and labels (as NumPy) for this rank."""
    import numpy as np

    import spiraltorch as st

    images, labels = st.data.load_fashion_mnist(split="train")
    rank = int(os.environ.get("RANK", "0"))
    n = batch * steps
    x = images[rank * n:(rank + 1) * n].numpy().reshape(steps, batch, 1, 28, 28)
    y = labels[rank * n:(rank + 1) * n].numpy().reshape(steps, batch)
    return np.ascontiguousarray(x), np.ascontiguousarray(y)


def _time_steps(step, n: int, warm: int = 3) -> List[float]:
    for i in range(warm):
        step(i)
    times = []
    for i in range(n):
        t0 = time.perf_counter()
        step(i)
        times.append((time.perf_counter() - t0) * 1e3)
    return times


def worker_spiraltorch(args: argparse.Namespace) -> None:
    """One rank of the SpiralTorch job (DDP when WORLD_SIZE > 1)."""
    import spiraltorch as st
    from spiraltorch import nn

    st.set_num_threads(1)
    wrap = "RANK" in os.environ  # started by a launcher: DDP, also with one rank
    st.manual_seed(0)
    model = nn.Sequential(nn.Flatten(), nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(),
                          nn.Linear(512, 10))
    if wrap:
        import spiraltorch.distributed as dist

        dist.init_process_group("mpi", timeout=300)
        model = nn.parallel.DistributedDataParallel(model)
    opt = st.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    loss_fn = nn.CrossEntropyLoss()
    xs, ys = _fashion(args.batch, args.steps + 3)
    x = [st.tensor(a) for a in xs]
    y = [st.tensor(a) for a in ys]

    def step(i: int) -> None:
        opt.zero_grad()
        loss_fn(model(x[i]), y[i]).backward()
        opt.step()

    times = _time_steps(step, args.steps)
    if wrap:
        dist.destroy_process_group()
    _save(args.out, times)


def worker_torch(args: argparse.Namespace) -> None:
    """One rank of the PyTorch job (DDP over gloo when WORLD_SIZE > 1)."""
    import torch
    import torch.nn as tnn

    torch.set_num_threads(1)
    wrap = "RANK" in os.environ
    torch.manual_seed(0)
    model = tnn.Sequential(tnn.Flatten(), tnn.Linear(784, 512), tnn.ReLU(), tnn.Linear(512, 512), tnn.ReLU(),
                           tnn.Linear(512, 10))
    if wrap:
        import torch.distributed as tdist

        tdist.init_process_group("gloo")
        model = tnn.parallel.DistributedDataParallel(model)
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    loss_fn = tnn.CrossEntropyLoss()
    xs, ys = _fashion(args.batch, args.steps + 3)
    x = [torch.from_numpy(a) for a in xs]
    y = [torch.from_numpy(a) for a in ys]

    def step(i: int) -> None:
        opt.zero_grad()
        loss_fn(model(x[i]), y[i]).backward()
        opt.step()

    times = _time_steps(step, args.steps)
    if wrap:
        tdist.destroy_process_group()
    _save(args.out, times)


def _save(out: str, times: List[float]) -> None:
    if int(os.environ.get("RANK", "0")) == 0:
        with open(out, "w") as f:
            json.dump(times, f)


def _run(lib: str, ranks: int, args: argparse.Namespace, tmp: str) -> float:
    """Runs one job (ranks 0: one plain process; else that many DDP ranks through the
    library's launcher); returns rank 0's median step time in ms."""
    out = os.path.join(tmp, f"{lib}{ranks}.json")
    me = [os.path.abspath(__file__), "--worker", lib, "--steps", str(args.steps), "--batch", str(args.batch),
          "--out", out]
    env = dict(os.environ, OMP_NUM_THREADS="1")
    if ranks == 0:
        cmd = [sys.executable] + me
    elif lib == "spiraltorch":
        root = ["--allow-run-as-root"] if os.geteuid() == 0 else []  # spiral-run refuses root otherwise
        cmd = [sys.executable, "-m", "spiraltorch.launch", "--nproc-per-node", str(ranks), *root] + me
    else:
        from spiraltorch.launch import _free_port

        cmd = [sys.executable, "-m", "torch.distributed.run", "--nproc-per-node", str(ranks), "--master-port",
               str(_free_port())] + me
    subprocess.run(cmd, env=env, check=True)
    with open(out) as f:
        return statistics.median(json.load(f))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--steps", type=int, default=30)
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--out", default=None, help="write the Markdown table here too")
    p.add_argument("--worker", choices=("spiraltorch", "torch"), help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.worker == "spiraltorch":
        return worker_spiraltorch(args)
    if args.worker == "torch":
        return worker_torch(args)

    sys.path.insert(0, HERE)
    import torch

    from machine import cpu_model

    import spiraltorch as st

    load = os.getloadavg()[0]
    ms: Dict[str, float] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for lib in ("spiraltorch", "torch"):
            for ranks in (0, 1, 2):
                ms[f"{lib}{ranks}"] = _run(lib, ranks, args, tmp)
                what = "plain" if ranks == 0 else f"DDP x{ranks}"
                print(f"{lib:12s} {what:8s} median step {ms[f'{lib}{ranks}']:8.2f} ms", flush=True)
    lines = [
        "# DDP on the CPU: SpiralTorch (Open MPI) vs PyTorch (gloo)",
        "",
        f"CPU: {cpu_model()} ({os.cpu_count()} logical CPUs visible, 1-minute load average {load:.1f} at the start: "
        "other work shared the machine), one thread per rank. "
        f"SpiralTorch {st.__version__} (MPI: {st._core.distributed.mpi_library_version().split(',')[0]}), "
        f"PyTorch {torch.__version__}.",
        f"Fashion-MNIST MLP 784-512-512-10, SGD momentum, batch {args.batch} per rank, median of {args.steps} steps "
        "(rank 0) after 3 warm-up steps. `python bench/bench_ddp.py`",
        "",
        "| library | 1 process, no DDP (ms/step) | DDP, 1 rank (ms/step) | DDP, 2 ranks (ms/step) "
        "| 2 ranks / 1 process |",
        "|---|---|---|---|---|",
    ]
    for lib in ("spiraltorch", "torch"):
        a, b, c = ms[f"{lib}0"], ms[f"{lib}1"], ms[f"{lib}2"]
        lines.append(f"| {lib} | {a:.2f} | {b:.2f} | {c:.2f} | {c / a:.2f} |")
    r = {k: ms[f"spiraltorch{k}"] / ms[f"torch{k}"] for k in (0, 1, 2)}
    lines += [
        "",
        "| ratio SpiralTorch / PyTorch (< 1: SpiralTorch faster) | 1 process | DDP, 1 rank | DDP, 2 ranks |",
        "|---|---|---|---|",
        f"| step time | {r[0]:.2f} | {r[1]:.2f} | {r[2]:.2f} |",
    ]
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
