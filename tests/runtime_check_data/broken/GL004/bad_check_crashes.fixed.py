"""Inference after model.eval() without no_grad.

silent: the output still has a grad_fn
"""

import torch


def main(n: int = 3, device: str = "cpu"):
    model = torch.nn.Linear(4, 2).to(device)
    model.eval()
    out = None
    for _ in range(n):
        with torch.no_grad():
            out = model(torch.randn(2, 4, device=device))
    return out


def check_symptom(result) -> None:
    assert result.grad_fn.name().endswith("Backward0")
