"""A GAN in the form of PyTorch's DCGAN tutorial, on 2-D points from a ring of Gaussians
with MLP networks: weights_init applied with .apply() by class name, BCELoss, real/fake
labels with torch.full and fill_, the D step on real + detached fake, the G step, Adam
with betas. Weights and noise come from NumPy, so both libraries run the same steps."""
import json

import numpy as np
import torch
import torch.nn as nn
import torch.optim as optim

nz = 4
ngf = 32
ndf = 32
lr = 0.002
beta1 = 0.5
device = torch.device("cpu")
torch.manual_seed(999)
rng = np.random.default_rng(999)


def weights_init(m):
    classname = m.__class__.__name__
    if classname.find('Linear') != -1:
        nn.init.normal_(m.weight.data, 0.0, 0.02)
    elif classname.find('BatchNorm') != -1:
        nn.init.normal_(m.weight.data, 1.0, 0.02)
        nn.init.constant_(m.bias.data, 0)


class Generator(nn.Module):
    def __init__(self):
        super(Generator, self).__init__()
        self.main = nn.Sequential(
            nn.Linear(nz, ngf),
            nn.BatchNorm1d(ngf),
            nn.ReLU(True),
            nn.Linear(ngf, ngf),
            nn.BatchNorm1d(ngf),
            nn.ReLU(True),
            nn.Linear(ngf, 2),
        )

    def forward(self, input):
        return self.main(input)


class Discriminator(nn.Module):
    def __init__(self):
        super(Discriminator, self).__init__()
        self.main = nn.Sequential(
            nn.Linear(2, ndf),
            nn.LeakyReLU(0.2, inplace=True),
            nn.Linear(ndf, ndf),
            nn.LeakyReLU(0.2, inplace=True),
            nn.Linear(ndf, 1),
            nn.Sigmoid()
        )

    def forward(self, input):
        return self.main(input)


def numpy_weights(net):
    with torch.no_grad():
        for m in net.modules():
            if isinstance(m, nn.Linear):
                m.weight.copy_(torch.from_numpy((rng.standard_normal(tuple(m.weight.shape)) * 0.3).astype(np.float32)))
                m.bias.zero_()
            elif isinstance(m, nn.BatchNorm1d):
                m.weight.fill_(1.0)
                m.bias.zero_()


netG = Generator().to(device)
netG.apply(weights_init)
numpy_weights(netG)
print(netG)
netD = Discriminator().to(device)
netD.apply(weights_init)
numpy_weights(netD)
print(netD)

criterion = nn.BCELoss()
real_label = 1.
fake_label = 0.
optimizerD = optim.Adam(netD.parameters(), lr=lr, betas=(beta1, 0.999))
optimizerG = optim.Adam(netG.parameters(), lr=lr, betas=(beta1, 0.999))


def real_batch(b):
    angles = rng.integers(0, 8, size=b) * (2 * np.pi / 8)
    pts = np.stack([np.cos(angles), np.sin(angles)], 1) * 2 + rng.standard_normal((b, 2)) * 0.05
    return torch.from_numpy(pts.astype(np.float32))


G_losses = []
D_losses = []
iters = 0
num_epochs = 3
batches = 20
b_size = 64
print("Starting Training Loop...")
for epoch in range(num_epochs):
    for i in range(batches):
        ############################
        # (1) Update D network: maximize log(D(x)) + log(1 - D(G(z)))
        ###########################
        netD.zero_grad()
        real_cpu = real_batch(b_size).to(device)
        label = torch.full((b_size,), real_label, dtype=torch.float, device=device)
        output = netD(real_cpu).view(-1)
        errD_real = criterion(output, label)
        errD_real.backward()
        D_x = output.mean().item()

        noise = torch.from_numpy(rng.standard_normal((b_size, nz)).astype(np.float32)).to(device)
        fake = netG(noise)
        label.fill_(fake_label)
        output = netD(fake.detach()).view(-1)
        errD_fake = criterion(output, label)
        errD_fake.backward()
        D_G_z1 = output.mean().item()
        errD = errD_real + errD_fake
        optimizerD.step()

        ############################
        # (2) Update G network: maximize log(D(G(z)))
        ###########################
        netG.zero_grad()
        label.fill_(real_label)  # fake labels are real for generator cost
        output = netD(fake).view(-1)
        errG = criterion(output, label)
        errG.backward()
        D_G_z2 = output.mean().item()
        optimizerG.step()

        if i % 10 == 0:
            print('[%d/%d][%d/%d]\tLoss_D: %.4f\tLoss_G: %.4f\tD(x): %.4f\tD(G(z)): %.4f / %.4f'
                  % (epoch, num_epochs, i, batches,
                     errD.item(), errG.item(), D_x, D_G_z1, D_G_z2))
        G_losses.append(errG.item())
        D_losses.append(errD.item())
        iters += 1

with torch.no_grad():
    netG.eval()
    samples = netG(torch.from_numpy(rng.standard_normal((256, nz)).astype(np.float32)))
    radius = samples.norm(dim=1).mean().item()
print("RESULT " + json.dumps({"G": G_losses, "D": D_losses, "radius": radius}))
