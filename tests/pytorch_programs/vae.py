"""A variational autoencoder in the form of PyTorch's official examples/vae/main.py:
encode/reparameterize/decode, binary_cross_entropy(reduction='sum') + KL term,
train()/test() with per-epoch averages and a sample from the prior. The reparameterisation
noise comes from each library's own generator, so losses are compared by range."""
import json

import numpy as np
import torch
import torch.utils.data
from torch import nn, optim
from torch.nn import functional as F

D = 36  # 6x6 "images"


class VAE(nn.Module):
    def __init__(self):
        super(VAE, self).__init__()

        self.fc1 = nn.Linear(D, 32)
        self.fc21 = nn.Linear(32, 4)
        self.fc22 = nn.Linear(32, 4)
        self.fc3 = nn.Linear(4, 32)
        self.fc4 = nn.Linear(32, D)

    def encode(self, x):
        h1 = F.relu(self.fc1(x))
        return self.fc21(h1), self.fc22(h1)

    def reparameterize(self, mu, logvar):
        std = torch.exp(0.5*logvar)
        eps = torch.randn_like(std)
        return mu + eps*std

    def decode(self, z):
        h3 = F.relu(self.fc3(z))
        return torch.sigmoid(self.fc4(h3))

    def forward(self, x):
        mu, logvar = self.encode(x.view(-1, D))
        z = self.reparameterize(mu, logvar)
        return self.decode(z), mu, logvar


# Reconstruction + KL divergence losses summed over all elements and batch
def loss_function(recon_x, x, mu, logvar):
    BCE = F.binary_cross_entropy(recon_x, x.view(-1, D), reduction='sum')

    # see Appendix B from VAE paper:
    # Kingma and Welling. Auto-Encoding Variational Bayes. ICLR, 2014
    # https://arxiv.org/abs/1312.6114
    # 0.5 * sum(1 + log(sigma^2) - mu^2 - sigma^2)
    KLD = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())

    return BCE + KLD


def bars(n, seed):
    """Binary 6x6 images with one horizontal and one vertical bar."""
    rng = np.random.default_rng(seed)
    img = np.zeros((n, 1, 6, 6), np.float32)
    for i in range(n):
        img[i, 0, rng.integers(6), :] = 1.0
        img[i, 0, :, rng.integers(6)] = 1.0
    return img


torch.manual_seed(1)
device = torch.device("cpu")
batch_size = 32
train_loader = torch.utils.data.DataLoader(
    torch.utils.data.TensorDataset(torch.from_numpy(bars(512, 0)), torch.zeros(512)), batch_size=batch_size, shuffle=True)
test_loader = torch.utils.data.DataLoader(
    torch.utils.data.TensorDataset(torch.from_numpy(bars(128, 1)), torch.zeros(128)), batch_size=batch_size, shuffle=False)

model = VAE().to(device)
optimizer = optim.Adam(model.parameters(), lr=1e-2)


def train(epoch):
    model.train()
    train_loss = 0
    for batch_idx, (data, _) in enumerate(train_loader):
        data = data.to(device)
        optimizer.zero_grad()
        recon_batch, mu, logvar = model(data)
        loss = loss_function(recon_batch, data, mu, logvar)
        loss.backward()
        train_loss += loss.item()
        optimizer.step()
        if batch_idx % 8 == 0:
            print('Train Epoch: {} [{}/{} ({:.0f}%)]\tLoss: {:.6f}'.format(
                epoch, batch_idx * len(data), len(train_loader.dataset),
                100. * batch_idx / len(train_loader),
                loss.item() / len(data)))

    avg = train_loss / len(train_loader.dataset)
    print('====> Epoch: {} Average loss: {:.4f}'.format(epoch, avg))
    return avg


def test(epoch):
    model.eval()
    test_loss = 0
    with torch.no_grad():
        for i, (data, _) in enumerate(test_loader):
            data = data.to(device)
            recon_batch, mu, logvar = model(data)
            test_loss += loss_function(recon_batch, data, mu, logvar).item()
            if i == 0:
                n = min(data.size(0), 8)
                comparison = torch.cat([data[:n],
                                        recon_batch.view(batch_size, 1, 6, 6)[:n]])
                assert tuple(comparison.shape) == (16, 1, 6, 6)

    test_loss /= len(test_loader.dataset)
    print('====> Test set loss: {:.4f}'.format(test_loss))
    return test_loss


if __name__ == "__main__":
    trains, tests = [], []
    for epoch in range(1, 6):
        trains.append(train(epoch))
        tests.append(test(epoch))
        with torch.no_grad():
            sample = torch.randn(64, 4).to(device)
            sample = model.decode(sample).cpu()
            assert sample.shape == (64, D) and 0 <= sample.min().item() and sample.max().item() <= 1
    print("RESULT " + json.dumps({"train": trains, "test": tests}))
