"""A distillation loss written in a helper of the file (`def kd_loss(student_logits,
teacher_logits, T)`, the usual shape of knowledge-distillation code), called in the
training loop with a teacher's logits computed with autograd recording (GL013): the
helper's target is a parameter, so what each call hands it is the target. Every
backward then runs through the teacher, which no optimizer steps, and fills its
`.grad`. Only calls whose loss a backward differentiates count, and the fix (detaching
the helper's target) is left to the author: it serves every call."""

from __future__ import annotations

from pathlib import Path

from test_project import preview_findings

KD = """
import torch
import torch.nn.functional as F
from torch import nn


def kd_loss(outputs, teacher_outputs, labels, T=4.0):
    p = F.log_softmax(outputs / T, dim=1)
    q = F.softmax(teacher_outputs / T, dim=1)
    return F.kl_div(p, q, reduction="batchmean") * T * T + F.cross_entropy(outputs, labels)


teacher = nn.Linear(4, 3)
student = nn.Linear(4, 3)
optimizer = torch.optim.SGD(student.parameters(), lr=0.1)
loader = [(torch.randn(8, 4), torch.randint(0, 3, (8,)))]
for x, y in loader:
    t = teacher(x)
    s = student(x)
    loss = kd_loss(s, t, y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
"""

TEACHER_LINE = 17  # t = teacher(x)


def _findings(tmp_path: Path, source: str) -> list[tuple[int, str]]:
    path = tmp_path / "distill.py"
    path.write_text(source.lstrip(), encoding="utf-8")
    return [f for f in preview_findings(path) if f[1] == "GL013"]


def test_the_teachers_logits_handed_to_the_loss_helper(tmp_path: Path):
    assert _findings(tmp_path, KD) == [(TEACHER_LINE, "GL013")]


def test_a_teacher_run_under_no_grad(tmp_path: Path):
    fixed = KD.replace(
        "    t = teacher(x)\n", "    with torch.no_grad():\n        t = teacher(x)\n"
    )
    assert _findings(tmp_path, fixed) == []


def test_a_teacher_trained_with_the_student(tmp_path: Path):
    joint = KD.replace(
        "torch.optim.SGD(student.parameters(), lr=0.1)",
        "torch.optim.SGD([*student.parameters(), *teacher.parameters()], lr=0.1)",
    )
    assert _findings(tmp_path, joint) == []


def test_a_loss_nothing_differentiates(tmp_path: Path):
    # the same helper as a validation metric: no backward, nothing runs through the teacher
    metric = KD.replace(
        "    optimizer.zero_grad()\n    loss.backward()\n    optimizer.step()\n",
        "    print(loss.item())\n",
    )
    assert _findings(tmp_path, metric) == []


def test_labels_handed_as_the_target(tmp_path: Path):
    labels = KD.replace("kd_loss(s, t, y)", "kd_loss(s, F.one_hot(y, 3).float(), y)")
    assert _findings(tmp_path, labels) == []


def test_each_call_of_the_helper_is_its_own_finding(tmp_path: Path):
    # the helper handed to a training function as its criterion, and called directly
    handed = KD + (
        "\n\ndef train_epoch(student, teacher, loader, criterion, optimizer):\n"
        "    for x, y in loader:\n"
        "        t = teacher(x)\n"
        "        s = student(x)\n"
        "        loss = criterion(s, t, y)\n"
        "        optimizer.zero_grad()\n"
        "        loss.backward()\n"
        "        optimizer.step()\n"
        "\n\ntrain_epoch(student, teacher, loader, kd_loss, optimizer)\n"
    )
    assert _findings(tmp_path, handed) == [(TEACHER_LINE, "GL013"), (TEACHER_LINE + 10, "GL013")]


def test_the_loss_a_factory_makes_handed_in(tmp_path: Path):
    # `criterion = make_criterion(T=4.0)`, whose body defines and returns the loss
    factory = KD.replace(
        "def kd_loss(outputs, teacher_outputs, labels, T=4.0):\n",
        "def make_criterion(T=4.0):\n    def kd_loss(outputs, teacher_outputs, labels):\n",
    )
    factory = factory.replace(
        "    p = F.log_softmax(outputs / T, dim=1)\n"
        "    q = F.softmax(teacher_outputs / T, dim=1)\n"
        "    return F.kl_div",
        "        p = F.log_softmax(outputs / T, dim=1)\n"
        "        q = F.softmax(teacher_outputs / T, dim=1)\n"
        "        return F.kl_div",
    ).replace(
        "F.cross_entropy(outputs, labels)\n",
        "F.cross_entropy(outputs, labels)\n\n    return kd_loss\n",
    )
    factory = factory.replace(
        "for x, y in loader:\n    t = teacher(x)\n    s = student(x)\n    loss = kd_loss(s, t, y)\n",
        "\n\ndef train_epoch(student, teacher, loader, criterion, optimizer):\n"
        "    for x, y in loader:\n"
        "        t = teacher(x)\n"
        "        s = student(x)\n"
        "        loss = criterion(s, t, y)\n",
    ).replace(
        "    optimizer.zero_grad()\n    loss.backward()\n    optimizer.step()\n",
        "        optimizer.zero_grad()\n        loss.backward()\n        optimizer.step()\n"
        "\n\ncriterion = make_criterion(T=4.0)\n"
        "train_epoch(student, teacher, loader, criterion, optimizer)\n",
    )
    compile(factory, "distill.py", "exec")
    assert _findings(tmp_path, factory) == [(23, "GL013")]


def test_one_forward_on_both_sides_is_no_target(tmp_path: Path):
    # a boundary-seeking GAN's generator loss and a total-variation term: each squares or
    # takes the absolute value of a difference of one output with itself
    losses = """
import torch
from torch import nn


def boundary_seeking_loss(y_pred, y_true):
    return 0.5 * torch.mean((torch.log(y_pred) - torch.log(1 - y_pred)) ** 2)


def total_variance(x):
    return torch.mean(torch.abs(x[..., :-1] - x[..., 1:]))


generator = nn.Linear(4, 4)
discriminator = nn.Sequential(nn.Linear(4, 1), nn.Sigmoid())
optimizer = torch.optim.Adam(generator.parameters())
for step in range(10):
    fake = generator(torch.randn(8, 4))
    loss = boundary_seeking_loss(discriminator(fake), torch.ones(8, 1))
    loss = loss + total_variance(fake)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
"""
    assert _findings(tmp_path, losses) == []


def test_one_forward_on_both_sides_inline(tmp_path: Path):
    inline = """
import torch
from torch import nn

generator = nn.Linear(4, 4)
discriminator = nn.Sequential(nn.Linear(4, 1), nn.Sigmoid())
optimizer = torch.optim.Adam(generator.parameters())
for step in range(10):
    fake = generator(torch.randn(8, 4))
    p = discriminator(fake)
    loss = 0.5 * torch.mean((torch.log(p) - torch.log(1 - p)) ** 2)
    loss = loss + torch.mean(torch.abs(fake[..., :-1] - fake[..., 1:]))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
"""
    assert _findings(tmp_path, inline) == []


def test_a_teacher_frozen_by_a_helper_of_another_file(tmp_path: Path):
    # `utils.freeze_model(teacher)`: every parameter switched off, so nothing records
    (tmp_path / ".git").mkdir()
    (tmp_path / "utils.py").write_text(
        "def freeze_model(model):\n"
        "    for param in model.parameters():\n"
        "        param.requires_grad = False\n"
        "    return\n",
        encoding="utf-8",
    )
    frozen = (
        KD.replace("import torch\n", "import torch\nimport utils\n", 1)
        .replace(
            "student = nn.Linear(4, 3)\n",
            "student = nn.Linear(4, 3)\nutils.freeze_model(teacher)\n",
        )
        .replace("kd_loss(s, t, y)", "F.mse_loss(s, t)")
    )
    assert _findings(tmp_path, frozen) == []
    (tmp_path / "utils.py").write_text(
        "def freeze_model(model):\n    print(model)\n", encoding="utf-8"
    )
    assert _findings(tmp_path, frozen) == [(TEACHER_LINE + 2, "GL013")]


def test_a_frozen_network_handed_to_a_perceptual_loss_helper(tmp_path: Path):
    perceptual = """
import torch
import torch.nn.functional as F
from torch import nn


def perceptual_loss(net, fake, real):
    return F.mse_loss(net(fake), net(real))


generator = nn.Sequential(nn.Conv2d(3, 3, 3, padding=1))
vgg = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU())
vgg.requires_grad_(False)
optimizer = torch.optim.Adam(generator.parameters())
for lr_img, hr_img in [(torch.randn(2, 3, 8, 8), torch.randn(2, 3, 8, 8))]:
    fake = generator(lr_img)
    loss = F.l1_loss(fake, hr_img) + 0.01 * perceptual_loss(vgg, fake, hr_img)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
"""
    assert _findings(tmp_path, perceptual) == []


def test_a_teacher_handed_to_the_loss_helper_and_run_there(tmp_path: Path):
    handed = """
import torch
import torch.nn.functional as F
from torch import nn


def kd_loss(student_logits, teacher, images, T=4.0):
    teacher_logits = teacher(images)
    p = F.log_softmax(student_logits / T, dim=1)
    return F.kl_div(p, F.softmax(teacher_logits / T, dim=1), reduction="batchmean")


teacher = nn.Linear(4, 3)
student = nn.Linear(4, 3)
optimizer = torch.optim.SGD(student.parameters(), lr=0.1)
for x, y in [(torch.randn(8, 4), torch.randint(0, 3, (8,)))]:
    out = student(x)
    loss = F.cross_entropy(out, y) + kd_loss(out, teacher, x)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
"""
    assert _findings(tmp_path, handed) == [(7, "GL013")]


def test_a_teacher_whose_parameters_a_named_list_hands_the_optimizer(tmp_path: Path):
    joint = KD.replace(
        "optimizer = torch.optim.SGD(student.parameters(), lr=0.1)\n",
        "params = list(student.parameters()) + list(teacher.parameters())\n"
        "optimizer = torch.optim.SGD(params, lr=0.1)\n",
    )
    assert "SGD(params" in joint
    assert _findings(tmp_path, joint) == []


def test_a_class_that_freezes_every_layer_it_keeps(tmp_path: Path):
    frozen = """
import torch
import torch.nn.functional as F
from torch import nn


class VGGFeatures(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU()).eval()
        for p in self.features.parameters():
            p.requires_grad = False

    def forward(self, x):
        return self.features(x)


generator = nn.Conv2d(3, 3, 3, padding=1)
vgg = VGGFeatures()
optimizer = torch.optim.Adam(generator.parameters())
for lr_img, hr_img in [(torch.randn(2, 3, 8, 8), torch.randn(2, 3, 8, 8))]:
    fake = generator(lr_img)
    loss = F.l1_loss(fake, hr_img) + 0.006 * F.mse_loss(vgg(fake), vgg(hr_img))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
"""
    assert _findings(tmp_path, frozen) == []
    # a class that keeps a layer it does not freeze: the instance still records
    (tmp_path / "other").mkdir()
    half = frozen.replace(
        "            p.requires_grad = False\n",
        "            p.requires_grad = False\n        self.head = nn.Conv2d(8, 8, 1)\n",
    ).replace("return self.features(x)", "return self.head(self.features(x))")
    assert _findings(tmp_path / "other", half) == [(23, "GL013")]
