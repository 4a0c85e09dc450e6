"""Small CNN on Fashion-MNIST: two conv(3x3)-ReLU-maxpool blocks, then a 2-layer
head, trained with nn.fit and Adam.

Run: spiral-model-zoo run fashion_cnn -- --epochs 3
"""

from __future__ import annotations

from spiraltorch import nn
from spiraltorch.zoo._common import run_classifier


def build(channels: int, classes: int) -> nn.Module:
    return nn.Sequential(
        nn.Conv2d(channels, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(32, 64, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(64 * 7 * 7, 128), nn.ReLU(), nn.Linear(128, classes),
    )


def main() -> None:
    run_classifier(__doc__, build, flatten=False, epochs=3, need_fashion=True)


if __name__ == "__main__":
    main()
