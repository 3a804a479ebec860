"""A value logged to an experiment tracker (`wandb.log({"val_loss": loss})`,
`mlflow.log_metric("val_loss", loss)`) is read as numbers: the tracker turns a tensor
into a number or an array, detached (torch_api.TRACKER_LOGGING_FUNCTIONS). A value put
in a dict literal goes where the dict goes, as one put in a list does: into the
tracker's call, or back out by its key to a backward."""

from __future__ import annotations

from pathlib import Path

from test_project import findings, write

LOGGED = """
import torch
import torch.nn.functional as F
import wandb
from torch import nn

model = nn.Linear(3, 3)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for _ in range(3):
    loss = model(torch.randn(2, 3)).sum()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    val = F.mse_loss(model(torch.randn(5, 3)), torch.randn(5, 3))
    wandb.log({"train_loss": loss.item(), "val_loss": val})
"""

VALIDATION_LINE = 13  # val = F.mse_loss(model(...), ...)


def test_a_validation_loss_logged_to_wandb_in_a_dict(tmp_path: Path):
    write(tmp_path, {"train.py": LOGGED})
    assert findings(tmp_path / "train.py") == [(VALIDATION_LINE, "GL012")]


def test_a_loss_logged_to_mlflow(tmp_path: Path):
    logged = LOGGED.replace("import wandb", "import mlflow").replace(
        'wandb.log({"train_loss": loss.item(), "val_loss": val})',
        'mlflow.log_metric("val_loss", val)',
    )
    write(tmp_path, {"train.py": logged})
    assert findings(tmp_path / "train.py") == [(VALIDATION_LINE, "GL012")]


def test_a_dict_whose_loss_is_backpropagated_by_its_key(tmp_path: Path):
    used = LOGGED.replace(
        '    wandb.log({"train_loss": loss.item(), "val_loss": val})',
        '    losses = {"val_loss": val}\n    losses["val_loss"].backward()',
    )
    write(tmp_path, {"train.py": used})
    assert findings(tmp_path / "train.py") == []


def test_a_dict_handed_to_an_unknown_call(tmp_path: Path):
    handed = LOGGED.replace("wandb.log(", "record(").replace(
        "import wandb", "from tracking import record"
    )
    write(tmp_path, {"train.py": handed})
    assert findings(tmp_path / "train.py") == []


# The file's own tracker-like object, whose `log` keeps what it is given for a backward
# the loop then runs: what it logs is not read as numbers.
OWN_TRACKER = (
    "\n\nclass Tracker:\n    def log(self, d):\n        pending.extend(d.values())\n\n\n"
    "pending = []\nwandb = Tracker()\n"
)


def logged_to_own_tracker(after: str, *, keep: str = "") -> str:
    """LOGGED with OWN_TRACKER defined in place of the import line `after` (kept when it
    is `keep`), and the validation loss backpropagated through what it kept."""
    return LOGGED.replace(after, keep + OWN_TRACKER).replace(
        '    wandb.log({"train_loss": loss.item(), "val_loss": val})',
        '    wandb.log({"val_loss": val})\n    torch.stack(pending).sum().backward()',
    )


def test_an_object_of_the_file_named_like_a_tracker(tmp_path: Path):
    # `wandb = Tracker()` of the file's own: its `log` keeps the values for a backward
    own = logged_to_own_tracker("import wandb\n")
    assert "import wandb" not in own
    write(tmp_path, {"train.py": own})
    assert findings(tmp_path / "train.py") == []


def test_a_tracker_import_rebound_to_an_object_of_the_file(tmp_path: Path):
    # `import wandb` and then `wandb = Tracker()`: the name read at the call is the
    # file's object, whose `log` keeps the values for a backward, not the tracker
    rebound = logged_to_own_tracker("from torch import nn\n", keep="from torch import nn\n")
    assert "import wandb" in rebound and "wandb = Tracker()" in rebound
    write(tmp_path, {"train.py": rebound})
    assert findings(tmp_path / "train.py") == []
