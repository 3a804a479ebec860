"""Who gradlint is to the outside world: its distribution name and its home.

The import package and the command are `gradlint`, but the distribution is published as
`torch-gradlint`: `gradlint` on the package registry is an unrelated diffusion-MRI tool,
so installing that name fetches that tool. Every message that tells a user what to
install, and every link, comes from here.
"""

from __future__ import annotations

DISTRIBUTION = "torch-gradlint"


def install_hint(extra: str | None = None) -> str:
    """The pip command that installs gradlint (with `extra`), quoted for a shell."""
    target = f"{DISTRIBUTION}[{extra}]" if extra else DISTRIBUTION
    return f"pip install '{target}'" if extra else f"pip install {target}"


# The project's home as [project.urls] Homepage in pyproject.toml declares it, for a run
# from a source tree where this distribution is not installed (its metadata is what an
# installed gradlint reads). tests/test_identity.py keeps the two equal, so publishing
# under another address is one line in pyproject.toml, then this one as the test says.
HOME_FALLBACK = "https://github.com/torch-gradlint/torch-gradlint"
HOME_LABEL = "Homepage"

_home: str | None = None


def home() -> str:
    """The project's home page, without a trailing slash: every link gradlint prints
    (finding urls, SARIF, the language server, docs) starts with it."""
    global _home
    if _home is None:
        _home = _declared_home() or HOME_FALLBACK
    return _home


def _declared_home() -> str | None:
    # Read by this distribution's name only: the `gradlint` distribution is someone else's.
    from importlib.metadata import PackageNotFoundError, metadata

    try:
        entries = metadata(DISTRIBUTION).get_all("Project-URL") or []
    except PackageNotFoundError:
        return None
    for entry in entries:
        label, _, url = entry.partition(",")
        if label.strip().lower() == HOME_LABEL.lower() and url.strip():
            return url.strip().rstrip("/")
    return None


def docs_url(path: str) -> str:
    """A file of the repository's docs (e.g. `docs/rules/GL001.md`) on its main branch."""
    return f"{home()}/blob/main/{path}"


def rule_url(code: str) -> str:
    return docs_url(f"docs/rules/{code}.md")
