"""Fix output as a person would write it: adjacent statements that each need
`with torch.no_grad():` share one block, and an added keyword argument is formatted like
the call's other arguments. Every result parses and a second pass changes nothing."""

from __future__ import annotations

import ast
import textwrap

import pytest

from gradlint.config import Config
from gradlint.engine import lint_source
from gradlint.fixes import fix_source


def fixed(source: str) -> str:
    source = textwrap.dedent(source)
    outcome = fix_source(source, "t.py", Config(), unsafe=True)
    ast.parse(outcome.source)
    again = fix_source(outcome.source, "t.py", Config(), unsafe=True)
    assert again.source == outcome.source  # stable
    return outcome.source


EVAL = """\
import torch
model = torch.nn.Linear(2, 2)
model.eval()
"""


def test_adjacent_inference_statements_share_one_no_grad_block():
    result = fixed(
        EVAL + "a = model(torch.randn(1, 2))\n"
        "# the second batch\n"
        "\n"
        "b = model(torch.randn(1, 2))  # keep\n"
        "print(a, b)\n"
        "c = model(torch.randn(1, 2))\n"
    )
    assert result == EVAL + (
        "with torch.no_grad():\n"
        "    a = model(torch.randn(1, 2))\n"
        "    # the second batch\n"
        "\n"
        "    b = model(torch.randn(1, 2))  # keep\n"
        "print(a, b)\n"
        "with torch.no_grad():\n"
        "    c = model(torch.randn(1, 2))\n"
    )


def test_each_finding_of_a_merged_block_carries_the_whole_block():
    source = EVAL + "a = model(torch.randn(1, 2))\nb = model(torch.randn(1, 2))\n"
    first, second = lint_source(source, "t.py")
    assert first.fix is not None and second.fix is not None
    assert first.fix.edits == second.fix.edits  # applied once by --fix, or by either quick fix
    outcome = fix_source(source, "t.py", Config(), unsafe=True)
    assert len(outcome.fixed) == 2 and outcome.remaining == []


def test_a_suppressed_neighbour_is_left_outside_the_block():
    result = fixed(
        EVAL + "a = model(torch.randn(1, 2))\n"
        "b = model(torch.randn(1, 2))  # noqa: GL004\n"
        "c = model(torch.randn(1, 2))\n"
    )
    assert result == EVAL + (
        "with torch.no_grad():\n"
        "    a = model(torch.randn(1, 2))\n"
        "b = model(torch.randn(1, 2))  # noqa: GL004\n"
        "with torch.no_grad():\n"
        "    c = model(torch.randn(1, 2))\n"
    )


def test_in_place_updates_of_two_rules_share_a_block_and_keep_crlf():
    source = (
        "import torch\r\n"
        "w = torch.zeros(3, requires_grad=True)\r\n"
        "b = torch.zeros(3, requires_grad=True)\r\n"
        "for _ in range(2):\r\n"
        "    (w * b).sum().backward()\r\n"
        "    w -= 0.1 * w.grad\r\n"
        "    b = b - 0.1 * b.grad\r\n"
        "    w.grad = None\r\n"
        "    b.grad = None\r\n"
    )
    assert sorted(d.code for d in lint_source(source, "t.py")) == ["GL002", "GL003"]
    outcome = fix_source(source, "t.py", Config(), unsafe=True)
    assert (
        "    with torch.no_grad():\r\n"
        "        w -= 0.1 * w.grad\r\n"
        "        b -= 0.1 * b.grad\r\n"
        "    w.grad = None\r\n"
    ) in outcome.source
    ast.parse(outcome.source)


def test_statements_in_different_blocks_are_not_merged():
    result = fixed(
        EVAL + "if True:\n    a = model(torch.randn(1, 2))\nb = model(torch.randn(1, 2))\n"
    )
    assert result.count("with torch.no_grad():") == 2


GRAD = """\
import torch
x = torch.linspace(0.0, 1.0, 4, requires_grad=True)
u = torch.sin(x)
"""


@pytest.mark.parametrize(
    ("call", "expected"),
    [
        # the spacing after the call's commas
        (
            "torch.autograd.grad(u.sum(),x)[0]",
            "torch.autograd.grad(u.sum(),x,create_graph=True)[0]",
        ),
        (
            "torch.autograd.grad(u.sum(), x)[0]",
            "torch.autograd.grad(u.sum(), x, create_graph=True)[0]",
        ),
        # the spacing around a keyword's `=`
        (
            "torch.autograd.grad(u.sum(), x, retain_graph = True)[0]",
            "torch.autograd.grad(u.sum(), x, retain_graph = True, create_graph = True)[0]",
        ),
        # one argument per line with a trailing comma: a line of its own, comma kept
        (
            "torch.autograd.grad(\n    u.sum(),\n    x,\n)[0]",
            "torch.autograd.grad(\n    u.sum(),\n    x,\n    create_graph=True,\n)[0]",
        ),
        # one per line without one: a line of its own, none added at the end
        (
            "torch.autograd.grad(\n    u.sum(),\n    x  # wrt\n)[0]",
            "torch.autograd.grad(\n    u.sum(),\n    x,  # wrt\n    create_graph=True\n)[0]",
        ),
        # arguments sharing lines: appended after the last one
        (
            "torch.autograd.grad(u.sum(), x,\n                    retain_graph=True)[0]",
            "torch.autograd.grad(u.sum(), x,\n"
            "                    retain_graph=True, create_graph=True)[0]",
        ),
        (
            "torch.autograd.grad(\n    u.sum(), x,\n)[0]",
            "torch.autograd.grad(\n    u.sum(), x, create_graph=True,\n)[0]",
        ),
    ],
)
def test_an_added_keyword_argument_is_formatted_like_its_neighbours(call, expected):
    source = GRAD + f"g = {call}\nh = torch.autograd.grad(g.sum(), x)[0]\n"
    assert fixed(source) == GRAD + f"g = {expected}\nh = torch.autograd.grad(g.sum(), x)[0]\n"


def test_use_reentrant_goes_on_its_own_line_with_the_calls_tab_indent():
    source = (
        "import torch\nfrom torch.utils.checkpoint import checkpoint\n"
        "block = torch.nn.Linear(2, 2)\n"
        "y = checkpoint(\n\tblock,\n\ttorch.randn(1, 2),\n)\n"
    )
    assert fixed(source).endswith(
        "y = checkpoint(\n\tblock,\n\ttorch.randn(1, 2),\n\tuse_reentrant=False,\n)\n"
    )
