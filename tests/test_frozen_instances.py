"""An instance of a class whose `__init__` freezes its own parameters records nothing on
inputs without history, wherever it runs: pytorch-fid's `InceptionV3`, vendored into
many GAN and VAE code bases, sets `param.requires_grad = requires_grad` with
`requires_grad=False` by default, and `get_activations(files, model)` runs the model it
is handed two calls down from `model = InceptionV3([block_idx])`. Before, only an
attribute of an instance (`self.rnd.target`) was asked about its class, and only a
freeze written out as `False` counted (issue "Generalise": a false GL004 on a vendored
FID, in the census's fresh batch of 2026-12-07)."""

from __future__ import annotations

from test_project import findings, write

INCEPTION = """
    import torch.nn as nn


    class InceptionV3(nn.Module):
        def __init__(self, output_blocks=(3,), resize_input=True, requires_grad=False):
            super().__init__()
            self.blocks = nn.ModuleList([nn.Conv2d(3, 8, 3), nn.Conv2d(8, 8, 3)])
            for param in self.parameters():
                param.requires_grad = requires_grad

        def forward(self, x):
            for block in self.blocks:
                x = block(x)
            return [x]
        UNFREEZE
"""

FID = """
    import numpy as np
    import torch
    from inception import InceptionV3


    def get_activations(images, model):
        model.eval()
        pred = model(torch.from_numpy(images).float())[0]
        return pred.cpu().data.numpy()


    def statistics(images, model):
        act = get_activations(images, model)
        return act.mean(), act.std()


    def calculate_fid(images):
        model = InceptionV3([3]BUILT)
        return statistics(images, model)
"""


def project(tmp_path, built: str = "", unfreeze: str = ""):
    write(
        tmp_path,
        {
            "inception.py": INCEPTION.replace("UNFREEZE", unfreeze),
            "fid.py": FID.replace("BUILT", built),
        },
    )
    return findings(tmp_path / "fid.py")


def test_an_instance_frozen_by_its_class_default_records_nothing(tmp_path):
    assert project(tmp_path) == []


def test_an_instance_built_with_requires_grad_true_records(tmp_path):
    assert project(tmp_path, built=", requires_grad=True") == [(8, "GL004")]


def test_a_flag_handed_by_position_counts_as_given(tmp_path):
    assert project(tmp_path, built=", True, True") == [(8, "GL004")]


def test_a_flag_written_out_false_keeps_it_frozen(tmp_path):
    assert project(tmp_path, built=", requires_grad=False") == []


def test_a_class_that_can_unfreeze_itself_is_not_frozen(tmp_path):
    unfreeze = """
        def unfreeze(self):
            for param in self.parameters():
                param.requires_grad = True"""
    assert project(tmp_path, unfreeze=unfreeze) == [(8, "GL004")]


def test_an_instance_of_a_class_of_the_same_file_frozen_for_good(tmp_path):
    write(
        tmp_path,
        {
            "fid.py": """
                import torch
                import torch.nn as nn


                class Teacher(nn.Module):
                    def __init__(self):
                        super().__init__()
                        self.fc = nn.Linear(4, 2)
                        for p in self.parameters():
                            p.requires_grad = False

                    def forward(self, x):
                        return self.fc(x)


                def score(x):
                    teacher = Teacher()
                    teacher.eval()
                    return teacher(x).argmax(1).tolist()
            """
        },
    )
    assert findings(tmp_path / "fid.py") == []


def test_a_parameter_handed_an_unfrozen_model_by_one_caller_records(tmp_path):
    write(
        tmp_path,
        {
            "inception.py": INCEPTION.replace("UNFREEZE", ""),
            "fid.py": FID.replace("BUILT", "")
            + """

    def other(images):
        net = torch.nn.Linear(4, 2)
        return get_activations(images, net)
""",
        },
    )
    assert findings(tmp_path / "fid.py") == [(8, "GL004")]


FINE_TUNED = """
    import torch
    import torch.nn as nn


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.backbone = nn.Linear(8, 16)
            PRE
            for param in self.parameters():
                param.requires_grad = False
            HEAD

        def forward(self, x):
            return self.fc(self.backbone(x))


    def perturb():
        net = Net()
        for p in net.fc.parameters():
            p.add_(0.01 * torch.randn_like(p))


    def predict(x):
        net = Net()
        UNFREEZE
        net.eval()
        return net(x).argmax(1).tolist()
"""


def fine_tuned(tmp_path, head: str = "pass", unfreeze: str = "pass", pre: str = "pass"):
    text = FINE_TUNED.replace("HEAD", head).replace("UNFREEZE", unfreeze).replace("PRE", pre)
    write(tmp_path, {"net.py": text})
    return findings(tmp_path / "net.py")


def test_a_head_built_after_the_freeze_still_trains(tmp_path):
    """Review of 2026-12-07: freeze the backbone, then attach a head; the head's
    parameters require grad, so an in-place change raises and a forward records."""
    assert fine_tuned(tmp_path, head="self.fc = nn.Linear(16, 2)") == [
        (21, "GL002"),
        (28, "GL004"),
    ]


def test_a_head_built_before_the_freeze_is_frozen_with_it(tmp_path):
    assert fine_tuned(tmp_path, pre="self.fc = nn.Linear(16, 2)") == []


def test_an_instance_switched_on_in_sight_is_not_frozen(tmp_path):
    """Review of 2026-12-07: `net.requires_grad_(True)` after building a class that
    freezes itself undoes the freeze."""
    found = fine_tuned(
        tmp_path, pre="self.fc = nn.Linear(16, 2)", unfreeze="net.requires_grad_(True)"
    )
    assert found == [(28, "GL004")]
