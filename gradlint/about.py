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


# The project's home as [project.urls] Homepage in pyproject.toml declares it.
# tests/test_identity.py keeps the two equal, so a distribution built from this tree
# declares exactly this address: reading it back from the installed metadata (as gradlint
# once did) gave the same string and cost the first finding of every run
# `importlib.metadata` and the `email` parser. Publishing under another address is
# pyproject.toml and this line, as the test says.
HOME = "https://github.com/torch-gradlint/torch-gradlint"
HOME_LABEL = "Homepage"


def home() -> str:
    """The project's home page, without a trailing slash: every link gradlint prints
    (finding urls, SARIF, the language server, docs) starts with it."""
    return HOME


def docs_url(path: str) -> str:
    """A file of the repository's docs (e.g. `docs/rules/GL001.md`) on its main branch."""
    return f"{home()}/blob/main/{path}"


def rule_url(code: str) -> str:
    return docs_url(f"docs/rules/{code}.md")
