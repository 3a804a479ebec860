"""Claims to be clean, but copy-constructs a tensor with torch.tensor(t), which warns.

clean
"""

import torch


def main(n: int = 2, device: str = "cpu"):
    x = torch.ones(3, device=device)
    for _ in range(n):
        x = torch.tensor(x) + 1
    return x
