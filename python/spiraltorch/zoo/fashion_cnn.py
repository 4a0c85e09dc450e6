"""Small CNN on Fashion-MNIST: two conv(3x3)-ReLU-maxpool blocks, then a 2-layer
head, trained with nn.fit and Adam.

Run: spiral-model-zoo run fashion_cnn -- --epochs 3
"""

from __future__ import annotations

from spiraltorch import nn
from spiraltorch.zoo._common import run_classifier


def build(channels: int, classes: int) -> nn.Module:
    """The recipe's CNN for ``channels`` x 28 x 28 images: conv(3x3, 32)-ReLU-maxpool, conv(3x3, 64)-
    ReLU-maxpool, then Linear(64*7*7, 128)-ReLU-Linear(128, ``classes``) giving logits."""
    return nn.Sequential(
        nn.Conv2d(channels, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(32, 64, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(64 * 7 * 7, 128), nn.ReLU(), nn.Linear(128, classes),
    )


def main() -> None:
    """Runs the recipe from the command line (``spiral-model-zoo run fashion_cnn -- --help`` lists its options;
    the module docstring says what it trains and prints)."""
    run_classifier(__doc__, build, flatten=False, epochs=3, need_fashion=True)


if __name__ == "__main__":
    main()
