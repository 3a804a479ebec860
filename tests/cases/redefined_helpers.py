"""A notebook's cells each define their own helper of one name (`normalize` in three
cells of a saliency homework): a call runs the definition that reaches it, and a call
inside a function, the one that reaches every call of that function. The smoothed
gradient is numbers while the cell's `normalize` is arithmetic; a later cell's helper
carries the model's graph through the `normalize` that multiplies by a weight. Lint only: markers are the
expected findings."""

import numpy as np
import torch

model = torch.nn.Linear(4, 2)


def normalize(image):
    return image.abs().sum()


def normalize(image):  # noqa: F811
    return (image - image.min()) / (image.max() - image.min())


def smooth_grad(x, epoch):
    smooth = np.zeros(x.size())
    for _ in range(epoch):
        x_mod = x.clone().requires_grad_()
        model(x_mod).sum().backward()
        smooth += x_mod.grad.abs().detach().numpy()
    return normalize(smooth / epoch)


smoothed = []
for image in torch.randn(3, 4):
    smoothed.append(smooth_grad(image, 5))


def normalize(image):  # noqa: F811
    return torch.as_tensor(image) * model.weight.sum()


def weighted_grad(x):
    x_mod = x.clone().requires_grad_()
    model(x_mod).sum().backward()
    return normalize(x_mod.grad.detach())


weighted = []
for image in torch.randn(3, 4):
    weighted.append(weighted_grad(image))  # error: GL006
