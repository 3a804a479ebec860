"""Raises a RuntimeError, but the docstring expects a TypeError.

raises: TypeError: a leaf Variable that requires grad is being used in an in-place operation
"""

import torch


def main(n: int = 2, device: str = "cpu"):
    w = torch.ones(3, device=device, requires_grad=True)
    for _ in range(n):
        w.add_(1)  # error: GL002
    return w
