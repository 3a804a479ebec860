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


# vae-vs-ddpm-celeba's test of its diffusion process: the helper is a method of an
# object of an imported class, handed the model (`diffusion.training_loss(model, x0)`).
DIFFUSION = """
    import torch
    import torch.nn.functional as F


    class GaussianDiffusion:
        def __init__(self, timesteps):
            self.T = timesteps

        def training_loss(self, model, x0):
            t = torch.randint(0, self.T, (x0.size(0),))
            noise = torch.randn_like(x0)
            return F.mse_loss(model(x0 + noise, t), noise)

        @torch.no_grad()
        def quiet_loss(self, model, x0):
            noise = torch.randn_like(x0)
            return F.mse_loss(model(x0 + noise, 0), noise)
"""

DIFFUSION_TEST = """
    import torch
    from diffusion import GaussianDiffusion
    from unet import UNet


    def test_training_loss_is_finite():
        model = UNet()
        diffusion = GaussianDiffusion(timesteps=10)
        loss = diffusion.METHOD(model, torch.randn(2, 4))
        assert torch.isfinite(loss)
"""

UNET = """
    from torch import nn


    class UNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 4)

        def forward(self, x, t):
            return self.fc(x)
"""


def test_a_method_of_an_imported_class_handed_the_model_is_such_a_helper(tmp_path):
    test = DIFFUSION_TEST.replace("METHOD", "training_loss")
    write(tmp_path, {"diffusion.py": DIFFUSION, "unet.py": UNET, "test_diffusion.py": test})
    assert findings(tmp_path / "test_diffusion.py") == [(9, "GL012")]


def test_a_method_of_an_imported_class_that_runs_under_no_grad_records_nothing(tmp_path):
    test = DIFFUSION_TEST.replace("METHOD", "quiet_loss")
    write(tmp_path, {"diffusion.py": DIFFUSION, "unet.py": UNET, "test_diffusion.py": test})
    assert findings(tmp_path / "test_diffusion.py") == []


# flow-forecast's greedy_decode: the encoder runs before the helper's own `no_grad`
# block, which holds only the decoder; what the summary calls recording is outside it.
DECODE = """
    from contextlib import nullcontext

    import torch


    def greedy_decode(model, src):
        memory = model.encode(src)
        with torch.no_grad():
            out = model.decode(memory)
        return out


    def quiet_decode(model, src):
        with torch.no_grad():
            return model.decode(model.encode(src))


    def picked_decode(model, src, train=False):
        with nullcontext() if train else torch.no_grad():
            return model.decode(model.encode(src))
"""

DECODE_TEST = """
    import torch
    from torch import nn
    from decode import HELPER


    class Seq(nn.Module):
        def __init__(self):
            super().__init__()
            self.enc = nn.Linear(4, 4)
            self.dec = nn.Linear(4, 4)

        def encode(self, x):
            return self.enc(x)

        def decode(self, m):
            return self.dec(m)


    def test_decoding():
        model = Seq()
        out = HELPER(model, torch.randn(2, 4))
        assert out.shape == (2, 4)
"""


def test_a_helper_recording_outside_its_own_no_grad_block_is_such_a_helper(tmp_path):
    write(
        tmp_path,
        {"decode.py": DECODE, "test_decode.py": DECODE_TEST.replace("HELPER", "greedy_decode")},
    )
    assert findings(tmp_path / "test_decode.py") == [(21, "GL012")]


def test_a_helper_whose_forwards_are_all_in_its_own_no_grad_block_records_nothing(tmp_path):
    for helper in ("quiet_decode", "picked_decode"):
        test = DECODE_TEST.replace("HELPER", helper)
        write(tmp_path, {"decode.py": DECODE, "test_decode.py": test})
        assert findings(tmp_path / "test_decode.py") == [], helper
