"""A method whose callers in another file record by themselves, but sit in a function
every call of which runs under `no_grad` (issue "Generalise": context flows from callers
to callees, across files): a VAE's `sample()` called from a plotting helper in utils,
which main.py calls only inside `with torch.no_grad():`. Nothing the method runs
records then, so its forward is no waste (a false GL012 before, at warning level)."""

from __future__ import annotations

from pathlib import Path

import pytest
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


# Ways the helper runs that its callers' `no_grad` does not cover, or that a search for
# `draw_figs(` cannot see: each keeps the finding.
_RECORDING_CALLER = "import torch\nfrom model.vae import VAE\nmodel = VAE()\n"
HIDDEN_WAYS = {
    "imported under another name": (
        DRAW,
        {
            "eval.py": _RECORDING_CALLER
            + "from utils.draw import draw_figs as show\nshow(model, 0)\n"
        },
    ),
    "handed to functools.partial": (
        DRAW,
        {
            "eval.py": _RECORDING_CALLER
            + "import functools\nfrom utils.draw import draw_figs\n"
            + "plot = functools.partial(draw_figs, model)\nplot(0)\n"
        },
    ),
    "a thread's target (grad mode is per thread)": (
        DRAW,
        {
            "eval.py": _RECORDING_CALLER
            + "import threading\nfrom utils.draw import draw_figs\nwith torch.no_grad():\n"
            + "    threading.Thread(target=draw_figs, args=(model, 0)).start()\n"
        },
    ),
    "looked up by getattr": (
        DRAW,
        {
            "eval.py": _RECORDING_CALLER
            + "import utils.draw\ngetattr(utils.draw, 'draw_figs')(model, 0)\n"
        },
    ),
    "called from a lambda made under no_grad": (
        DRAW,
        {
            "eval.py": _RECORDING_CALLER
            + "from utils.draw import draw_figs\nwith torch.no_grad():\n"
            + "    later = lambda: draw_figs(model, 0)\nlater()\n"
        },
    ),
    "switching autograd back on itself": (
        DRAW.replace(
            "    samples = model.sample",
            "    import torch\n    with torch.enable_grad():\n        samples = model.sample",
        ),
        {},
    ),
    "called from a generator expression made under no_grad": (
        DRAW,
        {
            "eval.py": _RECORDING_CALLER
            + "from utils.draw import draw_figs\nwith torch.no_grad():\n"
            + "    figs = (draw_figs(model, e) for e in range(3))\nlist(figs)\n"
        },
    ),
    "decorated (a registry may run it)": (
        "from utils.registry import register\n\n\n@register\n"
        + DRAW.lstrip().split("\n\n\n", 1)[1],
        {
            "utils/registry.py": "HOOKS = []\n\n\ndef register(f):\n    HOOKS.append(f)\n    return f\n"
        },
    ),
}


@pytest.mark.parametrize("way", sorted(HIDDEN_WAYS))
def test_a_way_the_helper_runs_with_autograd_on_keeps_the_finding(tmp_path: Path, way: str):
    draw, more = HIDDEN_WAYS[way]
    vae = _project(tmp_path, draw=draw)
    write(tmp_path, more)
    assert preview_findings(vae) == [(SAMPLE_FORWARD_LINE, "GL012")]


def test_a_method_no_one_calls_is_not_covered_by_its_own_inner_calls(tmp_path: Path):
    # the only calls of `sample` found are inside it (`self.prior.sample(...)`, counted
    # with the unknown receivers): no call runs it under no_grad
    main = MAIN.replace("    with torch.no_grad():\n        draw_figs(model, epoch)\n", "")
    main = main.replace("from utils.draw import draw_figs\n", "")
    assert preview_findings(_project(tmp_path, main=main)) == [(SAMPLE_FORWARD_LINE, "GL012")]


def test_other_things_of_the_name_do_not_spoil_the_answer(tmp_path: Path):
    # an export list and an unrelated attribute of the same name are no ways to run it
    draw = '__all__ = ["draw_figs"]\n' + DRAW
    main = MAIN.replace(
        "model = VAE()\n",
        "import argparse\nparser = argparse.ArgumentParser()\n"
        'parser.add_argument("--draw_figs", action="store_true")\n'
        "args = parser.parse_args()\nmodel = VAE()\n",
    ).replace(
        "    with torch.no_grad():\n", "    with torch.no_grad():\n        print(args.draw_figs)\n"
    )
    assert preview_findings(_project(tmp_path, draw=draw, main=main)) == []
