"""Where the wgpu backend's time goes on a GPU: sync cost, GEMM throughput per transpose and per
calls-per-sync, and the MLP training step of bench_wgpu.py split into its parts.

Usage: python bench/profile_wgpu_step.py [--dump DIR]

Rows:
- sync: an empty ``st.wgpu.synchronize()``, a tiny add plus sync, a tiny add read back with ``.item()``;
- GEMM: ``x @ y`` for every transpose (views, no copies) at the bench's n=4096 and the MLP's shapes, timed
  with one call per sync and with five, in ms and TFLOP/s;
- MLP (784-1024-1024-10, batch 256, Adam): forward, forward + loss, + backward, the whole step, the
  optimizer step alone, the host-side time of a call without its sync, and the dispatches and host reads
  per step (``st.wgpu.dispatches()``, ``st.wgpu.host_reads()``).
``--dump DIR`` sets SPIRALTORCH_WGPU_DUMP_WGSL so every compiled kernel's text lands in DIR; ``--variants``
times the GEMM rows again in child processes with SPIRALTORCH_WGPU_GEMM_TILE=64 and =128 (one tile shape
forced for every product, no split K) and with SPIRALTORCH_WGPU_GEMM_READONLY=0 (A and B bound read_write
instead of read-only); ``--gemm-only`` runs only the GEMM rows, ``--no-gemm`` all but them. At the end two child processes: one
runs a training step with SPIRALTORCH_WGPU_TRACE=1 and prints what it ran (dispatches per kernel in order of
first use, buffer copies, submits, host reads), one repeats the sync and MLP rows with
SPIRALTORCH_WGPU_SPIN_US=0 (waits block at once instead of spinning first)."""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import numpy as np


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dump", default=None, help="write each compiled WGSL kernel into this directory")
    ap.add_argument("--variants", action="store_true",
                    help="also time the GEMMs with each tile shape forced and with read_write operands")
    ap.add_argument("--gemm-only", action="store_true", help="only the GEMM rows")
    ap.add_argument("--no-gemm", action="store_true", help="all rows but the GEMM ones")
    ap.add_argument("--trace-step", action="store_true", help=argparse.SUPPRESS)  # the tracing child
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)  # no further children
    args = ap.parse_args()
    if args.trace_step:
        os.environ["SPIRALTORCH_WGPU_TRACE"] = "1"  # read when the wgpu context starts
    if args.dump:
        os.makedirs(args.dump, exist_ok=True)
        os.environ["SPIRALTORCH_WGPU_DUMP_WGSL"] = args.dump  # read when a kernel compiles
    import spiraltorch as st
    import spiraltorch.nn.functional as F

    if not st.wgpu.is_available():
        sys.exit(f"wgpu is not available: {st.wgpu.unavailable_reason()}")
    sync = st.wgpu.synchronize

    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from bench_wgpu import timed

    def ms(fn, reps=20, per=1):
        """Median ms per call over `reps` rounds of `per` calls and one sync (bench_wgpu's timing)."""
        return timed(fn, "wgpu", reps, warm=3, per_sync=per) * 1e3

    print("adapter:", st.wgpu.adapter_info()["name"], "| forced GEMM tile:",
          os.environ.get("SPIRALTORCH_WGPU_GEMM_TILE", "none"), "| read-only operands:",
          os.environ.get("SPIRALTORCH_WGPU_GEMM_READONLY", "1") != "0")
    if not args.trace_step:
        z = st.zeros(4).to("wgpu")
        print(f"empty sync {ms(lambda: None, 50):.4f} ms; tiny add + sync {ms(lambda: z + 1, 50):.4f} ms; "
              f"tiny add + .item() {ms(lambda: (z + 1).sum().item(), 50):.4f} ms")
        print(f"100 tiny adds per sync: {ms(lambda: [z + 1 for _ in range(100)], 10) / 100:.4f} ms each")

    rng = np.random.default_rng(0)
    shapes = [(4096, 4096, 4096), (256, 784, 1024), (256, 1024, 1024), (1024, 256, 784)]
    for m, k, n in [] if args.no_gemm or args.trace_step else shapes:
        def dev(shape):
            return st.tensor(rng.standard_normal(shape, dtype=np.float32)).to("wgpu")
        a, b, at, bt = dev((m, k)), dev((k, n)), dev((k, m)).t(), dev((n, k)).t()
        gflop = 2 * m * n * k / 1e9
        cells = []
        for name, (x, y) in {"NN": (a, b), "TN": (at, b), "NT": (a, bt), "TT": (at, bt)}.items():
            t1 = ms(lambda: x @ y, 10)
            t5 = ms(lambda: x @ y, 5, per=5)
            cells.append(f"{name} {t1:.3f} ms {gflop / t1:.1f} TF/s | x5 {t5:.3f} ms {gflop / t5:.1f} TF/s")
        print(f"gemm {m}x{k}x{n}: " + "; ".join(cells), flush=True)
    if args.variants:
        import subprocess
        for var, value in (("SPIRALTORCH_WGPU_GEMM_TILE", "64"), ("SPIRALTORCH_WGPU_GEMM_TILE", "128"),
                           ("SPIRALTORCH_WGPU_GEMM_READONLY", "0")):
            env = dict(os.environ, **{var: value})
            subprocess.run([sys.executable, os.path.abspath(__file__), "--gemm-only"], env=env, check=False)
    if args.gemm_only:
        return

    st.manual_seed(0)
    model = st.nn.Sequential(st.nn.Linear(784, 1024), st.nn.ReLU(), st.nn.Linear(1024, 1024), st.nn.ReLU(),
                             st.nn.Linear(1024, 10)).to("wgpu")
    opt = st.optim.Adam(model.parameters(), lr=1e-3)
    x = st.tensor(rng.random((256, 784), dtype=np.float32)).to("wgpu")
    y = st.tensor(np.arange(256) % 10).to("wgpu")

    def forward():
        return model(x)

    def loss():
        return F.cross_entropy(model(x), y)

    def backward():
        opt.zero_grad()
        F.cross_entropy(model(x), y).backward()

    def step():
        backward()
        opt.step()

    if args.trace_step:
        for _ in range(3):
            step()
        sync()
        print("=== one traced step", file=sys.stderr, flush=True)
        step()
        sync()
        return
    for name, fn in [("forward", forward), ("forward + loss", loss), ("+ backward", backward), ("full step", step)]:
        print(f"mlp {name}: {ms(fn, 30):.3f} ms (5 per sync: {ms(fn, 10, per=5):.3f} ms)", flush=True)
    backward()
    print(f"mlp optimizer step alone: {ms(opt.step, 30):.3f} ms")
    for name, fn in [("forward", forward), ("full step", step)]:
        for _ in range(3):
            fn()
        sync()
        ts = []
        for _ in range(20):
            t0 = time.perf_counter()
            fn()
            ts.append(time.perf_counter() - t0)
            sync()
        print(f"mlp {name}, host time of the call without its sync: {statistics.median(ts) * 1e3:.3f} ms")
    r0, d0 = st.wgpu.host_reads(), st.wgpu.dispatches()
    step()
    sync()
    print(f"per step: {st.wgpu.dispatches() - d0} dispatches, {st.wgpu.host_reads() - r0} host reads", flush=True)
    if args.child:
        return
    import subprocess
    me = [sys.executable, os.path.abspath(__file__)]
    run = subprocess.run(me + ["--trace-step"], capture_output=True, text=True, check=False)
    lines = run.stderr.split("=== one traced step\n", 1)[-1].splitlines()
    counts: dict[str, int] = {}
    for line in lines:
        if line.startswith("wgpu dispatch "):
            label = line[len("wgpu dispatch "):].rsplit(" [", 1)[0]
            counts[label] = counts.get(label, 0) + 1
    print("one step, traced (SPIRALTORCH_WGPU_TRACE=1): dispatches per kernel in order of first use:")
    for label, c in counts.items():
        print(f"  {c:3d} x {label[:110]}")
    print(f"  buffer copies {sum(l.startswith('wgpu copy') for l in lines)}, submits "
          f"{sum(l.startswith('wgpu submit') for l in lines)}, host reads {sum(l.startswith('wgpu host read') for l in lines)}")
    print("the sync and MLP rows again with SPIRALTORCH_WGPU_SPIN_US=0 (waits block at once):", flush=True)
    subprocess.run(me + ["--no-gemm", "--child"], env=dict(os.environ, SPIRALTORCH_WGPU_SPIN_US="0"), check=False)


if __name__ == "__main__":
    main()
