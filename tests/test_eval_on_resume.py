"""Training that resumes from a checkpoint in eval mode (GL016): `if is_load:` loads the
weights and calls `net.eval()`, copied from inference code, and the training loop after
it never calls `net.train()`. A fresh start skips the branch and trains in training
mode; a resumed run trains with dropout off and batch norm frozen. Not an `eval()` that
every run passes (batch norm frozen on purpose for fine-tuning), nor one a flag of its
own guards without loading anything (`if freeze_bn: net.eval()`)."""

from __future__ import annotations

from pathlib import Path

from test_project import preview_findings

RESUME = """
import torch
from torch import nn

net = nn.Sequential(nn.Linear(4, 8), nn.BatchNorm1d(8), nn.Linear(8, 1))
optimizer = torch.optim.Adam(net.parameters())
is_load = True
if is_load:
    checkpoint = torch.load("ckpt.pth")
    net.load_state_dict(checkpoint["net"])
    optimizer.load_state_dict(checkpoint["optimizer"])
    net.eval()
else:
    last_epoch = 0
for epoch in range(10):
    for x, y in [(torch.randn(8, 4), torch.randn(8, 1))]:
        loss = nn.functional.mse_loss(net(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
"""

FORWARD_LINE = 16  # loss = nn.functional.mse_loss(net(x), y)


def _findings(tmp_path: Path, source: str) -> list[tuple[int, str]]:
    path = tmp_path / "train.py"
    path.write_text(source.lstrip(), encoding="utf-8")
    return [f for f in preview_findings(path) if f[1] == "GL016"]


def test_a_resume_that_leaves_the_model_in_eval_mode(tmp_path: Path):
    assert _findings(tmp_path, RESUME) == [(FORWARD_LINE, "GL016")]


def test_a_train_switch_before_the_loop_restores_it(tmp_path: Path):
    fixed = RESUME.replace("for epoch in range(10):\n", "net.train()\nfor epoch in range(10):\n")
    assert _findings(tmp_path, fixed) == []


def test_an_eval_every_run_passes_is_left_to_the_author(tmp_path: Path):
    # loaded and frozen on every run: batch norm fixed for fine-tuning, on purpose
    every = (
        RESUME.replace("is_load = True\nif is_load:\n", "")
        .replace("else:\n    last_epoch = 0\n", "")
        .replace("\n    checkpoint", "\ncheckpoint")
        .replace("\n    net.", "\nnet.")
        .replace("\n    optimizer.load", "\noptimizer.load")
    )
    assert "\nnet.eval()\nfor epoch" in every
    assert _findings(tmp_path, every) == []


def test_a_flag_of_its_own_that_loads_nothing_is_left_to_the_author(tmp_path: Path):
    flagged = RESUME.replace(
        '    checkpoint = torch.load("ckpt.pth")\n'
        '    net.load_state_dict(checkpoint["net"])\n'
        '    optimizer.load_state_dict(checkpoint["optimizer"])\n',
        "",
    ).replace("is_load", "freeze_bn")
    assert _findings(tmp_path, flagged) == []


def test_weights_loaded_alone_may_be_a_pretrained_start(tmp_path: Path):
    # `if args.pretrained: model.load_state_dict(...); model.eval()`: batch norm kept
    # frozen for fine-tuning, on purpose; nothing says training resumes
    pretrained = RESUME.replace(
        '    optimizer.load_state_dict(checkpoint["optimizer"])\n', ""
    ).replace("is_load", "pretrained")
    assert _findings(tmp_path, pretrained) == []


def test_a_counter_read_off_the_checkpoint_says_training_resumes(tmp_path: Path):
    counter = RESUME.replace(
        '    optimizer.load_state_dict(checkpoint["optimizer"])\n',
        '    start = checkpoint["epoch"]\n',
    )
    assert _findings(tmp_path, counter) == [(FORWARD_LINE, "GL016")]


def test_a_train_switch_the_mode_writes_do_not_name(tmp_path: Path):
    # `for m in (net,): m.train()` switches it back before the epochs
    looped = RESUME.replace(
        "for epoch in range(10):\n", "for m in (net,):\n    m.train()\nfor epoch in range(10):\n"
    )
    assert _findings(tmp_path, looped) == []
