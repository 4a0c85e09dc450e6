"""A custom Dataset split with random_split(generator=torch.Generator().manual_seed(42)),
loaded with shuffling DataLoaders (two persistent workers), a regression MLP trained with SGD + momentum + weight
decay and a MultiStepLR schedule, evaluation in a function decorated with
@torch.inference_mode(), clip_grad_value_, parameters_to_vector / vector_to_parameters,
and the weights averaged over the last epochs. The split and the shuffling come from each
library's own generator, so the losses are compared by range."""
import json

import numpy as np
import torch
import torch.nn as nn
from torch.nn.utils import parameters_to_vector, vector_to_parameters
from torch.utils.data import DataLoader, Dataset, random_split


class WaveDataset(Dataset):
    def __init__(self, n):
        rng = np.random.default_rng(0)
        self.x = rng.uniform(-3, 3, size=(n, 2)).astype(np.float32)
        self.y = (np.sin(self.x[:, :1]) * np.cos(self.x[:, 1:]) + 0.05 * rng.standard_normal((n, 1))).astype(np.float32)

    def __len__(self):
        return len(self.x)

    def __getitem__(self, idx):
        return torch.from_numpy(self.x[idx]), torch.from_numpy(self.y[idx])


@torch.inference_mode()
def evaluate(model, loader, loss_fn):
    model.eval()
    total, count = 0.0, 0
    for xb, yb in loader:
        total += loss_fn(model(xb), yb).item() * len(xb)
        count += len(xb)
    return total / count


torch.manual_seed(0)
dataset = WaveDataset(600)
train_set, val_set = random_split(dataset, [480, 120], generator=torch.Generator().manual_seed(42))
assert len(train_set) == 480 and len(val_set) == 120
train_loader = DataLoader(train_set, batch_size=32, shuffle=True, drop_last=True, num_workers=2,
                          persistent_workers=True, pin_memory=False)
val_loader = DataLoader(val_set, batch_size=64)
model = nn.Sequential(nn.Linear(2, 64), nn.Tanh(), nn.Linear(64, 64), nn.Tanh(), nn.Linear(64, 1))
loss_fn = nn.MSELoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, weight_decay=1e-4)
scheduler = torch.optim.lr_scheduler.MultiStepLR(optimizer, milestones=[8, 12], gamma=0.3)
history, vals = [], []
averaged = None
for epoch in range(15):
    model.train()
    for xb, yb in train_loader:
        optimizer.zero_grad()
        loss = loss_fn(model(xb), yb)
        loss.backward()
        torch.nn.utils.clip_grad_value_(model.parameters(), 1.0)
        optimizer.step()
    scheduler.step()
    history.append(loss.item())
    vals.append(evaluate(model, val_loader, loss_fn))
    vec = parameters_to_vector(model.parameters()).detach()
    averaged = vec.clone() if averaged is None or epoch < 10 else averaged * 0.8 + vec * 0.2
    print(f"epoch {epoch:2d}  train {loss.item():.4f}  val {vals[-1]:.4f}  lr {scheduler.get_last_lr()[0]:.4f}")
vector_to_parameters(averaged, model.parameters())
final = evaluate(model, val_loader, loss_fn)
print(f"averaged weights: val {final:.4f}")
print("RESULT " + json.dumps({"train": history, "val": vals, "final": final}))
