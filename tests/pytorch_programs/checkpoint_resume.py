"""Saving and loading a general checkpoint, as in PyTorch's tutorial of that name: a
regression MLP trained with Adam and a StepLR schedule, interrupted after 15 epochs by a
torch.save of {'epoch', 'model_state_dict', 'optimizer_state_dict', 'scheduler', 'loss',
'history' (a NumPy array), 'note'}, resumed into fresh objects, and compared with an
uninterrupted run (the two must agree exactly). Weights come from NumPy."""
import json
import os
import tempfile

import numpy as np
import torch
import torch.nn as nn
import torch.optim as optim

rng = np.random.default_rng(0)
X = torch.from_numpy(rng.uniform(-2, 2, size=(128, 3)).astype(np.float32))
Y = (X[:, :1] * X[:, 1:2] - torch.sin(X[:, 2:3])).detach()


class Net(nn.Module):
    def __init__(self):
        super(Net, self).__init__()
        self.fc1 = nn.Linear(3, 24)
        self.fc2 = nn.Linear(24, 24)
        self.fc3 = nn.Linear(24, 1)

    def forward(self, x):
        x = torch.relu(self.fc1(x))
        x = torch.relu(self.fc2(x))
        return self.fc3(x)


def make():
    net = Net()
    init = np.random.default_rng(5)
    with torch.no_grad():
        for p in net.parameters():
            p.copy_(torch.from_numpy(init.uniform(-0.5, 0.5, size=tuple(p.shape)).astype(np.float32)))
    optimizer = optim.Adam(net.parameters(), lr=0.02, betas=(0.9, 0.99), weight_decay=1e-4)
    scheduler = optim.lr_scheduler.StepLR(optimizer, step_size=10, gamma=0.5)
    return net, optimizer, scheduler


def run(net, optimizer, scheduler, epochs, losses):
    criterion = nn.MSELoss()
    for epoch in epochs:
        for i in range(0, 128, 32):
            optimizer.zero_grad()
            loss = criterion(net(X[i:i + 32]), Y[i:i + 32])
            loss.backward()
            optimizer.step()
        scheduler.step()
        losses.append(loss.item())
    return loss


torch.manual_seed(0)
straight = []
net, optimizer, scheduler = make()
run(net, optimizer, scheduler, range(30), straight)

interrupted = []
net, optimizer, scheduler = make()
loss = run(net, optimizer, scheduler, range(15), interrupted)
PATH = os.path.join(tempfile.mkdtemp(), "model.pt")
EPOCH = 15
torch.save({
    'epoch': EPOCH,
    'model_state_dict': net.state_dict(),
    'optimizer_state_dict': optimizer.state_dict(),
    'scheduler': scheduler.state_dict(),
    'loss': loss,
    'history': np.array(interrupted),
    'note': "interrupted at epoch 15",
}, PATH)

net, optimizer, scheduler = make()
checkpoint = torch.load(PATH, weights_only=False)
net.load_state_dict(checkpoint['model_state_dict'])
optimizer.load_state_dict(checkpoint['optimizer_state_dict'])
scheduler.load_state_dict(checkpoint['scheduler'])
epoch = checkpoint['epoch']
loss = checkpoint['loss']
history = checkpoint['history']
assert isinstance(history, np.ndarray) and history.shape == (15,)
assert checkpoint['note'].startswith("interrupted")
print(f"resumed at epoch {epoch} with loss {float(loss):.5f}, lr {scheduler.get_last_lr()[0]}")
net.train()
resumed = list(history)
run(net, optimizer, scheduler, range(epoch, 30), resumed)
print(f"straight {straight[-1]:.6f} resumed {resumed[-1]:.6f}")
assert np.allclose(straight, resumed, rtol=1e-6, atol=1e-7), (straight, resumed)
print("RESULT " + json.dumps({"train": straight, "lr": scheduler.get_last_lr()}))
