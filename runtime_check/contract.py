"""The fixture contract (fixtures/README.md), read without importing torch.

A fixture is `fixtures/<CODE>/bad_*.py`, `good_*.py` or `bad_*.fixed.py`, or a Jupyter
notebook named the same way (`bad_*.ipynb`, `bad_*.fixed.ipynb`), whose code cells in order
(IPython magics masked) are the program. Its module docstring holds exactly one outcome
line:

    raises: <ExceptionType>: <message prefix or regex>
    grows: <what grows>
    silent: <what goes wrong>
    clean
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

OUTCOME_RE = re.compile(r"^(?P<kind>raises|grows|silent|clean)(?::\s*(?P<text>.*))?$")
RAISES_RE = re.compile(r"^(?P<type>[A-Za-z_][\w.]*)\s*(?::\s*(?P<message>.*))?$")
RULE_FOLDER_RE = re.compile(r"^[A-Z]+[0-9]+$")

ROLES = ("bad", "good", "fixed")


class ContractError(ValueError):
    """A fixture that does not follow fixtures/README.md, so nothing can be checked."""


@dataclass(frozen=True)
class Outcome:
    """What the docstring says running `main()` does."""

    kind: str  # raises | grows | silent | clean
    text: str = ""  # everything after "kind:"
    exc_type: str = ""  # raises only
    message: str = ""  # raises only: a prefix, or a regex searched in the message

    def describe(self) -> str:
        return f"{self.kind}: {self.text}" if self.text else self.kind


@dataclass(frozen=True)
class Fixture:
    path: Path
    role: str  # bad | good | fixed
    rule: str | None  # the folder name when it is a rule code (GL001), else None
    outcome: Outcome | None  # None when the docstring breaks the contract
    contract_error: str | None = None

    @property
    def name(self) -> str:
        return self.path.name

    @property
    def expected(self) -> str:
        """The outcome the harness holds this file to (a fixed file must run clean)."""
        if self.outcome is None:
            return "?"
        if self.role == "fixed":
            return "clean (fixed)"
        return self.outcome.describe()


SUFFIXES = (".py", ".ipynb")


def is_notebook(path: Path) -> bool:
    return path.name.endswith(".ipynb")


def program_text(path: Path) -> str:
    """The fixture's program: the file, or a notebook's code cells as one program."""
    text = path.read_text(encoding="utf-8")
    if not is_notebook(path):
        return text
    from gradlint.notebook import program_source
    from gradlint.results import SourceError

    try:
        return program_source(text, str(path))
    except SourceError as exc:
        raise SyntaxError(str(exc)) from None


def role_of(path: Path) -> str | None:
    name = path.name
    if not name.endswith(SUFFIXES):
        return None
    if name.startswith("bad_") and name.endswith((".fixed.py", ".fixed.ipynb")):
        return "fixed"
    if name.startswith("bad_"):
        return "bad"
    if name.startswith("good_"):
        return "good"
    return None


def parse_outcome(docstring: str | None) -> Outcome:
    """The one outcome line of a fixture docstring. The first line (the summary) never
    counts, so a summary that happens to start with "Clean" cannot be mistaken for one."""
    if not docstring:
        raise ContractError("no module docstring with an outcome line")
    lines = [line.strip() for line in docstring.strip().splitlines()]
    found = [m for m in map(OUTCOME_RE.match, lines[1:]) if m]
    if not found:
        raise ContractError(
            "the docstring has no outcome line (raises: / grows: / silent: / clean)"
        )
    if len(found) > 1:
        kinds = ", ".join(m.group("kind") for m in found)
        raise ContractError(f"the docstring has {len(found)} outcome lines ({kinds}); exactly one")
    kind = found[0].group("kind")
    text = (found[0].group("text") or "").strip()
    if kind == "raises":
        parts = RAISES_RE.match(text)
        if not parts:
            raise ContractError(f"cannot read 'raises: {text}' as 'raises: Type: message'")
        return Outcome(
            kind, text, exc_type=parts.group("type"), message=(parts.group("message") or "").strip()
        )
    if kind in ("grows", "silent") and not text:
        raise ContractError(
            f"'{kind}:' must say what {'grows' if kind == 'grows' else 'goes wrong'}"
        )
    return Outcome(kind, text)


def read_fixture(path: Path) -> Fixture:
    role = role_of(path)
    if role is None:
        raise ValueError(f"{path} is not a fixture (bad_*.py, good_*.py, bad_*.fixed.py)")
    folder = path.parent.name
    rule = folder if RULE_FOLDER_RE.match(folder) else None
    try:
        tree = ast.parse(program_text(path), filename=str(path))
        outcome = parse_outcome(ast.get_docstring(tree))
    except (OSError, SyntaxError, UnicodeDecodeError, ContractError) as exc:
        return Fixture(path, role, rule, None, f"{type(exc).__name__}: {exc}")
    problem = None
    if role == "bad" and outcome.kind == "clean":
        problem = "a bad_ fixture must state a pitfall (raises: / grows: / silent:), not clean"
    elif role == "good" and outcome.kind in ("raises", "grows"):
        problem = f"a good_ fixture must be clean (or silent: for a harmless behaviour), not {outcome.kind}"
    if problem:
        return Fixture(path, role, rule, outcome, problem)
    return Fixture(path, role, rule, outcome)


def _order(path: Path) -> tuple:
    # bad_x.py, then its bad_x.fixed.py
    return (
        str(path.parent),
        path.name.replace(".fixed.py", ".py").replace(".fixed.ipynb", ".ipynb"),
        path.name.endswith((".fixed.py", ".fixed.ipynb")),
    )


def discover(paths) -> list[Path]:
    """Fixture files under `paths` (files or folders), each once, in the order the paths
    were given and sorted within each folder."""
    found: dict[Path, None] = {}
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            candidates = sorted(
                (
                    p
                    for p in path.rglob("*")
                    if p.name.endswith(SUFFIXES)
                    and "__pycache__" not in p.parts
                    and ".ipynb_checkpoints" not in p.parts
                ),
                key=_order,
            )
        elif path.exists():
            if role_of(path) is None:
                raise ValueError(f"{path} is not a fixture (bad_*.py, good_*.py, bad_*.fixed.py)")
            candidates = [path]
        else:
            raise FileNotFoundError(f"no such file or folder: {path}")
        for candidate in candidates:
            if role_of(candidate) is not None:
                found[candidate] = None
    return list(found)
