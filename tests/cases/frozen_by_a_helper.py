"""A model frozen by a helper that switches each parameter it is handed
(`freeze_params(vae.parameters())`, diffusers' textual inversion) records nothing on
data. Lint only: markers are the expected findings."""

import torch
from torch import nn


def freeze_params(params):
    for param in params:
        param.requires_grad = False


def train(text_encoder, vae, loader, optimizer):
    freeze_params(vae.parameters())
    vae.eval()
    for batch in loader:
        latents = vae(batch["pixel_values"]).detach()
        loss = nn.functional.mse_loss(text_encoder(batch["input_ids"]), latents)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def evaluate(decoder, loader):
    decoder.eval()
    return [decoder(batch).argmax(1).tolist() for batch in loader]  # error: GL004


def sample(net, z):
    freeze_params(net.parameters())
    net.eval()
    return net(z).argmax(1).tolist()


torch.manual_seed(0)
