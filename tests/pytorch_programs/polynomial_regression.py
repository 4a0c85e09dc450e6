"""Polynomial regression in the form of PyTorch's official examples/regression/main.py:
a Linear layer fitted with smooth L1 loss and a hand-written SGD step, stopping when the
loss falls below 1e-3. The target polynomial comes from NumPy; the batches come from the
library's own generator (so the two libraries see different samples of the same function)."""
from __future__ import print_function

import json
from itertools import count

import numpy as np
import torch
import torch.nn.functional as F

POLY_DEGREE = 4
torch.manual_seed(0)
_rng = np.random.default_rng(42)
W_target = torch.from_numpy(_rng.standard_normal((POLY_DEGREE, 1)).astype(np.float32)) * 5
b_target = torch.from_numpy(_rng.standard_normal(1).astype(np.float32)) * 5


def make_features(x):
    """Builds features i.e. a matrix with columns [x, x^2, x^3, x^4]."""
    x = x.unsqueeze(1)
    return torch.cat([x ** i for i in range(1, POLY_DEGREE+1)], 1)


def f(x):
    """Approximated function."""
    return x.mm(W_target) + b_target.item()


def poly_desc(W, b):
    """Creates a string description of a polynomial."""
    result = 'y = '
    for i, w in enumerate(W):
        result += '{:+.2f} x^{} '.format(w, i + 1)
    result += '{:+.2f}'.format(b[0])
    return result


def get_batch(batch_size=32):
    """Builds a batch i.e. (x, f(x)) pair."""
    random = torch.randn(batch_size)
    x = make_features(random)
    y = f(x)
    return x, y


# Define model
fc = torch.nn.Linear(W_target.size(0), 1)

losses = []
for batch_idx in count(1):
    # Get data
    batch_x, batch_y = get_batch()

    # Reset gradients
    fc.zero_grad()

    # Forward pass
    output = F.smooth_l1_loss(fc(batch_x), batch_y)
    loss = output.item()
    losses.append(loss)

    # Backward pass
    output.backward()

    # Apply gradients
    for param in fc.parameters():
        param.data.add_(-0.1 * param.grad)

    # Stop criterion
    if loss < 1e-3 or batch_idx >= 3000:
        break

print('Loss: {:.6f} after {} batches'.format(loss, batch_idx))
print('==> Learned function:\t' + poly_desc(fc.weight.view(-1), fc.bias))
print('==> Actual function:\t' + poly_desc(W_target.view(-1), b_target))
error = (fc.weight.view(-1) - W_target.view(-1)).abs().max().item()
print("RESULT " + json.dumps({"final_loss": loss, "batches": batch_idx, "first_loss": losses[0],
                              "coef_error": error, "bias": fc.bias.item(), "bias_target": b_target.item()}))
