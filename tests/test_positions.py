"""A finding's position comes from its own top-level statement (gradlint.positions):
the same range, for every node, as resolving the whole file."""

from __future__ import annotations

import warnings
from pathlib import Path

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper, PositionProvider

from gradlint import positions
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
    # a decorator's expression may start below its `@`
    "decorators over several lines": (
        "import functools\n\n@(\n    functools.cache\n)\n@\\\nstaticmethod\n"
        "# between\n\ndef f(a):\n    return a\n\n\nclass C:\n    @(\n        property\n    )\n"
        "    def g(self):\n        return 1\n"
    ),
    # statements inside loops, ifs, withs and trys are units of their own
    "bodies of compound statements": (
        "import torch\n\n\nfor i in range(3):  # loop\n    # first\n\n    x = i; y = (\n"
        "  x\n)\n    if x:\n        while y:\n            y -= 1\n    elif y:\n        pass\n"
        "    else:\n        with torch.no_grad() as g, open('f'):\n            z = [\n"
        "                1]\n    try:\n        a = 1\n    except ValueError:\n        a = 2\n"
        "    finally:\n        b = 3\nelse:\n    c = 4\n\n\nasync def f(s):\n"
        "    async for t in s:\n        async with t:\n            u = 1\n"
        "    match s:\n        case 1:\n            v = 2\n"
        "    if s: w = 1\n    if s:\n        pass\n"
    ),
    # LibCST reads it, CPython before 3.12 does not: the whole file is resolved instead.
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
    assert "positions" not in context.__dict__ or context._statement_positions is None


@pytest.mark.parametrize("name", sorted(TRICKY))
def test_statement_positions_on_tricky_layouts(name):
    assert_same_positions(TRICKY[name])


def test_statement_positions_on_every_case_file():
    assert CASES
    for path in CASES:
        assert_same_positions(path.read_text(encoding="utf-8"))


def test_a_file_cpython_rejects_is_resolved_whole(monkeypatch):
    def rejects(source: str):
        raise SyntaxError("newer than this CPython")

    monkeypatch.setattr(positions, "parse_quietly", rejects)
    source = "x = 1\n\ny = x\n"
    context = FileContext("t.py", source, cst.parse_module(source))
    assert context._statement_positions is None
    last = context.module.body[-1]
    assert context.position_of(last)[0].line == 3
    assert "positions" in context.__dict__


def test_reading_the_statements_says_nothing_about_the_users_code():
    # CPython warns about an invalid escape (SyntaxWarning on stderr from 3.12)
    source = 'import re\n\nPATTERN = re.compile("\\d+")\nx = 1\n'
    context = FileContext("t.py", source, cst.parse_module(source))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert context.position_of(context.module.body[-1])[0].line == 4
    assert caught == []
    assert context._statement_positions is not None


def test_direct_generation_gives_the_metadata_wrappers_ranges():
    # context._code_ranges runs PositionProvider's generation without MetadataWrapper's
    # empty batched visit; a LibCST upgrade that changed what the provider computes
    # would show here.
    from gradlint.context import _code_ranges

    for path in CASES[:3]:
        module = cst.parse_module(path.read_text(encoding="utf-8"))
        expected = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
        found = _code_ranges(module)
        assert len(found) == len(expected)
        assert all(found[node] == expected[node] for node in expected)
