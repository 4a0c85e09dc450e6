"""A convolutional classifier in the form of PyTorch's official examples/mnist/main.py:
Conv2d/Dropout/max_pool2d/log_softmax, nll_loss, Adadelta with StepLR, train()/test()
with batch_idx logging, argmax(dim=1, keepdim=True) + eq(view_as) accuracy. The images are
synthetic 12x12 digits-like patterns made with NumPy; weights come from NumPy and dropout
is on, so the two libraries' losses are compared by range."""
import argparse
import json

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch.optim.lr_scheduler import StepLR
from torch.utils.data import DataLoader, TensorDataset  # noqa: F401 - the official example's imports


class Net(nn.Module):
    def __init__(self):
        super(Net, self).__init__()
        self.conv1 = nn.Conv2d(1, 8, 3, 1)
        self.conv2 = nn.Conv2d(8, 16, 3, 1)
        self.dropout1 = nn.Dropout(0.25)
        self.dropout2 = nn.Dropout(0.5)
        self.fc1 = nn.Linear(16 * 4 * 4, 32)
        self.fc2 = nn.Linear(32, 4)

    def forward(self, x):
        x = self.conv1(x)
        x = F.relu(x)
        x = self.conv2(x)
        x = F.relu(x)
        x = F.max_pool2d(x, 2)
        x = self.dropout1(x)
        x = torch.flatten(x, 1)
        x = self.fc1(x)
        x = F.relu(x)
        x = self.dropout2(x)
        x = self.fc2(x)
        output = F.log_softmax(x, dim=1)
        return output


def train(args, model, device, train_loader, optimizer, epoch, history):
    model.train()
    for batch_idx, (data, target) in enumerate(train_loader):
        data, target = data.to(device), target.to(device)
        optimizer.zero_grad()
        output = model(data)
        loss = F.nll_loss(output, target)
        loss.backward()
        optimizer.step()
        history.append(loss.item())
        if batch_idx % args.log_interval == 0:
            print('Train Epoch: {} [{}/{} ({:.0f}%)]\tLoss: {:.6f}'.format(
                epoch, batch_idx * len(data), len(train_loader.dataset),
                100. * batch_idx / len(train_loader), loss.item()))
            if args.dry_run:
                break


def test(model, device, test_loader):
    model.eval()
    test_loss = 0
    correct = 0
    with torch.no_grad():
        for data, target in test_loader:
            data, target = data.to(device), target.to(device)
            output = model(data)
            test_loss += F.nll_loss(output, target, reduction='sum').item()  # sum up batch loss
            pred = output.argmax(dim=1, keepdim=True)  # get the index of the max log-probability
            correct += pred.eq(target.view_as(pred)).sum().item()

    test_loss /= len(test_loader.dataset)

    print('\nTest set: Average loss: {:.4f}, Accuracy: {}/{} ({:.0f}%)\n'.format(
        test_loss, correct, len(test_loader.dataset),
        100. * correct / len(test_loader.dataset)))
    return test_loss, correct / len(test_loader.dataset)


def make_data(n, seed):
    rng = np.random.default_rng(seed)
    patterns = np.zeros((4, 12, 12), np.float32)
    patterns[0, 2:10, 5:7] = 1   # |
    patterns[1, 5:7, 2:10] = 1   # -
    patterns[2, np.arange(2, 10), np.arange(2, 10)] = 1   # \
    patterns[3, 2:10, 2:4] = 1; patterns[3, 2:10, 8:10] = 1   # ||
    labels = rng.integers(0, 4, size=n)
    images = patterns[labels] + rng.standard_normal((n, 12, 12)).astype(np.float32) * 0.3
    return TensorDataset(torch.from_numpy(images[:, None]), torch.from_numpy(labels))


def main():
    parser = argparse.ArgumentParser(description='PyTorch MNIST Example')
    parser.add_argument('--batch-size', type=int, default=32, metavar='N')
    parser.add_argument('--test-batch-size', type=int, default=100, metavar='N')
    parser.add_argument('--epochs', type=int, default=3, metavar='N')
    parser.add_argument('--lr', type=float, default=1.0, metavar='LR')
    parser.add_argument('--gamma', type=float, default=0.7, metavar='M')
    parser.add_argument('--no-accel', action='store_true')
    parser.add_argument('--dry-run', action='store_true')
    parser.add_argument('--seed', type=int, default=1, metavar='S')
    parser.add_argument('--log-interval', type=int, default=4, metavar='N')
    parser.add_argument('--save-model', action='store_true')
    args = parser.parse_args([])

    use_accel = not args.no_accel and torch.accelerator.is_available()
    torch.manual_seed(args.seed)
    if use_accel:
        device = torch.accelerator.current_accelerator()
    else:
        device = torch.device("cpu")

    train_kwargs = {'batch_size': args.batch_size}
    test_kwargs = {'batch_size': args.test_batch_size}
    if use_accel:
        accel_kwargs = {'num_workers': 1, 'pin_memory': True, 'shuffle': True}
        train_kwargs.update(accel_kwargs)
        test_kwargs.update(accel_kwargs)

    dataset1 = make_data(384, seed=1)
    dataset2 = make_data(200, seed=2)
    train_loader = torch.utils.data.DataLoader(dataset1, **train_kwargs)
    test_loader = torch.utils.data.DataLoader(dataset2, **test_kwargs)

    model = Net().to(device)
    rng = np.random.default_rng(0)
    with torch.no_grad():
        for p in model.parameters():
            bound = 1.0 / np.sqrt(p[0].numel()) if p.dim() > 1 else 0.05
            p.copy_(torch.from_numpy(rng.uniform(-bound, bound, size=tuple(p.shape)).astype(np.float32)))
    optimizer = optim.Adadelta(model.parameters(), lr=args.lr)

    history, tests = [], []
    scheduler = StepLR(optimizer, step_size=1, gamma=args.gamma)
    for epoch in range(1, args.epochs + 1):
        train(args, model, device, train_loader, optimizer, epoch, history)
        tests.append(test(model, device, test_loader))
        scheduler.step()

    if args.save_model:
        torch.save(model.state_dict(), "mnist_cnn.pt")
    print("RESULT " + json.dumps({"train": history, "test": tests, "lr": scheduler.get_last_lr()}))


if __name__ == '__main__':
    main()
