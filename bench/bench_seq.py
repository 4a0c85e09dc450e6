"""Sequence layers forward+backward: SpiralTorch vs PyTorch, side by side in one process.

Run: PYTHONPATH=python python bench/bench_seq.py [--repeats N] [--threads T]
Cases: LSTM (batch 32, seq 50, 128 -> 256), GRU (same sizes) and one
TransformerEncoderLayer block (batch 32, seq 64, d_model 256, 4 heads, ff 1024,
dropout 0, with and without a causal mask). Same weights on both sides. Prints the
median milliseconds of a forward and of a forward+backward step and the ratio
st/torch (< 1 means SpiralTorch is faster).
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
import torch

import spiraltorch as st
import spiraltorch.nn as snn


def timeit(fn, repeats: int) -> float:
    fn()
    fn()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1e3


def copy_weights(sm, tm) -> None:
    sd = {}
    for k, v in tm.state_dict().items():
        sd["::".join(k.rsplit(".", 1)) if "." in k else k] = v.detach().numpy()
    sm.load_state_dict(sd)


def run_pair(sm, tm, x: np.ndarray, call_st, call_torch, repeats: int):
    sx = st.tensor(x, requires_grad=True)
    tx = torch.tensor(x, requires_grad=True)
    sparams = list(sm.parameters())

    def st_fwd():
        with st.no_grad():
            call_st(sm, sx)

    def torch_fwd():
        with torch.no_grad():
            call_torch(tm, tx)

    def st_step():
        sx.grad = None
        for p in sparams:
            p.grad = None
        call_st(sm, sx).sum().backward()

    def torch_step():
        tx.grad = None
        tm.zero_grad(set_to_none=True)
        call_torch(tm, tx).sum().backward()

    return (timeit(st_fwd, repeats), timeit(torch_fwd, repeats), timeit(st_step, repeats),
            timeit(torch_step, repeats))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=10)
    ap.add_argument("--threads", type=int, default=0, help="torch threads (0 = torch default)")
    args = ap.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    rng = np.random.default_rng(0)
    rows = []

    x = rng.standard_normal((32, 50, 128)).astype(np.float32)
    for kind in ("LSTM", "GRU"):
        tm = getattr(torch.nn, kind)(128, 256, batch_first=True)
        sm = getattr(snn, kind)(128, 256, batch_first=True)
        copy_weights(sm, tm)
        rows.append((f"{kind} b32 s50 128->256",
                     *run_pair(sm, tm, x, lambda m, v: m(v)[0], lambda m, v: m(v)[0], args.repeats)))

    x = rng.standard_normal((32, 64, 256)).astype(np.float32)
    tm = torch.nn.TransformerEncoderLayer(256, 4, dim_feedforward=1024, dropout=0.0, batch_first=True)
    sm = snn.TransformerEncoderLayer(256, 4, dim_feedforward=1024, dropout=0.0, batch_first=True)
    copy_weights(sm, tm)
    tm.eval()
    sm.eval()
    rows.append(("EncoderLayer b32 s64 d256 h4",
                 *run_pair(sm, tm, x, lambda m, v: m(v), lambda m, v: m(v), args.repeats)))
    mask = torch.nn.Transformer.generate_square_subsequent_mask(64)
    rows.append(("  + causal mask",
                 *run_pair(sm, tm, x, lambda m, v: m(v, is_causal=True),
                           lambda m, v: m(v, src_mask=mask, is_causal=True), args.repeats)))

    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads; st {st.get_num_threads()} threads; "
          f"float32; median ms")
    print(f"{'case':30s} {'st fwd':>8s} {'pt fwd':>8s} {'ratio':>6s} | {'st f+b':>8s} {'pt f+b':>8s} {'ratio':>6s}")
    for name, sf, tf, sfb, tfb in rows:
        print(f"{name:30s} {sf:8.2f} {tf:8.2f} {sf / tf:6.2f} | {sfb:8.2f} {tfb:8.2f} {sfb / tfb:6.2f}")


if __name__ == "__main__":
    main()
