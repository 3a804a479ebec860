"""GL002 traps: a tensor made fresh and initialised in place before it is made to require
grad. A later read of its `.grad` says it requires grad there, not at its making."""

import torch
import torch.nn.functional as F


def random_start_attack(model, images, labels, radius, step, iters, restarts):
    for _ in range(restarts):
        noise = torch.zeros_like(images).cuda()
        for c in range(images.shape[1]):
            noise[:, c, :, :].uniform_(-radius, radius)
        noise.data = noise.clamp(-radius, radius)
        noise.requires_grad = True
        for _ in range(iters):
            loss = F.cross_entropy(model(images + noise), labels)
            loss.backward()
            grad = noise.grad.detach()
            noise.data = (noise + step * torch.sign(grad)).clamp(-radius, radius)
            noise.grad.zero_()
    return noise.detach()


def warm_started_noise(model, loader, radius, keep):
    noise = None
    for images, labels in loader:
        if not keep or noise is None:
            noise = torch.zeros_like(images)
            noise.uniform_(-radius, radius)
        noise.requires_grad = True
        loss = F.cross_entropy(model(images + noise), labels)
        loss.backward()
        noise = (noise + radius * noise.grad.sign()).detach()
