"""Crash-freedom on code nobody wrote for gradlint, as flake8-bugbear fuzzes itself.

Two generators:
- hypothesmith: syntactically valid Python from the grammar (and LibCST nodes), which
  exercises odd syntax rather than PyTorch. The engine's token pre-filter would let most
  of it skip the rules, so those properties run with the pre-filter off: every rule visits
  every generated program.
- torch-flavoured programs assembled from the fixtures' own statements, nested under
  loops, grad-mode blocks, functions and classes, so the rules' analyses (grad mode, loop
  state, leaves, aliases) and their fixes meet shapes the fixtures never combine.

The properties: lint_source raises nothing but SourceError, every finding points inside
the source, and fix_source(..., unsafe=True), where it changes the text, returns code
LibCST parses (and that lints again without crashing).
"""

from __future__ import annotations

import textwrap
from functools import cache
from pathlib import Path
from unittest import mock

import hypothesmith
import libcst as cst
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gradlint import engine
from gradlint.fixes import fix_source

# Generated code such as `1()` or `x is 1` is valid but makes compile() warn.
pytestmark = pytest.mark.filterwarnings("ignore::SyntaxWarning")

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


# Bounded so the whole module stays well under 30 CPU-seconds: generating (hypothesmith's
# from_node especially) and fixing cost far more than linting.
def bounded(examples: int):
    return settings(
        max_examples=examples,
        deadline=None,
        # hypothesmith's programs are large by nature: on some seeds most of them exceed
        # Hypothesis's entropy budget, which says nothing about gradlint.
        suppress_health_check=[
            HealthCheck.too_slow,
            HealthCheck.filter_too_much,
            HealthCheck.data_too_large,
        ],
    )


def _lines(source: str) -> list[str]:
    # LibCST breaks lines at \r\n, \r and \n only (not at form feeds, as splitlines does).
    return source.replace("\r\n", "\n").replace("\r", "\n").split("\n")


def assert_lints_cleanly(source: str) -> list:
    """Lint, allowing only SourceError; every finding must point at real text."""
    try:
        diagnostics = engine.lint_source(source, "generated.py")
    except engine.SourceError as exc:
        assert exc.error.path == "generated.py"
        assert str(exc.error).startswith("generated.py")
        return []
    lines = _lines(source.lstrip("\ufeff"))
    for diagnostic in diagnostics:
        assert diagnostic.start <= diagnostic.end, diagnostic
        assert 1 <= diagnostic.start.line <= len(lines), diagnostic
        assert 1 <= diagnostic.end.line <= len(lines), diagnostic
        assert 0 <= diagnostic.start.column <= len(lines[diagnostic.start.line - 1]), diagnostic
    return diagnostics


def assert_fixes_parse(source: str) -> str | None:
    """Apply every fix, unsafe included; the result must parse when anything changed."""
    try:
        outcome = fix_source(source, "generated.py", None, unsafe=True)
    except engine.SourceError:
        return None
    if outcome.source != source:
        cst.parse_module(outcome.source)  # raises ParserSyntaxError: the test fails
        assert_lints_cleanly(outcome.source)
    return outcome.source


def rules_on_every_file():
    """Turn off the trigger-token pre-filter, so every rule visits every file."""
    return mock.patch.object(engine, "might_match", lambda source, rules: True)


# --- hypothesmith -----------------------------------------------------------------------


@bounded(60)
@given(source=hypothesmith.from_grammar())
def test_grammar_generated_python_lints_and_fixes_without_crashing(source):
    with rules_on_every_file():
        assert_lints_cleanly(source)
        assert_fixes_parse(source)


@bounded(25)
@given(source=hypothesmith.from_node())
def test_libcst_generated_python_lints_and_fixes_without_crashing(source):
    with rules_on_every_file():
        assert_lints_cleanly(source)
        assert_fixes_parse(source)


# --- torch-flavoured programs from the fixtures' statements -----------------------------


class _StatementCollector(cst.CSTVisitor):
    """Every statement of a module, at any depth, as its own dedented source text."""

    def __init__(self, module: cst.Module) -> None:
        self.module = module
        self.snippets: list[str] = []

    def on_visit(self, node: cst.CSTNode) -> bool:
        if isinstance(node, cst.BaseStatement):
            self.snippets.append(self.module.code_for_node(node))
        return True


@cache
def fixture_statements() -> tuple[str, ...]:
    snippets: set[str] = set()
    for path in sorted(FIXTURES.glob("GL*/*.py")):
        module = cst.parse_module(path.read_text(encoding="utf-8"))
        collector = _StatementCollector(module)
        module.visit(collector)
        for snippet in collector.snippets:
            # Leading comments and blank lines are kept: noqa and error markers ride along.
            if not snippet.endswith("\n"):
                snippet += "\n"
            snippets.add(snippet)
    return tuple(sorted(snippets))


# Headers that put statements where the rules look: loops (GL001, GL006), grad-mode
# blocks and decorators (GL002, GL004), functions and methods (module-local callers).
HEADERS = (
    "for step in range(3):",
    "for p in model.parameters():",
    "for name, param in model.named_parameters():",
    "while step < n:",
    "with torch.no_grad():",
    "with torch.enable_grad():",
    "with torch.inference_mode():",
    "with torch.set_grad_enabled(False):",
    "with torch.autograd.set_grad_enabled(training):",
    "if training:",
    "def train(model, x, y, optimizer, n=3):",
    "def step(self, batch):",
    "@torch.no_grad()\ndef evaluate(model, loader):",
    "@torch.enable_grad()\ndef closure():",
    "class Net(torch.nn.Module):",
)

PRELUDE = "import torch\nimport torch as T\nfrom torch import nn\nimport torch.nn.functional as F\n"


def _nest(header_and_children: tuple[str, list[str]]) -> str:
    header, children = header_and_children
    return header + "\n" + textwrap.indent("".join(children), "    ")


@st.composite
def torch_programs(draw) -> str:
    statement = st.sampled_from(fixture_statements())
    block = st.recursive(
        statement,
        lambda inner: st.tuples(
            st.sampled_from(HEADERS), st.lists(inner, min_size=1, max_size=4)
        ).map(_nest),
        max_leaves=8,
    )
    body = draw(st.lists(block, min_size=1, max_size=5))
    return PRELUDE + "".join(body)


def test_fixture_statements_are_collected_at_every_depth():
    statements = fixture_statements()
    # Nested statements (loop bodies) are there on their own, not only inside their loop.
    assert any(s.lstrip().startswith("loss.backward()") for s in statements)
    assert any(s.startswith(("for ", "while ")) for s in statements)
    assert len(statements) > 200


@bounded(40)
@given(source=torch_programs())
def test_torch_flavoured_programs_lint_and_fix_without_crashing(source):
    # The generator only nests whole statements, so what it makes is valid Python.
    cst.parse_module(source)
    assert_lints_cleanly(source)
    assert_fixes_parse(source)


def test_torch_program_generator_reaches_the_rules():
    """The generated programs are findings-rich, not only crash-free noise: a fixed
    sample of them gets findings from most rules."""
    found: set[str] = set()

    @settings(max_examples=40, deadline=None, database=None, derandomize=True)
    @given(source=torch_programs())
    def collect(source):
        try:
            found.update(d.code for d in engine.lint_source(source, "generated.py"))
        except engine.SourceError:
            pass

    collect()
    assert len(found) >= 3, found


@pytest.mark.parametrize("header", HEADERS)
def test_every_header_nests_a_fixture_statement_into_valid_python(header):
    source = PRELUDE + _nest((header, ["loss.backward()\n", "x = x + 1\n"]))
    cst.parse_module(source)
    compile(source, "generated.py", "exec")
