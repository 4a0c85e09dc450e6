"""Fashion-MNIST MLP and CNN: SpiralTorch vs PyTorch, same architecture, data order,
optimiser and epochs, in one process. Prints test accuracy and seconds per epoch.

Run: python bench/bench_fashion.py [--epochs-mlp 5] [--epochs-cnn 2] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import time

import torch

import spiraltorch as st
from spiraltorch import nn, optim
from spiraltorch.data import load_fashion_mnist


def st_models(kind: str):
    if kind == "mlp":
        return nn.Sequential(nn.Flatten(), nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 128), nn.ReLU(),
                             nn.Linear(128, 10))
    return nn.Sequential(nn.Conv2d(1, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Conv2d(32, 64, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Flatten(), nn.Linear(64 * 7 * 7, 128), nn.ReLU(), nn.Linear(128, 10))


def torch_models(kind: str):
    t = torch.nn
    if kind == "mlp":
        return t.Sequential(t.Flatten(), t.Linear(784, 256), t.ReLU(), t.Linear(256, 128), t.ReLU(), t.Linear(128, 10))
    return t.Sequential(t.Conv2d(1, 32, 3, padding=1), t.ReLU(), t.MaxPool2d(2),
                        t.Conv2d(32, 64, 3, padding=1), t.ReLU(), t.MaxPool2d(2),
                        t.Flatten(), t.Linear(64 * 7 * 7, 128), t.ReLU(), t.Linear(128, 10))


def run(kind: str, epochs: int, batch: int, data) -> dict:
    x_train, y_train, x_test, y_test = data
    n = x_train.shape[0]
    st.manual_seed(0)
    orders = [st.argsort(st.rand(n)) for _ in range(epochs)]
    results = {}
    for lib in ("spiraltorch", "torch"):
        if lib == "spiraltorch":
            st.manual_seed(1)
            model = st_models(kind)
            opt = optim.Adam(model.parameters(), lr=1e-3)
            loss_fn = nn.CategoricalCrossEntropy()
            xt, yt, xe, ye = x_train, y_train, x_test, y_test
            take = lambda t, idx: t.index_select(0, idx)  # noqa: E731
            nograd = st.no_grad
        else:
            torch.manual_seed(1)
            model = torch_models(kind)
            opt = torch.optim.Adam(model.parameters(), lr=1e-3)
            loss_fn = torch.nn.CrossEntropyLoss()
            xt, yt = torch.from_dlpack(x_train), torch.from_dlpack(y_train)
            xe, ye = torch.from_dlpack(x_test), torch.from_dlpack(y_test)
            take = lambda t, idx: t.index_select(0, torch.from_dlpack(idx))  # noqa: E731
            nograd = torch.no_grad
        epoch_times = []
        for e in range(epochs):
            model.train()
            start = time.perf_counter()
            for i in range(0, n, batch):
                idx = orders[e][i : i + batch]
                opt.zero_grad()
                loss = loss_fn(model(take(xt, idx)), take(yt, idx))
                loss.backward()
                opt.step()
            epoch_times.append(time.perf_counter() - start)
        model.eval()
        correct = 0
        with nograd():
            for i in range(0, xe.shape[0], 1000):
                pred = model(xe[i : i + 1000]).argmax(dim=1)
                correct += int((pred == ye[i : i + 1000]).sum().item())
        results[lib] = {"accuracy": correct / xe.shape[0], "seconds_per_epoch": sum(epoch_times) / epochs}
    results["time_ratio_torch_over_st"] = results["torch"]["seconds_per_epoch"] / results["spiraltorch"]["seconds_per_epoch"]
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--epochs-mlp", type=int, default=5)
    parser.add_argument("--epochs-cnn", type=int, default=2)
    parser.add_argument("--batch", type=int, default=128)
    parser.add_argument("--json")
    args = parser.parse_args()
    x_train, y_train = load_fashion_mnist(split="train")
    x_test, y_test = load_fashion_mnist(split="test")
    mean, std = x_train.mean().item(), x_train.std().item()
    data = (((x_train - mean) / std).contiguous(), y_train, ((x_test - mean) / std).contiguous(), y_test)
    info = st.describe_device("cpu")
    print(f"machine: {info['cpu_model']}, {info['logical_cores']} cores, {info['simd']}; torch {torch.__version__}")
    out = {}
    print("| model | epochs | SpiralTorch acc | PyTorch acc | SpiralTorch s/epoch | PyTorch s/epoch | torch/st time |")
    print("|---|---|---|---|---|---|---|")
    for kind, epochs in (("mlp", args.epochs_mlp), ("cnn", args.epochs_cnn)):
        if epochs <= 0:
            continue
        r = run(kind, epochs, args.batch, data)
        out[kind] = r
        print(f"| {kind} | {epochs} | {r['spiraltorch']['accuracy']:.4f} | {r['torch']['accuracy']:.4f} | "
              f"{r['spiraltorch']['seconds_per_epoch']:.2f} | {r['torch']['seconds_per_epoch']:.2f} | "
              f"{r['time_ratio_torch_over_st']:.2f}x |", flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=2)


if __name__ == "__main__":
    main()
