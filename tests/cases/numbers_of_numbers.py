"""A saliency map computed as a numpy array: a helper made of arithmetic on its
arguments hands back numbers of numbers, and a parameter every call fills with a
literal is a number. Lint only: markers are the expected findings."""

import numpy as np
import torch


def normalize(image):
    return (image - image.min()) / (image.max() - image.min())


def smooth_grad(x, y, model, epoch):
    model.eval()
    smooth = np.zeros(x.unsqueeze(0).size())
    for _ in range(epoch):
        x_mod = (x + torch.randn_like(x)).unsqueeze(0)
        x_mod.requires_grad_()
        loss = torch.nn.functional.cross_entropy(model(x_mod), y.unsqueeze(0))
        loss.backward()
        smooth += x_mod.grad.abs().detach().cpu().numpy()
    return normalize(smooth / epoch)


def saliency(model, images, labels):
    smooth = []
    for image, label in zip(images, labels):
        smooth.append(smooth_grad(image, label, model, 50))
    return np.stack(smooth)


def scaled_loss_history(model, batches, optimizer, scale):
    # a parameter no literal fills: what it scales may carry history
    history = []
    for x, y in batches:
        loss = torch.nn.functional.mse_loss(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        history.append(normalize(loss * scale))  # error: GL006
    return history


# A comprehension of numbers is numbers: the caller of a helper that returns one gets no
# graph (the forward inside is the helper's own finding).
def predictions_of(m, xs):
    return [m(x).argmax(1).item() for x in xs]  # error: GL012


def print_predictions(xs):
    net = torch.nn.Linear(3, 2)
    print(predictions_of(net, xs))
