"""One rank of the find_unused_parameters run (tests/python/test_distributed.py starts it with
spiral-run): a model with three heads, of which rank 0 uses heads a and b, rank 1 only head a, and
no rank head c. Saves each parameter's .grad (NaN-filled where it is None) to <out>/rank<r>.npz,
for the flag on and off."""

import sys

import numpy as np

import spiraltorch as st
import spiraltorch.distributed as dist
from spiraltorch import nn
from spiraltorch.nn.parallel import DistributedDataParallel as DDP


class Heads(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(3, 2)
        self.b = nn.Linear(3, 2)
        self.c = nn.Linear(3, 2)

    def forward(self, x, use_b):
        y = self.a(x)
        return y + self.b(x) if use_b else y


def grads(model):
    out = {}
    for k, p in model.named_parameters():
        out[k.replace("::", "__").replace(".", "__")] = p.grad.numpy() if p.grad is not None else np.full(p.shape, np.nan)
    return out


dist.init_process_group("mpi")
rank = dist.get_rank()
saved = {}
for flag in (True, False):
    st.manual_seed(1)
    model = DDP(Heads(), find_unused_parameters=flag)
    assert model.find_unused_parameters == flag
    x = st.full((4, 3), float(rank + 1))
    model(x, use_b=rank == 0).sum().backward()
    saved.update({f"{flag}.{k}": v for k, v in grads(model.module).items()})
np.savez(f"{sys.argv[1]}/rank{rank}.npz", **saved)
