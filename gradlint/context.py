"""Everything rules share about one file: its text, its tree, the analysis facts and
positions, each computed lazily and at most once."""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping
from functools import cached_property
from typing import TYPE_CHECKING, ClassVar, Protocol, cast

import libcst as cst
from libcst.metadata import CodeRange, PositionProvider

from gradlint.codes import default_severity
from gradlint.deep import run_deep
from gradlint.diagnostics import (
    Confidence,
    Diagnostic,
    FileError,
    Fix,
    Group,
    Impact,
    Position,
    Related,
    Severity,
)
from gradlint.edits import split_lines
from gradlint.positions import StatementPositions, statement_units
from gradlint.results import SourceError

if TYPE_CHECKING:
    from gradlint.analysis.facts import FileFacts
    from gradlint.analysis.impact import CostSource, ImpactAnalysis
    from gradlint.analysis.index import FileIndex
    from gradlint.analysis.project import ProjectIndex


def _code_ranges(module: cst.Module) -> Mapping[cst.CSTNode, CodeRange]:
    """Every node's range, as `MetadataWrapper(module).resolve(PositionProvider)` gives
    it: the provider's own code generation, run directly. The wrapper also runs a batch
    of its batchable providers, which is empty here, as a visit of the whole tree: about
    as costly again as the generation. tests/test_positions.py compares the two."""
    provider = PositionProvider()
    provider._gen_impl(module)
    return cast(Mapping[cst.CSTNode, CodeRange], provider._computed)


def _resolve_positions(path: str, module: cst.Module) -> Mapping[cst.CSTNode, CodeRange]:
    try:
        return run_deep(_code_ranges, module)
    except (RecursionError, KeyError):
        # LibCST turns a RecursionError in its code generation into a KeyError.
        raise SourceError(FileError(path, "cannot analyse: nesting too deep")) from None


class ReportingRule(Protocol):
    """What the context needs of a rule to report for it (rules/base.Rule has it)."""

    code: ClassVar[str]
    name: ClassVar[str]
    group: ClassVar[Group | None]
    severity: ClassVar[Severity]

    @classmethod
    def url(cls) -> str: ...


class FileContext:
    """Everything rules share about one file. Facts and positions are computed lazily and
    at most once: positions only when something is reported."""

    def __init__(self, path: str, source: str, module: cst.Module) -> None:
        self.path = path
        self.source = source
        self.module = module
        self.diagnostics: list[Diagnostic] = []
        self._reported: set[tuple[str, int]] = set()
        # Fixes that wrap a statement in `with torch.no_grad():` (fix_builders records
        # them; the engine merges adjacent ones into one block).
        self.no_grad_wraps: list = []

    @cached_property
    def lines(self) -> tuple[str, ...]:
        """The text's lines with their endings (edits.split_lines), split once for all
        the file's fixes rather than once by each."""
        return tuple(split_lines(self.source))

    @cached_property
    def index(self) -> FileIndex:
        from gradlint.analysis.index import FileIndex

        return FileIndex(self.module, self.project)

    @cached_property
    def facts(self) -> FileFacts:
        from gradlint.analysis.facts import FileFacts

        return FileFacts(self.module, self.index, self.project)

    @cached_property
    def impact(self) -> ImpactAnalysis:
        from gradlint.analysis.impact import ImpactAnalysis

        facts = self.facts
        return ImpactAnalysis(
            self.index,
            self.path,
            facts.grad_mode.callees,
            facts.loops,
            self.project,
            bindings=facts.bindings,
            arguments=facts.caller_arguments,
        )

    @cached_property
    def project(self) -> ProjectIndex:
        from gradlint.analysis.project import ProjectIndex

        return ProjectIndex(self.path)

    @cached_property
    def positions(self) -> Mapping[cst.CSTNode, CodeRange]:
        """Every node's range, resolved for the whole file at once."""
        return _resolve_positions(self.path, self.module)

    @cached_property
    def _statement_positions(self) -> StatementPositions | None:
        units = statement_units(self.module, self.source)
        if units is None:
            return None
        # not a bound method: the context keeps these positions, and a cycle through it
        # would leave the file's whole tree to the cyclic collector
        return StatementPositions(
            self.module, units, functools.partial(_resolve_positions, self.path)
        )

    def _range_of(self, node: cst.CSTNode):
        """The node's range: from the statement that holds it alone (gradlint.positions)
        when there is one, else from the whole file's positions."""
        statements = None if "positions" in self.__dict__ else self._statement_positions
        if statements is not None:
            unit = statements.unit_of(node, self.index.parent.get)
            if unit is not None:
                found = statements.range_of(node, unit)
                if found is not None:
                    return found
        return self.positions[node]

    def position_of(self, node: cst.CSTNode) -> tuple[Position, Position]:
        rng = self._range_of(node)
        return (
            Position(rng.start.line, rng.start.column),
            Position(rng.end.line, rng.end.column),
        )

    def report(
        self,
        rule: ReportingRule,
        node: cst.CSTNode,
        message: str,
        fix: Fix | None,
        *,
        related: Iterable[tuple[cst.CSTNode, str] | Related] = (),
        confidence: Confidence = Confidence.HIGH,
        group: Group | None = None,
        latent: bool = False,
        cost: CostSource | None = None,
    ) -> None:
        key = (rule.code, id(node))
        if key in self._reported:
            return
        self._reported.add(key)
        start, end = self.position_of(node)
        places: list[Related] = []
        for item in related:
            if not isinstance(item, Related):
                other, label = item
                if other is node:
                    continue  # the finding's own place says it already
                item = Related(label, self.path, *self.position_of(other))
            if item not in places:
                places.append(item)
        group = group or rule.group
        impact = self.impact.of(node, cost)
        if group is None:
            severity = rule.severity
        else:
            # Only waste is scaled by the batch and the pass: a crash is a crash on one
            # sample, and in a test loop run once, too.
            waste = group is Group.WASTE
            severity = default_severity(
                group,
                impact,
                one_sample=waste and self.impact.on_one_sample(node),
                one_pass=waste
                and impact is Impact.PER_BATCH
                and self.impact.in_one_pass(node, cost),
                latent=latent,
            )
        self.diagnostics.append(
            Diagnostic(
                code=rule.code,
                name=rule.name,
                message=message,
                path=self.path,
                start=start,
                end=end,
                fix=fix,
                noqa_line=start.line,
                url=rule.url(),
                related=tuple(places),
                severity=severity,
                confidence=confidence,
                group=group,
                impact=impact,
            )
        )
