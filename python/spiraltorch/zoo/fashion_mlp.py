"""MLP classifier on Fashion-MNIST (784-256-128-10, ReLU, dropout) trained with
nn.fit and Adam. Falls back to the built-in spirals when the dataset is absent.

Run: spiral-model-zoo run fashion_mlp -- --epochs 15
"""

from __future__ import annotations

import argparse
import time

import spiraltorch as st
from spiraltorch import nn, optim
from spiraltorch.zoo._common import classification_data, loaders, report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--epochs", type=int, default=15)
    parser.add_argument("--batch", type=int, default=128)
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--limit", type=int, default=0, help="use only the first N training images")
    args = parser.parse_args()

    started = time.perf_counter()
    st.manual_seed(0)
    name, x_train, y_train, x_test, y_test, classes = classification_data(flatten=True, limit=args.limit)
    print(f"{name}: {x_train.shape[0]} train / {x_test.shape[0]} test, {classes} classes")
    features = x_train.shape[1]
    model = nn.Sequential(
        nn.Linear(features, 256), nn.ReLU(), nn.Dropout(0.1),
        nn.Linear(256, 128), nn.ReLU(),
        nn.Linear(128, classes),
    )
    train, test = loaders(x_train, y_train, x_test, y_test, args.batch)
    history = nn.fit(model, nn.CategoricalCrossEntropy(), optim.Adam(model.parameters(), lr=args.lr), train,
                     epochs=args.epochs, val_loader=test)
    report(name, history, nn.evaluate(model, nn.CategoricalCrossEntropy(), test), started)


if __name__ == "__main__":
    main()
