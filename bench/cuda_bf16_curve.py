"""Does bf16 autocast train like float32? A byte-level GPT on real English text (Debian's
fortunes, via spiraltorch.datasets.fortunes_text) trained twice from the same initial weights on
the same batches: once in float32 (TF32 off), once under st.autocast("cuda", dtype=st.bfloat16).

Usage: python bench/cuda_bf16_curve.py [--steps 200] [--out bench/results/cuda_bf16_curve_h200.md]
Prints both training-loss curves (every 20 steps), the mean absolute gap over the last 50 steps
against the step-to-step noise of the float32 curve over the same window, and validation loss.
"""
import argparse
import statistics
import sys

import numpy as np

import spiraltorch as st
import spiraltorch.nn.functional as F
from spiraltorch.datasets import fortunes_text


class ByteGPT(st.nn.Module):
    def __init__(self, d, heads, layers, T, device="cuda"):
        super().__init__()
        self.tok = st.nn.Embedding(256, d)
        self.pos = st.nn.Embedding(T, d)
        self.blocks = st.nn.ModuleList(
            [st.nn.TransformerEncoderLayer(d, heads, 4 * d, dropout=0.0, activation="gelu", norm_first=True,
                                          batch_first=True)
             for _ in range(layers)])
        self.norm = st.nn.LayerNorm(d)
        self.head = st.nn.Linear(d, 256, bias=False)
        self.positions = st.arange(T, dtype=st.int64).to(device)

    def forward(self, idx):
        h = self.tok(idx) + self.pos(self.positions)
        for b in self.blocks:
            h = b(h, is_causal=True)
        return self.head(self.norm(h))


def batches(data, steps, B, T, seed):
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        starts = rng.integers(0, len(data) - T - 1, B)
        chunk = np.stack([data[s:s + T + 1] for s in starts]).astype(np.int64)
        yield chunk[:, :T], chunk[:, 1:]


def train(bf16, state, train_data, val_data, args):
    st.manual_seed(0)
    dev = args.device
    model = ByteGPT(args.d, args.heads, args.layers, args.T, dev).to(dev)
    model.load_state_dict(state)
    opt = st.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.01)
    losses = []

    def loss_of(x, y):
        logits = model(st.tensor(x).to(dev))
        return F.cross_entropy(logits.reshape(-1, 256), st.tensor(y).to(dev).reshape(-1))

    for x, y in batches(train_data, args.steps, args.B, args.T, seed=1):
        opt.zero_grad()
        if bf16:
            with st.autocast(dev, dtype=st.bfloat16):
                loss = loss_of(x, y)
        else:
            loss = loss_of(x, y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    with st.no_grad():
        val = []
        for x, y in batches(val_data, 10, args.B, args.T, seed=2):
            if bf16:
                with st.autocast(dev, dtype=st.bfloat16):
                    val.append(loss_of(x, y).item())
            else:
                val.append(loss_of(x, y).item())
    return losses, statistics.mean(val)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=200)
    p.add_argument("--B", type=int, default=32)
    p.add_argument("--T", type=int, default=256)
    p.add_argument("--d", type=int, default=384)
    p.add_argument("--heads", type=int, default=6)
    p.add_argument("--layers", type=int, default=4)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--out", default=None)
    p.add_argument("--device", default="cuda", help="cuda (the measurement) or cpu (a smoke run)")
    args = p.parse_args()
    if args.device == "cuda":
        if not st.cuda.is_available():
            sys.exit(f"cuda_bf16_curve: needs CUDA ({st.cuda.unavailable_reason()})")
        st.cuda.set_allow_tf32(False)
    train_data = np.frombuffer(fortunes_text("train"), dtype=np.uint8)
    val_data = np.frombuffer(fortunes_text("validation"), dtype=np.uint8)
    st.manual_seed(0)
    init = {k: v.clone() for k, v in ByteGPT(args.d, args.heads, args.layers, args.T, "cpu").state_dict().items()}
    fp32, val32 = train(False, init, train_data, val_data, args)
    bf16, val16 = train(True, init, train_data, val_data, args)
    window = min(50, args.steps // 2)
    gap = statistics.mean(abs(a - b) for a, b in zip(fp32[-window:], bf16[-window:]))
    noise = statistics.mean(abs(a - b) for a, b in zip(fp32[-window:], fp32[-window + 1:]))
    where = st.cuda.get_device_name() if args.device == "cuda" else "CPU"
    lines = [f"# bf16 autocast vs float32: byte-level GPT on fortunes text ({where})", "",
             f"{args.layers} layers, d={args.d}, {args.heads} heads, B={args.B}, T={args.T}, AdamW lr={args.lr}, "
             f"{args.steps} steps, same initial weights and batches; TF32 off for the float32 run. "
             f"Command: `python bench/cuda_bf16_curve.py --steps {args.steps}`.", "",
             "| step | float32 loss | bf16 autocast loss |", "|---:|---:|---:|"]
    for i in list(range(0, args.steps, 20)) + [args.steps - 1]:
        lines.append(f"| {i + 1} | {fp32[i]:.4f} | {bf16[i]:.4f} |")
    lines += ["", f"Mean |fp32 - bf16| over the last {window} steps: {gap:.4f}; mean step-to-step change of the "
              f"float32 loss over the same steps (its noise): {noise:.4f}.",
              f"Validation loss (10 batches): float32 {val32:.4f}, bf16 {val16:.4f}."]
    text = "\n".join(lines) + "\n"
    print(text, flush=True)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
