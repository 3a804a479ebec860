"""The same loop "fixed" with retain_graph=True: the graph behind `h` grows every step.

grows: graph nodes and saved activations reachable from `h`
"""

import torch


def main(n: int = 4, device: str = "cpu"):
    w = torch.nn.Parameter(0.1 * torch.randn(4, 4, device=device))
    h = torch.randn(2, 4, device=device)
    for _ in range(n):
        h = torch.tanh(h @ w)  # error: GL001
        w.grad = None
        h.square().mean().backward(retain_graph=True)
    return h
