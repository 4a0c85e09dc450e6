"""Trains a 3-layer MLP on the built-in spiral dataset with raw tensors and autograd.

Run: python examples/spiral_mlp.py [--epochs N]
"""

from __future__ import annotations

import argparse
import math
import time

import spiraltorch as st
from spiraltorch.datasets import make_spirals
from spiraltorch.utils.progress import progress


def init_linear(fan_in: int, fan_out: int) -> tuple:
    """A linear layer as raw tensors ``(w, b)``: ``w`` (fan_in, fan_out) and ``b`` (fan_out,) drawn
    uniformly from [-1/sqrt(fan_in), 1/sqrt(fan_in)] (PyTorch's Linear default), requiring grad."""
    bound = 1.0 / math.sqrt(fan_in)
    w = st.rand(fan_in, fan_out) * (2 * bound) - bound
    b = st.rand(fan_out) * (2 * bound) - bound
    return w.requires_grad_(), b.requires_grad_()


def main() -> None:
    """Runs the recipe from the command line (``spiral-model-zoo run spiral_mlp -- --help`` lists its options;
    the module docstring says what it trains and prints)."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--epochs", type=int, default=60)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--lr", type=float, default=0.2)
    parser.add_argument("--hidden", type=int, default=128)
    args = parser.parse_args()

    st.manual_seed(0)
    x, y = make_spirals(samples_per_class=400, classes=3, noise=0.2, seed=1)
    perm = st.argsort(st.rand(x.shape[0]))
    x, y = x[perm], y[perm]
    split = int(0.8 * x.shape[0])
    x_train, y_train, x_test, y_test = x[:split], y[:split], x[split:], y[split:]
    print(f"spirals: {x_train.shape[0]} train / {x_test.shape[0]} test points, 3 classes")

    params = [*init_linear(2, args.hidden), *init_linear(args.hidden, args.hidden), *init_linear(args.hidden, 3)]
    velocity = [st.zeros_like(p) for p in params]

    def forward(inputs: st.Tensor) -> st.Tensor:
        w1, b1, w2, b2, w3, b3 = params
        h = (inputs @ w1 + b1).relu()
        h = (h @ w2 + b2).relu()
        return h @ w3 + b3

    start = time.perf_counter()
    n = x_train.shape[0]
    bar = progress(args.epochs * n, desc="train")
    for epoch in range(1, args.epochs + 1):
        order = st.argsort(st.rand(n))
        total, batches = 0.0, 0
        for i in range(0, n, args.batch):
            idx = order[i : i + args.batch]
            logits = forward(x_train[idx])
            loss = -logits.log_softmax(dim=1).gather(1, y_train[idx].unsqueeze(1)).mean()
            for p in params:
                p.grad = None
            loss.backward()
            with st.no_grad():
                for p, v in zip(params, velocity):
                    v.mul_(0.9).add_(p.grad)
                    p.sub_(v, alpha=args.lr)
            total += loss.item()
            batches += 1
            bar.update(int(idx.shape[0]))
        bar.set_postfix(epoch=epoch, loss=total / batches)
        if epoch == 1 or epoch % 10 == 0 or epoch == args.epochs:
            with st.no_grad():
                acc = (forward(x_test).argmax(dim=1) == y_test).float().mean().item()
            bar.print(f"epoch {epoch:3d}  loss {total / batches:.4f}  test accuracy {acc:.3f}")
    bar.close()
    elapsed = time.perf_counter() - start
    with st.no_grad():
        acc = (forward(x_test).argmax(dim=1) == y_test).float().mean().item()
    print(f"final test accuracy {acc:.3f} after {args.epochs} epochs ({elapsed:.1f} s)")


if __name__ == "__main__":
    main()
