"""The same loop with the state detached after each step.

clean
"""

import torch


def main(n: int = 4, device: str = "cpu"):
    w = torch.nn.Parameter(0.1 * torch.randn(4, 4, device=device))
    h = torch.randn(2, 4, device=device)
    for _ in range(n):
        h = torch.tanh(h @ w)
        h.square().mean().backward()
        h = h.detach()
    return h
