"""The two readings of state a module keeps across its calls agree: the one of the
linted file (LibCST, analysis.module_state) and the one the project summary makes of
another file's classes (ast, analysis.module_state_summary)."""

from __future__ import annotations

import ast
from pathlib import Path

import libcst as cst
import pytest

from gradlint.analysis.facts import FileFacts
from gradlint.analysis.index import forward_method
from gradlint.analysis.module_state_summary import carried_attributes_of_class

CASES = Path(__file__).resolve().parent / "cases"


@pytest.mark.parametrize(
    "name", ["gl001_state_kept_by_a_module.py", "gl001_state_kept_by_a_module_traps.py"]
)
def test_the_ast_summary_reads_each_class_as_the_file_analysis_does(name):
    source = (CASES / name).read_text(encoding="utf-8")
    facts = FileFacts(cst.parse_module(source))
    by_cst = {}
    for cls in facts.index.classes:
        forward = forward_method(cls)
        own = facts.module_state.carried_attributes(forward) if forward is not None else []
        by_cst[cls.name.value] = sorted(c.attribute.split(".", 1)[1] for c in own)
    by_ast = {
        node.name: sorted(attribute for attribute, _ in carried_attributes_of_class(node))
        for node in ast.parse(source).body
        if isinstance(node, ast.ClassDef)
    }
    assert by_ast == by_cst
    assert any(by_cst.values()) and not all(by_cst.values())
