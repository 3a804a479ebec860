"""`nn.parallel.data_parallel(netG, inputs, gpus)` is a forward of `netG`, replicated
over the devices: what it returns carries `netG`'s history, as `netG(*inputs)` does. A
StackGAN trainer samples that way after `netG.eval()`, with grad on, and only saves the
images; it trains that way too. Before, the function was a library call that ran no
model, so neither the evaluation nor the per-interval sample was seen."""

import numpy as np
import torch
import torch.nn as nn
from torch.nn.parallel import data_parallel


class Generator(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 16)

    def forward(self, text, noise):
        return self.fc(text + noise)


gpus = [0]


def train(netD, loader):
    netG = Generator()
    optimizer = torch.optim.Adam(netG.parameters())
    fixed = torch.randn(4, 8)
    for step, text in enumerate(loader):
        fake = nn.parallel.data_parallel(netG, (text, torch.randn(4, 8)), gpus)  # trained
        loss = -netD(fake).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if step % 100 == 0:
            sample = nn.parallel.data_parallel(netG, (text, fixed), gpus)  # error: GL012
            np.save("sample.npy", sample.data.cpu().numpy())


def sample(texts):
    netG = Generator()
    netG.load_state_dict(torch.load("netG.pth"))
    netG.eval()
    for text in texts:
        images = nn.parallel.data_parallel(netG, (text, torch.randn(4, 8)), gpus)  # error: GL004
        np.save("images.npy", images.data.cpu().numpy())


def sample_imported_name(texts):
    netG = Generator()
    netG.eval()
    for text in texts:
        images = data_parallel(netG, (text, torch.randn(4, 8)))  # error: GL004
        np.save("images.npy", images[0].detach().cpu().numpy())


def sample_under_no_grad(texts):
    netG = Generator()
    netG.eval()
    with torch.no_grad():
        for text in texts:
            images = data_parallel(netG, (text, torch.randn(4, 8)))
            np.save("images.npy", images.cpu().numpy())
