"""Fitting the parameters of a damped oscillation with LBFGS and a strong-Wolfe line
search in float64 (the way scipy.optimize.curve_fit users port their code): parameters as
a Module's nn.Parameter scalars, a closure, optimizer.step(closure) returning the loss."""
import json
import math

import numpy as np
import torch
from torch import nn


class Damped(nn.Module):
    def __init__(self):
        super().__init__()
        self.amplitude = nn.Parameter(torch.tensor(1.0, dtype=torch.float64))
        self.decay = nn.Parameter(torch.tensor(0.1, dtype=torch.float64))
        self.omega = nn.Parameter(torch.tensor(2.5, dtype=torch.float64))
        self.phase = nn.Parameter(torch.tensor(0.0, dtype=torch.float64))

    def forward(self, t):
        return self.amplitude * torch.exp(-self.decay * t) * torch.cos(self.omega * t + self.phase)


rng = np.random.default_rng(3)
t = torch.from_numpy(np.linspace(0, 6, 120))
truth = 1.7 * np.exp(-0.35 * t.numpy()) * np.cos(3.0 * t.numpy() + 0.4)
y = torch.from_numpy(truth + rng.standard_normal(120) * 0.02)

model = Damped()
optimizer = torch.optim.LBFGS(model.parameters(), lr=1, max_iter=20, history_size=10,
                              line_search_fn="strong_wolfe")
losses = []


def closure():
    optimizer.zero_grad()
    loss = ((model(t) - y) ** 2).mean()
    loss.backward()
    return loss


for step in range(6):
    loss = optimizer.step(closure)
    losses.append(float(loss))
    print(f"step {step}: loss {loss:.3e}")

fitted = {name: p.item() for name, p in model.named_parameters()}
print(", ".join(f"{k.split('.')[-1].split(':')[-1]}={v:.4f}" for k, v in fitted.items()))
final = closure().item()
print("RESULT " + json.dumps({"losses": losses, "final": final,
                              "params": [model.amplitude.item(), model.decay.item(),
                                         model.omega.item(), math.remainder(model.phase.item(), 2 * math.pi)]}))
