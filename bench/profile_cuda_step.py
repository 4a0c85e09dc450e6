"""Per-kernel GPU time of one SpiralTorch training step (MLP or transformer encoder
layer), next to PyTorch's, read with torch.profiler (CUPTI sees every kernel launched in
the process, ours included).

Usage: python bench/profile_cuda_step.py [--model encoder|mlp] [--rows 25]"""
import argparse

import torch
from torch.profiler import ProfilerActivity, profile

import spiraltorch as st
import spiraltorch.nn.functional  # noqa: F401


def build(model):
    st.manual_seed(0)
    if model == "mlp":
        B, D, H, C = 512, 1024, 4096, 1000
        sm = st.nn.Sequential(st.nn.Linear(D, H), st.nn.ReLU(), st.nn.Linear(H, H), st.nn.ReLU(),
                              st.nn.Linear(H, C)).to("cuda")
        tm = torch.nn.Sequential(torch.nn.Linear(D, H), torch.nn.ReLU(), torch.nn.Linear(H, H), torch.nn.ReLU(),
                                 torch.nn.Linear(H, C)).cuda()
        tx, ty = torch.randn(B, D, device="cuda"), torch.randint(0, C, (B,), device="cuda")
        sx, sy = st.from_dlpack(tx), st.from_dlpack(ty)
        so, to = st.optim.Adam(sm.parameters(), lr=1e-3), torch.optim.Adam(tm.parameters(), lr=1e-3)

        def st_step():
            so.zero_grad()
            st.nn.functional.cross_entropy(sm(sx), sy).backward()
            so.step()

        def torch_step():
            to.zero_grad()
            torch.nn.functional.cross_entropy(tm(tx), ty).backward()
            to.step()
        return st_step, torch_step
    Bt, T, E, NH = 32, 256, 512, 8
    enc = st.nn.TransformerEncoderLayer(E, NH, 4 * E, dropout=0.0, batch_first=True).to("cuda")
    tenc = torch.nn.TransformerEncoderLayer(E, NH, 4 * E, dropout=0.0, batch_first=True).cuda()
    eo, teo = st.optim.Adam(enc.parameters(), lr=1e-4), torch.optim.Adam(tenc.parameters(), lr=1e-4)
    txe = torch.randn(Bt, T, E, device="cuda")
    sxe = st.from_dlpack(txe)

    def st_step():
        eo.zero_grad()
        enc(sxe).square().mean().backward()
        eo.step()

    def torch_step():
        teo.zero_grad()
        tenc(txe).square().mean().backward()
        teo.step()
    return st_step, torch_step


def profile_step(name, fn, rows, steps=5, label=""):
    """Prints the kernel time per step of `fn` and its `rows` heaviest kernels (CUPTI sees every kernel)."""
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    st.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(steps):
            fn()
        st.cuda.synchronize()
        torch.cuda.synchronize()
    ev = [e for e in prof.key_averages() if e.device_type.name == "CUDA"]
    total = sum(e.self_device_time_total for e in ev) / steps
    print(f"\n== {name} {label} step: {total / 1000:.3f} ms of kernel time per step, "
          f"{sum(e.count for e in ev) / steps:.0f} kernels per step")
    ev.sort(key=lambda e: -e.self_device_time_total)
    for e in ev[:rows]:
        print(f"{e.self_device_time_total / steps / 1000:8.3f} ms {e.count / steps:6.1f}x  {e.key[:110]}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default="encoder", choices=["encoder", "mlp"])
    ap.add_argument("--rows", type=int, default=25)
    args = ap.parse_args()
    st_step, torch_step = build(args.model)
    for name, fn in (("spiraltorch", st_step), ("torch", torch_step)):
        profile_step(name, fn, args.rows, label=args.model)


if __name__ == "__main__":
    main()
