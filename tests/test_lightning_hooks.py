"""Lightning runs its whole evaluation loop under no_grad, the start and end hooks
included (`_no_grad_context` on the loop's `run`): a helper only `on_validation_end`
calls records nothing (issue "Generalise": PyTorch-VAE's `sample_images`)."""

from __future__ import annotations

import textwrap

from gradlint.config import Config
from gradlint.engine import lint_source

EXPERIMENT = """
    import pytorch_lightning as pl
    import torchvision.utils as vutils


    class VAEXperiment(pl.LightningModule):
        def __init__(self, vae_model):
            super().__init__()
            self.model = vae_model

        def HOOK(self) -> None:
            self.sample_images()

        def sample_images(self):
            test_input = next(iter(self.trainer.datamodule.test_dataloader()))[0]
            recons = self.model.generate(test_input)
            vutils.save_image(recons.data, "recons.png")
    """


def _codes(hook: str) -> list[str]:
    source = textwrap.dedent(EXPERIMENT.replace("HOOK", hook))
    return [d.code for d in lint_source(source, "t.py", Config(preview=True))]


def test_a_helper_of_the_evaluation_end_hook_records_nothing():
    assert _codes("on_validation_end") == []
    assert _codes("on_test_epoch_end") == []


def test_a_helper_of_a_training_hook_still_records():
    assert _codes("on_train_epoch_end") == ["GL012"]
