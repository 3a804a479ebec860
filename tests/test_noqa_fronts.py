"""The CLI, flake8 and the language server read one file's `# noqa` comments alike.

flake8 matches the word noqa in any case but compares the listed codes as written
(`Violation.is_inline_ignored`: `self.code in codes or self.code.startswith(...)`), so
`# NOQA:gl002` lists a code that matches nothing and GL002 is still reported. gradlint's
engine, behind the CLI and the server, must read it the same way.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from test_lsp import Editor, run_editor

LEAF = "torch.ones(3, requires_grad=True)"
# (line, comment): which lines every front must still report.
SOURCE = "\n".join(
    [
        "import torch",
        f"a = {LEAF}",
        "a += 1  # NOQA:gl002",  # 3: lower-case code: matches nothing, reported
        f"b = {LEAF}",
        "b += 1  # NOQA:GL002",  # 5: hidden
        f"c = {LEAF}",
        "c += 1  # noqa: gl002, GL002",  # 7: hidden by the upper-case entry
        f"d = {LEAF}",
        "d += 1  # noqa:gl",  # 9: not a code (no digits): a bare noqa, hidden
        f"e = {LEAF}",
        "e += 1  # NoQa: gl00",  # 11: lower-case prefix: reported
        "",
    ]
)
REPORTED = [3, 11]


def _write(tmp_path: Path) -> Path:
    path = tmp_path / "mod.py"
    path.write_text(SOURCE, encoding="utf-8")
    return path


def test_cli_reads_noqa_codes_as_flake8_does(tmp_path):
    path = _write(tmp_path)
    out = subprocess.run(
        [sys.executable, "-m", "gradlint", "check", "--isolated", "--no-cache"]
        + ["--output-format", "json", str(path)],
        capture_output=True,
        text=True,
    )
    assert out.returncode == 1, out.stderr
    rows = [(o["code"], o["location"]["row"]) for o in json.loads(out.stdout)]
    assert rows == [("GL002", line) for line in REPORTED]


def test_flake8_reports_what_the_cli_reports(tmp_path):
    path = _write(tmp_path)
    out = subprocess.run(
        [sys.executable, "-m", "flake8", "--isolated", "--select", "GL"]
        + ["--format=%(row)d|%(code)s", str(path)],
        capture_output=True,
        text=True,
    )
    assert out.stderr == ""
    assert out.stdout.split() == [f"{line}|GL002" for line in REPORTED]


def test_language_server_reports_what_the_cli_reports(tmp_path):
    path = _write(tmp_path)

    async def scenario(editor: Editor):
        _, diagnostics = await editor.open(path, SOURCE)
        return [(d.code, d.range.start.line + 1) for d in diagnostics]

    found = run_editor(scenario, command=[sys.executable, "-m", "gradlint", "lsp"])
    assert found == [("GL002", line) for line in REPORTED]
