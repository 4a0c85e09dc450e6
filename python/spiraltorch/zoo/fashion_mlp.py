"""MLP classifier on Fashion-MNIST (784-256-128-10, ReLU, dropout) trained with
nn.fit and Adam. Falls back to the built-in spirals when the dataset is absent.

Run: spiral-model-zoo run fashion_mlp -- --epochs 15
"""

from __future__ import annotations

from spiraltorch import nn
from spiraltorch.zoo._common import run_classifier


def build(features: int, classes: int) -> nn.Module:
    """The recipe's MLP: Linear(``features``, 256)-ReLU-Dropout(0.1)-Linear(256, 128)-ReLU-
    Linear(128, ``classes``), giving logits for flattened inputs."""
    return nn.Sequential(
        nn.Linear(features, 256), nn.ReLU(), nn.Dropout(0.1),
        nn.Linear(256, 128), nn.ReLU(),
        nn.Linear(128, classes),
    )


def main() -> None:
    """Runs the recipe from the command line (``spiral-model-zoo run fashion_mlp -- --help`` lists its options;
    the module docstring says what it trains and prints)."""
    run_classifier(__doc__, build, flatten=True, epochs=15)


if __name__ == "__main__":
    main()
