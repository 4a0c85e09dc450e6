"""Whole training steps of real model shapes on one CUDA GPU: SpiralTorch vs PyTorch side by side.

Usage: python bench/bench_cuda_models.py [--quick] [--only cnn,resnet18,lstm,gpt,gpt_bf16,graph_mlp] [--out FILE]

Each row builds the same model in both libraries (same shapes, same optimizer), runs warm-up
steps, then alternates the two libraries in rounds of CUDA-event-timed steps (median). Peak
memory is each library's own allocator peak over its timed steps (st.cuda.max_memory_allocated
and torch.cuda.max_memory_allocated, reset before each library's first step). TF32 is allowed
on both sides for float32 matmuls and convolutions (cuDNN on both sides when SpiralTorch is built
with it).
"""
import argparse
import functools
import os
import sys

import torch

import spiraltorch as st
import spiraltorch.nn.functional as sF

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_cuda import time_both  # noqa: E402
from profile_cuda_step import profile_step  # noqa: E402

GiB = float(1 << 30)
rows = []
PROFILE_ROWS = 0  # --profile N: also print each library's N heaviest kernels per model


def peak(st_step, torch_step, steps=3):
    """Each library's allocator peak over `steps` steps after a reset (GiB)."""
    st.cuda.synchronize()
    st.cuda.reset_peak_memory_stats()
    for _ in range(steps):
        st_step()
    st.cuda.synchronize()
    st_peak = st.cuda.max_memory_allocated() / GiB
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    for _ in range(steps):
        torch_step()
    torch.cuda.synchronize()
    return st_peak, torch.cuda.max_memory_allocated() / GiB


def report(name, st_step, torch_step, reps, rounds=3):
    ms_st, ms_t = time_both(st_step, torch_step, reps=reps, rounds=rounds, warm=2)
    mem_st, mem_t = peak(st_step, torch_step)
    rows.append((name, ms_st, ms_t, mem_st, mem_t))
    print(f"{name:58s} st={ms_st:8.2f} ms torch={ms_t:8.2f} ms ratio={ms_st / ms_t:5.2f}  "
          f"peak st={mem_st:5.2f} torch={mem_t:5.2f} GiB", flush=True)
    if PROFILE_ROWS:
        for lib, fn in (("spiraltorch", st_step), ("torch", torch_step)):
            profile_step(lib, fn, PROFILE_ROWS, steps=3, label=name)


def image_classifier_steps(st_model, torch_model, B, weight_decay=0.0):
    """(SpiralTorch step, PyTorch step): SGD with momentum on one 32x32 RGB batch, 10 classes."""
    sm, tm = st_model.to("cuda"), torch_model.cuda()
    so = st.optim.SGD(sm.parameters(), lr=0.05, momentum=0.9, weight_decay=weight_decay)
    to = torch.optim.SGD(tm.parameters(), lr=0.05, momentum=0.9, weight_decay=weight_decay)
    tx = torch.randn(B, 3, 32, 32, device="cuda")
    ty = torch.randint(0, 10, (B,), device="cuda")
    sx, sy = st.from_dlpack(tx), st.from_dlpack(ty)

    def st_step():
        so.zero_grad()
        sF.cross_entropy(sm(sx), sy).backward()
        so.step()

    def torch_step():
        to.zero_grad()
        torch.nn.functional.cross_entropy(tm(tx), ty).backward()
        to.step()

    return st_step, torch_step


def cnn(quick):
    B = 64 if quick else 256
    chans = (3, 64, 128, 256, 256)

    def build(mod):
        layers = []
        for i in range(4):
            layers += [mod.Conv2d(chans[i], chans[i + 1], 3, padding=1), mod.BatchNorm2d(chans[i + 1]), mod.ReLU()]
            if i % 2 == 1:
                layers.append(mod.MaxPool2d(2))
        layers += [mod.AdaptiveAvgPool2d(1), mod.Flatten(), mod.Linear(chans[-1], 10)]
        return mod.Sequential(*layers)

    report(f"CNN+BN 3-64-128-256-256, B={B}, 32x32, SGD", *image_classifier_steps(build(st.nn), build(torch.nn), B),
           reps=10)


def resnet18(quick):
    """ResNet-18 for 32x32 inputs (3x3 stem, four stages of two basic blocks, 64..512 channels)."""
    B = 64 if quick else 256

    def build(mod, base):
        class Block(base):
            def __init__(self, cin, cout, stride):
                super().__init__()
                self.c1 = mod.Conv2d(cin, cout, 3, stride=stride, padding=1, bias=False)
                self.b1 = mod.BatchNorm2d(cout)
                self.c2 = mod.Conv2d(cout, cout, 3, padding=1, bias=False)
                self.b2 = mod.BatchNorm2d(cout)
                self.relu = mod.ReLU()
                self.down = (mod.Sequential(mod.Conv2d(cin, cout, 1, stride=stride, bias=False), mod.BatchNorm2d(cout))
                             if stride != 1 or cin != cout else None)

            def forward(self, x):
                out = self.b2(self.c2(self.relu(self.b1(self.c1(x)))))
                return self.relu(out + (self.down(x) if self.down is not None else x))

        layers = [mod.Conv2d(3, 64, 3, padding=1, bias=False), mod.BatchNorm2d(64), mod.ReLU()]
        cin = 64
        for cout, stride in ((64, 1), (128, 2), (256, 2), (512, 2)):
            layers += [Block(cin, cout, stride), Block(cout, cout, 1)]
            cin = cout
        layers += [mod.AdaptiveAvgPool2d(1), mod.Flatten(), mod.Linear(512, 10)]
        return mod.Sequential(*layers)

    steps = image_classifier_steps(build(st.nn, st.nn.Module), build(torch.nn, torch.nn.Module), B, weight_decay=5e-4)
    report(f"ResNet-18 (CIFAR), B={B}, 32x32, SGD", *steps, reps=5)


def graph_mlp(quick):
    """A small MLP step where launch overhead dominates: SpiralTorch replaying a captured CUDA graph
    against PyTorch eager (the issue's target) and against PyTorch replaying its own graph."""
    B, sizes = 64, (784, 256, 256, 10)

    def build(mod):
        return mod.Sequential(mod.Linear(sizes[0], sizes[1]), mod.ReLU(), mod.Linear(sizes[1], sizes[2]), mod.ReLU(),
                              mod.Linear(sizes[2], sizes[3]))

    sm, tm = build(st.nn).to("cuda"), build(torch.nn).cuda()
    so = st.optim.SGD(sm.parameters(), lr=0.01, momentum=0.9)
    to = torch.optim.SGD(tm.parameters(), lr=0.01, momentum=0.9)
    tx = torch.randn(B, sizes[0], device="cuda")
    ty = torch.randint(0, 10, (B,), device="cuda")
    sx, sy = st.from_dlpack(tx.clone()), st.from_dlpack(ty.clone())

    def st_eager():
        so.zero_grad()
        sF.cross_entropy(sm(sx), sy).backward()
        so.step()

    def torch_eager():
        to.zero_grad()
        torch.nn.functional.cross_entropy(tm(tx), ty).backward()
        to.step()

    for _ in range(3):
        st_eager()
        torch_eager()
    sg = st.cuda.CUDAGraph()
    with st.cuda.graph(sg):
        st_eager()
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            torch_eager()
    torch.cuda.current_stream().wait_stream(side)
    tg = torch.cuda.CUDAGraph()
    with torch.cuda.graph(tg):
        torch_eager()
    print(f"graph nodes: spiraltorch {sg.num_nodes()}", flush=True)
    report(f"MLP 784-256-256-10 B={B} SGD: SpiralTorch graph vs PyTorch eager", sg.replay, torch_eager, reps=50)
    report(f"MLP 784-256-256-10 B={B} SGD: SpiralTorch graph vs PyTorch graph", sg.replay, tg.replay, reps=50)
    report(f"MLP 784-256-256-10 B={B} SGD: eager vs eager", st_eager, torch_eager, reps=50)


def lstm(quick):
    B, T, H = 64, 32 if quick else 128, 512
    sm = st.nn.LSTM(H, H, num_layers=2, batch_first=True).to("cuda")
    tm = torch.nn.LSTM(H, H, num_layers=2, batch_first=True).cuda()
    sh, th = st.nn.Linear(H, H).to("cuda"), torch.nn.Linear(H, H).cuda()
    so = st.optim.Adam(list(sm.parameters()) + list(sh.parameters()), lr=1e-3)
    to = torch.optim.Adam(list(tm.parameters()) + list(th.parameters()), lr=1e-3)
    tx = torch.randn(B, T, H, device="cuda")
    ty = torch.randn(B, T, H, device="cuda")
    sx, sy = st.from_dlpack(tx), st.from_dlpack(ty)

    def st_step():
        so.zero_grad()
        out, _ = sm(sx)
        sF.mse_loss(sh(out), sy).backward()
        so.step()

    def torch_step():
        to.zero_grad()
        out, _ = tm(tx)
        torch.nn.functional.mse_loss(th(out), ty).backward()
        to.step()

    report(f"2-layer LSTM {H}, B={B}, T={T}, Adam", st_step, torch_step, reps=10)


class TorchGPT(torch.nn.Module):
    # activation "gelu" (erf) or "gelu_tanh" (GPT-2's; PyTorch takes it as a callable)
    def __init__(self, vocab, d, heads, layers, T, activation="gelu"):
        super().__init__()
        self.tok = torch.nn.Embedding(vocab, d)
        self.pos = torch.nn.Embedding(T, d)
        act = functools.partial(torch.nn.functional.gelu, approximate="tanh") if activation == "gelu_tanh" else "gelu"
        self.blocks = torch.nn.ModuleList(
            [torch.nn.TransformerEncoderLayer(d, heads, 4 * d, dropout=0.0, activation=act, batch_first=True,
                                              norm_first=True) for _ in range(layers)])
        self.norm = torch.nn.LayerNorm(d)
        self.head = torch.nn.Linear(d, vocab, bias=False)
        self.register_buffer("mask", torch.nn.Transformer.generate_square_subsequent_mask(T), persistent=False)

    def forward(self, idx):
        T = idx.shape[1]
        h = self.tok(idx) + self.pos(torch.arange(T, device=idx.device))
        for b in self.blocks:
            h = b(h, src_mask=self.mask[:T, :T], is_causal=True)
        return self.head(self.norm(h))


def st_gpt(vocab, d, heads, layers, T, device="cuda", activation="gelu"):
    class GPT(st.nn.Module):
        def __init__(self):
            super().__init__()
            self.tok = st.nn.Embedding(vocab, d)
            self.pos = st.nn.Embedding(T, d)
            # TorchGPT's blocks and final norm as one TransformerEncoder (the same computation): a
            # pre-norm stack chains each layer's last residual add with the next layer's norm (and
            # the last with the final norm) in one fused add + layer norm.
            layer = st.nn.TransformerEncoderLayer(d, heads, 4 * d, dropout=0.0, activation=activation,
                                                  norm_first=True, batch_first=True)
            self.blocks = st.nn.TransformerEncoder(layer, layers, norm=st.nn.LayerNorm(d))
            self.head = st.nn.Linear(d, vocab, bias=False)
            self.positions = st.arange(T, dtype=st.int64).to(device)

        def hidden(self, idx):
            """The final norm's output, before the head."""
            return self.blocks(self.tok(idx) + self.pos(self.positions), is_causal=True)

        def forward(self, idx):
            return self.head(self.hidden(idx))

    return GPT()


def gpt(quick, dtype_name):
    vocab, d, heads, layers = 8192, 768, 12, 6
    B, T = (4, 256) if quick else (16, 512)
    sm = st_gpt(vocab, d, heads, layers, T).to("cuda")
    tm = TorchGPT(vocab, d, heads, layers, T).cuda()
    so = st.optim.AdamW(sm.parameters(), lr=3e-4)
    to = torch.optim.AdamW(tm.parameters(), lr=3e-4, fused=True)
    tx = torch.randint(0, vocab, (B, T), device="cuda")
    ty = torch.randint(0, vocab, (B, T), device="cuda")
    sx, sy = st.from_dlpack(tx), st.from_dlpack(ty)
    bf16 = dtype_name == "bf16"
    st_ctx = (lambda: st.autocast("cuda", dtype=st.bfloat16)) if bf16 else None
    torch_ctx = (lambda: torch.autocast("cuda", dtype=torch.bfloat16)) if bf16 else None

    def st_step():
        so.zero_grad()
        if st_ctx:
            with st_ctx():
                loss = sF.cross_entropy(sm(sx).reshape(B * T, vocab), sy.reshape(B * T))
        else:
            loss = sF.cross_entropy(sm(sx).reshape(B * T, vocab), sy.reshape(B * T))
        loss.backward()
        so.step()

    def torch_step():
        to.zero_grad()
        if torch_ctx:
            with torch_ctx():
                loss = torch.nn.functional.cross_entropy(tm(tx).reshape(B * T, vocab), ty.reshape(B * T))
        else:
            loss = torch.nn.functional.cross_entropy(tm(tx).reshape(B * T, vocab), ty.reshape(B * T))
        loss.backward()
        to.step()

    label = "bf16 autocast" if bf16 else "fp32/TF32"
    report(f"GPT {layers}x{d} h{heads} B={B} T={T} V={vocab} AdamW {label}", st_step, torch_step, reps=5)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--quick", action="store_true")
    p.add_argument("--only", default="cnn,resnet18,lstm,gpt,gpt_bf16,graph_mlp")
    p.add_argument("--out", default=None)
    p.add_argument("--profile", type=int, default=0, metavar="N",
                   help="after each row, print each library's N heaviest kernels (torch.profiler)")
    args = p.parse_args()
    global PROFILE_ROWS
    PROFILE_ROWS = args.profile
    st.cuda.set_allow_tf32(True)
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True
    dev = st.describe_device("cuda")
    print(f"{dev['device_name']}, cuDNN (spiraltorch) {dev.get('cudnn')}, torch {torch.__version__} "
          f"cuDNN {torch.backends.cudnn.version()}", flush=True)
    only = args.only.split(",")
    for name, fn in (("cnn", lambda: cnn(args.quick)), ("resnet18", lambda: resnet18(args.quick)),
                     ("lstm", lambda: lstm(args.quick)), ("gpt", lambda: gpt(args.quick, "fp32")),
                     ("gpt_bf16", lambda: gpt(args.quick, "bf16")), ("graph_mlp", lambda: graph_mlp(args.quick))):
        if name in only:
            try:
                fn()
            except Exception as e:  # report and go on: one failing row must not hide the rest
                print(f"{name}: FAILED: {type(e).__name__}: {e}", flush=True)
    if args.out:
        with open(args.out, "w") as f:
            f.write(f"# Whole training steps on {dev['device_name']}\n\n")
            f.write(f"torch {torch.__version__} (cuDNN {torch.backends.cudnn.version()}), SpiralTorch cuDNN "
                    f"{dev.get('cudnn')}; TF32 allowed on both. Command: `python bench/bench_cuda_models.py`.\n\n")
            f.write("| model | SpiralTorch ms | PyTorch ms | time ratio | peak GiB SpiralTorch | peak GiB PyTorch |\n")
            f.write("|---|---:|---:|---:|---:|---:|\n")
            for name, a, b, ma, mb in rows:
                f.write(f"| {name} | {a:.2f} | {b:.2f} | {a / b:.2f}x | {ma:.2f} | {mb:.2f} |\n")


if __name__ == "__main__":
    main()
