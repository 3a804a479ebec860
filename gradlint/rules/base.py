"""What every rule is: metadata, its documentation, and visitor methods over LibCST nodes."""

from __future__ import annotations

import string
from typing import TYPE_CHECKING, ClassVar

import libcst as cst

from gradlint.about import rule_url
from gradlint.diagnostics import Applicability, Edit, Fix

if TYPE_CHECKING:
    from gradlint.context import FileContext

_VISIT_METHODS: dict[type, tuple[str, ...]] = {}


class Rule:
    """Base class. The subclass docstring is the user documentation, in ruff's sections:
    What it does / Why is this bad? / Example / Use instead / Fix safety / References.

    The engine calls `visit_<NodeType>(node)` for every node of that LibCST type, in
    source order, with the whole file's facts already available, then `leave_Module`.
    Rules that need to see the whole file collect candidates and decide there."""

    code: ClassVar[str]
    name: ClassVar[str]
    message: ClassVar[str]
    fix_title: ClassVar[str | None] = None
    fix_applicability: ClassVar[Applicability] = Applicability.UNSAFE
    # Substrings at least one of which a file must contain for the rule to possibly match;
    # files with none are not even parsed (see engine.might_match).
    trigger_tokens: ClassVar[tuple[str, ...]] = ()

    def __init__(self, context: FileContext) -> None:
        self.context = context

    def visit_methods(self):
        """(node type name, bound method) for each `visit_<NodeType>` this rule has."""
        methods = _VISIT_METHODS.get(type(self))
        if methods is None:
            methods = tuple(
                name
                for name in dir(type(self))
                if name.startswith("visit_") and name != "visit_methods"
            )
            _VISIT_METHODS[type(self)] = methods
        return [(name[len("visit_") :], getattr(self, name)) for name in methods]

    @property
    def facts(self):
        return self.context.facts

    def report(
        self,
        node: cst.CSTNode,
        message: str | None = None,
        fix: Fix | None = None,
    ) -> None:
        """Report `node`. A rule whose message has placeholders passes the filled text
        from `message_for`; the class message is never shipped with `{name}` in it."""
        text = message if message is not None else self.message
        if message is None and self.placeholders():
            raise TypeError(f"{self.code}: report() needs message_for(...) for {self.message!r}")
        self.context.report(self, node, text, fix)

    @classmethod
    def placeholders(cls) -> frozenset[str]:
        return frozenset(field for _, field, _, _ in string.Formatter().parse(cls.message) if field)

    def message_for(self, **fields: str) -> str:
        """The message with every placeholder filled: a missing or unknown field is a
        TypeError at the first report, not a `{names}` in a user's terminal."""
        expected = self.placeholders()
        if set(fields) != expected:
            raise TypeError(
                f"{self.code}: message fields {sorted(fields)} do not match {sorted(expected)}"
            )
        return self.message.format(**fields)

    def fix(self, title: str, edits: tuple[Edit, ...]) -> Fix:
        """A fix of this rule, with the safety its class declares."""
        return Fix(title, edits, self.fix_applicability)

    @classmethod
    def summary(cls) -> str:
        """The first paragraph of the 'What it does' section, for listings and hover."""
        doc = cls.documentation()
        lines = doc.splitlines()
        out: list[str] = []
        seen_heading = False
        for line in lines:
            if line.startswith("## What it does"):
                seen_heading = True
                continue
            if seen_heading:
                if not line.strip():
                    if out:
                        break
                    continue
                out.append(line.strip())
        return " ".join(out) or cls.message

    @classmethod
    def documentation(cls) -> str:
        import inspect

        return inspect.cleandoc(cls.__doc__ or "")

    @classmethod
    def url(cls) -> str:
        return rule_url(cls.code)
