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
