"""Jupyter notebooks: code cells linted as one program, findings by cell, IPython syntax
masked, bad cells reported while the rest is linted, fixes that change only the fixed
source lines of the JSON, and every output format pointing at the right place."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from gradlint import cli
from gradlint.config import Config
from gradlint.diagnostics import Edit, Fix, Position
from gradlint.notebook import (
    NotebookFixError,
    Program,
    compiles,
    fix_notebook,
    fixed_cell_sources,
    lint_notebook,
    lint_notebook_file,
    mask_ipython,
    notebook_from_cells,
    read_notebook,
)

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"
MARKER = re.compile(r"#\s*error:\s*(?P<codes>GL\d{3}(?:\s*,\s*GL\d{3})*)")
NOTEBOOKS = sorted(p for p in FIXTURES.glob("GL*/*.ipynb") if ".fixed." not in p.name)
BAD_NOTEBOOKS = [p for p in NOTEBOOKS if p.name.startswith("bad_")]


def notebook_json(*cells: tuple[str, str | list[str]], **metadata) -> str:
    """nbformat's own layout: indent 1, non-ASCII kept, a final newline."""
    out = []
    for count, (kind, source) in enumerate(cells, start=1):
        lines = source if isinstance(source, list) else source.splitlines(keepends=True)
        cell: dict = {"cell_type": kind, "metadata": {}, "source": lines}
        if kind == "code":
            cell |= {
                "execution_count": count,
                "outputs": [{"output_type": "stream", "name": "stdout", "text": ["ok\n"]}],
            }
        out.append(cell)
    document = {"cells": out, "metadata": metadata, "nbformat": 4, "nbformat_minor": 5}
    return json.dumps(document, indent=1, ensure_ascii=False) + "\n"


def lint(text: str, path: str = "nb.ipynb", config: Config | None = None):
    return lint_notebook(read_notebook(text, path), path, config)


def found(text: str, **kwargs) -> set[tuple[int, int, str]]:
    return {(d.cell.number, d.start.line, d.code) for d in lint(text, **kwargs).diagnostics}


def markers(path: Path) -> set[tuple[int, int, str]]:
    expected = set()
    for number, cell in enumerate(json.loads(path.read_text(encoding="utf-8"))["cells"], 1):
        if cell["cell_type"] != "code":
            continue
        for row, line in enumerate("".join(cell["source"]).splitlines(), start=1):
            match = MARKER.search(line)
            if match:
                expected |= {(number, row, c) for c in re.split(r"\s*,\s*", match["codes"])}
    return expected


# --- fixtures ------------------------------------------------------------------------------


def test_there_are_notebook_fixtures() -> None:
    assert len(BAD_NOTEBOOKS) >= 2 and len(NOTEBOOKS) > len(BAD_NOTEBOOKS)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_notebook_markers_equal_findings_by_cell_and_row(path: Path) -> None:
    result = lint_notebook_file(str(path))
    assert result.error is None, result.error
    assert {(d.cell.number, d.start.line, d.code) for d in result.diagnostics} == markers(path)


def test_the_eval_fixture_crosses_cells_and_flags_cells_with_magics() -> None:
    path = FIXTURES / "GL004" / "bad_notebook_eval_across_cells.ipynb"
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    flagged = {cell for cell, _, _ in markers(path)}
    assert len(flagged) >= 2  # findings in several cells
    eval_cell = next(i for i, c in enumerate(cells, 1) if "model.eval()" in "".join(c["source"]))
    forward_cell = next(cell for cell, _, code in markers(path) if code == "GL004")
    assert eval_cell != forward_cell  # the pitfall's two halves are in different cells
    sources = {i: "".join(c["source"]) for i, c in enumerate(cells, 1)}
    assert any(re.search(r"^\s*[%!]", sources[c], re.M) for c in flagged)  # a magic there
    assert any("# noqa: GL008" in sources[c] for c in flagged)  # and a silenced line


@pytest.mark.parametrize("bad", BAD_NOTEBOOKS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_notebook_fix_reproduces_fixed_file_and_changes_only_fixed_lines(bad: Path) -> None:
    text = bad.read_text(encoding="utf-8")
    outcome = fix_notebook(read_notebook(text, str(bad)), str(bad), Config(), unsafe=True)
    expected = bad.with_name(bad.name.replace(".ipynb", ".fixed.ipynb"))
    assert outcome.text == expected.read_text(encoding="utf-8")
    before, after = json.loads(text), json.loads(outcome.text)
    # Everything but the sources is the same JSON, and the same text line for line.
    strip = lambda doc: [{k: v for k, v in c.items() if k != "source"} for c in doc["cells"]]  # noqa: E731
    assert strip(before) == strip(after) and before["metadata"] == after["metadata"]
    old_lines, new_lines = text.splitlines(), outcome.text.splitlines()
    import difflib

    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, old_lines, new_lines).get_opcodes():
        if tag == "equal":
            continue
        # only source-line tokens of a `source` array change
        for line in old_lines[i1:i2] + new_lines[j1:j2]:
            assert re.fullmatch(r'\s*".*",?', line), line
    assert outcome.text.endswith("}\n")
    rule = bad.parent.name
    assert not [d for d in outcome.remaining if d.code == rule]
    again = fix_notebook(read_notebook(outcome.text, str(bad)), str(bad), Config(), unsafe=True)
    assert again.text == outcome.text


# --- the program -----------------------------------------------------------------------------


def test_facts_flow_across_cells_and_markdown_is_skipped() -> None:
    text = notebook_json(
        ("code", "import torch\nfrom torch import nn\nmodel = nn.Linear(2, 2)\n"),
        ("markdown", "model.eval() in prose is not code\n"),
        ("code", "model.eval()"),
        ("raw", "out = model(x)\n"),
        ("code", "x = torch.randn(3, 2)\nout = model(x)\n"),
    )
    assert found(text) == {(5, 2, "GL004")}


@pytest.mark.parametrize(
    ("line", "masked"),
    [
        ("%matplotlib inline", "pass"),
        ("!pip install torch", "pass"),
        ("files = !ls", "files = ..."),
        ("t = %timeit -o f()", "t = ..."),
        ("model?", "pass"),
        ("?model", "pass"),
        ("model??", "pass"),
        ("  %time f()", "  pass"),
    ],
)
def test_ipython_lines_are_masked_in_place(line: str, masked: str) -> None:
    assert mask_ipython(f"x = 1\n{line}\ny = 2") == f"x = 1\n{masked}\ny = 2"


def test_cell_magics_mask_the_cell_unless_it_runs_python() -> None:
    assert mask_ipython("%%bash\necho hi\nw -= 1\n") == "\n\n\n"
    assert mask_ipython("%%time\nw = 1\n") == "\nw = 1\n"
    assert mask_ipython("%pip install \\\n  torch\nx = 1") == "pass\n\nx = 1"


def test_valid_python_is_never_masked() -> None:
    text = notebook_json(
        ("code", 'import torch\nw = torch.ones(2, requires_grad=True)\nfmt = """\n%d\n"""\n'),
        ("code", "w += 1 % 3\n"),
    )
    program = Program.build(read_notebook(text, "nb.ipynb"), "nb.ipynb")
    assert "%d" in program.text and "pass" not in program.text
    assert found(text) == {(2, 1, "GL002")}


def test_magic_in_a_flagged_cell_and_noqa_in_a_cell() -> None:
    text = notebook_json(
        ("code", "import torch\nw = torch.ones(2, requires_grad=True)\n"),
        ("code", "%time\nw += 1\nw *= 2  # noqa: GL002\n!ls\nw?\n"),
    )
    assert found(text) == {(2, 2, "GL002")}


def test_a_cell_that_does_not_parse_is_reported_and_the_others_linted() -> None:
    text = notebook_json(
        ("code", "import torch\nw = torch.ones(2, requires_grad=True)\n"),
        ("markdown", "# notes"),
        ("code", "def broken(:\n    pass\n"),
        ("code", "w += 1\n"),
        ("code", "for x in\n"),
    )
    result = lint(text)
    assert {(d.cell.number, d.start.line, d.code) for d in result.diagnostics} == {(4, 1, "GL002")}
    error = result.error
    assert error is not None and error.cell == 3 and error.line == 1
    assert (
        error.message.startswith("SyntaxError:") and "cells 5 do not parse either" in error.message
    )
    assert str(error).startswith("nb.ipynb:cell 3:1:")
    # the raw file line that holds the broken source line
    assert '"def broken(:\\n"' in text.splitlines()[error.file_line - 1]


def test_noqa_per_file_ignores_and_exclude_match_notebook_paths(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    text = notebook_json(("code", "import torch\nw = torch.ones(2, requires_grad=True)\nw += 1\n"))
    (tmp_path / "nbs").mkdir()
    (tmp_path / "nbs" / "a.ipynb").write_text(text, encoding="utf-8")
    (tmp_path / "skip").mkdir()
    (tmp_path / "skip" / "b.ipynb").write_text(text, encoding="utf-8")
    (tmp_path / "pyproject.toml").write_text(
        '[tool.gradlint]\nper-file-ignores = {"nbs/*.ipynb" = ["GL002"]}\nextend-exclude = ["skip"]\n'
    )
    status = cli.main(["--no-cache", "-j1", "."])
    out, _ = capsys.readouterr()
    assert status == 0, out
    (tmp_path / "pyproject.toml").write_text('[tool.gradlint]\ninclude = ["*.py"]\n')
    assert cli.main(["--no-cache", "-j1", "."]) == 0  # include leaves notebooks out
    assert cli.main(["--no-cache", "-j1", "nbs/a.ipynb"]) == 1  # named: linted
    capsys.readouterr()


# --- output formats ------------------------------------------------------------------------


@pytest.fixture
def project(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    text = notebook_json(
        ("markdown", "# Training"),
        ("code", "import torch\n\nw = torch.ones(2, requires_grad=True)\n"),
        ("code", "%time\n    \nw += 1\n"),
    )
    (tmp_path / "nb.ipynb").write_text(text, encoding="utf-8")
    return tmp_path, text


def run_format(capsys, fmt: str, *extra: str) -> str:
    cli.main(["--isolated", "--no-cache", "-j1", "--output-format", fmt, *extra, "nb.ipynb"])
    return capsys.readouterr().out


def test_text_formats_read_path_cell_row_col(project, capsys) -> None:
    assert "nb.ipynb:cell 3:3:1: GL002" in run_format(capsys, "concise")
    full = run_format(capsys, "full")
    assert "--> nb.ipynb:cell 3:3:1" in full and "3 | w += 1" in full and "%time" in full


def test_json_keeps_ruff_fields_and_adds_the_cell(project, capsys) -> None:
    (item,) = json.loads(run_format(capsys, "json"))
    assert item["cell"] == 3 and item["location"] == {"row": 3, "column": 1}
    assert item["noqa_row"] == 3 and item["end_location"]["row"] == 3
    edits = item["fix"]["edits"]
    assert all(e["location"]["row"] <= 4 for e in edits)  # rows inside the cell


def test_sarif_and_github_point_at_the_raw_file_line(project, capsys) -> None:
    _, text = project
    raw_line = 1 + next(i for i, line in enumerate(text.splitlines()) if '"w += 1\\n"' in line)
    column = text.splitlines()[raw_line - 1].index("w += 1") + 1
    log = json.loads(run_format(capsys, "sarif"))
    (result,) = log["runs"][0]["results"]
    region = result["locations"][0]["physicalLocation"]["region"]
    assert (region["startLine"], region["startColumn"]) == (raw_line, column)
    assert result["properties"]["cell"] == 3 and result["properties"]["cellRow"] == 3
    assert "fixes" not in result
    github = run_format(capsys, "github")
    assert f"line={raw_line},col={column}," in github and "(cell 3:3:1)" in github


def test_related_places_are_in_their_own_cells_in_every_format(capsys) -> None:
    # The eval switch of cell 3 explains the forward of cell 5: each format shows it in
    # cell 3, not at a line of the concatenated program.
    path = FIXTURES / "GL004" / "bad_notebook_eval_across_cells.ipynb"
    text = path.read_text(encoding="utf-8")
    args = ["--isolated", "--no-cache", "--select", "GL004", "--output-format"]
    cli.main([*args, "json", str(path)])
    (item,) = json.loads(capsys.readouterr().out)
    (related,) = item["related"]
    assert item["cell"] == 5 and related["cell"] == 3 and related["location"]["row"] == 3
    cli.main([*args, "full", str(path)])
    assert f"::: {path}:cell 3:3:1" in capsys.readouterr().out
    cli.main([*args, "sarif", str(path)])
    (result,) = json.loads(capsys.readouterr().out)["runs"][0]["results"]
    region = result["relatedLocations"][0]["physicalLocation"]["region"]
    assert "model.eval()" in text.splitlines()[region["startLine"] - 1]


def test_cached_results_keep_their_cells(project, capsys) -> None:
    args = ["--isolated", "-j1", "--output-format", "full", "nb.ipynb"]
    cli.main(args)
    first = capsys.readouterr().out
    cli.main(args)
    assert capsys.readouterr().out == first and "cell 3:3:1" in first


# --- fixing ----------------------------------------------------------------------------------


def test_fix_writes_only_the_changed_lines_and_keeps_everything_else(project, capsys) -> None:
    root, text = project
    status = cli.main(["--isolated", "--no-cache", "-j1", "--fix", "--unsafe-fixes", "nb.ipynb"])
    capsys.readouterr()
    new = (root / "nb.ipynb").read_text(encoding="utf-8")
    assert status == 0
    assert json.loads(new)["cells"][2]["source"] == [
        "%time\n",
        "    \n",
        "with torch.no_grad():\n",
        "    w += 1\n",
    ]
    old_lines, new_lines = text.splitlines(), new.splitlines()
    assert [line for line in new_lines if line not in old_lines] == [
        '    "with torch.no_grad():\\n",',
        '    "    w += 1\\n"',
    ]
    assert (
        new_lines[: old_lines.index('    "w += 1\\n"')]
        == old_lines[: old_lines.index('    "w += 1\\n"')]
    )


def test_diff_shows_the_change_per_cell(project, capsys) -> None:
    root, text = project
    status = cli.main(["--isolated", "--no-cache", "-j1", "--diff", "--unsafe-fixes", "nb.ipynb"])
    out = capsys.readouterr().out
    assert status == 1 and (root / "nb.ipynb").read_text(encoding="utf-8") == text
    assert "--- a/nb.ipynb:cell 3\n+++ b/nb.ipynb:cell 3\n" in out
    assert "-w += 1\n+with torch.no_grad():\n+    w += 1\n" in out


def test_fix_of_a_string_source_and_an_import_added_to_the_first_cell() -> None:
    text = notebook_json(
        ("code", "from torch import nn\n\nm = nn.Linear(2, 2)"),
        ("code", ["m.weight.zero_()"]),
    )
    document = json.loads(text)
    document["cells"][0]["source"] = "from torch import nn\n\nm = nn.Linear(2, 2)"
    text = json.dumps(document, indent=1) + "\n"
    outcome = fix_notebook(read_notebook(text, "nb.ipynb"), "nb.ipynb", Config(), unsafe=True)
    cells = json.loads(outcome.text)["cells"]
    assert cells[0]["source"].startswith("import torch\n") and isinstance(cells[0]["source"], str)
    assert cells[1]["source"] == ["with torch.no_grad():\n", "    m.weight.zero_()"]
    assert not outcome.remaining


def test_a_fix_never_rewrites_an_ipython_line() -> None:
    source = "x = 1\n%time\nfiles = !ls\ny = 2"
    program = Program.build(read_notebook(notebook_json(("code", source)), "n"), "n")
    changed = program.split(program.text.replace("y = 2", "y = 3"))
    assert changed == {1: "x = 1\n%time\nfiles = !ls\ny = 3"}


def test_stdin_notebook_fix_prints_the_notebook(monkeypatch, capsys, project) -> None:
    import io
    import sys

    _, text = project
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(text.encode())))
    cli.main(
        ["--isolated", "--no-cache", "--fix", "--unsafe-fixes", "-", "--stdin-filename", "x.ipynb"]
    )
    out = capsys.readouterr().out
    assert json.loads(out)["cells"][2]["source"][-1] == "    w += 1\n"


def test_compiles_accepts_top_level_await() -> None:
    assert compiles("await f()\n") is None


def test_a_cached_notebook_result_is_relinted_when_an_imported_helper_changes(
    tmp_path, capsys, monkeypatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "helpers.py").write_text("def evaluate(model, x):\n    return model(x)\n")
    text = notebook_json(
        ("code", "import torch\nfrom helpers import evaluate\nmodel = torch.nn.Linear(2, 2)\n"),
        ("code", "model.eval()\nout = evaluate(model, torch.ones(1, 2))\n"),
    )
    (tmp_path / "nb.ipynb").write_text(text, encoding="utf-8")
    # The forward runs once (a hint): --fail-on hint makes it fail the run.
    args = ["--isolated", "-j1", "--fail-on", "hint", "nb.ipynb"]
    first = cli.main(args)
    capsys.readouterr()
    (tmp_path / "helpers.py").write_text(
        "import torch\n\n\ndef evaluate(model, x):\n    with torch.no_grad():\n        return model(x)\n"
    )
    second = cli.main(args)
    out = capsys.readouterr().out
    assert (first, second) == (1, 0), out


def test_add_noqa_leaves_a_notebook_untouched_and_says_so(tmp_path, capsys) -> None:
    source = FIXTURES / "GL004" / "bad_notebook_eval_across_cells.ipynb"
    target = tmp_path / "nb.ipynb"
    target.write_bytes(source.read_bytes())
    cli.main(["--isolated", "--no-cache", "--add-noqa", str(target)])
    assert target.read_bytes() == source.read_bytes()
    assert "noqa directives not added: notebooks are not supported" in capsys.readouterr().err


# --- cells that hold gradlint's own program text ---------------------------------------


@pytest.mark.parametrize("carets", ["^^^", "^^^^^^^^", "^"])
def test_a_cell_holding_a_marker_line_is_not_cut_there(carets) -> None:
    """A notebook that prints (or documents) gradlint's program keeps every cell's code
    in its cell, in --fix and in the editor's fix-all."""
    first = f"import torch\nprint('''\n# gradlint: cell 2 {carets}\n''')\nx = 1\n"
    second = "w = torch.ones(3, requires_grad=True)\nw += 1\n"
    cells = (("code", first), ("code", second))
    outcome = fix_notebook(
        read_notebook(notebook_json(*cells), "nb.ipynb"), "nb.ipynb", Config(), unsafe=True
    )
    sources = ["".join(c["source"]) for c in json.loads(outcome.text)["cells"]]
    fixed_second = "w = torch.ones(3, requires_grad=True)\nwith torch.no_grad():\n    w += 1\n"
    assert outcome.refused is None and sources == [first, fixed_second]
    editor = fixed_cell_sources(notebook_from_cells(list(cells)), "nb.ipynb", Config())
    assert editor == {2: fixed_second}


def test_a_split_that_does_not_give_back_the_cells_is_refused() -> None:
    program = Program.build(
        read_notebook(notebook_json(("code", "x = 1\n"), ("code", "y = 2\n")), "n"), "n"
    )
    marker = program.marker(2)
    assert program.split(program.text.replace("y = 2", "y = 3")) == {2: "y = 3\n"}
    with pytest.raises(NotebookFixError):
        program.split(program.text.replace("x = 1\n", f"x = 1\n{marker}\n"))
    with pytest.raises(NotebookFixError):
        program.split(program.text.replace(f"{marker}\n", ""))


@pytest.mark.parametrize("magic", ["%%capture out", "%%time", "%%prun"])
def test_an_added_import_goes_below_a_cell_magic(magic) -> None:
    cells = (("code", f"{magic}\nfrom torch import nn\nm = nn.Linear(2, 2)\n"),)
    cells += (("code", "m.weight.zero_()\n"),)
    outcome = fix_notebook(
        read_notebook(notebook_json(*cells), "nb.ipynb"), "nb.ipynb", Config(), unsafe=True
    )
    first = f"{magic}\nimport torch\nfrom torch import nn\nm = nn.Linear(2, 2)\n"
    assert "".join(json.loads(outcome.text)["cells"][0]["source"]) == first
    editor = fixed_cell_sources(notebook_from_cells(list(cells)), "nb.ipynb", Config())
    assert editor[1] == first


def test_an_added_import_skips_a_cell_in_another_language() -> None:
    cells = (("code", "%%bash\necho hi\n"), ("code", "from torch import nn\nm = nn.Linear(2, 2)\n"))
    cells += (("code", "m.weight.zero_()\n"),)
    outcome = fix_notebook(
        read_notebook(notebook_json(*cells), "nb.ipynb"), "nb.ipynb", Config(), unsafe=True
    )
    sources = ["".join(c["source"]) for c in json.loads(outcome.text)["cells"]]
    assert sources[:2] == [
        "%%bash\necho hi\n",
        "import torch\nfrom torch import nn\n" + "m = nn.Linear(2, 2)\n",
    ]


def test_an_import_that_cannot_go_below_the_cell_magic_is_refused() -> None:
    cells = (("code", "%%timeit\nfrom torch import nn\nm = nn.Linear(2, 2)\n"),)
    text = notebook_json(*cells, ("code", "m.weight.zero_()\n"))
    outcome = fix_notebook(read_notebook(text, "nb.ipynb"), "nb.ipynb", Config(), unsafe=True)
    assert outcome.text == text and "cell magic of cell 1" in (outcome.refused or "")


# --- reading: memory in proportion to the file ---------------------------------------------


@pytest.mark.parametrize(
    "output",
    [
        pytest.param("A" * 2_000_000, id="base64-image"),
        pytest.param('x\n"\\y' * 400_000, id="escapes"),
    ],
)
def test_reading_a_notebook_costs_memory_in_proportion_to_its_size(output) -> None:
    """The position scan once kept regular-expression state for every character of a
    string token: about 140 bytes of memory per byte of output."""
    import tracemalloc

    document = json.loads(notebook_json(("code", "import torch\nx = 1\n")))
    document["cells"][0]["outputs"] = [
        {"output_type": "display_data", "data": {"image/png": output}, "metadata": {}}
    ]
    text = json.dumps(document, indent=1)
    tracemalloc.start()
    try:
        notebook = read_notebook(text, "nb.ipynb")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert notebook.cells[0].pieces is not None
    assert peak < 4 * len(text)


def test_sources_with_backslashes_and_quotes_are_located() -> None:
    lines = ['s = "a\\\\"\n', 'q = "\\"\\\\\\""\n', "p = r'\\\\\\\\'\n", 'e = "\\u00e9"']
    text = notebook_json(("code", lines))
    notebook = read_notebook(text, "nb.ipynb")
    cell = notebook.cells[0]
    assert cell.pieces is not None and [p.text for p in cell.pieces] == lines
    assert [json.loads(text[p.start : p.end]) for p in cell.pieces] == lines


# --- syntax newer than the running Python ------------------------------------------------

NEWER_SYNTAX = [
    pytest.param("type Vec = list[float]\n", id="pep695-type-alias"),
    pytest.param("def first[T](xs: list[T]) -> T:\n    return xs[0]\n", id="pep695-generic"),
    pytest.param('name = "w"\nlabel = f"{f"{name!r}"}"\n', id="pep701-nested-quotes"),
]


@pytest.mark.parametrize("code", NEWER_SYNTAX)
@pytest.mark.parametrize("magic", ["", "%matplotlib inline\n"])
def test_a_notebook_cell_is_linted_whenever_the_same_py_file_is(code, magic) -> None:
    from gradlint.engine import lint_source

    body = LEAF_BODY + code + "w += 1\n"
    as_file = [(d.start.line, d.code) for d in lint_source(body, "m.py")]
    linted = lint(notebook_json(("code", magic + body)))
    assert linted.error is None
    offset = 1 if magic else 0
    assert [(d.start.line - offset, d.code) for d in linted.diagnostics] == as_file != []


def test_a_cell_neither_parser_accepts_is_still_reported() -> None:
    linted = lint(notebook_json(("code", LEAF_BODY + "type = = 1\n"), ("code", "w += 1\n")))
    assert linted.error is not None and linted.error.cell == 1
    assert [(d.cell.number, d.code) for d in linted.diagnostics] == []


LEAF_BODY = "import torch\nw = torch.ones(3, requires_grad=True)\n"


@pytest.mark.parametrize(
    ("newline", "ending"), [("\n", ""), ("\n", "\n"), ("\r\n", "\r\n"), ("\r", ""), ("\r", "\r")]
)
def test_diff_of_a_cell_without_a_final_newline_ends_its_lines(tmp_path, newline, ending):
    """stdout and stderr on one terminal: the closing "Would fix" line starts a line of
    its own after the last line of the diff. A cell with old Mac line breaks (`\r`, no
    `\n` at all) once ended the diff with a lone `\r`, and the terminal drew "Would
    fix" over its last line."""
    import os
    import subprocess
    import sys

    lines = ["import torch", "w = torch.ones(3, requires_grad=True)", "w += 1"]
    source = newline.join(lines) + ending
    (tmp_path / "nb.ipynb").write_text(notebook_json(("code", source)))
    run = subprocess.run(
        [sys.executable, "-m", "gradlint", "--isolated", "--no-cache", "--diff"]
        + ["--unsafe-fixes", "nb.ipynb"],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=60,
    )
    out = run.stdout.decode()
    assert run.returncode == 1 and out.endswith("\nWould fix 1 error.\n")
    assert "+    w += 1" in out and out.count("Would fix") == 1
    diff = out[: -len("Would fix 1 error.\n")]
    rows = diff.split("\n")[:-1]
    assert all(row[:1] in (" ", "-", "+", "@", "\\") for row in rows[2:])
    assert len(rows) >= 7 and not any("\r" in row[:-1] for row in rows)


# --- help queries: only at statement level -----------------------------------------------


@pytest.mark.parametrize(
    "code",
    [
        pytest.param(
            "opt = torch.optim.SGD(\n    [w],\n    lr=0.1,  # too high?\n)\n", id="comment-in-call"
        ),
        pytest.param("w2 = w * 2  # why twice?\n", id="comment-after-code"),
        pytest.param('doc = """\nWhat is w?\n?w\n%w\n"""\n', id="lines-of-a-string"),
        pytest.param("total = (3\n    % 2)\n", id="modulo-on-a-continuation-line"),
        pytest.param("q = 'why?'  # not help\n", id="question-in-a-string"),
    ],
)
def test_a_question_mark_outside_statement_level_code_is_not_a_help_query(code) -> None:
    """The cell has a magic, so it is masked; a `?` ending a comment, or a line inside
    a string or brackets, is Python that IPython runs as written. Once such lines became
    `pass`, which broke the call (the cell was skipped) or hid a statement."""
    source = "%matplotlib inline\n" + LEAF_BODY + "w2 = w\n" + code + "w += 1\n"
    assert mask_ipython(source) == "pass\n" + source.split("\n", 1)[1]
    rows = len(source.splitlines())
    linted = lint(notebook_json(("code", source)))
    assert linted.error is None
    assert [(d.cell.number, d.start.line, d.code) for d in linted.diagnostics] == [
        (1, rows, "GL002")
    ]


@pytest.mark.parametrize(
    ("line", "masked"),
    [
        ("w?", "pass"),
        ("w.add_??", "pass"),
        ("torch.optim.SGD?  # the signature", "pass"),
        ("    w?", "    pass"),
    ],
)
def test_a_statement_ending_in_a_question_mark_is_a_help_query(line, masked) -> None:
    assert mask_ipython(f"for i in x:\n{line}\ny = 2") == f"for i in x:\n{masked}\ny = 2"


# --- cells with leading indentation ------------------------------------------------------

INDENTED = "    import torch\n    w = torch.ones(3, requires_grad=True)\n    for i in range(2):\n        w += 1\n"


def test_an_indented_cell_is_dedented_and_linted_at_its_own_columns() -> None:
    """IPython strips the first line's indentation from every line that has it; the cell
    was reported as a SyntaxError ("unexpected indent") and left out."""
    text = notebook_json(("code", INDENTED), ("code", "w.mul_(2)\n"))
    linted = lint(text)
    assert linted.error is None
    assert [(d.cell.number, d.start.line, d.start.column, d.code) for d in linted.diagnostics] == [
        (1, 4, 8, "GL002"),
        (2, 1, 0, "GL002"),
    ]
    first = linted.diagnostics[0]
    assert (first.end.line, first.end.column) == (4, 14)
    raw = text.splitlines()[first.cell.file_start.line - 1]
    assert raw[first.cell.file_start.column :].startswith("w += 1")


def test_a_fix_in_an_indented_cell_keeps_the_cell_indented() -> None:
    from gradlint.edits import apply_edits

    text = notebook_json(("markdown", "# intro\n"), ("code", INDENTED))
    notebook = read_notebook(text, "nb.ipynb")
    outcome = fix_notebook(notebook, "nb.ipynb", Config(), unsafe=True)
    assert outcome.refused is None and outcome.error is None and not outcome.remaining
    fixed = json.loads(outcome.text)["cells"][1]["source"]
    assert fixed == [
        "    import torch\n",
        "    w = torch.ones(3, requires_grad=True)\n",
        "    for i in range(2):\n",
        "        with torch.no_grad():\n",
        "            w += 1\n",
    ]
    # Only the fixed source lines of the JSON changed.
    old_lines, new_lines = text.splitlines(), outcome.text.splitlines()
    assert [line for line in new_lines if line not in old_lines] == [
        '    "        with torch.no_grad():\\n",',
        '    "            w += 1\\n"',
    ]
    # The quick fix an editor applies to the cell itself makes the same text.
    (finding,) = lint(text).diagnostics
    assert finding.fix is not None and finding.cell is not None
    assert apply_edits(INDENTED, finding.fix.edits) == "".join(fixed)
    assert fixed_cell_sources(notebook, "nb.ipynb", Config()) == {2: "".join(fixed)}


def test_lines_of_an_indented_cell_without_its_indentation_are_never_rewritten() -> None:
    """IPython leaves a line that lacks the first line's indentation as it is (a line of a
    multi-line string); a fix cannot say how to indent its replacement, so it is refused,
    and the lines the fix leaves alone come back byte for byte."""
    source = '  doc = """\nfree text\n  """\n  x = 1\n'
    program = Program.build(read_notebook(notebook_json(("code", source)), "n"), "n")
    assert program.errors == [] and program.text == 'doc = """\nfree text\n"""\nx = 1\n'
    assert program.split(program.text.replace("x = 1", "x = 2\ny = 3")) == {
        1: '  doc = """\nfree text\n  """\n  x = 2\n  y = 3\n'
    }
    with pytest.raises(NotebookFixError):
        program.split(program.text.replace("free text", "other text"))


def test_edits_of_one_row_of_an_indented_cell_make_one_edit_of_the_cell() -> None:
    """A quick fix in cell coordinates: the rows an indented cell's edits touch are
    rewritten whole, once, so two edits of one row do not overlap there."""
    from gradlint.diagnostics import Applicability
    from gradlint.edits import apply_edits

    source = "    x = f(a)\n    y = g(b)\n"
    program = Program.build(read_notebook(notebook_json(("code", source)), "n"), "n")
    assert program.text == "x = f(a)\ny = g(b)\n"
    fix = Fix(
        "wrap",
        (
            Edit(Position(2, 4), Position(2, 4), "h("),
            Edit(Position(2, 8), Position(2, 8), ")"),
            Edit(Position(1, 0), Position(1, 0), "import torch\n"),
        ),
        Applicability.UNSAFE,
    )
    in_cell, cells = program._fix_to_cells(fix)
    assert in_cell is not None and cells == (1,)
    assert apply_edits(source, in_cell.edits) == "    import torch\n    x = f(a)\n    y = h(g(b))\n"


def test_a_related_place_already_in_a_cell_is_not_mapped_again() -> None:
    """The caller search gives a call in a notebook in its cell's coordinates; read as
    a program position of the same notebook it was moved a second time."""
    from gradlint.diagnostics import CellLocation, Related

    text = notebook_json(("code", "x = 1\nw = 0\nv = 9\n"), ("code", "y = 2\nz = 3\n"))
    program = Program.build(read_notebook(text, "nb.ipynb"), "nb.ipynb")
    place = Related("here", "nb.ipynb", Position(5, 0), Position(5, 5))
    raw = Position(1, 0)
    placed = Related("here", "nb.ipynb", Position(2, 0), Position(2, 5), CellLocation(2, raw, raw))
    mapped = program._related_to_cell(place, "nb.ipynb")
    assert mapped.cell is not None and (mapped.cell.number, mapped.start.line) == (2, 1)
    assert program._related_to_cell(placed, "nb.ipynb") == placed


# --- a course's exercise blanks -----------------------------------------------------------

EXERCISE = (
    "import torch\nimport torch.nn as nn\nnetwork = nn.Linear(4, 2)\n",
    "def get_action(state, epsilon=0):\n"
    "    q_values = network(torch.tensor(state)).detach().numpy()\n"
    "    <YOUR CODE>\n"
    "    return int( <YOUR CODE: epsilon-greedily selected action> )\n",
    "print(get_action([0.0, 1.0, 2.0, 3.0]))\n",
)


def test_an_exercise_cell_with_blanks_is_linted_around_them() -> None:
    """Practical_RL's seminar: a cell with `<YOUR CODE>` blanks did not compile and was
    left out, and with it the forward the student had been given."""
    text = notebook_json(*(("code", cell) for cell in EXERCISE))
    linted = lint(text)
    assert linted.error is None
    assert [(d.cell.number, d.start.line, d.start.column, d.code) for d in linted.diagnostics] == [
        (2, 2, 15, "GL012")
    ]


def test_a_blank_keeps_every_other_column_and_no_fix_rewrites_its_line() -> None:
    from gradlint.ipynb import mask_blanks

    line = "    return int( <YOUR CODE: the action> ) + <your code here>\n"
    masked = mask_blanks(line)
    assert len(masked) == len(line) and masked.index(")") == line.index(")")
    assert masked.replace(" ", "") == "returnint(...)+...\n"
    assert compiles("def f():\n" + masked) is None
    # a fix that would rewrite the blank's line is refused: the student's text stays
    cell = "import torch\nw = torch.ones(3, requires_grad=True)\nw += <YOUR CODE>\n"
    text = notebook_json(("code", cell))
    (finding,) = lint(text).diagnostics
    assert (finding.start.line, finding.code) == (3, "GL002")
    assert finding.fix is None  # an editor's quick fix would write `...` over the blank
    outcome = fix_notebook(read_notebook(text, "nb.ipynb"), "nb.ipynb", Config(), unsafe=True)
    assert outcome.text is None or json.loads(outcome.text)["cells"][0]["source"][2] == (
        "w += <YOUR CODE>\n"
    )


def test_a_methods_result_differentiated_through_a_parameter_in_another_cell() -> None:
    # `p.log_marginal(x)` on an instance is only printed, but `model.log_marginal(x)` on
    # a parameter of a later cell is the training loss: the resolver's callers of the
    # method are not all its calls, so its forward is no graph thrown away
    text = notebook_json(
        (
            "code",
            "import torch\n"
            "from torch import nn\n"
            "\n"
            "\n"
            "class Joint(nn.Module):\n"
            "    def __init__(self, likelihood):\n"
            "        super().__init__()\n"
            "        self.likelihood = likelihood\n"
            "\n"
            "    def log_marginal(self, x, enumerate_fn):\n"
            "        z = enumerate_fn(x)\n"
            "        scores = self.likelihood(z)\n"
            "        return torch.logsumexp(scores, 0)\n",
        ),
        (
            "code",
            "def check(x):\n"
            "    p = Joint(likelihood=nn.Linear(4, 4))\n"
            "    enumerate_fn = lambda t: t.unsqueeze(0)\n"
            "    print(p.log_marginal(x, enumerate_fn))\n",
        ),
        (
            "code",
            "def train(model: Joint, enumerate_fn, batches, optimiser):\n"
            "    for x in batches:\n"
            "        loss = -model.log_marginal(x, enumerate_fn).mean()\n"
            "        optimiser.zero_grad()\n"
            "        loss.backward()\n"
            "        optimiser.step()\n",
        ),
    )
    assert found(text) == set()


def test_a_name_an_exercise_blank_would_read_is_not_unused() -> None:
    # `<YOUR CODE>` is linted as `...`: what it would compute from `probs_for_actions`
    # is not known, so the forward that makes it is not "never used"
    model = (
        "import torch\n"
        "from torch import nn\n"
        "agent = nn.Linear(4, 2)\n"
        "opt = torch.optim.Adam(agent.parameters())\n"
    )
    exercise = (
        "def get_loss(agent, observations, actions):\n"
        "    probs_all = agent(observations)\n"
        "    probs_for_actions = probs_all[torch.arange(4), actions]\n"
        "    BLANK\n"
        "    return loss\n"
        "\n"
        "loss = get_loss(agent, torch.zeros(4, 4), torch.zeros(4).long())\n"
        "opt.zero_grad()\n"
        "loss.backward()\n"
    )
    blank = notebook_json(("code", model), ("code", exercise.replace("BLANK", "<YOUR CODE>")))
    assert found(blank) == set()
    # written out without a use, the name that is never read is the finding
    unread = notebook_json(("code", model), ("code", exercise.replace("BLANK", "pass")))
    assert found(unread) == {(2, 2, "GL012")}


_EVALUATED_MODEL = (
    "import torch\n"
    "from torch import nn\n"
    "model = nn.Linear(3, 1)\n"
    "loss_fn = nn.MSELoss()\n"
    "opt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
    "x, y = torch.randn(8, 3), torch.randn(8, 1)\n"
    "for _ in range(10):\n"
    "    loss = loss_fn(model(x), y)\n"
    "    opt.zero_grad()\n"
    "    loss.backward()\n"
    "    opt.step()\n"
    "model.eval()\n"
)


def test_a_cells_shown_value_keeps_its_graph_in_out():
    """IPython keeps a cell's last expression in `Out[n]`: `loss_fn(model(x), y)` or
    `model(x)[:3]` there holds the forward's graph for the session. A line that is not
    the cell's last, a `;` that silences it, and a value without history drop it."""
    text = notebook_json(
        ("code", _EVALUATED_MODEL),
        ("code", "loss_fn(model(x), y)"),
        ("code", "model(x)[:3]\nmodel(x)\n"),  # the first line is not the cell's last
        ("code", "model(x);"),  # silenced: nothing is kept
        ("code", "model(x).argmax(1)\n"),  # read as numbers: a finding already
        ("code", "display(model(x))"),  # IPython's display hands back None
        ("code", "torch.save(model(x), 'out.pt')"),  # so does torch.save
        (
            "code",
            "class Net(nn.Module):\n"
            "    def __init__(self):\n"
            "        super().__init__()\n"
            "        self.fc = nn.Linear(3, 1)\n"
            "\n"
            "    def forward(self, x):\n"
            "        return self.fc(x)\n"
            "\n"
            "\n"
            "net = Net()\n"
            "opt = torch.optim.SGD(net.parameters(), lr=0.1)\n"
            "loss_fn(net(x), y).backward()\n"
            "opt.step()\n"
            "net.eval()\n"
            "loss_fn(net(x), y)",  # a model of the notebook's own class
        ),
    )
    assert found(text) == {(2, 1, "GL004"), (3, 2, "GL004"), (5, 1, "GL004"), (8, 15, "GL004")}


def test_no_fix_hides_what_a_cell_shows():
    """`with torch.no_grad():` around a cell's last expression would stop IPython
    showing it: no fix is offered there, while a `print(...)` is still wrapped."""
    text = notebook_json(
        ("code", _EVALUATED_MODEL),
        ("code", "model(x)[:3]"),
        ("code", "print(model(x))"),
    )
    fixes = {d.cell.number: d.fix for d in lint(text).diagnostics}
    assert set(fixes) == {2, 3}
    assert fixes[2] is None
    assert fixes[3] is not None


def test_wraps_in_two_cells_are_not_merged_into_one_block(tmp_path: Path):
    """Two cells each ending in a forward get one `with torch.no_grad():` each: a block
    spanning both cells could not be written back (it was refused as crossing a cell
    boundary, and nothing was fixed)."""
    path = tmp_path / "nb.ipynb"
    path.write_text(
        notebook_json(
            ("code", _EVALUATED_MODEL),
            ("code", "print(model(x))"),
            ("code", "print(model(x))"),
        ),
        encoding="utf-8",
    )
    assert cli.main(["--isolated", "--no-cache", "--fix", "--unsafe-fixes", str(path)]) == 0
    cells = read_notebook(path.read_text(encoding="utf-8"), str(path)).cells
    sources = [c.source for c in cells]
    assert sources[1] == sources[2] == "with torch.no_grad():\n    print(model(x))"
