"""An RNN state carried across steps with a backward every step and no detach.

raises: RuntimeError: Trying to backward through the graph a second time
"""

import torch


def main(n: int = 4, device: str = "cpu"):
    w = torch.nn.Parameter(0.1 * torch.randn(4, 4, device=device))
    h = torch.randn(2, 4, device=device)
    for _ in range(n):
        h = torch.tanh(h @ w)  # error: GL001
        h.square().mean().backward()
    return h
