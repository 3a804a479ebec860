"""A method whose callers in another file record by themselves, but sit in a function
every call of which runs under `no_grad` (issue "Generalise": context flows from callers
to callees, across files): a VAE's `sample()` called from a plotting helper in utils,
which main.py calls only inside `with torch.no_grad():`. Nothing the method runs
records then, so its forward is no waste (a false GL012 before, at warning level)."""

from __future__ import annotations

from pathlib import Path

from test_project import preview_findings, write

VAE = """
import torch
import torch.nn as nn
from torch.distributions import Bernoulli, Normal


class VAE(nn.Module):
    def __init__(self):
        super().__init__()
        self.decoder = nn.Sequential(nn.Linear(8, 64), nn.ReLU(), nn.Linear(64, 784))
        self.prior = Normal(torch.zeros(8), torch.ones(8))

    def forward(self, z):
        return self.decoder(z)

    def sample(self, num_samples=64):
        z = self.prior.sample((num_samples,))
        x_dist = Bernoulli(logits=self.decoder(z))
        return x_dist.sample().view(num_samples, 28, 28)
"""

SAMPLE_FORWARD_LINE = 17  # `x_dist = Bernoulli(logits=self.decoder(z))`

DRAW = """
import matplotlib.pyplot as plt


def draw_figs(model, epoch):
    samples = model.sample(num_samples=16).data.cpu().numpy()
    plt.imshow(samples[0])
    plt.savefig(f"samples_{epoch}.png")
"""

MAIN = """
import torch
from model.vae import VAE
from utils.draw import draw_figs

model = VAE()
opt = torch.optim.Adam(model.parameters())
for epoch in range(10):
    loss = model(torch.randn(4, 8)).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    with torch.no_grad():
        draw_figs(model, epoch)
"""


def _project(tmp_path: Path, draw: str = DRAW, main: str = MAIN) -> Path:
    (tmp_path / ".git").mkdir()  # a repository's checkout: its folders are one project
    write(tmp_path, {"model/vae.py": VAE, "utils/draw.py": draw, "main.py": main})
    return tmp_path / "model" / "vae.py"


def test_a_helper_called_only_under_no_grad_covers_the_method_it_calls(tmp_path: Path):
    assert preview_findings(_project(tmp_path)) == []


def test_a_helper_called_with_autograd_on_does_not(tmp_path: Path):
    main = MAIN.replace(
        "    with torch.no_grad():\n        draw_figs", "    if True:\n        draw_figs"
    )
    assert preview_findings(_project(tmp_path, main=main)) == [(SAMPLE_FORWARD_LINE, "GL012")]


def test_a_recording_call_of_the_helper_in_its_own_file_does_not(tmp_path: Path):
    draw = DRAW + "\n\ndef report(model):\n    draw_figs(model, 0)\n"
    main = MAIN + "\nfrom utils.draw import report\nreport(model)\n"
    assert preview_findings(_project(tmp_path, draw=draw, main=main)) == [
        (SAMPLE_FORWARD_LINE, "GL012")
    ]


def test_a_helper_no_call_of_which_is_found_does_not(tmp_path: Path):
    main = MAIN.replace("        draw_figs(model, epoch)\n", "        pass\n")
    draw = DRAW + "\n\ndraw_figs.__doc__ = 'kept for a notebook'\n"
    assert preview_findings(_project(tmp_path, draw=draw, main=main)) == [
        (SAMPLE_FORWARD_LINE, "GL012")
    ]
