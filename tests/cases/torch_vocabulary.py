"""Shapes that depend on the one torch vocabulary (gradlint/analysis/torch_api.py)
reaching every analysis: each was read differently by two of the old lists."""

import torch
from torch import nn


def dtype_wrapped_layer_read_as_numbers():
    # `.half()`/`.float()` hand back the module (nn.Module API), so `net` is a trainable
    # nn.Linear: its forward records a graph that `.item()` throws away.
    net = nn.Linear(4, 2).half().float()
    x = torch.randn(3, 4)
    out = net(x)  # error: GL012
    print(out.sum().item())


def bool_reductions_have_no_history(model, opt, data):
    # `isclose(...).all()` is a bool tensor without history (measured: requires_grad is
    # False), so accumulating it keeps no graph alive (no GL006).
    finished = torch.zeros(())
    for x, y in data:
        out = model(x)
        loss = nn.functional.mse_loss(out, y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        finished = finished + out.isclose(y).all()
    return finished


def layer_built_frozen_then_moved(conv):
    # `.requires_grad_(False)` hands back the module but freezes it: the chain is not
    # looked through to a trainable nn.Conv2d, so the in-place copies are no GL002.
    fused = (
        nn.Conv2d(conv.in_channels, conv.out_channels, kernel_size=1, bias=True)
        .requires_grad_(False)
        .to(conv.weight.device)
    )
    fused.weight.copy_(conv.weight[:, :, :1, :1])
    fused.bias.copy_(torch.zeros(conv.out_channels))
    return fused
