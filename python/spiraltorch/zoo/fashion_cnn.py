"""Small CNN on Fashion-MNIST: two conv(3x3)-ReLU-maxpool blocks, then a 2-layer
head, trained with nn.fit and Adam.

Run: spiral-model-zoo run fashion_cnn -- --epochs 3
"""

from __future__ import annotations

import argparse
import time

import spiraltorch as st
from spiraltorch import nn, optim
from spiraltorch.zoo._common import classification_data, loaders, report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--batch", type=int, default=128)
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--limit", type=int, default=0, help="use only the first N training images")
    args = parser.parse_args()

    started = time.perf_counter()
    st.manual_seed(0)
    name, x_train, y_train, x_test, y_test, classes = classification_data(flatten=False, limit=args.limit)
    if name != "fashion-mnist":
        raise SystemExit("fashion_cnn needs Fashion-MNIST (Debian package dataset-fashion-mnist)")
    print(f"{name}: {x_train.shape[0]} train / {x_test.shape[0]} test")
    model = nn.Sequential(
        nn.Conv2d(1, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(32, 64, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(64 * 7 * 7, 128), nn.ReLU(), nn.Linear(128, classes),
    )
    train, test = loaders(x_train, y_train, x_test, y_test, args.batch)
    history = nn.fit(model, nn.CategoricalCrossEntropy(), optim.Adam(model.parameters(), lr=args.lr), train,
                     epochs=args.epochs, val_loader=test)
    report(name, history, nn.evaluate(model, nn.CategoricalCrossEntropy(), test), started)


if __name__ == "__main__":
    main()
