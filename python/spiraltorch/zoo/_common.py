"""Shared pieces of the zoo's classification recipes."""

from __future__ import annotations

import argparse
import sys
import time
from typing import Callable, Tuple

import spiraltorch as st
from spiraltorch.data import DataLoader, TensorDataset, find_fashion_mnist, load_fashion_mnist
from spiraltorch.datasets import make_spirals


def classification_data(flatten: bool, limit: int = 0) -> Tuple[str, st.Tensor, st.Tensor, st.Tensor, st.Tensor, int]:
    """(name, x_train, y_train, x_test, y_test, classes): Fashion-MNIST when installed,
    else the built-in spirals."""
    if find_fashion_mnist():
        x_train, y_train = load_fashion_mnist(split="train")
        x_test, y_test = load_fashion_mnist(split="test")
        if limit:
            x_train, y_train = x_train[:limit], y_train[:limit]
        # Standardise with the training-set statistics.
        mean, std = x_train.mean().item(), x_train.std().item()
        x_train, x_test = (x_train - mean) / std, (x_test - mean) / std
        if flatten:
            x_train, x_test = x_train.reshape(x_train.shape[0], -1), x_test.reshape(x_test.shape[0], -1)
        return "fashion-mnist", x_train.contiguous(), y_train, x_test.contiguous(), y_test, 10
    print("Fashion-MNIST is not installed (Debian: apt-get install dataset-fashion-mnist, or set "
          "SPIRALTORCH_FASHION_MNIST); training on the built-in 3-class spirals instead", file=sys.stderr)
    x, y = make_spirals(samples_per_class=1000, classes=3, noise=0.2, seed=1)
    perm = st.argsort(st.rand(x.shape[0]))
    x, y = x[perm], y[perm]
    split = int(0.8 * x.shape[0])
    return "spirals", x[:split], y[:split], x[split:], y[split:], 3


def loaders(x_train, y_train, x_test, y_test, batch: int):  # type: ignore[no-untyped-def]
    train = DataLoader(TensorDataset(x_train, y_train), batch_size=batch, shuffle=True)
    test = DataLoader(TensorDataset(x_test, y_test), batch_size=1000)
    return train, test


def report(name: str, history, test_metrics: dict, started: float) -> None:  # type: ignore[no-untyped-def]
    per_epoch = sum(e.seconds for e in history.epochs) / max(len(history.epochs), 1)
    print(f"{name}: final test accuracy {test_metrics['accuracy']:.4f}, test loss {test_metrics['loss']:.4f}, "
          f"{per_epoch:.1f} s/epoch, {time.perf_counter() - started:.1f} s total")


def run_classifier(doc: str, build: Callable[[int, int], "st.nn.Module"], flatten: bool, epochs: int,
                   need_fashion: bool = False) -> None:
    """Parses the common recipe arguments, trains ``build(features, classes)`` with nn.fit and
    Adam on the classification data and prints the final test metrics."""
    from spiraltorch import nn, optim

    parser = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--epochs", type=int, default=epochs)
    parser.add_argument("--batch", type=int, default=128)
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--limit", type=int, default=0, help="use only the first N training images")
    parser.add_argument("--logdir", default=None,
                        help="write a TensorBoard run here (losses, accuracy, a grid of test inputs)")
    args = parser.parse_args()

    started = time.perf_counter()
    st.manual_seed(0)
    name, x_train, y_train, x_test, y_test, classes = classification_data(flatten=flatten, limit=args.limit)
    if need_fashion and name != "fashion-mnist":
        raise SystemExit("this recipe needs Fashion-MNIST (Debian package dataset-fashion-mnist)")
    print(f"{name}: {x_train.shape[0]} train / {x_test.shape[0]} test, {classes} classes")
    model = build(x_train.shape[1], classes)
    train, test = loaders(x_train, y_train, x_test, y_test, args.batch)
    writer = None
    if args.logdir:
        from spiraltorch.utils.tensorboard import SummaryWriter

        writer = SummaryWriter(args.logdir)
    history = nn.fit(model, nn.CategoricalCrossEntropy(), optim.Adam(model.parameters(), lr=args.lr), train,
                     epochs=args.epochs, val_loader=test, writer=writer)
    metrics = nn.evaluate(model, nn.CategoricalCrossEntropy(), test)
    if writer is not None:
        if x_test.ndim == 4:  # (standardised) images, shown rescaled to [0, 1]
            shown = x_test[:32]
            writer.add_images("test_inputs", (shown - shown.min()) / (shown.max() - shown.min()), len(history.epochs))
        writer.add_hparams({"lr": args.lr, "batch": args.batch, "epochs": args.epochs},
                           {"hparam/test_accuracy": metrics["accuracy"], "hparam/test_loss": metrics["loss"]},
                           run_name="hparams")
        writer.close()
    report(name, history, metrics, started)
