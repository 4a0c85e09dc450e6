"""Trains a 3-layer MLP on the built-in spiral data with raw tensors and autograd.

The recipe lives in the package (spiraltorch/zoo/spiral_mlp.py) so that
`spiral-model-zoo run spiral_mlp` can run it from an installed wheel too.
"""

from spiraltorch.zoo.spiral_mlp import main

if __name__ == "__main__":
    main()
