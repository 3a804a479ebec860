"""The forward of a module that is trained (gradlint.analysis.trained_forward): its
returned value is what the trainer differentiates, and its inputs are what its callers in
the file pass. GL011 and GL010 read it for an in-place change or a checkpoint inside
`forward()` whose backward is in the training loop."""

from __future__ import annotations

import textwrap

import libcst as cst

from gradlint.analysis.facts import FileFacts
from gradlint.analysis.values import Kind
from gradlint.config import Config
from gradlint.engine import lint_source


def codes(source: str, code: str) -> list[int]:
    config = Config(select=(code,), preview=True)
    found = lint_source(textwrap.dedent(source), "-", config)
    return [d.start.line for d in found if d.code == code]


def facts_of(source: str) -> FileFacts:
    return FileFacts(cst.parse_module(textwrap.dedent(source)))


_GATE = """
    import torch
    from torch import nn

    class Gate(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(4, 4)

        def forward(self, x):
            g = torch.sigmoid(self.lin(x))
            {change}
            return g
    """


def test_a_sigmoid_gate_scaled_in_place_in_forward_is_flagged_on_the_change():
    assert codes(_GATE.format(change="g *= 2"), "GL011") == [12]


def test_the_gate_cloned_first_or_changed_out_of_place_is_not():
    assert codes(_GATE.format(change="g = g.clone(); g *= 2"), "GL011") == []
    assert codes(_GATE.format(change="g = g * 2"), "GL011") == []


def test_a_change_in_a_branch_run_only_in_eval_mode_is_not():
    assert codes(_GATE.format(change="if not self.training: g.clamp_(0, 1)"), "GL011") == []
    source = _GATE.format(
        change="if self.training:\n                pass\n            else:\n                g.clamp_(0, 1)"
    )
    assert codes(source, "GL011") == []
    assert codes(_GATE.format(change="if self.training: g.clamp_(0, 1)"), "GL011") == [12]


def test_a_forward_under_no_grad_or_of_no_module_class_trains_nothing():
    no_grad = _GATE.format(change="g *= 2").replace(
        "        def forward", "        @torch.no_grad()\n        def forward"
    )
    assert codes(no_grad, "GL011") == []
    plain = _GATE.format(change="g *= 2").replace("class Gate(nn.Module)", "class Gate")
    assert codes(plain, "GL011") == []


def test_a_module_the_file_runs_only_under_no_grad_is_not_trained():
    source = textwrap.dedent(_GATE.format(change="g *= 2")) + textwrap.dedent(
        """
        def extract(x):
            net = Gate()
            with torch.no_grad():
                return net(x)
        """
    )
    assert codes(source, "GL011") == []
    assert codes(source.replace("with torch.no_grad():", "if True:"), "GL011") == [12]


def test_a_helper_method_whose_result_the_forward_returns_is_part_of_the_step():
    source = """
        import torch
        from torch import nn

        class Gate(nn.Module):
            def __init__(self):
                super().__init__()
                self.lin = nn.Linear(4, 4)

            def gate(self, h):
                g = torch.sigmoid(self.lin(h))
                g *= 2
                return g

            def log_gate(self, h):
                g = torch.sigmoid(self.lin(h))
                g *= 2
                return g

            def forward(self, x):
                self.log_gate(x)
                return self.gate(x)
        """
    # `log_gate`'s result is thrown away: no backward goes through it
    assert codes(source, "GL011") == [12]


def test_a_change_whose_result_does_not_reach_the_return_is_not():
    source = """
        import torch
        from torch import nn

        class Gate(nn.Module):
            def __init__(self):
                super().__init__()
                self.lin = nn.Linear(4, 4)

            def forward(self, x):
                g = torch.sigmoid(self.lin(x))
                self.last = g.detach()
                g *= 2
                return self.lin(x)
        """
    assert codes(source, "GL011") == []


def test_a_relu_output_with_the_shortcut_added_in_place_is_flagged_and_a_batch_norm_output_is_not():
    source = """
        import torch.nn.functional as F
        from torch import nn

        class Block(nn.Module):
            def __init__(self, c):
                super().__init__()
                self.conv = nn.Conv2d(c, c, 1)
                self.bn = nn.BatchNorm2d(c)

            def forward(self, input):
                output = F.relu(self.bn(self.conv(input)))
                output += input
                return F.relu(output)

        class ResBlock(nn.Module):
            def __init__(self, c):
                super().__init__()
                self.conv = nn.Conv2d(c, c, 1)
                self.bn = nn.BatchNorm2d(c)

            def forward(self, x):
                out = self.bn(self.conv(x))
                out += x
                return F.relu(out)
        """
    assert codes(source, "GL011") == [13]


_STEM = """
    import torch
    from torch import nn
    from torch.utils.checkpoint import checkpoint
    from torch.utils.data import DataLoader

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.stem = nn.Linear(4, 4)
            self.head = nn.Linear(4, 1)

        def forward(self, images, scale=1.0):
            h = checkpoint(self.stem, images)
            return self.head(h) * scale

    def train(data, device):
        net = Net().to(device)
        loader = DataLoader(data, batch_size=8)
        for i, (images, labels) in enumerate(loader):
            images = images.to(device)
            loss = (net({arg}) - labels).pow(2).mean()
            loss.backward()
    """


def test_a_stem_checkpointed_in_forward_on_a_loader_batch_is_flagged():
    assert codes(_STEM.format(arg="images"), "GL010") == [14]
    assert codes(_STEM.format(arg="torch.randn(8, 4)"), "GL010") == [14]


def test_a_caller_that_passes_a_tensor_with_history_or_unknown_keeps_it_silent():
    assert codes(_STEM.format(arg="images.requires_grad_()"), "GL010") == []
    assert codes(_STEM.format(arg="data"), "GL010") == []  # a parameter: unknown
    assert codes(_STEM.format(arg="net.head(images)"), "GL010") == []


def test_a_stem_checkpointed_in_a_helper_of_the_forward_on_its_input_is_flagged():
    helper = _STEM.format(arg="images").replace(
        """        def forward(self, images, scale=1.0):
            h = checkpoint(self.stem, images)
            return self.head(h) * scale""",
        """        def features(self, x):
            return checkpoint(self.stem, x)

        def forward(self, images, scale=1.0):
            h = self.features({inner})
            return self.head(h) * scale""",
    )
    assert codes(helper.replace("{inner}", "images"), "GL010") == [14]
    assert codes(helper.replace("{inner}", "self.head(images)"), "GL010") == []


def test_a_module_nobody_calls_in_the_file_has_unknown_inputs():
    source = _STEM.format(arg="images").split("    def train")[0]
    assert codes(source, "GL010") == []


def test_an_input_passed_on_from_an_outer_trained_forward_is_followed():
    source = textwrap.dedent(_STEM.format(arg="images")) + textwrap.dedent(
        """
        class Outer(nn.Module):
            def __init__(self):
                super().__init__()
                self.net = Net()
                self.embed = nn.Linear(4, 4)

            def forward(self, x):
                return self.net({inner})

        def run():
            model = Outer()
            model(torch.randn(8, 4)).sum().backward()
        """
    )
    assert codes(source.replace("{inner}", "x"), "GL010") == [14]
    # an inner caller passing a layer's output: the stem's input has history there
    assert codes(source.replace("{inner}", "self.embed(x)"), "GL010") == []


def test_a_loader_batch_moved_to_a_device_is_a_tensor_without_history():
    facts = facts_of(
        """
        from torch.utils.data import DataLoader
        from torch.autograd import Variable

        def run(data, device, other):
            loader = DataLoader(data)
            for x, y in loader:
                a = x.to(device)
                b = Variable(y)
            for z in other:
                c = z.to(device)
        """
    )
    values = {}
    for assign in facts.index.of_types(cst.Assign):
        target = assign.targets[0].target
        if type(target) is cst.Name:
            values[target.value] = facts.values.of_expr(assign.value, assign)
    assert values["a"] == {Kind.TENSOR}
    assert values["b"] == {Kind.TENSOR}
    assert Kind.UNKNOWN in values["c"]
