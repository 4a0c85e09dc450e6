"""SpiralTorch vs PyTorch on one CUDA GPU, side by side in one process.

Usage: python bench/bench_cuda.py [--quick] [--out bench/results/cuda_h200.md]
Times are medians of CUDA-event-timed calls after warm-up; the two libraries alternate in
three rounds per row (time_both)."""
import argparse
import statistics
import sys

import torch

import spiraltorch as st
import spiraltorch.nn.functional  # noqa: F401  (binds st.nn.functional)


def _samples(fn, sync, event, reps, warm):
    for _ in range(warm):
        fn()
    sync()
    ts = []
    for _ in range(reps):
        a, b = event(enable_timing=True), event(enable_timing=True)
        a.record()
        fn()
        b.record()
        b.synchronize()
        ts.append(a.elapsed_time(b))
    return ts


def time_both(st_fn, torch_fn, reps=10, rounds=3, warm=3):
    """Median milliseconds per call of each library. The two alternate in `rounds` rounds of
    `reps` event-timed calls, so clock or thermal drift during the run affects both alike."""
    st_ts, torch_ts = [], []
    for _ in range(rounds):
        st_ts += _samples(st_fn, st.cuda.synchronize, st.cuda.Event, reps, warm)
        torch_ts += _samples(torch_fn, torch.cuda.synchronize, torch.cuda.Event, reps, warm)
    return statistics.median(st_ts), statistics.median(torch_ts)


def time_torch(fn, reps=10, rounds=3, warm=3):
    return statistics.median(
        [t for _ in range(rounds) for t in _samples(fn, torch.cuda.synchronize, torch.cuda.Event, reps, warm)])


rows = []


def row(name, size, unit, st_val, torch_val):
    ratio = st_val / torch_val if torch_val else float("nan")
    rows.append((name, size, unit, st_val, torch_val, ratio))
    print(f"{name:28s} {size:>12s} {unit:8s} spiraltorch={st_val:10.2f} torch={torch_val:10.2f} ratio={ratio:5.2f}", flush=True)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--quick", action="store_true")
    p.add_argument("--out", default=None)
    args = p.parse_args()
    dev = st.describe_device("cuda")
    print(dev, flush=True)

    # ---- matmul ----
    sizes = [1024, 2048, 4096, 8192]
    for mode in ("fp32", "tf32", "bf16"):
        st.cuda.set_allow_tf32(mode == "tf32")
        torch.backends.cuda.matmul.allow_tf32 = mode == "tf32"
        for n in sizes:
            tdt = torch.bfloat16 if mode == "bf16" else torch.float32
            ta = torch.randn(n, n, device="cuda", dtype=tdt)
            tb = torch.randn(n, n, device="cuda", dtype=tdt)
            sa, sb = st.from_dlpack(ta), st.from_dlpack(tb)
            reps = 5 if n >= 8192 else 10
            ms_st, ms_t = time_both(lambda: st.matmul(sa, sb), lambda: torch.matmul(ta, tb), reps)
            fl = 2 * n ** 3
            row(f"matmul {mode}", str(n), "TFLOP/s", fl / ms_st / 1e9, fl / ms_t / 1e9)
    st.cuda.set_allow_tf32(False)
    torch.backends.cuda.matmul.allow_tf32 = False

    # ---- bandwidth ----
    for n in (10**6, 10**7, 10**8, 10**9):
        ta = torch.rand(n, device="cuda")
        tb = torch.rand(n, device="cuda")
        sa, sb = st.from_dlpack(ta), st.from_dlpack(tb)
        reps = 5 if n >= 10**9 else 20
        ms_st, ms_t = time_both(lambda: st.add(sa, sb), lambda: torch.add(ta, tb), reps)
        ms_copy = time_torch(lambda: ta.clone(), reps)
        gb = 3 * 4 * n / 1e9
        row("add f32 (GB/s)", f"{n:.0e}", "GB/s", gb / ms_st * 1e3, gb / ms_t * 1e3)
        row("  d2d copy (GB/s, torch)", f"{n:.0e}", "GB/s", 2 * 4 * n / 1e9 / ms_copy * 1e3, 2 * 4 * n / 1e9 / ms_copy * 1e3)
        ms_st, ms_t = time_both(lambda: st.exp(sa), lambda: torch.exp(ta), reps)
        row("exp f32 (GB/s)", f"{n:.0e}", "GB/s", 8 * n / 1e9 / ms_st * 1e3, 8 * n / 1e9 / ms_t * 1e3)
        ms_st, ms_t = time_both(lambda: st.sum(sa), lambda: torch.sum(ta), reps)
        row("sum f32 (GB/s)", f"{n:.0e}", "GB/s", 4 * n / 1e9 / ms_st * 1e3, 4 * n / 1e9 / ms_t * 1e3)
        ta = tb = sa = sb = None  # frees the GPU buffers (a del would unbind the lambdas' names)
        torch.cuda.empty_cache()
        st.cuda.empty_cache()

    # ---- softmax / layer norm ----
    for (r, c) in ((4096, 1024), (8192, 4096), (16384, 8192)):
        tx = torch.randn(r, c, device="cuda")
        sx = st.from_dlpack(tx)
        gb = 2 * 4 * r * c / 1e9
        ms_st, ms_t = time_both(lambda: st.softmax(sx, -1), lambda: torch.softmax(tx, -1))
        row("softmax (GB/s)", f"{r}x{c}", "GB/s", gb / ms_st * 1e3, gb / ms_t * 1e3)
        lw = torch.ones(c, device="cuda")
        lb = torch.zeros(c, device="cuda")
        sw, sb_ = st.from_dlpack(lw), st.from_dlpack(lb)
        ms_st, ms_t = time_both(lambda: st.nn.functional.layer_norm(sx, [c], sw, sb_),
                                lambda: torch.nn.functional.layer_norm(tx, [c], lw, lb))
        row("layer_norm (GB/s)", f"{r}x{c}", "GB/s", gb / ms_st * 1e3, gb / ms_t * 1e3)

    # ---- MLP training steps: a large one (GEMM-bound) and a small one (launch/overhead-bound) ----
    for (B, D, H, C) in ((512, 1024, 4096, 1000), (64, 256, 256, 10)):
        st.manual_seed(0)
        sm = st.nn.Sequential(st.nn.Linear(D, H), st.nn.ReLU(), st.nn.Linear(H, H), st.nn.ReLU(),
                              st.nn.Linear(H, C)).to("cuda")
        so = st.optim.Adam(sm.parameters(), lr=1e-3)
        tm = torch.nn.Sequential(torch.nn.Linear(D, H), torch.nn.ReLU(), torch.nn.Linear(H, H), torch.nn.ReLU(),
                                 torch.nn.Linear(H, C)).cuda()
        to = torch.optim.Adam(tm.parameters(), lr=1e-3)
        tx = torch.randn(B, D, device="cuda")
        ty = torch.randint(0, C, (B,), device="cuda")
        sx, sy = st.from_dlpack(tx), st.from_dlpack(ty)

        def st_step():
            so.zero_grad()
            loss = st.nn.functional.cross_entropy(sm(sx), sy)
            loss.backward()
            so.step()

        def torch_step():
            to.zero_grad()
            loss = torch.nn.functional.cross_entropy(tm(tx), ty)
            loss.backward()
            to.step()

        row("MLP train step (ms)", f"B{B} {D}-{H}-{H}-{C}", "ms", *time_both(st_step, torch_step, reps=20))

    # ---- transformer encoder layer training step ----
    try:
        Bt, T, E, NH = 32, 256, 512, 8
        enc = st.nn.TransformerEncoderLayer(E, NH, 4 * E, dropout=0.0, batch_first=True).to("cuda") if hasattr(st.nn, "TransformerEncoderLayer") else None
        if enc is not None:
            eo = st.optim.Adam(enc.parameters(), lr=1e-4)
            tenc = torch.nn.TransformerEncoderLayer(E, NH, 4 * E, dropout=0.0, batch_first=True).cuda()
            teo = torch.optim.Adam(tenc.parameters(), lr=1e-4)
            txe = torch.randn(Bt, T, E, device="cuda")
            sxe = st.from_dlpack(txe)

            def st_enc():
                eo.zero_grad()
                enc(sxe).square().mean().backward()
                eo.step()

            def torch_enc():
                teo.zero_grad()
                tenc(txe).square().mean().backward()
                teo.step()

            row("encoder layer step (ms)", f"B{Bt} T{T} E{E}", "ms", *time_both(st_enc, torch_enc, reps=20))
    except Exception as e:  # recorded, not hidden
        print("transformer step failed:", type(e).__name__, e, flush=True)

    if args.out:
        with open(args.out, "w") as f:
            f.write(f"# SpiralTorch vs PyTorch on {dev.get('device_name')}\n\n")
            f.write(f"torch {torch.__version__}; command: python bench/bench_cuda.py --out {args.out}\n\n")
            f.write("| benchmark | size | unit | spiraltorch | torch | st/torch |\n|---|---|---|---|---|---|\n")
            for r in rows:
                f.write(f"| {r[0]} | {r[1]} | {r[2]} | {r[3]:.2f} | {r[4]:.2f} | {r[5]:.2f} |\n")


if __name__ == "__main__":
    sys.exit(main())
