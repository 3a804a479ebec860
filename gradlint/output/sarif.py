"""SARIF 2.1.0 for GitHub code scanning (`github/codeql-action/upload-sarif`).

Every rule is listed in `tool.driver.rules` (so the Security tab can show a rule's help even
before it fires), findings point at files by URIs relative to `%SRCROOT%` (the checkout,
i.e. the directory gradlint ran in unless `root` says otherwise), columns are counted in code
points (`columnKind`), and files that could not be linted are tool-execution notifications,
not results: they are not findings about the code.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import TextIO

from gradlint.about import home
from gradlint.codes import groups_of
from gradlint.diagnostics import Diagnostic, Edit, FileError, Fix, Impact, Position, Severity
from gradlint.output.common import (
    ReportOptions,
    artifact_location,
    file_region,
    printable,
    sorted_diagnostics,
    sorted_errors,
)
from gradlint.results import FileResult

SCHEMA_URI = "https://json.schemastore.org/sarif-2.1.0.json"
# GitHub truncates longer descriptions.
MAX_DESCRIPTION = 1024


def region(start: Position, end: Position) -> dict:
    return {
        "startLine": start.line,
        "startColumn": start.column + 1,
        "endLine": end.line,
        "endColumn": end.column + 1,
    }


def _first_sentence(text: str) -> str:
    head, dot, _ = text.partition(". ")
    return (head + "." if dot else text)[:MAX_DESCRIPTION]


def rule_descriptor(rule) -> dict:
    documentation = rule.documentation()
    summary = rule.summary()
    return {
        "id": rule.code,
        "name": rule.name,
        "shortDescription": {"text": _first_sentence(summary)},
        "fullDescription": {"text": summary[:MAX_DESCRIPTION]},
        "help": {"text": documentation, "markdown": documentation},
        "helpUri": rule.url(),
        "defaultConfiguration": {"level": LEVELS[rule.severity]},
        "properties": {"tags": ["pytorch", "autograd", *(g.value for g in groups_of(rule.code))]},
    }


def unknown_rule_descriptor(diagnostic: Diagnostic) -> dict:
    """A code outside ALL_RULES (a plugin, a test rule): still listed, so ruleIndex holds."""
    descriptor: dict = {
        "id": diagnostic.code,
        "name": diagnostic.name,
        "shortDescription": {"text": diagnostic.message[:MAX_DESCRIPTION]},
        "defaultConfiguration": {"level": "error"},
    }
    if diagnostic.url:
        descriptor["helpUri"] = diagnostic.url
    return descriptor


def replacement(edit: Edit) -> dict:
    return {
        "deletedRegion": region(edit.start, edit.end),
        "insertedContent": {"text": edit.content},
    }


def fix_object(fix: Fix, location: dict) -> dict:
    return {
        "description": {"text": fix.title},
        "artifactChanges": [
            {
                "artifactLocation": location,
                "replacements": [
                    replacement(e) for e in sorted(fix.edits, key=lambda e: (e.start, e.end))
                ],
            }
        ],
    }


# SARIF has no "hint" level; "note" is its quietest.
LEVELS = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.HINT: "note"}
_SEVERITY_RANK = {Severity.ERROR: 60.0, Severity.WARNING: 30.0, Severity.HINT: 0.0}
_IMPACT_RANK = {Impact.PER_BATCH: 40.0, Impact.PER_EPOCH: 30.0, Impact.ONCE: 10.0, Impact.TEST: 0.0}


def rank(diagnostic: Diagnostic) -> float:
    """SARIF's `rank` (0 to 100, higher matters more): the level, then how often the
    flagged code runs, so a viewer that sorts by rank puts what matters first."""
    often = _IMPACT_RANK[diagnostic.impact] if diagnostic.impact is not None else 20.0
    return _SEVERITY_RANK[diagnostic.severity] + often


def result_object(diagnostic: Diagnostic, rule_index: int, root: str | None) -> dict:
    location = artifact_location(diagnostic.path, root)
    properties: dict = {"confidence": diagnostic.confidence.value}
    if diagnostic.group is not None:
        properties["group"] = diagnostic.group.value
    if diagnostic.impact is not None:
        properties["impact"] = diagnostic.impact.value
    result: dict = {
        "ruleId": diagnostic.code,
        "ruleIndex": rule_index,
        "level": LEVELS[diagnostic.severity],
        "rank": rank(diagnostic),
        "message": {"text": diagnostic.message},
        "properties": properties,
        "locations": [
            {
                "physicalLocation": {
                    "artifactLocation": location,
                    "region": region(*file_region(diagnostic)),
                }
            }
        ],
    }
    if diagnostic.related:
        # The other places that explain the finding; code scanning links each one.
        result["relatedLocations"] = [
            {
                "id": number,
                "physicalLocation": {
                    "artifactLocation": artifact_location(related.path, root),
                    "region": region(*file_region(related)),
                },
                "message": {"text": related.message},
            }
            for number, related in enumerate(diagnostic.related, 1)
        ]
    if diagnostic.cell is not None:
        # The region is in the raw .ipynb JSON; say where in the notebook, too.
        result["properties"].update(
            {"cell": diagnostic.cell.number, "cellRow": diagnostic.start.line}
        )
    # A fix's replacements would be Python written over the JSON: notebooks get none.
    if diagnostic.fix is not None and diagnostic.fix.edits and diagnostic.cell is None:
        result["fixes"] = [fix_object(diagnostic.fix, location)]
    return result


def notification(error: FileError, root: str | None) -> dict:
    physical: dict = {"artifactLocation": artifact_location(error.path, root)}
    if error.cell:
        if error.file_line:
            physical["region"] = {"startLine": error.file_line}
    elif error.line:
        physical["region"] = {"startLine": error.line, "startColumn": error.column + 1}
    return {
        "level": "error",
        "message": {
            "text": printable(str(error) if error.cell else f"{error.path}: {error.message}")
        },
        "locations": [{"physicalLocation": physical}],
    }


def sarif_log(results: Sequence[FileResult], root: str | None = None) -> dict:
    # Here, not at the top: the other formats print a cached result without loading the
    # rules (and LibCST with them).
    import gradlint.engine

    diagnostics = sorted_diagnostics(results)
    rules = [rule_descriptor(rule) for rule in gradlint.engine.ALL_RULES]
    index = {descriptor["id"]: i for i, descriptor in enumerate(rules)}
    for diagnostic in diagnostics:
        if diagnostic.code not in index:
            index[diagnostic.code] = len(rules)
            rules.append(unknown_rule_descriptor(diagnostic))
    base = Path(root or os.getcwd()).resolve()
    run = {
        "tool": {
            "driver": {
                "name": "gradlint",
                "informationUri": home(),
                "version": gradlint.__version__,
                "semanticVersion": gradlint.__version__,
                "rules": rules,
            }
        },
        "columnKind": "unicodeCodePoints",
        "originalUriBaseIds": {"%SRCROOT%": {"uri": base.as_uri().rstrip("/") + "/"}},
        "invocations": [
            {
                "executionSuccessful": True,
                "toolExecutionNotifications": [
                    notification(e, root) for e in sorted_errors(results)
                ],
            }
        ],
        "results": [result_object(d, index[d.code], root) for d in diagnostics],
    }
    return {"$schema": SCHEMA_URI, "version": "2.1.0", "runs": [run]}


def write(results: Sequence[FileResult], stream: TextIO, options: ReportOptions) -> None:
    json.dump(sarif_log(results, options.root), stream, indent=2, ensure_ascii=True)
    stream.write("\n")
