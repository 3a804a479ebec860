"""Every rule's code and how a configuration selects it, known without importing a rule.

The rules need LibCST, and importing it is most of a run whose files all come from the
cache (0.3 s of 0.5 s on a 52-file tree). Validating a configuration and deciding which
codes run on a file need only this table, as ruff's `codes.rs` holds its codes apart from
the rules. The rule classes live in `gradlint.rules`, keyed by the same codes, in the
same order; tests/test_codes.py keeps the two in step.
"""

from __future__ import annotations

from dataclasses import dataclass

from gradlint.diagnostics import Group, Impact, Severity

CRASH, WRONG, LEAK, WASTE = Group.CRASH, Group.WRONG, Group.LEAK, Group.WASTE

# What each group means, in the words the reports and the docs use.
GROUP_WORDS = {
    CRASH: "raises at run time",
    WRONG: "trains silently wrong",
    LEAK: "memory grows with the run",
    WASTE: "a bounded cost per call",
}

# The names `--select`, `--ignore`, `per-file-ignores` and `severity` take besides codes.
GROUP_NAMES: tuple[str, ...] = tuple(group.value for group in Group)


@dataclass(frozen=True)
class RuleCode:
    code: str
    # What the rule's usual finding does when it runs (None: a meta rule, about comments).
    group: Group | None = None
    # Every group its findings can fall in, when the shape decides (GL001 with
    # `retain_graph=True` leaks instead of raising): each finding carries its own.
    other_groups: tuple[Group, ...] = ()
    # A rule in preview runs only when selected by its exact code or with `--preview` /
    # `preview = true`, until its precision on the real-code ledger is measured and
    # stated in its documentation; then it is made stable here.
    preview: bool = False
    # About the suppressions, not autograd (GL100 judges the noqa comments): only the
    # full code selects it, as RUF100 is not in ruff's defaults; `GL` and `ALL` do not.
    # The engine runs such a rule after the autograd rules, whose findings it judges.
    explicit_only: bool = False


REGISTERED: tuple[RuleCode, ...] = (
    # the second backward raises; with `retain_graph=True` and no step the graph grows
    RuleCode("GL001", CRASH, (LEAK,)),
    RuleCode("GL002", CRASH),
    RuleCode("GL003", WRONG),
    # a graph recorded for nothing; `.numpy()` on the forward's own output raises
    RuleCode("GL004", WASTE, (CRASH,)),
    RuleCode("GL005", WRONG),
    # every activation kept when nothing frees the graph; after a backward only its
    # nodes (a few KB per iteration, docs/consequences.md); numpy reading the kept
    # losses (`np.mean(losses)`) raises
    RuleCode("GL006", LEAK, (WASTE, CRASH)),
    RuleCode("GL007", WRONG),
    # `with torch.no_grad:` raises; a bare `torch.no_grad()` or `volatile=True` does
    # nothing, so what was meant to run without a graph records one: waste, as GL012's
    # (the fixtures measure nodes and saved bytes; none trains wrong unless a result is
    # then differentiated, which the real-code ledger never showed)
    RuleCode("GL008", CRASH, (WASTE,)),
    # GL009 and GL011: no finding on the 29-repository corpus, so their precision on
    # real code is not measured yet.
    # the backward raises; a loss rebuilt as a new leaf to silence it trains nothing
    RuleCode("GL009", CRASH, (WRONG,), preview=True),
    RuleCode("GL010", WRONG),
    RuleCode("GL011", CRASH, preview=True),
    # a graph recorded for nothing; `.numpy()` on the result raises
    RuleCode("GL012", WASTE, (CRASH, LEAK)),
    # a target from the network being trained changes the update (residual gradient);
    # one from a separate network that requires grad costs a backward through it
    RuleCode("GL013", WRONG, (WASTE,), preview=True),
    # only the last micro-batch of an accumulation window reaches the step; preview until
    # real code shows its precision (two findings on the census's development half)
    RuleCode("GL014", WRONG, preview=True),
    # a loop without backward that carries a graph: every step's activations stay alive,
    # growing with the data a loop walks; over a count (`range(n)`: a sampler, a greedy
    # decoder) the graph is as long as the count and dropped when the loop ends, a
    # bounded cost per call
    RuleCode("GL015", LEAK, (WASTE,), preview=True),
    # an evaluation that leaves the model in eval mode for the rest of training; in
    # preview until its precision on the census's held-back half is measured
    RuleCode("GL016", WRONG, preview=True),
    # the weights in a plain list never train and never reach a checkpoint
    RuleCode("GL017", WRONG, preview=True),
    RuleCode("GL100", explicit_only=True),
)

_BY_CODE = {entry.code: entry for entry in REGISTERED}

# The level a group's findings get unless `severity` says otherwise. A crash or a silently
# wrong result is an error, memory that grows with the run a warning, waste a warning on
# a hot path (every batch, on more than one sample) and a hint elsewhere: once, per
# epoch, in tests, or a forward on a batch of one (an agent's per-step action), which
# costs a few KB (measured on the real-code ledger: bench/real-code/README.md). A rule of
# no group (GL100, about comments; a plugin's) keeps the error level every rule had
# before groups.
_GROUP_SEVERITY = {
    CRASH: Severity.ERROR,
    WRONG: Severity.ERROR,
    LEAK: Severity.WARNING,
    WASTE: Severity.WARNING,
}
_COLD = (Impact.ONCE, Impact.TEST, Impact.PER_EPOCH)


def default_severity(
    group: Group | None,
    impact: Impact | None = None,
    *,
    one_sample: bool = False,
    one_pass: bool = False,
    latent: bool = False,
) -> Severity:
    """The level of a finding of `group` whose code runs with `impact` (on a batch of one
    sample: `one_sample`; on each batch of one pass over data that runs once in the run,
    a test loop after training: `one_pass`), before configuration. A `latent` finding is
    true of the code but changes nothing as it is configured now (an accumulation loop
    that runs once): at most a warning."""
    if group is None:
        return Severity.ERROR
    if group is WASTE and (impact in _COLD or one_sample or one_pass):
        return Severity.HINT
    if latent and _GROUP_SEVERITY[group] is Severity.ERROR:
        return Severity.WARNING
    return _GROUP_SEVERITY[group]


def group_of(code: str) -> Group | None:
    """The rule's usual group (its findings may say otherwise: groups_of)."""
    entry = _BY_CODE.get(code)
    return entry.group if entry is not None else None


def groups_of(code: str) -> tuple[Group, ...]:
    """Every group the rule's findings can fall in, the usual one first."""
    entry = _BY_CODE.get(code)
    if entry is None or entry.group is None:
        return ()
    return (entry.group, *entry.other_groups)


def all_codes() -> list[str]:
    """Every code a configuration can select: the autograd rules, then the meta rules."""
    return [entry.code for entry in REGISTERED if not entry.explicit_only] + [
        entry.code for entry in REGISTERED if entry.explicit_only
    ]


def preview_codes() -> frozenset[str]:
    return frozenset(entry.code for entry in REGISTERED if entry.preview)


def explicit_only_codes() -> frozenset[str]:
    return frozenset(entry.code for entry in REGISTERED if entry.explicit_only)


def is_preview(code: str) -> bool:
    return code in preview_codes()
