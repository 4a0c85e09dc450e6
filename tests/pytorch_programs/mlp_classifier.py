"""An MLP classifier in the form of PyTorch's "Learn the Basics" / quickstart tutorial:
Dataset and DataLoader over NumPy data, nn.Flatten + nn.Sequential, CrossEntropyLoss,
SGD, train_loop/test_loop with model.train()/model.eval(), accuracy from argmax, and the
state dict saved and loaded back into a fresh model. Weights come from NumPy."""
import json
import os
import tempfile

import numpy as np
import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset


class BlobsDataset(Dataset):
    """Four Gaussian blobs in 8x8 "images" (the tutorial uses FashionMNIST)."""

    def __init__(self, n, seed):
        rng = np.random.default_rng(seed)
        centers = np.random.default_rng(99).standard_normal((4, 64)).astype(np.float32)
        self.labels = rng.integers(0, 4, size=n)
        self.images = (centers[self.labels] + rng.standard_normal((n, 64)).astype(np.float32) * 1.5).reshape(n, 8, 8)

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, idx):
        image = torch.from_numpy(self.images[idx])
        label = int(self.labels[idx])
        return image, label


class NeuralNetwork(nn.Module):
    def __init__(self):
        super().__init__()
        self.flatten = nn.Flatten()
        self.linear_relu_stack = nn.Sequential(
            nn.Linear(8 * 8, 32),
            nn.ReLU(),
            nn.Linear(32, 32),
            nn.ReLU(),
            nn.Linear(32, 4),
        )

    def forward(self, x):
        x = self.flatten(x)
        logits = self.linear_relu_stack(x)
        return logits


def numpy_init(model):
    rng = np.random.default_rng(0)
    with torch.no_grad():
        for param in model.parameters():
            param.copy_(torch.from_numpy(rng.uniform(-0.2, 0.2, size=tuple(param.shape)).astype(np.float32)))


def train_loop(dataloader, model, loss_fn, optimizer, history):
    size = len(dataloader.dataset)
    model.train()
    for batch, (X, y) in enumerate(dataloader):
        pred = model(X)
        loss = loss_fn(pred, y)

        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        history.append(loss.item())

        if batch % 5 == 0:
            loss, current = loss.item(), batch * batch_size + len(X)
            print(f"loss: {loss:>7f}  [{current:>5d}/{size:>5d}]")


def test_loop(dataloader, model, loss_fn):
    model.eval()
    size = len(dataloader.dataset)
    num_batches = len(dataloader)
    test_loss, correct = 0, 0
    with torch.no_grad():
        for X, y in dataloader:
            pred = model(X)
            test_loss += loss_fn(pred, y).item()
            correct += (pred.argmax(1) == y).type(torch.float).sum().item()

    test_loss /= num_batches
    correct /= size
    print(f"Test Error: \n Accuracy: {(100*correct):>0.1f}%, Avg loss: {test_loss:>8f} \n")
    return test_loss, correct


torch.manual_seed(0)
device = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu"
print(f"Using {device} device")
training_data = BlobsDataset(512, seed=1)
test_data = BlobsDataset(256, seed=2)
batch_size = 32
train_dataloader = DataLoader(training_data, batch_size=batch_size)
test_dataloader = DataLoader(test_data, batch_size=batch_size)

model = NeuralNetwork().to(device)
numpy_init(model)
print(model)
learning_rate = 1e-2
loss_fn = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=learning_rate, momentum=0.9)

history, tests = [], []
epochs = 3
for t in range(epochs):
    print(f"Epoch {t+1}\n-------------------------------")
    train_loop(train_dataloader, model, loss_fn, optimizer, history)
    tests.append(test_loop(test_dataloader, model, loss_fn))
print("Done!")

path = os.path.join(tempfile.mkdtemp(), "model_weights.pth")
torch.save(model.state_dict(), path)
model2 = NeuralNetwork()
model2.load_state_dict(torch.load(path, weights_only=True))
model2.eval()
X, y = test_data[0]
with torch.no_grad():
    same = torch.equal(model2(X.unsqueeze(0)), model(X.unsqueeze(0)))
assert same
print("RESULT " + json.dumps({"train": history, "test": tests}))
