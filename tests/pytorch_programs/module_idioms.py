"""nn.Module idioms from PyTorch's tutorials and examples in one small fine-tuning
program: subclassing a built-in layer (a MaskedLinear(nn.Linear) with a buffer),
register_buffer / register_parameter (also None), properties and plain attributes on
subclasses, replacing a child (model.head = nn.Linear(...)), deleting an attribute,
getattr/setattr/hasattr by name, freezing a backbone with requires_grad = False, an
optimizer over filter(lambda p: p.requires_grad, ...), iterating children() /
named_modules() / buffers(), next(model.parameters()), ReduceLROnPlateau. Weights come
from NumPy, so the losses match exactly."""
import json

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class MaskedLinear(nn.Linear):
    """A Linear layer whose weight is multiplied by a fixed 0/1 mask."""

    def __init__(self, in_features, out_features, mask):
        super().__init__(in_features, out_features)
        self.register_buffer("mask", mask)
        self.register_parameter("gain", nn.Parameter(torch.ones(out_features)))
        self.register_parameter("unused", None)
        self.calls = 0

    @property
    def density(self):
        return self.mask.float().mean().item()

    def forward(self, input):
        self.calls += 1
        return F.linear(input, self.weight * self.mask, self.bias) * self.gain


class Backbone(nn.Module):
    def __init__(self):
        super().__init__()
        mask = torch.from_numpy((np.arange(16 * 10).reshape(16, 10) % 3 != 0).astype(np.float32))
        self.fc1 = MaskedLinear(10, 16, mask)
        self.act = nn.Tanh()
        self.fc2 = nn.Linear(16, 16)

    def forward(self, x):
        return self.act(self.fc2(self.act(self.fc1(x))))


class Classifier(nn.Module):
    def __init__(self, n_classes):
        super().__init__()
        self.backbone = Backbone()
        self.head = nn.Linear(16, n_classes)
        self.extra = nn.Linear(2, 2)  # replaced and deleted below
        self.temperature = 1.0

    @property
    def num_classes(self):
        return self.head.out_features

    def forward(self, x):
        return self.head(self.backbone(x)) / self.temperature


def numpy_init(model, seed):
    rng = np.random.default_rng(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            p.copy_(torch.from_numpy(rng.uniform(-0.4, 0.4, size=tuple(p.shape)).astype(np.float32)))


rng = np.random.default_rng(0)
X = torch.from_numpy(rng.standard_normal((256, 10)).astype(np.float32))
w_true = rng.standard_normal((10, 3)).astype(np.float32)
Y3 = torch.from_numpy((X.numpy() @ w_true).argmax(1))
Y5 = torch.from_numpy(((X.numpy() @ rng.standard_normal((10, 5)).astype(np.float32)).argmax(1)))

torch.manual_seed(0)
model = Classifier(3)
numpy_init(model, 1)
first = next(model.parameters())
assert tuple(first.shape) == (16, 10)
assert len(list(model.children())) == 3
assert isinstance(model.backbone.fc1, nn.Linear) and model.backbone.fc1.unused is None
assert abs(model.backbone.fc1.density - 2 / 3) < 0.01
names = [name for name, _ in model.named_modules()]
assert len(names) == 7, names
n_buffers = sum(1 for _ in model.buffers())
assert n_buffers == 1

# pretrain on the 3-class task
opt = torch.optim.SGD(model.parameters(), lr=0.2, momentum=0.9)
pre = []
for step in range(30):
    opt.zero_grad()
    loss = F.cross_entropy(model(X), Y3)
    loss.backward()
    opt.step()
    pre.append(loss.item())
print(f"pretraining loss {loss:.4f}")

# fine-tune for the 5-class task: new head, frozen backbone, attribute changes
model.head = nn.Linear(16, 5)
with torch.no_grad():
    model.head.weight.copy_(torch.from_numpy(rng.uniform(-0.3, 0.3, size=(5, 16)).astype(np.float32)))
    model.head.bias.zero_()
model.extra = nn.Linear(3, 3)
del model.extra
assert not hasattr(model, "extra")
setattr(model, "temperature", 2.0)
assert getattr(model, "temperature") == 2.0 and model.num_classes == 5
for param in model.backbone.parameters():
    param.requires_grad = False
model.backbone.fc1.mask = torch.ones(16, 10)  # assigning to a buffer replaces it
assert model.backbone.fc1.density == 1.0
frozen_before = model.backbone.fc2.weight.clone()
trainable = [p for p in model.parameters() if p.requires_grad]
assert len(trainable) == 2
optimizer = torch.optim.Adam(filter(lambda p: p.requires_grad, model.parameters()), lr=0.05)
scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau(optimizer, mode="min", factor=0.5, patience=2)
fine = []
for epoch in range(25):
    model.train()
    optimizer.zero_grad()
    loss = F.cross_entropy(model(X), Y5)
    loss.backward()
    optimizer.step()
    model.eval()
    with torch.no_grad():
        val = F.cross_entropy(model(X), Y5).item()
    scheduler.step(val)
    fine.append(val)
assert torch.equal(model.backbone.fc2.weight, frozen_before)
acc = (model(X).argmax(dim=1) == Y5).float().mean().item()
sd = model.state_dict()
print(f"fine-tuned loss {val:.4f}, accuracy {acc:.3f}, {len(sd)} state entries, calls {model.backbone.fc1.calls}")
print("RESULT " + json.dumps({"pre": pre, "fine": fine, "acc": acc, "lr": optimizer.param_groups[0]["lr"],
                              "state_entries": len(sd), "calls": model.backbone.fc1.calls}))
