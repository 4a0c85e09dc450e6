"""A convolutional autoencoder (Conv2d/BatchNorm2d/ReLU down, ConvTranspose2d up, Sigmoid
out) trained with MSELoss and Adam, the model wrapped in torch.compile as PyTorch 2 code
does; evaluation under torch.inference_mode(). Weights come from NumPy, BatchNorm runs in
train and eval mode, so both libraries print the same losses."""
import json

import numpy as np
import torch
import torch.nn as nn


class AutoEncoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(
            nn.Conv2d(1, 8, 3, stride=2, padding=1),   # 12 -> 6
            nn.BatchNorm2d(8),
            nn.ReLU(),
            nn.Conv2d(8, 16, 3, stride=2, padding=1),  # 6 -> 3
            nn.ReLU(),
        )
        self.decoder = nn.Sequential(
            nn.ConvTranspose2d(16, 8, 3, stride=2, padding=1, output_padding=1),  # 3 -> 6
            nn.ReLU(),
            nn.ConvTranspose2d(8, 1, 3, stride=2, padding=1, output_padding=1),   # 6 -> 12
            nn.Sigmoid(),
        )

    def forward(self, x):
        return self.decoder(self.encoder(x))


def blobs(n, seed):
    rng = np.random.default_rng(seed)
    yy, xx = np.mgrid[0:12, 0:12]
    cy, cx = rng.uniform(3, 9, size=(2, n, 1, 1))
    r = rng.uniform(1.5, 3.5, size=(n, 1, 1))
    img = np.exp(-((yy - cy) ** 2 + (xx - cx) ** 2) / (2 * r ** 2))
    return torch.from_numpy(img[:, None].astype(np.float32))


torch.manual_seed(0)
train_x = blobs(256, 0)
test_x = blobs(64, 1)
model = AutoEncoder()
rng = np.random.default_rng(7)
with torch.no_grad():
    for m in model.modules():
        if isinstance(m, (nn.Conv2d, nn.ConvTranspose2d)):
            fan_in = m.weight[0].numel()
            m.weight.copy_(torch.from_numpy(rng.normal(0, (2.0 / fan_in) ** 0.5, size=tuple(m.weight.shape)).astype(np.float32)))
            m.bias.zero_()
model = torch.compile(model, backend="eager")
criterion = nn.MSELoss()
optimizer = torch.optim.Adam(model.parameters(), lr=5e-3)
history, tests = [], []
for epoch in range(4):
    model.train()
    for i in range(0, len(train_x), 32):
        batch = train_x[i:i + 32]
        recon = model(batch)
        loss = criterion(recon, batch)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        history.append(loss.item())
    model.eval()
    with torch.inference_mode():
        test_loss = criterion(model(test_x), test_x).item()
    tests.append(test_loss)
    print(f"epoch {epoch + 1}: train {loss.item():.5f} test {test_loss:.5f}")
print("RESULT " + json.dumps({"train": history, "test": tests}))
