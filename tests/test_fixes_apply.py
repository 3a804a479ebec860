"""apply_edits and the --fix loop, driven by small hand-made test rules (the real rules'
fixes are tested over fixtures elsewhere)."""

from __future__ import annotations

import libcst as cst
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import gradlint.engine
from gradlint.config import Config
from gradlint.diagnostics import Applicability, Edit, Fix, Position
from gradlint.edits import InvalidEditError, OverlappingEditsError, apply_edits
from gradlint.fixes import MAX_PASSES, fix_source
from gradlint.rules.base import Rule

TEST_CONFIG = Config(select=("TS",))


def edit(l1: int, c1: int, l2: int, c2: int, content: str) -> Edit:
    return Edit(Position(l1, c1), Position(l2, c2), content)


# --- apply_edits ------------------------------------------------------------------------


def test_replaces_a_range_on_one_line():
    assert apply_edits("x = foo(1)\n", [edit(1, 4, 1, 7, "bar")]) == "x = bar(1)\n"


def test_edits_apply_in_any_order_against_the_original_positions():
    source = "a = 1\nb = 2\nc = 3\n"
    edits = [edit(3, 0, 3, 1, "gamma"), edit(1, 0, 1, 1, "alpha"), edit(2, 4, 2, 5, "20")]
    assert apply_edits(source, edits) == "alpha = 1\nb = 20\ngamma = 3\n"
    assert apply_edits(source, list(reversed(edits))) == "alpha = 1\nb = 20\ngamma = 3\n"


def test_no_edits_returns_the_source_unchanged():
    assert apply_edits("x = 1\r\n", []) == "x = 1\r\n"


def test_insertion_deletion_and_whole_line_removal():
    source = "import os\nx = 1\ny = 2\n"
    assert apply_edits(source, [edit(1, 0, 2, 0, "")]) == "x = 1\ny = 2\n"
    assert apply_edits(source, [edit(2, 0, 2, 0, "import torch\n")]) == (
        "import os\nimport torch\nx = 1\ny = 2\n"
    )
    # The position after the final newline is line 4, column 0.
    assert apply_edits(source, [edit(4, 0, 4, 0, "z = 3\n")]).endswith("y = 2\nz = 3\n")


def test_multi_line_replacement():
    source = "f(\n    a,\n    b,\n)\nrest\n"
    assert apply_edits(source, [edit(1, 0, 4, 1, "f(a, b)")]) == "f(a, b)\nrest\n"


def test_columns_count_code_points_not_bytes_or_utf16_units():
    # 'é' is 2 bytes in UTF-8, '😀' is 4 bytes and 2 UTF-16 units: each is one column.
    source = 's = "é😀" + old\n'
    start = source.index("old")
    assert start == 11
    assert apply_edits(source, [edit(1, 11, 1, 14, "new")]) == 's = "é😀" + new\n'


def test_crlf_line_breaks_are_kept_and_columns_do_not_count_them():
    source = "a = 1\r\nb = old\r\nc = 3\r\n"
    result = apply_edits(source, [edit(2, 4, 2, 7, "new"), edit(3, 0, 3, 1, "C")])
    assert result == "a = 1\r\nb = new\r\nC = 3\r\n"


def test_lone_carriage_returns_break_lines_as_libcst_counts_them():
    source = "a = 1\rb = old\r"
    assert apply_edits(source, [edit(2, 4, 2, 7, "new")]) == "a = 1\rb = new\r"


def test_form_feed_and_unicode_line_separator_do_not_break_lines():
    # str.splitlines() would split here; Python and LibCST do not.
    source = 'x = "a\u2028b" + old\n'
    col = source.index("old")
    assert apply_edits(source, [edit(1, col, 1, col + 3, "new")]) == 'x = "a\u2028b" + new\n'
    source = "\x0cx = old\n"
    assert apply_edits(source, [edit(1, 5, 1, 8, "new")]) == "\x0cx = new\n"


def test_a_leading_byte_order_mark_is_not_a_column():
    # LibCST reports line 1 columns as if the BOM were absent.
    source = "\ufeffx = old\n"
    assert apply_edits(source, [edit(1, 4, 1, 7, "new")]) == "\ufeffx = new\n"


def test_positions_from_libcst_round_trip_through_apply_edits():
    from libcst.metadata import MetadataWrapper, PositionProvider

    source = 'a = "ü"\r\nif a:\r\n    b = "日本" + target  # 😀\r\nc = 1\r\n'
    wrapper = MetadataWrapper(cst.parse_module(source))
    positions = wrapper.resolve(PositionProvider)
    found = []

    class Finder(cst.CSTVisitor):
        def visit_Name(self, node: cst.Name) -> None:
            if node.value == "target":
                rng = positions[node]
                found.append(
                    Edit(
                        Position(rng.start.line, rng.start.column),
                        Position(rng.end.line, rng.end.column),
                        "replaced",
                    )
                )

    wrapper.visit(Finder())
    assert apply_edits(source, found) == source.replace("target", "replaced")


def test_overlapping_edits_raise():
    source = "abcdef\n"
    with pytest.raises(OverlappingEditsError):
        apply_edits(source, [edit(1, 0, 1, 3, "X"), edit(1, 2, 1, 4, "Y")])
    # An insertion inside a replaced range.
    with pytest.raises(OverlappingEditsError):
        apply_edits(source, [edit(1, 0, 1, 3, "X"), edit(1, 1, 1, 1, "Y")])
    # Two insertions at one point: the order would decide the result.
    with pytest.raises(OverlappingEditsError):
        apply_edits(source, [edit(1, 2, 1, 2, "X"), edit(1, 2, 1, 2, "Y")])


def test_adjacent_edits_are_not_overlapping():
    assert apply_edits("abcd\n", [edit(1, 0, 1, 2, "X"), edit(1, 2, 1, 4, "Y")]) == "XY\n"


@pytest.mark.parametrize(
    "bad",
    [
        edit(0, 0, 1, 0, ""),  # line 0 does not exist
        edit(5, 0, 5, 0, "x"),  # past the end
        edit(1, 0, 1, 4, ""),  # column past the line's text (the newline is not a column)
        edit(1, 2, 1, 1, ""),  # end before start
        edit(1, -1, 1, 1, ""),
    ],
)
def test_edits_outside_the_source_raise(bad):
    with pytest.raises(InvalidEditError):
        apply_edits("abc\nd\n", [bad])


# --- test rules for the fix loop ----------------------------------------------------------


class _TestRule(Rule):
    # LibCST's batched visit reads every attribute of a visitor (inspect.getmembers), which
    # would compute the real rules' shared analysis facts; these rules need none.
    facts = None


class _NameRule(_TestRule):
    """Replaces one name with another (a one-edit fix)."""

    old: str
    new: str

    def visit_Name(self, node: cst.Name) -> None:
        if node.value != self.old:
            return
        start, end = self.context.position_of(node)
        self.report(
            node,
            fix=Fix(f"Use `{self.new}`", (Edit(start, end, self.new),), self.fix_applicability),
        )


class RenameSafe(_NameRule):
    code, name, message = "TS001", "rename-safe", "old name"
    fix_applicability = Applicability.SAFE
    trigger_tokens = ("bad_name",)
    old, new = "bad_name", "good_name"


class RenameUnsafe(_NameRule):
    code, name, message = "TS002", "rename-unsafe", "risky name"
    fix_applicability = Applicability.UNSAFE
    trigger_tokens = ("risky",)
    old, new = "risky", "careful"


class RenameDisplayOnly(_NameRule):
    code, name, message = "TS003", "rename-display", "shown name"
    fix_applicability = Applicability.DISPLAY_ONLY
    trigger_tokens = ("shown",)
    old, new = "shown", "hidden"


class BreaksSyntax(_NameRule):
    code, name, message = "TS004", "breaks-syntax", "a fix with a bug"
    fix_applicability = Applicability.SAFE
    trigger_tokens = ("breakme",)
    old, new = "breakme", "breakme("


class Unwrap(_TestRule):
    """`unwrap(x)` -> `x`: nested calls give overlapping fixes."""

    code, name, message = "TS005", "unwrap", "needless unwrap"
    fix_applicability = Applicability.SAFE
    trigger_tokens = ("unwrap",)

    def visit_Call(self, node: cst.Call) -> None:
        if not (isinstance(node.func, cst.Name) and node.func.value == "unwrap"):
            return
        start, end = self.context.position_of(node)
        inner = self.context.module.code_for_node(node.args[0].value)
        self.report(node, fix=Fix("Unwrap", (Edit(start, end, inner),), Applicability.SAFE))


class NeedsImport(_TestRule):
    """`tensor_zeros` -> `torch.zeros`, adding `import torch` at the top: two findings in
    one file share the identical import edit."""

    code, name, message = "TS006", "needs-import", "use torch.zeros"
    fix_applicability = Applicability.SAFE
    trigger_tokens = ("tensor_zeros",)

    def visit_Name(self, node: cst.Name) -> None:
        if node.value != "tensor_zeros":
            return
        start, end = self.context.position_of(node)
        add_import = Edit(Position(1, 0), Position(1, 0), "import torch\n")
        self.report(
            node,
            fix=Fix(
                "Use torch.zeros",
                (Edit(start, end, "torch.zeros"), add_import),
                Applicability.SAFE,
            ),
        )


class Ping(_NameRule):
    code, name, message = "TS007", "ping", "ping"
    fix_applicability = Applicability.SAFE
    trigger_tokens = ("ping",)
    old, new = "ping", "pong"


class Pong(_NameRule):
    code, name, message = "TS008", "pong", "pong"
    fix_applicability = Applicability.SAFE
    trigger_tokens = ("pong",)
    old, new = "pong", "ping"


@pytest.fixture
def rules(install_rules):
    def install(*rule_classes):
        install_rules(rule_classes)

    return install


def codes(diagnostics) -> list[str]:
    return [d.code for d in diagnostics]


# --- fix_source -----------------------------------------------------------------------


def test_safe_fix_applies_and_nothing_remains(rules):
    rules(RenameSafe)
    outcome = fix_source("x = bad_name + bad_name\n", "t.py", TEST_CONFIG, unsafe=False)
    assert outcome.source == "x = good_name + good_name\n"
    assert codes(outcome.fixed) == ["TS001", "TS001"]
    assert outcome.remaining == []
    assert outcome.converged


def test_unsafe_fix_applies_only_when_asked(rules):
    rules(RenameSafe, RenameUnsafe)
    source = "y = risky(bad_name)\n"
    safe_only = fix_source(source, "t.py", TEST_CONFIG, unsafe=False)
    assert safe_only.source == "y = risky(good_name)\n"
    assert codes(safe_only.remaining) == ["TS002"]
    both = fix_source(source, "t.py", TEST_CONFIG, unsafe=True)
    assert both.source == "y = careful(good_name)\n"
    assert both.remaining == []


def test_display_only_fix_is_never_applied(rules):
    rules(RenameDisplayOnly)
    outcome = fix_source("print(shown)\n", "t.py", TEST_CONFIG, unsafe=True)
    assert outcome.source == "print(shown)\n"
    assert outcome.fixed == []
    assert codes(outcome.remaining) == ["TS003"]


def test_overlapping_fixes_are_applied_over_several_passes(rules):
    rules(Unwrap)
    outcome = fix_source("v = unwrap(unwrap(unwrap(x)))\n", "t.py", TEST_CONFIG, unsafe=False)
    assert outcome.source == "v = x\n"
    assert codes(outcome.fixed) == ["TS005"] * 3
    assert outcome.remaining == []
    assert outcome.converged


def test_a_fix_that_breaks_the_parse_is_dropped_and_the_others_kept(rules):
    rules(RenameSafe, BreaksSyntax)
    source = "a = bad_name\nb = breakme\nc = bad_name\n"
    outcome = fix_source(source, "t.py", TEST_CONFIG, unsafe=False)
    assert outcome.source == "a = good_name\nb = breakme\nc = good_name\n"
    cst.parse_module(outcome.source)
    assert codes(outcome.rejected) == ["TS004"]
    assert codes(outcome.remaining) == ["TS004"]


def test_identical_edits_from_two_fixes_are_applied_once(rules):
    rules(NeedsImport)
    source = "a = tensor_zeros(2)\nb = tensor_zeros(3)\n"
    outcome = fix_source(source, "t.py", TEST_CONFIG, unsafe=False)
    assert outcome.source == "import torch\na = torch.zeros(2)\nb = torch.zeros(3)\n"
    assert codes(outcome.fixed) == ["TS006", "TS006"]


def test_fixes_that_undo_each_other_stop_and_report_no_convergence(rules):
    rules(Ping, Pong)
    outcome = fix_source("ping\n", "t.py", TEST_CONFIG, unsafe=False)
    assert not outcome.converged
    assert len(outcome.fixed) <= MAX_PASSES
    assert outcome.source in {"ping\n", "pong\n"}


def test_crlf_and_non_ascii_source_is_fixed_in_place(rules):
    rules(RenameSafe)
    source = 'greeting = "grüß 😀"\r\nx = [bad_name, "é"]  # ✓\r\ny = bad_name\r\n'
    outcome = fix_source(source, "t.py", TEST_CONFIG, unsafe=False)
    assert outcome.source == source.replace("bad_name", "good_name")


def test_noqa_suppressed_findings_are_not_fixed(rules):
    rules(RenameSafe)
    source = "a = bad_name  # noqa: TS001\nb = bad_name\n"
    outcome = fix_source(source, "t.py", TEST_CONFIG, unsafe=False)
    assert outcome.source == "a = bad_name  # noqa: TS001\nb = good_name\n"


def test_source_without_findings_comes_back_unchanged(rules):
    rules(RenameSafe)
    source = "x = 1\r\n"
    outcome = fix_source(source, "t.py", TEST_CONFIG, unsafe=True)
    assert outcome.source is source
    assert outcome.fixed == outcome.remaining == []


def test_unparsable_input_raises_source_error(rules):
    rules(RenameSafe)
    with pytest.raises(gradlint.engine.SourceError):
        fix_source("def f(:\n    bad_name\n", "t.py", TEST_CONFIG, unsafe=False)


# --- property: positions computed independently agree with apply_edits -------------------

PIECES = ["a", "bc", " ", "\t", "é", "😀", "日", "\n", "\r\n", "\r", "\x0c", "\u2028"]


def _position_of(text: str, offset: int) -> Position:
    """A deliberately naive scan: count line breaks (CRLF as one) before offset."""
    line, line_start, i = 1, 0, 0
    while i < offset:
        if text.startswith("\r\n", i):
            i += 2
            line, line_start = line + 1, i
        elif text[i] in "\r\n":
            i += 1
            line, line_start = line + 1, i
        else:
            i += 1
    return Position(line, offset - line_start)


@settings(max_examples=100, deadline=None)
@given(
    pieces=st.lists(st.sampled_from(PIECES), max_size=30),
    cuts=st.lists(st.integers(min_value=0, max_value=10_000), max_size=8),
    contents=st.lists(st.sampled_from(["", "X", "new\n", "é😀"]), min_size=4, max_size=4),
)
def test_apply_edits_matches_splicing_at_offsets(pieces, cuts, contents):
    text = "".join(pieces)
    # Valid offsets: piece boundaries (never between the \r and \n of one CRLF).
    boundaries = [0]
    for piece in pieces:
        boundaries.append(boundaries[-1] + len(piece))
    boundaries = [
        b for b in boundaries if not (text[b - 1 : b] == "\r" and text[b : b + 1] == "\n")
    ]
    points = sorted({boundaries[c % len(boundaries)] for c in cuts})
    spans = [(points[i], points[i + 1]) for i in range(0, len(points) - 1, 2)]
    edits = [
        Edit(_position_of(text, s), _position_of(text, e), contents[i % len(contents)])
        for i, (s, e) in enumerate(spans)
    ]
    expected, cursor = [], 0
    for i, (s, e) in enumerate(spans):
        expected += [text[cursor:s], contents[i % len(contents)]]
        cursor = e
    expected.append(text[cursor:])
    assert apply_edits(text, edits) == "".join(expected)
