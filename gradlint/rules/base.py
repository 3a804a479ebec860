"""What every rule is: metadata, its documentation, and visitor methods over LibCST nodes."""

from __future__ import annotations

import functools
import re
import string
from collections.abc import Iterable
from typing import TYPE_CHECKING, ClassVar

import libcst as cst

from gradlint.about import rule_url
from gradlint.codes import GROUP_WORDS, default_severity, group_of, groups_of, is_preview
from gradlint.diagnostics import (
    Applicability,
    Confidence,
    Edit,
    Fix,
    Group,
    Impact,
    Related,
    Severity,
)

if TYPE_CHECKING:
    from gradlint.analysis.impact import CostSource
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
    # Both read off the codes table (gradlint.codes) when the class is made: what the
    # rule's usual finding does, and the level that gives it before its impact is known.
    # Users override the level per rule or group (`[tool.gradlint] severity`).
    group: ClassVar[Group | None] = None
    severity: ClassVar[Severity] = Severity.ERROR
    # When the rule reports with Confidence.LOW, in the user's terms (shown in the docs and
    # by `gradlint rule`); empty: every finding is high confidence.
    low_confidence: ClassVar[str] = ""
    # Substrings at least one of which a file must contain for the rule to possibly match;
    # files with none are not even parsed (see engine.might_match).
    trigger_tokens: ClassVar[tuple[str, ...]] = ()
    # A second necessary condition, when one exists: the file must also contain one of
    # these (empty: no second condition).
    also_needs_tokens: ClassVar[tuple[str, ...]] = ()
    # True: a file without the trigger tokens may still match when a project module it
    # imports has them, because a helper there does that part of the work (GL012's
    # `to_np(t)` in `utils.py`); such a file is parsed when that is so.
    triggers_may_be_imported: ClassVar[bool] = False
    # True: a file with the trigger tokens but none of also_needs_tokens may still match
    # when a project module it imports has them, because the model is a class defined
    # there (`from models import VAE`, then `VAE()(x)`); such a file is parsed then.
    models_may_be_imported: ClassVar[bool] = False
    # True: a file with the trigger tokens but none of also_needs_tokens may still match
    # when one of its functions calls a parameter (`def show(model, x): model(x)`), or
    # keeps it to call (`self.policy = policy`, then `self.policy(obs)`), because the
    # model is handed in by callers in the project's other files, and the helper's file
    # need not name torch.nn at all; such a file is parsed then.
    models_may_be_handed_in: ClassVar[bool] = False

    def __init_subclass__(cls, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        code = cls.__dict__.get("code")
        if isinstance(code, str):
            # a class that states its own (a plugin's, a test's) keeps it
            if "group" not in cls.__dict__:
                cls.group = group_of(code)
            if "severity" not in cls.__dict__:
                cls.severity = default_severity(cls.group)

    def __init__(self, context: FileContext) -> None:
        self.context = context

    @classmethod
    def may_match(cls, source: str) -> bool:
        """The cheap text test: False when the rule cannot match this file."""
        return cls.has_trigger_tokens(source) and (
            cls.needs_tokens_only(source)
            or (cls.models_may_be_handed_in and calls_a_parameter(source))
        )

    @classmethod
    def has_trigger_tokens(cls, source: str) -> bool:
        return any(token in source for token in cls.trigger_tokens)

    @classmethod
    def needs_tokens_only(cls, source: str) -> bool:
        """The second condition alone: what a file must have even when its trigger tokens
        may come from an imported helper."""
        return not cls.also_needs_tokens or any(t in source for t in cls.also_needs_tokens)

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
        *,
        related: Iterable[tuple[cst.CSTNode, str] | Related] = (),
        confidence: Confidence = Confidence.HIGH,
        group: Group | None = None,
        latent: bool = False,
        cost: CostSource | None = None,
    ) -> None:
        """Report `node`. A rule whose message has placeholders passes the filled text
        from `message_for`; the class message is never shipped with `{name}` in it.

        `related`: the other places that explain the finding, each a (node of this
        file, short label) pair, or a `Related` for a place in another file.
        `confidence`: LOW when the finding rests on an assumption the analysis could not
        check; the rule's documentation says which.
        `group`: what this finding does, when the shape makes it differ from the rule's
        usual group (one of those the codes table lists for the rule).
        `latent`: the pitfall is in the code but cannot bite as it is set up now (a loop
        that runs once): at most a warning.
        `cost`: where the cost is paid, when not where the reported node runs (only some
        calls of it pay, or a helper's loop does): analysis.impact.CostSource."""
        text = message if message is not None else self.message
        if message is None and self.placeholders():
            raise TypeError(f"{self.code}: report() needs message_for(...) for {self.message!r}")
        if group is not None and group not in groups_of(self.code):
            raise TypeError(f"{self.code}: group {group.value!r} is not in the codes table")
        self.context.report(
            self,
            node,
            text,
            fix,
            related=related,
            confidence=confidence,
            group=group,
            latent=latent,
            cost=cost,
        )

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
    def judgement(cls) -> str:
        """One line on the rule's consequence group, severity and confidence, for its
        documentation."""
        groups = groups_of(cls.code)
        sure = cls.low_confidence or "always high: no finding rests on an unchecked assumption."
        if not groups:
            return f"**Severity:** {cls.severity.value}. **Confidence:** {sure}"
        named = " or ".join(f"`{g.value}` ({GROUP_WORDS[g]})" for g in groups)

        def level(group: Group) -> str:
            text = default_severity(group).value
            if group is Group.WASTE:
                text += f" ({default_severity(group, Impact.ONCE).value} off the hot path: once, per epoch, in tests, in one pass run once, on one sample)"
            return text

        if len(groups) == 1:
            levels = level(groups[0])
        else:
            levels = ", ".join(f"{level(g)} for `{g.value}`" for g in groups)
        return f"**Group:** {named}. **Severity:** {levels}. **Confidence:** {sure}"

    @classmethod
    def measured(cls) -> str:
        """What the rule's fixtures were measured to cost, per group (docs/consequences.md);
        "" for a rule with no measured fixture."""
        from gradlint.rules.consequences import describe

        lines = describe(cls.code)
        if not lines:
            return ""
        return (
            "**Measured** ([docs/consequences.md](../consequences.md)): "
            + "; ".join(line.rstrip(".") for line in lines)
            + "."
        )

    @classmethod
    def channel(cls) -> str:
        """One line saying whether the rule is stable or in preview, for its docs."""
        if is_preview(cls.code):
            return (
                f"**Status:** preview: runs only when selected by its exact code "
                f"(`--select {cls.code}`) or with `--preview` / `preview = true`, until its "
                "precision on real code is measured."
            )
        return "**Status:** stable: runs whenever its code is selected (`GL` selects it)."

    @classmethod
    def url(cls) -> str:
        return rule_url(cls.code)


_DEFINITION = re.compile(r"\bdef\s+\w+\s*\(([^)]*)\)")
_PARAMETER = re.compile(r"^\s*\**\s*([A-Za-z_]\w*)")
# a call as code is written (`model(x)`, `self.policy(s)`): not a `def` of the name, nor
# a docstring's `seed (int)`, each of which costs a parse of a file that calls nothing
_CALLED = re.compile(r"(?<![\w.])(?<!def )(?:self\.)?([A-Za-z_]\w*)\(")
# an element called (`models["G"](z)`), looked for only in a text that has `](`
_ELEMENT_CALLED = re.compile(r"(?<![\w.])([A-Za-z_]\w*)\[[^\]\n]*\]\(")


@functools.lru_cache(maxsize=4)  # asked twice of a file: parse it? run the rule on it?
def calls_a_parameter(source: str) -> bool:
    """The cheap text test of models_may_be_handed_in: does a function of the file call
    one of its parameters, or an attribute named after one (`def show(model, x):` and
    `model(` in the file; `def __init__(self, policy):` and `self.policy(`)? Loose on
    purpose (a default holding a call cuts the parameter list short, a name called
    elsewhere counts): it only decides whether the file is parsed."""
    parameters = {
        found.group(1)
        for definition in _DEFINITION.finditer(source)
        for part in definition.group(1).split(",")
        if (found := _PARAMETER.match(part)) is not None
    }
    parameters.difference_update(("self", "cls"))
    if not parameters:
        return False
    if not parameters.isdisjoint(_CALLED.findall(source)):
        return True
    return "](" in source and not parameters.isdisjoint(_ELEMENT_CALLED.findall(source))
