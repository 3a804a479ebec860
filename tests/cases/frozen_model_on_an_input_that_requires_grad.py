"""A frozen model records nothing only on inputs without history: given an image made
with `requires_grad=True`, its forward records a graph through every layer, down to
the input, frozen weights or not. A figure script that builds its inputs so and only
interpolates the codes builds that graph for nothing; a saliency map that
differentiates the output with respect to the input needs it. Before, a frozen model
was taken to record nothing whatever it was given."""

import numpy as np
import torch
import torch.nn as nn

encoder = nn.Sequential(nn.Conv2d(3, 8, 3), nn.Flatten(), nn.LazyLinear(16))
encoder.load_state_dict(torch.load("encoder.pt"))
encoder.eval()
encoder.requires_grad_(False)


def interpolate(image_a, image_b):
    a = torch.tensor(np.asarray(image_a, dtype=np.float32), requires_grad=True)
    b = torch.tensor(np.asarray(image_b, dtype=np.float32), requires_grad=True)
    za = encoder(a[None])  # error: GL004
    zb = encoder(b[None])  # error: GL004
    return [(za * (1 - t) + zb * t).tolist() for t in np.linspace(0, 1, 8)]


def codes(images):
    return encoder(torch.from_numpy(images)).tolist()


def saliency(image):
    x = torch.tensor(np.asarray(image, dtype=np.float32), requires_grad=True)
    score = encoder(x[None]).max()
    (grad,) = torch.autograd.grad(score, x)
    return grad.abs().numpy()
