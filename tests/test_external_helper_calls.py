"""A call of another file's helper that runs the forward of a model it is handed (a
loss the training code differentiates), made where only numbers or the shape of what
it hands back are read (issue "Generalise", fifteenth census batch: d3rlpy's tests of
its imitation losses). Reported at the call, as a helper of the same file is; not when
the caller differentiates it, nor when the helper runs under no_grad itself."""

from __future__ import annotations

from test_project import findings, write

LOSSES = """
    import torch
    import torch.nn.functional as F


    def compute_error(encoder, decoder, x, target):
        z = encoder(x)
        y = decoder(z)
        return F.mse_loss(y, target)


    @torch.no_grad()
    def compute_error_quietly(encoder, decoder, x, target):
        return F.mse_loss(decoder(encoder(x)), target)
"""

TEST = """
    import torch
    from torch import nn
    from losses import HELPER


    def test_error_is_a_scalar():
        encoder = nn.Linear(4, 2)
        decoder = nn.Linear(2, 4)
        x = torch.randn(8, 4)
        error = HELPER(encoder, decoder, x, x)
        assert error.ndim == 0


    def train(x, steps):
        encoder = nn.Linear(4, 2)
        decoder = nn.Linear(2, 4)
        optimizer = torch.optim.SGD([*encoder.parameters(), *decoder.parameters()], lr=0.1)
        for _ in range(steps):
            optimizer.zero_grad()
            HELPER(encoder, decoder, x, x).backward()
            optimizer.step()
"""


def test_a_helper_of_another_file_called_for_its_value_records_for_nothing(tmp_path):
    write(
        tmp_path, {"losses.py": LOSSES, "test_losses.py": TEST.replace("HELPER", "compute_error")}
    )
    assert findings(tmp_path / "test_losses.py") == [(10, "GL012")]


def test_a_helper_that_runs_under_no_grad_records_nothing(tmp_path):
    quiet = TEST.replace("HELPER", "compute_error_quietly")
    write(tmp_path, {"losses.py": LOSSES, "test_losses.py": quiet})
    assert findings(tmp_path / "test_losses.py") == []
