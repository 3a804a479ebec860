"""The forward of a model an object is handed and asks the parameters of, run through a
method or submodule of that model whose class is out of sight (`self.model.decoder(z)`
of disentangling-vae's Visualizer), and model outputs whose every element is detached or
read as a number on the way (`[x.item() for x in out]`, `map(lambda x: x.detach(), out)`:
MSG-GAN's `generate_samples`), and keyword tensors given to such a method
(`model.incremental_forward(test_inputs=x)`). Lint only: markers are the expected
findings."""

import torch
from torch import nn
from torchvision.utils import save_image

from models import build_model  # out of sight


class Visualizer:
    def __init__(self, model):
        self.model = model
        self.device = next(self.model.parameters()).device

    def _decode_latents(self, latent_samples):
        latent_samples = latent_samples.to(self.device)
        return self.model.decoder(latent_samples).cpu()

    def generate_samples(self, n):
        prior_samples = torch.randn(n, 10)
        generated = self._decode_latents(prior_samples)  # error: GL012
        save_image(generated.data, "samples.png")

    def encode(self, image):
        # its output is differentiated: the graph is used
        latent = self.model.encoder(image.to(self.device))
        latent.sum().backward()

    def settings(self):
        # no tensor is handed: a plain method of the model, not a forward
        return self.model.describe()


class GAN:
    def __init__(self):
        self.gen = nn.Linear(4, 4)

    def generate_each(self, n):
        images = self.gen(torch.randn(n, 4))  # error: GL012
        return [(image.detach() / 2) + 0.5 for image in images]

    def generate_mapped(self, n):
        images = self.gen(torch.randn(n, 4))  # error: GL012
        return list(map(lambda image: (image.detach() / 2) + 0.5, images))

    def trained_each(self, n, optimizer):
        images = self.gen(torch.randn(n, 4))
        loss = sum(image.pow(2).sum() for image in images)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

    def mapped_then_trained(self, n):
        images = self.gen(torch.randn(n, 4))
        return list(map(lambda image: image * 2, images))


def test_incremental(x):
    model = build_model()
    model.eval()
    y = model.incremental_forward(test_inputs=x.contiguous(), T=None)  # error: GL004
    assert y.size() == x.size()
