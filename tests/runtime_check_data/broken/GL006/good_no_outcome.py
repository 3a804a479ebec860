"""A docstring that forgot its outcome line."""

import torch


def main(n: int = 2, device: str = "cpu"):
    return torch.zeros(n, device=device)
