#!/usr/bin/env python
"""SpiralTorch vs PyTorch CPU micro-benchmarks, run side by side in one process.

Usage (from the repository root, dev build):

    PYTHONPATH=python python bench/bench_cpu.py [--quick] [--json results.json]

Every measurement: warm-up calls, then the number of calls per repeat is
calibrated so one repeat lasts roughly ``--target-ms``; the reported value is
the median over repeats of (repeat time / calls). SpiralTorch and PyTorch
repeats are interleaved (st, torch, st, torch, ...) so slow drifts of the
machine (turbo, other processes) hit both libraries alike. Neither library's
thread count is limited: both use all cores by default.
"""
from __future__ import annotations

import argparse
import gc
import json
import math
import os
import platform
import statistics
import sys
import time

import numpy as np
import torch

import spiraltorch as st


# --------------------------------------------------------------------------- timing

def _time_calls(fn, calls: int) -> float:
    t0 = time.perf_counter()
    for _ in range(calls):
        fn()
    return time.perf_counter() - t0


def _calibrate(fn, target_s: float, max_calls: int = 1_000_000) -> int:
    """Number of calls so that one repeat takes about target_s."""
    calls = 1
    while True:
        dt = _time_calls(fn, calls)
        if dt >= target_s * 0.2 or calls >= max_calls:
            break
        calls *= 4 if dt < target_s * 0.02 else 2
    per_call = max(dt / calls, 1e-9)
    return int(max(1, min(max_calls, round(target_s / per_call))))


def bench_pair(st_fn, torch_fn, *, repeats: int, target_s: float, warmup: int = 3):
    """Median seconds per call for (st_fn, torch_fn), interleaved repeats."""
    for _ in range(warmup):
        st_fn()
        torch_fn()
    n_st = _calibrate(st_fn, target_s)
    n_th = _calibrate(torch_fn, target_s)
    t_st, t_th = [], []
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        for _ in range(repeats):
            t_st.append(_time_calls(st_fn, n_st) / n_st)
            t_th.append(_time_calls(torch_fn, n_th) / n_th)
    finally:
        if gc_was_enabled:
            gc.enable()
    _LAST_MIN[:] = [min(t_st), min(t_th)]
    return statistics.median(t_st), statistics.median(t_th)


_LAST_MIN = [float("nan"), float("nan")]  # best repeat of the last bench_pair (kept in --json output)


# --------------------------------------------------------------------------- helpers

def fmt_time(s: float) -> str:
    if s < 1e-3:
        return f"{s * 1e6:.2f} us"
    if s < 1.0:
        return f"{s * 1e3:.3f} ms"
    return f"{s:.3f} s"


def check_close(name, a_st, a_th, rtol=1e-4, atol=1e-4):
    a = np.asarray(a_st.numpy() if hasattr(a_st, "numpy") else a_st, dtype=np.float64)
    b = a_th.detach().numpy().astype(np.float64)
    if not np.allclose(a, b, rtol=rtol, atol=atol):
        err = np.max(np.abs(a - b))
        print(f"WARNING: {name}: SpiralTorch and PyTorch results differ (max abs err {err:.3g})", file=sys.stderr)


# --------------------------------------------------------------------------- benchmarks

def bench_matmul(cfg):
    rows = []
    rng = np.random.default_rng(0)
    for n in cfg["matmul_sizes"]:
        a_np = rng.standard_normal((n, n), dtype=np.float32)
        b_np = rng.standard_normal((n, n), dtype=np.float32)
        a_s, b_s = st.from_numpy(a_np.copy()), st.from_numpy(b_np.copy())
        a_t, b_t = torch.from_numpy(a_np.copy()), torch.from_numpy(b_np.copy())
        check_close(f"matmul n={n}", a_s @ b_s, a_t @ b_t, rtol=1e-3, atol=1e-2 * math.sqrt(n))
        t_s, t_t = bench_pair(lambda: a_s @ b_s, lambda: a_t @ b_t,
                              repeats=cfg["repeats"], target_s=cfg["target_s"] * (2 if n >= 1024 else 1))
        flops = 2.0 * n ** 3
        g_s, g_t = flops / t_s / 1e9, flops / t_t / 1e9
        rows.append(dict(bench="matmul", n=n, st_s=t_s, torch_s=t_t, st_gflops=g_s, torch_gflops=g_t,
                         ratio=g_s / g_t, target=0.9 if n >= 256 else None, st_min_s=_LAST_MIN[0], torch_min_s=_LAST_MIN[1]))
    return rows


def bench_linear_gemms(cfg):
    """The three GEMMs of a Linear layer's training step at transformer shapes: forward x W^T,
    input gradient g W, weight gradient g^T x (views, no copies), tokens x out x in."""
    rows = []
    rng = np.random.default_rng(2)
    for tokens, n_out, n_in in cfg["linear_shapes"]:
        x_np = rng.standard_normal((tokens, n_in), dtype=np.float32)
        w_np = rng.standard_normal((n_out, n_in), dtype=np.float32)
        g_np = rng.standard_normal((tokens, n_out), dtype=np.float32)
        xs, ws, gs = (st.from_numpy(v.copy()) for v in (x_np, w_np, g_np))
        xt, wt, gt = (torch.from_numpy(v.copy()) for v in (x_np, w_np, g_np))
        for kind, fs, ft in (("fwd x W^T", lambda: xs @ ws.t(), lambda: xt @ wt.t()),
                             ("dgrad g W", lambda: gs @ ws, lambda: gt @ wt),
                             ("wgrad g^T x", lambda: gs.t() @ xs, lambda: gt.t() @ xt)):
            check_close(f"linear {kind} {tokens}x{n_out}x{n_in}", fs(), ft(), rtol=1e-3, atol=1e-2 * math.sqrt(n_in))
            t_s, t_t = bench_pair(fs, ft, repeats=cfg["repeats"], target_s=cfg["target_s"])
            flops = 2.0 * tokens * n_out * n_in
            rows.append(dict(bench="linear", kind=kind, shape=f"{tokens}x{n_out}x{n_in}", st_s=t_s, torch_s=t_t,
                             st_gflops=flops / t_s / 1e9, torch_gflops=flops / t_t / 1e9, ratio=t_t / t_s, target=1.0,
                             st_min_s=_LAST_MIN[0], torch_min_s=_LAST_MIN[1]))
    return rows


def bench_elementwise(cfg):
    rows = []
    rng = np.random.default_rng(1)
    for numel in cfg["elem_sizes"]:
        x_np = rng.standard_normal(numel, dtype=np.float32)
        y_np = rng.standard_normal(numel, dtype=np.float32)
        xs, ys = st.from_numpy(x_np.copy()), st.from_numpy(y_np.copy())
        xt, yt = torch.from_numpy(x_np.copy()), torch.from_numpy(y_np.copy())
        xs16, xt16 = xs.to(st.float16), xt.to(torch.float16)
        xsb, xtb = xs.to(st.bfloat16), xt.to(torch.bfloat16)
        ops = {
            "add": (lambda: st.add(xs, ys), lambda: torch.add(xt, yt)),
            "mul": (lambda: st.mul(xs, ys), lambda: torch.mul(xt, yt)),
            "gelu": (lambda: st.gelu(xs), lambda: torch.nn.functional.gelu(xt)),
            "sin": (lambda: xs.sin(), lambda: xt.sin()),
            "sum": (lambda: xs.sum(), lambda: xt.sum()),
            # half inputs reduce without a float32 copy; a scalar the half type cannot hold stays float
            "sum fp16": (lambda: xs16.sum(), lambda: xt16.sum()),
            "sum bf16": (lambda: xsb.sum(), lambda: xtb.sum()),
            "mul fp16 by 0.1": (lambda: xs16 * 0.1, lambda: xt16 * 0.1),
        }
        for name, (fs, ft) in ops.items():
            if numel <= 100_000 and "16" not in name:
                rtol, atol = (1e-5, 1e-3 * math.sqrt(numel)) if name == "sum" else (1e-5, 1e-5)
                check_close(f"{name} numel={numel}", fs(), ft(), rtol=rtol, atol=atol)
            t_s, t_t = bench_pair(fs, ft, repeats=cfg["repeats"], target_s=cfg["target_s"])
            rows.append(dict(bench=name, numel=numel, st_s=t_s, torch_s=t_t, ratio=t_t / t_s,
                             target=1.0 if numel >= 1_000_000 else None, st_min_s=_LAST_MIN[0], torch_min_s=_LAST_MIN[1]))
    return rows


def bench_tiny(cfg):
    a_np = np.array([[1.0, 2.0], [3.0, 4.0]], dtype=np.float32)
    a_s, b_s = st.from_numpy(a_np.copy()), st.from_numpy(a_np.copy())
    a_t, b_t = torch.from_numpy(a_np.copy()), torch.from_numpy(a_np.copy())
    t_s, t_t = bench_pair(lambda: a_s + b_s, lambda: a_t + b_t,
                          repeats=cfg["repeats"] * 2, target_s=cfg["target_s"])
    return [dict(bench="tiny_add_2x2", st_s=t_s, torch_s=t_t, ratio=t_s / t_t, target=0.5, st_min_s=_LAST_MIN[0], torch_min_s=_LAST_MIN[1])]


class _MLP:
    """784 -> W -> W -> 10 MLP on raw tensors; identical math for both libraries."""

    def __init__(self, lib, params_np, x_np, y_np, lr):
        self.lib = lib
        if lib is st:
            conv = lambda a: st.from_numpy(a.copy())
        else:
            conv = lambda a: torch.from_numpy(a.copy())
        self.params = [conv(p).requires_grad_() for p in params_np]
        self.x = conv(x_np)
        self.y = conv(y_np.reshape(-1, 1))
        self.lr = lr

    def step(self):
        lib = self.lib
        w1, b1, w2, b2, w3, b3 = self.params
        h = lib.relu(self.x @ w1 + b1)
        h = lib.relu(h @ w2 + b2)
        logits = h @ w3 + b3
        logp = lib.log_softmax(logits, dim=1)
        loss = -logp.gather(1, self.y).mean()
        loss.backward()
        with lib.no_grad():
            for p in self.params:
                p.sub_(p.grad, alpha=self.lr)
                p.grad = None
        return loss


def bench_mlp(cfg):
    batch, width, din, dout = 64, 512, 784, 10
    rng = np.random.default_rng(2)

    def init(fan_in, fan_out):
        bound = 1.0 / math.sqrt(fan_in)
        return (rng.uniform(-bound, bound, (fan_in, fan_out)).astype(np.float32),
                rng.uniform(-bound, bound, (fan_out,)).astype(np.float32))

    params = [*init(din, width), *init(width, width), *init(width, dout)]
    x_np = rng.standard_normal((batch, din), dtype=np.float32)
    y_np = rng.integers(0, dout, batch).astype(np.int64)
    m_s, m_t = _MLP(st, params, x_np, y_np, 0.01), _MLP(torch, params, x_np, y_np, 0.01)
    # Same data, same init: the first losses must agree (checks the math is identical).
    l_s, l_t = m_s.step(), m_t.step()
    if abs(l_s.item() - l_t.item()) > 1e-4 * max(1.0, abs(l_t.item())):
        print(f"WARNING: MLP losses differ: st={l_s.item():.6f} torch={l_t.item():.6f}", file=sys.stderr)
    t_s, t_t = bench_pair(m_s.step, m_t.step, repeats=cfg["repeats"], target_s=cfg["target_s"] * 2)
    return [dict(bench="mlp_train_step", batch=batch, width=width, st_s=t_s, torch_s=t_t, ratio=t_t / t_s,
                 target=1.0, st_min_s=_LAST_MIN[0], torch_min_s=_LAST_MIN[1])]


# --------------------------------------------------------------------------- report

def machine_info():
    d = st.describe_device("cpu")
    return {
        "cpu_model": d.get("cpu_model"),
        "logical_cores": d.get("logical_cores"),
        "st_threads": d.get("threads"),
        "simd": d.get("simd"),
        "cpu_capability": d.get("cpu_capability"),
        "st_blas": f"{d.get('blas')} core={d.get('blas_core')} threads={d.get('blas_threads')}",
        "st_gemm": (f"{d.get('gemm_backend')} -> " + ", ".join(f"{k}: {v}" for k, v in d.get("gemm_dispatch", {}).items())
                    + f"; oneDNN {d.get('onednn')}; MKL {d.get('mkl') or 'not loaded'}"),
        "torch_version": torch.__version__,
        "torch_threads": torch.get_num_threads(),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "loadavg_at_start": os.getloadavg()[0],
    }


def _mark(ratio, target, higher_is_better=True):
    if target is None:
        return ""
    ok = ratio >= target if higher_is_better else ratio <= target
    return "ok" if ok else "MISS"


def render(info, results):
    out = []
    out.append("## Machine")
    out.append("")
    out.append(f"- CPU: {info['cpu_model']}, {info['logical_cores']} logical cores, SIMD {info['simd']}, "
               f"SpiralTorch CPU kernels {info.get('cpu_capability') or 'not reported (a build before the per-capability kernels)'}")
    out.append(f"- SpiralTorch threads: {info['st_threads']}; BLAS: {info['st_blas']}")
    out.append(f"- SpiralTorch GEMM dispatch: {info['st_gemm']}")
    out.append(f"- torch {info['torch_version']} (threads: {info['torch_threads']}); "
               f"Python {info['python']}; {info['platform']}")
    load = info["loadavg_at_start"]
    if load > 0.5 * (info["logical_cores"] or 1):
        out.append(f"- **WARNING: load average {load:.1f} at start on {info['logical_cores']} cores: other processes "
                   f"compete for the CPU, multi-threaded timings are unreliable (consider --threads 1)**")
    out.append("")

    out.append("## 1. Square float32 matmul (GFLOP/s, higher is better)")
    out.append("")
    out.append("ratio = SpiralTorch GFLOP/s / PyTorch GFLOP/s (**> 1 means SpiralTorch faster**; target >= 0.9 for n >= 256)")
    out.append("")
    out.append("| n | SpiralTorch GFLOP/s | PyTorch GFLOP/s | SpiralTorch time | PyTorch time | ratio st/torch | target |")
    out.append("|---:|---:|---:|---:|---:|---:|:---:|")
    for r in results["matmul"]:
        out.append(f"| {r['n']} | {r['st_gflops']:.1f} | {r['torch_gflops']:.1f} | {fmt_time(r['st_s'])} | "
                   f"{fmt_time(r['torch_s'])} | {r['ratio']:.2f} | {_mark(r['ratio'], r['target'])} |")
    out.append("")

    if results.get("linear"):
        out.append("## 1b. Transformer-shaped float32 GEMMs (a Linear layer's three products, tokens x out x in)")
        out.append("")
        out.append("ratio = PyTorch time / SpiralTorch time (**> 1 means SpiralTorch faster**; target >= 1.0)")
        out.append("")
        out.append("| product | shape | SpiralTorch GFLOP/s | PyTorch GFLOP/s | ratio torch/st | target |")
        out.append("|---|---|---:|---:|---:|:---:|")
        for r in results["linear"]:
            out.append(f"| {r['kind']} | {r['shape']} | {r['st_gflops']:.1f} | {r['torch_gflops']:.1f} | "
                       f"{r['ratio']:.2f} | {_mark(r['ratio'], r['target'])} |")
        out.append("")

    out.append("## 2. Elementwise / reduction, float32 (time per call, lower is better)")
    out.append("")
    out.append("ratio = PyTorch time / SpiralTorch time (**> 1 means SpiralTorch faster**; target >= 1.0 for numel >= 1e6)")
    out.append("")
    out.append("| op | numel | SpiralTorch | PyTorch | ratio torch/st | target |")
    out.append("|---|---:|---:|---:|---:|:---:|")
    for r in results["elementwise"]:
        out.append(f"| {r['bench']} | {r['numel']:.0e} | {fmt_time(r['st_s'])} | {fmt_time(r['torch_s'])} | "
                   f"{r['ratio']:.2f} | {_mark(r['ratio'], r['target'])} |")
    out.append("")

    r = results["tiny"][0]
    out.append("## 3. Python-call latency: 2x2 float32 `a + b` (lower is better)")
    out.append("")
    out.append("ratio = SpiralTorch time / PyTorch time (**< 1 means SpiralTorch faster**; target <= 0.5)")
    out.append("")
    out.append("| op | SpiralTorch | PyTorch | ratio st/torch | target |")
    out.append("|---|---:|---:|---:|:---:|")
    out.append(f"| a + b (2x2) | {r['st_s'] * 1e6:.2f} us | {r['torch_s'] * 1e6:.2f} us | {r['ratio']:.2f} | "
               f"{_mark(r['ratio'], r['target'], higher_is_better=False)} |")
    out.append("")

    r = results["mlp"][0]
    out.append("## 4. MLP training step, 784-512-512-10, batch 64, raw tensors + autograd + SGD (lower is better)")
    out.append("")
    out.append("ratio = PyTorch time / SpiralTorch time (**> 1 means SpiralTorch faster**)")
    out.append("")
    out.append("| benchmark | SpiralTorch ms/step | PyTorch ms/step | ratio torch/st |")
    out.append("|---|---:|---:|---:|")
    out.append(f"| mlp train step | {r['st_s'] * 1e3:.3f} | {r['torch_s'] * 1e3:.3f} | {r['ratio']:.2f} |")
    out.append("")
    return "\n".join(out)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="fewer/shorter repeats (~4x faster, noisier)")
    ap.add_argument("--json", metavar="PATH", help="also write all results as JSON to PATH")
    ap.add_argument("--only", choices=["matmul", "linear", "elementwise", "tiny", "mlp"], action="append",
                    help="run only the given section(s); may be repeated")
    ap.add_argument("--threads", type=int, default=None,
                    help="set both libraries to N threads (default: leave both at all cores)")
    args = ap.parse_args(argv)
    if args.threads:
        st.set_num_threads(args.threads)
        torch.set_num_threads(args.threads)

    cfg = {
        "repeats": 5 if args.quick else 9,
        "target_s": 0.02 if args.quick else 0.05,
        "matmul_sizes": [64, 128, 256, 512, 1024, 2048],
        "linear_shapes": [(1024, 768, 256), (1024, 1024, 1024), (1024, 4096, 256), (1024, 256, 4096)],
        "elem_sizes": [10 ** 3, 10 ** 4, 10 ** 5, 10 ** 6, 10 ** 7],
    }
    st.manual_seed(0)
    torch.manual_seed(0)
    info = machine_info()
    sections = args.only or ["matmul", "linear", "elementwise", "tiny", "mlp"]
    fns = {"matmul": bench_matmul, "linear": bench_linear_gemms, "elementwise": bench_elementwise, "tiny": bench_tiny,
           "mlp": bench_mlp}
    results = {k: [] for k in fns}
    t0 = time.perf_counter()
    for s in sections:
        results[s] = fns[s](cfg)
    elapsed = time.perf_counter() - t0

    if not args.only:
        print(render(info, results))
    else:
        # Partial runs: render only what ran.
        text = render(info, {k: v or [dict(bench="-", st_s=float("nan"), torch_s=float("nan"), ratio=float("nan"),
                                           target=None, n=0, numel=0, st_gflops=float("nan"),
                                           torch_gflops=float("nan"), kind="-", shape="-")]
                             for k, v in results.items()})
        print(text)
    print(f"_total benchmark time: {elapsed:.1f} s{' (--quick)' if args.quick else ''}_")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"machine": info, "config": cfg, "results": results, "elapsed_s": elapsed}, f, indent=2)
        print(f"results written to {args.json}")


if __name__ == "__main__":
    main()
