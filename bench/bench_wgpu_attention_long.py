"""Causal scaled_dot_product_attention on the wgpu backend at long T: the tiled kernel against the
composite it replaced (issue 39).

    PYTHONPATH=python python bench/bench_wgpu_attention_long.py [--lengths 1024 2048 4096] [--rounds 3]

Forward + backward of scaled_dot_product_attention(q, k, v, is_causal=True).sum(), B=1, 8 heads,
d=64, float32, on "wgpu". "tiled" is src/backend/wgpu/attention.cpp (kernels/attention.wgsl);
"composite" is the same call with SPIRALTORCH_WGPU_FLASH=0: batched GEMMs around a materialised
(L, S) softmax (src/nn/attention.cpp's fused_attention), which is what wgpu ran before. Each (path, T)
runs in a fresh interpreter (the switch is read once): time is the best of --rounds calls after a
warm-up, each ending in st.wgpu.synchronize(), as wall time and as the process's CPU time (lavapipe's
worker threads included; less disturbed than wall time on a shared machine); "wgpu peak" is the wgpu allocator's peak above what
was allocated before the call (device buffers; on lavapipe they live in host memory), "VmHWM" the
process's peak resident memory. A failure (an allocation over the adapter's limits) is printed as
such. No PyTorch column: PyTorch has no wgpu device (bench/results/attention_long_cpu.md has the
CPU comparison).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

_CHILD = r"""
import json, resource, sys, time
import numpy as np
import spiraltorch as st
import spiraltorch.nn.functional as F
T, rounds = int(sys.argv[1]), int(sys.argv[2])
rng = np.random.default_rng(0)
ins = [st.tensor(rng.standard_normal((1, 8, T, 64)).astype(np.float32), device="wgpu") for _ in range(3)]
for t in ins:
    t.requires_grad = True

def cpu_s():  # user + system time of every thread of this process (lavapipe's workers included)
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime

def step():
    F.scaled_dot_product_attention(*ins, is_causal=True).sum().backward()
    for t in ins:
        t.grad = None
    st.wgpu.synchronize()

res = {}
try:
    st.wgpu.synchronize()
    base = st.wgpu.memory_allocated()
    st.wgpu.reset_peak_memory_stats()
    step()  # warm-up: pipelines compiled, buffers cached
    res["peak_mib"] = (st.wgpu.max_memory_allocated() - base) / 2**20
    best = best_cpu = float("inf")
    for _ in range(rounds):
        c0 = cpu_s()
        t0 = time.perf_counter()
        step()
        best = min(best, time.perf_counter() - t0)
        best_cpu = min(best_cpu, cpu_s() - c0)
    res["ms"] = best * 1e3
    res["cpu_ms"] = best_cpu * 1e3
except Exception as e:  # reported in the table, not hidden
    res["error"] = f"{type(e).__name__}: {str(e).splitlines()[0][:160]}"
with open("/proc/self/status") as f:
    res["hwm_mib"] = next(int(l.split()[1]) for l in f if l.startswith("VmHWM")) / 1024
print(json.dumps(res))
"""


def measure(T, rounds, flash):
    env = dict(os.environ)
    if not flash:
        env["SPIRALTORCH_WGPU_FLASH"] = "0"
    r = subprocess.run([sys.executable, "-c", _CHILD, str(T), str(rounds)], capture_output=True, text=True, env=env)
    lines = [ln for ln in r.stdout.splitlines() if ln.startswith("{")]
    if r.returncode != 0 or not lines:
        return {"error": f"exit {r.returncode}: {r.stderr.strip().splitlines()[-1] if r.stderr.strip() else ''}"}
    return json.loads(lines[-1])


def cell(r):
    if "error" in r:
        return f"fails ({r['error']})", "-", "-", f"{r['hwm_mib']:.0f}" if "hwm_mib" in r else "-"
    return f"{r['ms']:.0f}", f"{r['cpu_ms']:.0f}", f"{r['peak_mib']:.1f}", f"{r['hwm_mib']:.0f}"


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--lengths", type=int, nargs="+", default=[1024, 2048, 4096])
    p.add_argument("--rounds", type=int, default=3)
    args = p.parse_args()
    import spiraltorch as st

    info = st.wgpu.adapter_info()
    print(f"# wgpu adapter: {info['name']} ({info['driver']}), causal SDPA fwd+bwd, B=1, 8 heads, d=64, float32")
    print("| T | path | ms | CPU ms | wgpu peak MiB | VmHWM MiB |")
    print("|---|---|---:|---:|---:|---:|")
    for T in args.lengths:
        for name, flash in (("composite (before)", False), ("tiled (after)", True)):
            ms, cpu_ms, peak, hwm = cell(measure(T, args.rounds, flash))
            print(f"| {T} | {name} | {ms} | {cpu_ms} | {peak} | {hwm} |", flush=True)


if __name__ == "__main__":
    main()
