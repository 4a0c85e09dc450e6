"""GPT-2 small training steps on one CUDA GPU: SpiralTorch (eager, and its whole step as one CUDA
graph) against PyTorch (eager, and torch.compile) side by side in one process.

Usage: python bench/bench_gpt2.py [--modes bf16,bf16w,fp32] [--batch 16] [--out bench/results/gpt2_<card>.md]
                                  [--gemm-tuning] [--lean] [--profile N] [--quick]

The model is bench_cuda_models.py's GPT at GPT-2 small's shape: 12 pre-norm transformer layers,
d=768, 12 heads, MLP 4d with GPT-2's GELU (the tanh approximation, on both sides; SpiralTorch's CUDA
block runs it inside cuBLASLt's GEMM epilogues), learned positions, T=1024, vocabulary 50304 (untied head), no
dropout, AdamW (lr 3e-4, weight decay 0.01; PyTorch's fused=True). Modes:
  bf16   float32 weights, bf16 autocast (both libraries' autocast)
  bf16w  weights cast to bf16, no autocast (AdamW moments in bf16 on both sides: PyTorch keeps its
         state in the parameter dtype; SpiralTorch's CUDA AdamW updates bf16 parameters and moments
         in place, computing in float32)
  fp32   float32 weights, TF32 matmuls allowed on both sides
With --fused-head, SpiralTorch is also timed with its head and loss as one
st.nn.functional.linear_cross_entropy (the logits formed, reduced and differentiated in chunks of
rows, never whole): the same computation, rows labelled "linear_cross_entropy head".
With --gemm-tuning, SpiralTorch is also timed with st.cuda.tunable on (each cuBLASLt GEMM shape
times its candidate algorithms once and keeps the fastest; rows "tuned GEMMs"); PyTorch runs with
its defaults (torch.compile's default mode); with both flags, also the two together. With --lean,
only SpiralTorch's last variant is timed, as a CUDA graph (for batches where every variant's memory
would not fit at once).
Each variant runs warm-up steps (torch.compile compiles there), then the variants alternate in
rounds of CUDA-event-timed steps (each step timed on its own, synchronised; median). Peak memory is
each library's own allocator peak over three steps after a reset (SpiralTorch's caching allocator
and PyTorch's are separate, so each column counts only its library's tensors: weights, optimizer
state, activations, workspaces). The CUDA-graph row has none (nan): its activations live in the
graph's private pool, which the allocator counts as reserved, not allocated.

MFU = model FLOPs per step / step time / peak rate, with model FLOPs per step
  (6 * N + 12 * L * T * d) * B * T
N = the parameters of the matrix products (the 12 blocks and the head; the token and position
embeddings are lookups, not products), 6 N per token for forward and backward of the products, and
12 L T d per token for the attention scores and their weighted sum (forward and backward; the
full T x T, as PaLM and nanoGPT count it, although a causal kernel does about half). Peak rates are
the dense H100/H200 SXM datasheet figures: 989.4 TFLOP/s for bf16 (modes bf16, bf16w), 494.7 for
TF32 (mode fp32).
"""
import argparse
import os
import statistics
import subprocess
import sys
import time

import torch

import spiraltorch as st
import spiraltorch.nn.functional as sF

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_cuda import _samples  # noqa: E402
from bench_cuda_models import TorchGPT, st_gpt  # noqa: E402

GiB = float(1 << 30)
PEAK_TFLOPS = {"bf16": 989.4, "bf16w": 989.4, "fp32": 494.7}
MODE_LABEL = {"bf16": "bf16 autocast", "bf16w": "bf16 weights, no autocast", "fp32": "fp32 weights, TF32 matmuls"}


def model_flops_per_step(n_matmul, L, T, d, B):
    return (6 * n_matmul + 12 * L * T * d) * B * T


def time_variants(variants, reps, rounds):
    """Median ms per step of each variant; the variants alternate in `rounds` rounds of `reps`
    event-timed steps (a step's own events, synchronised after it)."""
    samples = {name: [] for name in variants}
    for _ in range(rounds):
        for name, (fn, sync, event) in variants.items():
            samples[name] += _samples(fn, sync, event, reps, warm=1)
    return {name: statistics.median(ts) for name, ts in samples.items()}


def peak_gib(fn, sync, reset, peak, steps=3):
    sync()
    reset()
    for _ in range(steps):
        fn()
    sync()
    return peak() / GiB


def build(mode, B, T, V, d, heads, layers, lr):
    """The SpiralTorch and PyTorch models, optimizers and step functions of one mode."""
    st.manual_seed(0)
    torch.manual_seed(0)
    sm = st_gpt(V, d, heads, layers, T, activation="gelu_tanh").to("cuda")
    tm = TorchGPT(V, d, heads, layers, T, activation="gelu_tanh").cuda()
    if mode == "bf16w":
        sm = sm.to(st.bfloat16)
        tm = tm.to(torch.bfloat16)
    tx = torch.randint(0, V, (B, T), device="cuda")
    ty = torch.randint(0, V, (B, T), device="cuda")
    sx, sy = st.from_dlpack(tx), st.from_dlpack(ty)
    autocast = mode == "bf16"

    def st_loss():
        if autocast:
            with st.autocast("cuda", dtype=st.bfloat16):
                return sF.cross_entropy(sm(sx).reshape(B * T, V), sy.reshape(B * T))
        return sF.cross_entropy(sm(sx).reshape(B * T, V), sy.reshape(B * T))

    def torch_loss(model):
        if autocast:
            with torch.autocast("cuda", dtype=torch.bfloat16):
                return torch.nn.functional.cross_entropy(model(tx).reshape(B * T, V), ty.reshape(B * T))
        return torch.nn.functional.cross_entropy(model(tx).reshape(B * T, V), ty.reshape(B * T))

    def st_loss_fused_head():
        # the head and the loss as one chunked op: the (B T, V) logits never exist whole
        def loss():
            h = sm.hidden(sx).reshape(B * T, d)
            return sF.linear_cross_entropy(h, sm.head.weight, sy.reshape(B * T))
        if autocast:
            with st.autocast("cuda", dtype=st.bfloat16):
                return loss()
        return loss()

    so = st.optim.AdamW(sm.parameters(), lr=lr, weight_decay=0.01, capturable=True)
    to = torch.optim.AdamW(tm.parameters(), lr=lr, weight_decay=0.01, fused=True)

    def st_stepper(loss_fn):
        def step():
            so.zero_grad()
            loss = loss_fn()
            loss.backward()
            so.step()
            return loss
        return step

    st_step, st_step_fused_head = st_stepper(st_loss), st_stepper(st_loss_fused_head)

    def torch_step():
        to.zero_grad()
        torch_loss(tm).backward()
        to.step()

    compiled_loss = torch.compile(lambda: torch_loss(tm))

    def torch_compiled_step():
        to.zero_grad()
        compiled_loss().backward()
        to.step()

    n_matmul = sum(p.numel() for name, p in tm.named_parameters() if not name.startswith(("tok.", "pos.")))
    return sm, (st_step, st_step_fused_head), torch_step, torch_compiled_step, n_matmul


def with_gemm_tuning(step):
    """`step` with st.cuda.tunable on (cuBLASLt GEMM algorithms timed once per shape, on the step's
    first eager call), off again afterwards so the other variants keep the heuristic's choices."""
    def tuned():
        st.cuda.tunable.enable(True)
        try:
            return step()
        finally:
            st.cuda.tunable.enable(False)
    return tuned


def run_mode(mode, args, results):
    B, T, V, d, heads, layers = args.batch, args.T, 50304, 768, 12, args.layers
    print(f"\n== mode {mode} ({MODE_LABEL[mode]}), B={B} T={T} L={layers} d={d} V={V}", flush=True)
    t0 = time.time()
    sm, (st_step, st_fused_step), torch_step, torch_compiled_step, n_matmul = build(mode, B, T, V, d, heads, layers,
                                                                                    lr=3e-4)
    flops = model_flops_per_step(n_matmul, layers, T, d, B)
    print(f"N (matrix-product parameters) = {n_matmul / 1e6:.2f}M, model FLOPs per step = {flops / 1e12:.2f} TFLOP",
          flush=True)
    st_sync, st_ev = st.cuda.synchronize, st.cuda.Event
    t_sync, t_ev = torch.cuda.synchronize, torch.cuda.Event
    # Each variant's peak is read right after its warm-up, before the next one exists (the graph's
    # private pool would otherwise count in the eager step's peak).
    st_peak = lambda fn: peak_gib(fn, st_sync, st.cuda.reset_peak_memory_stats, st.cuda.max_memory_allocated)
    t_peak = lambda fn: peak_gib(fn, t_sync, torch.cuda.reset_peak_memory_stats, torch.cuda.max_memory_allocated)
    variants, mem = {}, {}
    st_kinds = [("", st_step)] + ([(", linear_cross_entropy head", st_fused_step)] if args.fused_head else [])
    if args.gemm_tuning:
        st_kinds.append((", tuned GEMMs", with_gemm_tuning(st_step)))
        if args.fused_head:
            st_kinds.append((", linear_cross_entropy head, tuned GEMMs", with_gemm_tuning(st_fused_step)))
    if args.lean:  # one SpiralTorch variant, its graph only: large batches leave room for PyTorch's cache
        st_kinds = st_kinds[-1:]
    for suffix, step in st_kinds:
        for _ in range(2):
            step()
        mem["SpiralTorch eager" + suffix] = st_peak(step)
        if not args.lean:
            variants["SpiralTorch eager" + suffix] = (step, st_sync, st_ev)
        try:
            graphed = st.cuda.make_graphed_step(step, warmup=1)
            graphed()  # the warm-up call (one more eager step)
            graphed()  # captures and replays
            st_sync()
            variants["SpiralTorch CUDA graph" + suffix] = (graphed, st_sync, st_ev)
            # Blocks the capture freed stay in the graph's private pool, which the allocator counts as
            # reserved, not allocated: its allocated peak would leave out the replay's activations.
            mem["SpiralTorch CUDA graph" + suffix] = float("nan")
            print(f"SpiralTorch graph{suffix}: {graphed.graph.num_nodes()} nodes", flush=True)
        except Exception as e:  # report and go on: the eager rows still count
            print(f"SpiralTorch CUDA graph{suffix}: FAILED: {type(e).__name__}: {e}", flush=True)
        if args.lean:
            print(f"SpiralTorch eager{suffix}: peak {mem.pop('SpiralTorch eager' + suffix):.2f} GiB (not timed)",
                  flush=True)
            st.cuda.empty_cache()  # the eager steps' blocks; the graph keeps its own pool
    for _ in range(2):
        torch_step()
    variants["PyTorch eager"] = (torch_step, t_sync, t_ev)
    mem["PyTorch eager"] = t_peak(torch_step)
    if not args.no_compile:
        tc = time.time()
        try:
            for _ in range(3):
                torch_compiled_step()
            t_sync()
            print(f"torch.compile warm-up (compilation) {time.time() - tc:.0f} s", flush=True)
            variants["PyTorch torch.compile"] = (torch_compiled_step, t_sync, t_ev)
            mem["PyTorch torch.compile"] = t_peak(torch_compiled_step)
        except Exception as e:
            print(f"PyTorch torch.compile: FAILED: {type(e).__name__}: {str(e)[:300]}", flush=True)
    ms = time_variants(variants, reps=args.reps, rounds=args.rounds)
    for name in variants:
        tflops = flops / (ms[name] * 1e-3) / 1e12
        results.append(dict(mode=mode, variant=name, ms=ms[name], mem=mem[name], tflops=tflops,
                            mfu=tflops / PEAK_TFLOPS[mode], B=B, T=T, L=layers))
    base_eager, base_compiled = ms.get("PyTorch eager"), ms.get("PyTorch torch.compile")
    for r in results:
        if r["mode"] != mode:
            continue
        ve = r["ms"] / base_eager if base_eager else float("nan")
        vc = r["ms"] / base_compiled if base_compiled else float("nan")
        r["vs_eager"], r["vs_compiled"] = ve, vc
        print(f"{r['variant']:24s} {r['ms']:8.2f} ms  {r['tflops']:6.1f} TFLOP/s  MFU {100 * r['mfu']:5.1f}%  "
              f"peak {r['mem']:6.2f} GiB  x eager {ve:5.2f}  x compiled {vc:5.2f}", flush=True)
    if args.profile:
        from profile_cuda_step import profile_step
        for name, (fn, _, _) in variants.items():
            profile_step(name, fn, args.profile, steps=2, label=mode)
    print(f"mode {mode}: {time.time() - t0:.0f} s", flush=True)
    del variants, sm
    st.cuda.synchronize()
    st.cuda.empty_cache()
    torch.cuda.empty_cache()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--modes", default="bf16,bf16w,fp32")
    p.add_argument("--batch", type=int, default=16)
    p.add_argument("--T", type=int, default=1024)
    p.add_argument("--layers", type=int, default=12)
    p.add_argument("--reps", type=int, default=5)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--no-compile", action="store_true")
    p.add_argument("--fused-head", action="store_true",
                   help="also time SpiralTorch with the head and loss as st.nn.functional.linear_cross_entropy")
    p.add_argument("--gemm-tuning", action="store_true",
                   help="also time SpiralTorch with st.cuda.tunable on (rows 'tuned GEMMs'; PyTorch keeps its defaults)")
    p.add_argument("--lean", action="store_true",
                   help="time only SpiralTorch's last variant as a CUDA graph (its eager peak printed), releasing "
                        "its eager cache first: for batches where every variant's memory would not fit at once")
    p.add_argument("--profile", type=int, default=0, metavar="N", help="print each variant's N heaviest kernels")
    p.add_argument("--quick", action="store_true", help="B=2, T=256, 2 layers: a smoke run")
    p.add_argument("--out", default=None, help="markdown results file (appended to when it exists)")
    args = p.parse_args()
    if args.quick:
        args.batch, args.T, args.layers, args.reps, args.rounds = 2, 256, 2, 2, 1
    if not st.cuda.is_available():
        sys.exit(f"bench_gpt2: needs CUDA ({st.cuda.unavailable_reason()})")
    st.cuda.set_allow_tf32(True)
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True
    card = torch.cuda.get_device_name()
    cpu = subprocess.run("lscpu | grep 'Model name'", shell=True, capture_output=True, text=True).stdout.strip()
    dev = st.describe_device("cuda")
    head = (f"card: {card}; host {cpu.split(':', 1)[-1].strip()}; torch {torch.__version__} (cuDNN "
            f"{torch.backends.cudnn.version()}); SpiralTorch {st.__version__} (cuDNN {dev.get('cudnn')})")
    print(head, flush=True)
    results = []
    for mode in args.modes.split(","):
        try:
            run_mode(mode, args, results)
        except Exception as e:  # one failing mode must not hide the rest
            print(f"mode {mode}: FAILED: {type(e).__name__}: {e}", flush=True)
            st.cuda.empty_cache()
            torch.cuda.empty_cache()
    lines = ["| mode | variant | ms/step | TFLOP/s | MFU | peak GiB | x PyTorch eager | x torch.compile |",
             "|---|---|---:|---:|---:|---:|---:|---:|"]
    for r in results:
        lines.append(f"| {MODE_LABEL[r['mode']]} | {r['variant']} | {r['ms']:.2f} | {r['tflops']:.1f} | "
                     f"{100 * r['mfu']:.1f}% | {r['mem']:.2f} | {r['vs_eager']:.2f}x | {r['vs_compiled']:.2f}x |")
    print("\n" + head)
    print("\n".join(lines), flush=True)
    if args.out:
        new = not os.path.exists(args.out)
        with open(args.out, "a") as f:
            if new:
                f.write(f"# GPT-2 small training step on {card}\n\n")
            f.write(f"## {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}: `python bench/bench_gpt2.py "
                    f"{' '.join(sys.argv[1:])}`\n\n{head}\n\n")
            f.write(f"B={args.batch}, T={args.T}, {args.layers} layers, d=768, 12 heads, V=50304, AdamW. MFU = "
                    f"(6 N + 12 L T d) B T / step time / peak (989.4 TFLOP/s bf16, 494.7 TF32; see the script's "
                    f"docstring).\n\n")
            f.write("\n".join(lines) + "\n\n")


if __name__ == "__main__":
    main()
