"""A parameter's value at a call is read from the callers' arguments (issue "Generalise",
section 2, "context flows from callers to callees"): constants and flags, from the
calls of this file and of the project's other files. pytorch-ddpg's `util.to_tensor(x,
volatile=False)` wraps `Variable(x, volatile=volatile)`, and `ddpg.py` calls it with
`volatile=True` expecting no graph (a no-op since torch 0.4: GL008)."""

from __future__ import annotations

import textwrap

import libcst as cst
from test_project import write

from gradlint.analysis.facts import FileFacts
from gradlint.config import Config
from gradlint.engine import lint_file, lint_source

HELPER = """
import torch
from torch.autograd import Variable


def to_tensor(x, volatile=False, requires_grad=False):
    return Variable(torch.from_numpy(x), volatile=volatile, requires_grad=requires_grad)
"""

CALLERS = """

def target(net, batch):
    return net(to_tensor(batch, volatile=True))


def quiet_target(net, batch):
    with torch.no_grad():
        return net(to_tensor(batch, volatile=True))


def plain(net, batch, evaluating):
    return net(to_tensor(batch)) + net(to_tensor(batch, volatile=evaluating))
"""


def test_the_constants_callers_give_a_parameter():
    facts = FileFacts(cst.parse_module(textwrap.dedent(HELPER + CALLERS)))
    (helper,) = [f for f in facts.index.functions if f.name.value == "to_tensor"]
    found = facts.path_conditions.caller_values(helper, "volatile", facts.grad_mode)
    module = facts.module
    # `volatile=evaluating` is no constant: that caller says nothing
    assert [
        (module.code_for_node(c.site), c.value.describe("volatile"), c.recording) for c in found
    ] == [
        ("to_tensor(batch, volatile=True)", "volatile=True", True),
        ("to_tensor(batch, volatile=True)", "volatile=True", False),
        ("to_tensor(batch)", "volatile=False (its default)", True),
    ]


def test_gl008_flags_the_helper_s_variable_and_the_callers_volatile_true():
    source = textwrap.dedent(HELPER + CALLERS)
    found = [d for d in lint_source(source, "t.py", Config()) if d.code == "GL008"]
    # the helper's Variable (line 7), shown with the recording caller (line 11), and
    # that caller's own `volatile=True`; the one under no_grad is no finding
    assert [(d.start.line, [r.start.line for r in d.related]) for d in found] == [
        (7, [11]),
        (11, []),
    ]


def test_no_caller_passes_true_nothing_is_flagged():
    source = textwrap.dedent(HELPER + CALLERS.replace("volatile=True", "volatile=False"))
    assert [d for d in lint_source(source, "t.py", Config()) if d.code == "GL008"] == []


def test_callers_in_another_file(tmp_path):
    # pytorch-ddpg: the helper in `util.py`, star-imported by `ddpg.py`
    write(
        tmp_path,
        {
            "util.py": HELPER,
            "ddpg.py": "import torch\nfrom util import *\n" + textwrap.dedent(CALLERS),
        },
    )
    variable = _line_of(tmp_path / "util.py", "return Variable(")
    target = _line_of(tmp_path / "ddpg.py", "def target(") + 1
    (helper,) = [d for d in lint_file(tmp_path / "util.py").diagnostics if d.code == "GL008"]
    assert helper.start.line == variable and "a caller passes `True`" in helper.message
    (caller,) = helper.related
    assert caller.path.endswith("ddpg.py") and caller.start.line == target
    callers = [d for d in lint_file(tmp_path / "ddpg.py").diagnostics if d.code == "GL008"]
    assert [(d.start.line, "hands it to a `Variable`" in d.message) for d in callers] == [
        (target, True)
    ]


def _line_of(path, text: str) -> int:
    lines = path.read_text().splitlines()
    (found,) = [n for n, line in enumerate(lines, start=1) if text in line]
    return found
