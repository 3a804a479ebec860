"""A finding's position comes from its own top-level statement (gradlint.positions):
the same range, for every node, as resolving the whole file."""

from __future__ import annotations

from pathlib import Path

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper, PositionProvider

from gradlint.context import FileContext

REPO = Path(__file__).resolve().parent.parent
# The shape cases: most of the syntax the rules meet, in a few large files.
CASES = sorted(REPO.glob("tests/cases/*.py"))

TRICKY = {
    "leading comments and blank lines": "# header\n\n\nimport torch\n\n# about x\n\nx = 1\n",
    "decorators with comments between": (
        "import functools\n\n\n@functools.cache\n# why\n\n@staticmethod\ndef f(\n    a,\n):\n"
        "    return a\n"
    ),
    "several statements on a line": "a = 1; b = 2;\nc = a + b; d = (\n    c\n)\n",
    "continuations and strings": 'x = 1 + \\\n    2\ns = """\nline\n"""\nt = s\n',
    "no trailing newline": "import torch\nw = torch.ones(3)\nw += 1",
    "crlf": "import torch\r\n\r\nw = torch.ones(3)\r\nw += 1\r\n",
    "form feed": "x = 1\n\x0c\ny = x\n",
    "compound statements": (
        "class A:\n    def f(self):\n        if self:\n            return 1\n\n\n"
        "for i in range(3):\n    pass\nelse:\n    pass\n"
    ),
    "nested definitions": (
        'import torch\n\n\nclass Net(torch.nn.Module):\n    """Doc."""\n\n'
        "    # about forward\n    @torch.no_grad()\n    def forward(self, x):\n"
        "        def inner(y):\n            return y + \\\n                1\n"
        "        total = inner(\n  x,\n)\n        return total\n\n"
        "    async def step(self): return 1\n"
    ),
    "tab-indented bodies": "def f(x):\n\tif x:\n\t\treturn (\n  x\n)\n\treturn 0\n",
    "nested, no trailing newline": "class A:\n    def f(self):\n        return 1",
    # LibCST reads it, CPython 3.11 does not: the whole file is resolved instead.
    "newer syntax": "x = 1\ntype Alias = int\ny = x\n",
}


def assert_same_positions(source: str) -> None:
    module = cst.parse_module(source)
    whole = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    context = FileContext("t.py", source, module)
    for node in context.index.nodes:
        if type(node) is cst.Module:
            continue
        expected = whole[node]
        start, end = context.position_of(node)
        assert (start.line, start.column, end.line, end.column) == (
            expected.start.line,
            expected.start.column,
            expected.end.line,
            expected.end.column,
        ), (type(node).__name__, cst.Module([]).code_for_node(node)[:60])
    # resolved statement by statement, not for the whole file
    assert "positions" not in context.__dict__ or "type Alias" in source


@pytest.mark.parametrize("name", sorted(TRICKY))
def test_statement_positions_on_tricky_layouts(name):
    assert_same_positions(TRICKY[name])


def test_statement_positions_on_every_case_file():
    assert CASES
    for path in CASES:
        assert_same_positions(path.read_text(encoding="utf-8"))


def test_a_file_cpython_rejects_is_resolved_whole():
    source = TRICKY["newer syntax"]
    context = FileContext("t.py", source, cst.parse_module(source))
    assert context._statement_positions is None
    last = context.module.body[-1]
    assert context.position_of(last)[0].line == 3
    assert "positions" in context.__dict__
