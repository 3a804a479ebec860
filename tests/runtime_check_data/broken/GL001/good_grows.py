"""Claims to be clean, but keeps every step's graph alive through retain_graph=True.

clean
"""

import torch


def main(n: int = 4, device: str = "cpu"):
    w = torch.nn.Parameter(0.1 * torch.randn(4, 4, device=device))
    h = torch.randn(2, 4, device=device)
    for _ in range(n):
        h = torch.tanh(h @ w)
        w.grad = None
        h.square().mean().backward(retain_graph=True)
    return h
