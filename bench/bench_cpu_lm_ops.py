"""The pieces of the CPU LM step of bench_cpu_models.py, one at a time: SpiralTorch vs PyTorch.

Usage: python bench/bench_cpu_lm_ops.py [--threads 2] [--bf16]
       python bench/bench_cpu_lm_ops.py --long-attention [--lengths 1024 2048 4096 8192] [--rounds 5] [--dropout P]

Each row times forward + backward of one op at the shapes of the causal LM (B=8, T=128, d=256, 4 heads,
FF 1024, vocab 4096), both libraries alternating, median of rounds; AdamW is one optimizer step over the
LM's parameters. Used to find where the step's time goes (issue #20).

--long-attention: causal scaled_dot_product_attention forward + backward at B=1, 8 heads, d=64, float32
and long T (issue #39). Time: one process, the two libraries alternating call by call, best of --rounds
(the machine is shared, so the minimum is the least disturbed run). Memory: for each library and T a
fresh interpreter that imports only that library builds the inputs and runs one forward + backward;
it reports its peak RSS (VmHWM: the whole process, library included) and that peak minus the RSS
just before the call (what the call itself added)."""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

import numpy as np


def timed(fn, reps):
    t0 = time.perf_counter()
    for _ in range(reps):
        fn()
    return (time.perf_counter() - t0) / reps * 1e3


def both(name, st_fn, t_fn, rounds=7, reps=5):
    st_fn(), t_fn()
    a, b = [], []
    for _ in range(rounds):
        a.append(timed(st_fn, reps))
        b.append(timed(t_fn, reps))
    ms_a, ms_b = statistics.median(a), statistics.median(b)
    print(f"| {name} | {ms_a:.2f} | {ms_b:.2f} | {ms_a / ms_b:.2f}x |", flush=True)
    return ms_a, ms_b


def pair(shape, dtype_st, dtype_t, grad=True, seed=0):
    x = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    s = st.tensor(x).to(dtype_st).detach().requires_grad_(grad)
    t = torch.tensor(x).to(dtype_t).detach().requires_grad_(grad)
    return s, t


def _status_mib(key):
    """VmRSS (now) or VmHWM (peak) of this process from /proc/self/status, in MiB. (getrusage's
    ru_maxrss is no use here: a process started from a larger one inherits its parent's peak.)"""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1]) / 1024
    return float("nan")


def attention_memory_worker(lib, T, threads, dropout):
    """One causal forward + backward at (1, 8, T, 64) in this fresh process; prints its RSS figures."""
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal((1, 8, T, 64)).astype(np.float32) for _ in range(3)]
    if lib == "st":
        import spiraltorch as st

        st.set_num_threads(threads)
        ins = [st.tensor(a).requires_grad_(True) for a in arrays]
        sdpa = st.nn.functional.scaled_dot_product_attention
    else:
        import torch

        torch.set_num_threads(threads)
        ins = [torch.tensor(a).requires_grad_(True) for a in arrays]
        sdpa = torch.nn.functional.scaled_dot_product_attention
    run = lambda: sdpa(*ins, is_causal=True, dropout_p=dropout).sum().backward()  # noqa: E731
    before = _status_mib("VmRSS")
    run()
    peak = _status_mib("VmHWM")
    print(json.dumps({"peak_mib": peak, "added_mib": peak - before}))


def long_attention(args):
    import torch

    import spiraltorch as st

    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from machine import cpu_model

    st.set_num_threads(args.threads)
    torch.set_num_threads(args.threads)
    print(f"{cpu_model()}, {args.threads} threads, float32, B=1, 8 heads, d=64, dropout_p={args.dropout}; time best "
          f"of {args.rounds} (libraries alternating), peak RSS of a fresh process per library and T\n")
    print("| causal SDPA fwd+bwd | SpiralTorch ms | PyTorch ms | time ratio | SpiralTorch peak / added MiB "
          "| PyTorch peak / added MiB | peak ratio |\n|---|---:|---:|---:|---:|---:|---:|")
    for T in args.lengths:
        rng = np.random.default_rng(0)
        arrays = [rng.standard_normal((1, 8, T, 64)).astype(np.float32) for _ in range(3)]
        s_in = [st.tensor(a).requires_grad_(True) for a in arrays]
        t_in = [torch.tensor(a).requires_grad_(True) for a in arrays]

        def st_call():
            st.nn.functional.scaled_dot_product_attention(*s_in, is_causal=True, dropout_p=args.dropout).sum().backward()

        def torch_call():
            torch.nn.functional.scaled_dot_product_attention(*t_in, is_causal=True,
                                                             dropout_p=args.dropout).sum().backward()

        st_call(), torch_call()  # warm-up
        a, b = [], []
        for _ in range(args.rounds):
            a.append(timed(st_call, 1))
            b.append(timed(torch_call, 1))
        ms_a, ms_b = min(a), min(b)
        s_in = t_in = None  # frees the inputs (a del would unbind the closures' names)
        mem = {}
        for lib in ("st", "torch"):
            r = subprocess.run([sys.executable, os.path.abspath(__file__), "--attention-memory", lib, str(T),
                                "--threads", str(args.threads), "--dropout", str(args.dropout)],
                               capture_output=True, text=True, check=True)
            mem[lib] = json.loads(r.stdout.strip().splitlines()[-1])
        print(f"| T={T} | {ms_a:.1f} | {ms_b:.1f} | {ms_a / ms_b:.2f}x | {mem['st']['peak_mib']:.0f} / "
              f"{mem['st']['added_mib']:.0f} | {mem['torch']['peak_mib']:.0f} / {mem['torch']['added_mib']:.0f} | "
              f"{mem['st']['peak_mib'] / mem['torch']['peak_mib']:.2f}x |", flush=True)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--bf16", action="store_true")
    p.add_argument("--long-attention", action="store_true", help="only the long-sequence causal attention rows")
    p.add_argument("--lengths", type=int, nargs="+", default=[1024, 2048, 4096, 8192])
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--dropout", type=float, default=0.0, help="dropout_p of the long-attention rows")
    p.add_argument("--attention-memory", nargs=2, metavar=("LIB", "T"), help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.attention_memory:
        return attention_memory_worker(args.attention_memory[0], int(args.attention_memory[1]), args.threads,
                                       args.dropout)
    if args.long_attention:
        return long_attention(args)
    global torch, st, sF
    import torch

    import spiraltorch as st
    import spiraltorch.nn.functional as sF
    st.set_num_threads(args.threads)
    torch.set_num_threads(args.threads)
    ds, dt = (st.bfloat16, torch.bfloat16) if args.bf16 else (st.float32, torch.float32)
    B, T, d, H, V = 8, 128, 256, 4, 4096
    N = B * T
    print(f"dtype {'bf16' if args.bf16 else 'fp32'}, {args.threads} threads\n")
    print("| op (forward + backward) | SpiralTorch ms | PyTorch ms | ratio |\n|---|---:|---:|---:|")

    def fb(f, *xs):
        def run():
            y = f(*xs)
            y.backward(y.detach() if hasattr(y, "detach") else y)
        return run

    xs, xt = pair((N, 4 * d), ds, dt)
    both("gelu (1024, 1024)", fb(sF.gelu, xs), fb(torch.nn.functional.gelu, xt))
    xs, xt = pair((N, d), ds, dt)
    ls, lt = st.nn.LayerNorm(d), torch.nn.LayerNorm(d)
    both("layer_norm (1024, 256)", fb(ls, xs), fb(lt, xt))
    ws, wt = pair((V, d), ds, dt, seed=1)
    both("linear head (1024,256)x(4096,256)^T", fb(lambda a, b: sF.linear(a, b), xs, ws),
         fb(lambda a, b: torch.nn.functional.linear(a, b), xt, wt))
    w2s, w2t = pair((4 * d, d), ds, dt, seed=2)
    both("linear FF (1024,256)x(1024,256)^T", fb(lambda a, b: sF.linear(a, b), xs, w2s),
         fb(lambda a, b: torch.nn.functional.linear(a, b), xt, w2t))
    cs, ct = pair((N, V), st.float32, torch.float32)
    ys = np.random.default_rng(3).integers(0, V, N)
    ys_s, ys_t = st.tensor(ys), torch.tensor(ys)
    both("cross_entropy (1024, 4096) fp32", lambda: sF.cross_entropy(cs, ys_s).backward(),
         lambda: torch.nn.functional.cross_entropy(ct, ys_t).backward())
    qs, qt = pair((B, H, T, d // H), ds, dt, seed=4)
    ks, kt = pair((B, H, T, d // H), ds, dt, seed=5)
    vs, vt = pair((B, H, T, d // H), ds, dt, seed=6)
    both("causal attention (8,4,128,64)", fb(lambda q, k, v: sF.scaled_dot_product_attention(q, k, v, is_causal=True),
                                             qs, ks, vs),
         fb(lambda q, k, v: torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True), qt, kt, vt))
    a_s, a_t = pair((N, 4 * d), ds, dt, seed=7)
    b_s, b_t = pair((N, 4 * d), ds, dt, seed=8)
    both("add (1024, 1024)", fb(lambda a, b: a + b, a_s, b_s), fb(lambda a, b: a + b, a_t, b_t))
    # AdamW over the LM's parameter shapes (float32 master weights).
    shapes = [(V, d), (T, d)] + [(3 * d, d), (3 * d,), (d, d), (d,), (4 * d, d), (4 * d,), (d, 4 * d), (d,),
                                 (d,), (d,), (d,), (d,)] * 2 + [(d,), (d,), (V, d)]
    ps = [pair(s, st.float32, torch.float32, seed=i) for i, s in enumerate(shapes)]
    for s, t in ps:
        s.grad = st.ones_like(s) if False else st.tensor(np.ones(s.shape, np.float32))
        t.grad = torch.ones_like(t)
    so = st.optim.AdamW([s for s, _ in ps], lr=1e-3)
    to = torch.optim.AdamW([t for _, t in ps], lr=1e-3)
    both(f"AdamW step, {len(shapes)} params, {sum(int(np.prod(s)) for s in shapes) / 1e6:.2f} M", so.step, to.step)
    # The other optimizers over the same parameters (each a backend fused update in SpiralTorch).
    for name, make_s, make_t in (
            ("SGD(momentum=0.9)", lambda p: st.optim.SGD(p, lr=1e-3, momentum=0.9),
             lambda p: torch.optim.SGD(p, lr=1e-3, momentum=0.9)),
            ("Adagrad", lambda p: st.optim.Adagrad(p, lr=1e-3), lambda p: torch.optim.Adagrad(p, lr=1e-3)),
            ("RMSprop", lambda p: st.optim.RMSprop(p, lr=1e-3), lambda p: torch.optim.RMSprop(p, lr=1e-3))):
        so, to = make_s([s for s, _ in ps]), make_t([t for _, t in ps])
        both(f"{name} step, {len(shapes)} params", so.step, to.step)
    # Point-wise losses, forward + backward (the mean of (1024, 1024)).
    ps_, pt_ = pair((N, 4 * d), st.float32, torch.float32, seed=9)
    ts_, tt_ = pair((N, 4 * d), st.float32, torch.float32, grad=False, seed=10)
    both("mse_loss (1024, 1024)", lambda: sF.mse_loss(ps_, ts_).backward(),
         lambda: torch.nn.functional.mse_loss(pt_, tt_).backward())
    bs_, bt_ = st.tensor((np.random.default_rng(11).random((N, 4 * d)) > 0.5).astype(np.float32)), None
    bt_ = torch.tensor(bs_.numpy())
    both("bce_with_logits (1024, 1024)", lambda: sF.binary_cross_entropy_with_logits(ps_, bs_).backward(),
         lambda: torch.nn.functional.binary_cross_entropy_with_logits(pt_, bt_).backward())


if __name__ == "__main__":
    main()
