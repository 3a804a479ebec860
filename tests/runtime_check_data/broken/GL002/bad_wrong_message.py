"""Raises the leaf in-place error, but the docstring quotes another message.

raises: RuntimeError: Trying to backward through the graph a second time
"""

import torch


def main(n: int = 2, device: str = "cpu"):
    w = torch.ones(3, device=device, requires_grad=True)
    for _ in range(n):
        w += 1  # error: GL002
    return w
