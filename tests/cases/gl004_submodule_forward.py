"""GL004 on the forward of a submodule of a model put in eval mode, called by name
(`vae.encoder.forward(xs)` after `vae.eval()`: beta-TCVAE's disentanglement metrics);
the submodule is in the mode of the module that holds it. Lint only: markers are the
expected findings."""

import torch


def metric(vae, loader, n, k):
    vae.eval()
    qz = torch.zeros(n, k)
    start = 0
    for xs in loader:
        b = xs.size(0)
        xs = xs.view(b, 1, 64, 64).to("cpu")
        qz[start : start + b] = vae.encoder.forward(xs).view(b, k).data  # error: GL004
        start += b
    return qz


def trained(vae, loader, optimizer):
    vae.eval()
    for xs in loader:
        loss = vae.encoder.forward(xs.to("cpu")).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
