"""Messages state the consequence that will happen, and it is the one the fixture's
docstring states (and runtime_check proves under torch)."""

from __future__ import annotations

from pathlib import Path

import pytest

from gradlint.engine import lint_file, lint_source

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


def outcome(path: Path) -> str:
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith(("raises:", "grows:", "silent:")):
            return line
    raise AssertionError(f"{path} states no outcome")


@pytest.mark.parametrize(
    "path", sorted(p for p in (FIXTURES / "GL001").glob("bad_*.py") if ".fixed" not in p.name)
)
def test_gl001_says_what_the_fixture_does(path):
    stated = outcome(path)
    messages = [d.message for d in lint_file(path).diagnostics if d.code == "GL001"]
    assert messages
    for message in messages:
        assert " or " not in message.split(";")[1], message  # no either/or left
        if stated.startswith("raises:"):
            # The quoted error is the start of torch's message, which the fixture quotes.
            quoted = message.split('raises "')[1].split('"')[0]
            assert quoted in stated, (quoted, stated)
        else:
            assert stated.startswith("grows:")
            assert "nothing raises, but the graph grows" in message


def _gl001(loop_body: str) -> str:
    source = (
        "import torch\n"
        "W = torch.nn.Parameter(torch.randn(3, 3))\n"
        "h = torch.zeros(1, 3)\n"
        "for _ in range(3):\n"
        "    h = h @ W\n" + loop_body
    )
    (finding,) = [d for d in lint_source(source, "t.py") if d.code == "GL001"]
    return finding.message


def test_gl001_a_flag_it_cannot_read_keeps_both_outcomes():
    message = _gl001("    h.sum().backward(retain_graph=keep)\n")
    assert "the next backward raises, or, where it retains the graph, the graph grows" in message


def test_gl001_a_manual_update_in_place_makes_the_retained_graph_raise():
    message = _gl001(
        "    h.sum().backward(retain_graph=True)\n"
        "    with torch.no_grad():\n"
        "        W -= 0.1 * W.grad\n"
        "    W.grad = None\n"
    )
    assert 'raises "modified by an inplace operation"' in message


def test_gl001_autograd_backward_reads_its_positional_retain_graph():
    message = _gl001("    torch.autograd.backward([h.sum()], None, True)\n")
    assert "the graph grows" in message
    message = _gl001("    torch.autograd.backward([h.sum()], None, False)\n")
    assert "Trying to backward through the graph a second time" in message
