from __future__ import annotations

from gradlint.diagnostics import Applicability
from gradlint.rules.base import Rule


class UnusedNoqa(Rule):
    """
    ## What it does
    Flags a `# noqa: GLxxx` directive that silences nothing: no finding of the listed
    code starts on the lines it governs. Off unless selected by its own code
    (`--extend-select GL100`, or `extend-select = ["GL100"]`); `GL` and `ALL` do not turn
    it on, since it is about the comments, not about autograd.

    ## Why is this bad?
    A suppression outlives the code it was written for: the loop gets a `detach()`, the
    finding goes, and the comment stays, ready to hide the next real pitfall on that line
    without anyone noticing. ruff's RUF100 and flake8-noqa do this for their codes.

    Only what one run can judge is judged, so that the rule never asks to remove a
    comment that another run needs: a bare `# noqa`, codes of other tools (`E501`),
    codes whose rules are not all enabled for the file (`--select GL001` judges only
    GL001), codes no rule of this version has, and `GL100` itself are left alone. It
    runs in the command line and the language server; flake8 applies its own noqa
    handling, so there it is not available (flake8-noqa's NQA102 is the equivalent).

    ## Example
    ```python
    import torch

    w = torch.ones(3, requires_grad=True)
    with torch.no_grad():
        w -= 0.1  # noqa: GL002
    ```

    ## Use instead
    ```python
    import torch

    w = torch.ones(3, requires_grad=True)
    with torch.no_grad():
        w -= 0.1
    ```

    ## Fix safety
    Safe: it removes only the unused codes (`# noqa: GL001, GL002` becomes
    `# noqa: GL002`), or the whole directive when none is left, keeping any other text
    of the comment.
    """

    code = "GL100"
    name = "unused-noqa"
    message = "Unused `noqa` directive (unused: {codes})"
    fix_title = "Remove the unused codes from the `noqa` directive"
    fix_applicability = Applicability.SAFE
