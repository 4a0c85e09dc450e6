"""scaled_dot_product_attention on one CUDA GPU, forward and forward+backward, side by side in one
process: SpiralTorch through cuDNN's graph API (its default where the build has cudnn-frontend),
SpiralTorch's own flash kernels (mma.sync; ``enable_cudnn_sdp(False)``), PyTorch with its cuDNN
backend and PyTorch with its flash backend (``torch.nn.attention.sdpa_kernel``).

Usage: python bench/bench_attention_cuda.py [--out bench/results/attention_cudnn_<card>.md] [--quick]

Shapes: B=4, 16 heads, d = 64 and 128, T = 1024 and 4096 (L = S), causal and not, bfloat16 and
float16; and B=1, causal bfloat16 at T = 16384. Each variant runs 3 warm-up calls, then the variants
alternate in --rounds (3) rounds of --reps (10) CUDA-event-timed calls (each timed on its own,
synchronised); median. "fwd+bwd" is one forward and
its backward with a fixed output gradient. The last columns give each SpiralTorch path's time over
PyTorch-cuDNN's, and which SpiralTorch path is faster: the choice the library makes per shape
(cuDNN first, its own kernels where cuDNN declines the operands) is checked against it.
"""
import argparse
import os
import statistics
import subprocess
import sys

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

import spiraltorch as st
import spiraltorch.nn.functional as sF

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_cuda import _samples  # noqa: E402


def st_calls(q, k, v, g, causal, cudnn):
    def fwd():
        st.backends.cuda.enable_cudnn_sdp(cudnn)
        with st.no_grad():
            sF.scaled_dot_product_attention(q, k, v, is_causal=causal)

    def both():
        st.backends.cuda.enable_cudnn_sdp(cudnn)
        for t in (q, k, v):
            t.grad = None
        sF.scaled_dot_product_attention(q, k, v, is_causal=causal).backward(g)

    return fwd, both


def torch_calls(q, k, v, g, causal, backend):
    def fwd():
        with sdpa_kernel(backend), torch.no_grad():
            F.scaled_dot_product_attention(q, k, v, is_causal=causal)

    def both():
        for t in (q, k, v):
            t.grad = None
        with sdpa_kernel(backend):
            F.scaled_dot_product_attention(q, k, v, is_causal=causal).backward(g)

    return fwd, both


def run_shape(dt_name, B, H, T, d, causal, reps, rounds):
    tdt = {"bf16": torch.bfloat16, "fp16": torch.float16}[dt_name]
    sdt = {"bf16": st.bfloat16, "fp16": st.float16}[dt_name]
    gen = torch.Generator().manual_seed(T + d)
    host = [torch.randn(B, H, T, d, generator=gen) for _ in range(4)]
    tq, tk, tv = (h.to("cuda", tdt).requires_grad_(True) for h in host[:3])
    tg = host[3].to("cuda", tdt)
    sq, sk, sv = (st.tensor(h.numpy()).to(sdt).cuda().requires_grad_(True) for h in host[:3])
    sg = st.tensor(host[3].numpy()).to(sdt).cuda()
    variants = {
        "st_cudnn": st_calls(sq, sk, sv, sg, causal, True),
        "st_flash": st_calls(sq, sk, sv, sg, causal, False),
        "torch_cudnn": torch_calls(tq, tk, tv, tg, causal, SDPBackend.CUDNN_ATTENTION),
        "torch_flash": torch_calls(tq, tk, tv, tg, causal, SDPBackend.FLASH_ATTENTION),
    }
    sync = {"st": (st.cuda.synchronize, st.cuda.Event), "torch": (torch.cuda.synchronize, torch.cuda.Event)}
    out = {}
    for part, idx in (("fwd", 0), ("fwd+bwd", 1)):
        samples = {name: [] for name in variants}
        for name, calls in variants.items():  # warm-up (plans are built here)
            for _ in range(3):
                calls[idx]()
        for _ in range(rounds):
            for name, calls in variants.items():
                s, e = sync[name.split("_")[0]]
                samples[name] += _samples(calls[idx], s, e, reps, warm=0)
        out[part] = {name: statistics.median(ts) for name, ts in samples.items()}
    st.backends.cuda.enable_cudnn_sdp(True)
    return out


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--out", default=None)
    p.add_argument("--quick", action="store_true")
    p.add_argument("--dtypes", default=None, help="comma-separated subset of bf16,fp16")
    p.add_argument("--reps", type=int, default=10)
    p.add_argument("--rounds", type=int, default=3)
    args = p.parse_args()
    card = torch.cuda.get_device_name()
    print(f"card: {card}; torch {torch.__version__} (cuDNN {torch.backends.cudnn.version()}); SpiralTorch cuDNN "
          f"{st.backends.cudnn.version()}", flush=True)
    shapes = [(dt, 4, 16, T, d, c) for dt in ("bf16", "fp16") for d in (64, 128) for T in (1024, 4096)
              for c in (True, False)]
    shapes += [("bf16", 1, 16, 16384, d, True) for d in (64, 128)]
    if args.quick:
        shapes = [s for s in shapes if s[3] == 1024 and s[0] == "bf16"]
    if args.dtypes:
        shapes = [s for s in shapes if s[0] in args.dtypes.split(",")]
    rows = []
    for dt, B, H, T, d, causal in shapes:
        r = run_shape(dt, B, H, T, d, causal, reps=args.reps, rounds=args.rounds)
        for part in ("fwd", "fwd+bwd"):
            ms = r[part]
            best = "cuDNN" if ms["st_cudnn"] <= ms["st_flash"] else "own flash"
            row = (dt, B, T, d, "causal" if causal else "full", part, ms["st_cudnn"], ms["st_flash"], ms["torch_cudnn"],
                   ms["torch_flash"], ms["st_cudnn"] / ms["torch_cudnn"], ms["st_flash"] / ms["torch_cudnn"], best)
            rows.append(row)
            print("{:4s} B={} T={:5d} d={:3d} {:6s} {:7s} st cuDNN {:7.3f}  st flash {:7.3f}  torch cuDNN {:7.3f}  "
                  "torch flash {:7.3f} ms  x torch-cuDNN {:5.2f} / {:5.2f}  faster: {}".format(*row), flush=True)
    lines = [f"# scaled_dot_product_attention on {card} (`bench/bench_attention_cuda.py`)", "",
             f"torch {torch.__version__} (cuDNN {torch.backends.cudnn.version()}), SpiralTorch with cuDNN "
             f"{st.backends.cudnn.version()} through cudnn-frontend; git {git_rev()}. 16 heads, L = S = T. "
             f"Median of {args.rounds} rounds x {args.reps} CUDA-event-timed calls, variants alternating. ms per call.", "",
             "| dtype | B | T | d | mask | pass | SpiralTorch cuDNN | SpiralTorch own flash | PyTorch cuDNN | "
             "PyTorch flash | st cuDNN / torch cuDNN | st flash / torch cuDNN | faster SpiralTorch path |",
             "|---|---:|---:|---:|---|---|---:|---:|---:|---:|---:|---:|---|"]
    for r in rows:
        lines.append("| {} | {} | {} | {} | {} | {} | {:.3f} | {:.3f} | {:.3f} | {:.3f} | {:.2f} | {:.2f} | {} |".format(*r))
    text = "\n".join(lines) + "\n"
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)
    print(text)


def git_rev():
    try:
        root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        return subprocess.check_output(["git", "-C", root, "rev-parse", "--short", "HEAD"], text=True).strip()
    except Exception:
        return "unknown"


if __name__ == "__main__":
    main()
