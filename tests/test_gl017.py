"""GL017's fix: what it wraps, with which name for torch.nn, and where it is withheld
because the wrapper would not behave as the plain container did."""

from __future__ import annotations

import textwrap

import libcst as cst

from gradlint.config import Config
from gradlint.engine import lint_source
from gradlint.fixes import fix_source

GL017 = Config(select=("GL017",), preview=True)


def fixed(body: str, header: str = "import torch\nfrom torch import nn\n") -> tuple[str, list]:
    source = header + textwrap.dedent(body)
    outcome = fix_source(source, "<test>", GL017, unsafe=False)
    cst.parse_module(outcome.source)
    return outcome.source, [d for d in outcome.remaining if d.code == "GL017"]


def test_a_tuple_without_parentheses_is_wrapped_whole():
    source, remaining = fixed(
        """
        class Pair(nn.Module):
            def __init__(self):
                super().__init__()
                self.pair = nn.Linear(2, 2), nn.Linear(2, 2)
        """
    )
    assert "self.pair = nn.ModuleList((nn.Linear(2, 2), nn.Linear(2, 2)))" in source
    assert remaining == []


def test_torch_nn_is_spelled_as_the_file_imports_it():
    source, _ = fixed(
        """
        class Net(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.w = torch.zeros(3, requires_grad=True)
        """,
        header="import torch\n",
    )
    assert "self.w = torch.nn.Parameter(torch.zeros(3, requires_grad=True))" in source


def test_a_sliced_list_is_reported_without_a_fix():
    # `self.layers[1:]` of a ModuleList is a ModuleList, not a list: `+ [..]` would break
    source, remaining = fixed(
        """
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.layers = [nn.Linear(2, 2) for _ in range(3)]

            def forward(self, x):
                for layer in self.layers[1:] + [self.layers[0]]:
                    x = layer(x)
                return x
        """
    )
    assert "nn.ModuleList" not in source
    assert len(remaining) == 1


def test_a_dict_keyed_by_numbers_is_reported_without_a_fix():
    # nn.ModuleDict takes string keys only
    source, remaining = fixed(
        """
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.heads = {0: nn.Linear(2, 1), 1: nn.Linear(2, 1)}

            def forward(self, x, task):
                return self.heads[task](x)
        """
    )
    assert "ModuleDict" not in source
    assert len(remaining) == 1


def test_a_tensor_reassigned_later_is_reported_without_a_fix():
    # assigning a plain tensor over a registered Parameter raises TypeError
    source, remaining = fixed(
        """
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.scale = torch.ones(3, requires_grad=True)

            def shrink(self):
                self.scale = self.scale * 0.5
        """
    )
    assert "nn.Parameter" not in source
    assert len(remaining) == 1


def test_a_list_filled_by_append_becomes_an_empty_module_list():
    source, remaining = fixed(
        """
        class Net(nn.Module):
            def __init__(self, depth):
                super().__init__()
                self.blocks = []
                for _ in range(depth):
                    self.blocks.append(nn.Linear(2, 2))
        """
    )
    assert "self.blocks = nn.ModuleList([])" in source
    assert remaining == []


def test_elements_registered_by_register_parameter_stay_silent():
    source = "import torch\nfrom torch import nn\n" + textwrap.dedent(
        """
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.ws = [nn.Parameter(torch.zeros(2)) for _ in range(2)]
                for i, w in enumerate(self.ws):
                    self.register_parameter(f"w{i}", w)
        """
    )
    assert lint_source(source, "<test>", GL017) == []
