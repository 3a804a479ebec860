"""Claims to raise, but updates the weight under no_grad.

raises: RuntimeError: a leaf Variable that requires grad is being used in an in-place operation
"""

import torch


def main(n: int = 2, device: str = "cpu"):
    w = torch.ones(3, device=device, requires_grad=True)
    for _ in range(n):
        with torch.no_grad():
            w += 1
    return w
