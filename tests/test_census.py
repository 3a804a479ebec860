"""The site census's fixed parts: the split, the census files' shape, how a finding
matches a site, and the enumeration of sites without gradlint (bench/real-code/)."""

from __future__ import annotations

import csv
import hashlib
import io
import sys
import textwrap
from pathlib import Path

import pytest

REAL_CODE = Path(__file__).resolve().parent.parent / "bench" / "real-code"


@pytest.fixture(scope="module")
def census():
    sys.path.insert(0, str(REAL_CODE))
    try:
        import census as module

        yield module
    finally:
        sys.path.remove(str(REAL_CODE))


def test_the_split_is_the_hash_of_the_name_and_corpus_tsv_records_it(census):
    rows = list(csv.DictReader((REAL_CODE / "corpus.tsv").open(), delimiter="\t"))
    assert len(rows) >= 60
    for row in rows:
        even = hashlib.sha256(row["repo"].lower().encode()).digest()[0] % 2 == 0
        assert census.half_of(row["repo"]) == ("dev" if even else "test") == row["half"]
    halves = {census.half_of(r["repo"]) for r in rows}
    assert halves == {"dev", "test"}


def test_no_reserved_repository_is_in_the_corpus():
    reserved = Path(__file__).resolve().parent.parent.parent / "shared" / "reserved-repos.md"
    if not reserved.exists():
        pytest.skip("shared/reserved-repos.md is not beside this checkout")
    names = {
        line[2:].strip().lower()
        for line in reserved.read_text(encoding="utf-8").splitlines()
        if line.startswith("- ")
    }
    rows = list(csv.DictReader((REAL_CODE / "corpus.tsv").open(), delimiter="\t"))
    assert not {r["repo"].lower() for r in rows} & names


def test_every_census_file_is_labelled_and_belongs_to_the_corpus(census):
    repos = {r["repo"] for r in csv.DictReader((REAL_CODE / "corpus.tsv").open(), delimiter="\t")}
    files = sorted((REAL_CODE / "census").glob("*.tsv"))
    assert len(files) == len(repos)
    for path in files:
        repo = path.stem.replace("+", "/", 1)
        assert repo in repos
        rows = census.read_census(repo)  # raises on an unknown label or a POS without code
        assert rows and all(r.label in ("POS", "NEG") for r in rows), repo


def test_a_finding_matches_a_site_in_its_range_or_at_the_forward_it_cites(census):
    site = census.SiteRow(
        "o/r",
        "a.py",
        "10",
        "20",
        "eval-scope",
        "GL004 GL012",
        "POS",
        "GL012",
        "test(): select_action forward (L286) runs with grad on",
    )
    assert site.covers("a.py", "15") and not site.covers("a.py", "21")
    assert not site.covers("b.py", "15")
    assert site.cites("a.py", "286") and not site.cites("a.py", "287")
    assert not site.cites("b.py", "286")
    elsewhere = census.SiteRow(
        "o/r",
        "run/main.py",
        "11",
        "11",
        "eval-scope",
        "GL004 GL012",
        "POS",
        "GL012",
        "agent.evaluate actor(s) with grad on (ppo_discrete.py:85), called from main.py L107",
    )
    assert elsewhere.cites("run/ppo_discrete.py", "85")
    assert elsewhere.cites("main.py", "107") and not elsewhere.cites("run/main.py", "85")
    assert not elsewhere.cites("run/other_ppo_discrete.py", "85")
    ranged = census.SiteRow(
        "o/r",
        "algorithms.py",
        "207",
        "207",
        "eval-scope",
        "GL012",
        "POS",
        "GL012",
        "test_policy(obs) each step; policy forward architectures.py L103-115 returns numpy",
    )
    assert ranged.cites("finrl/architectures.py", "113")
    assert not ranged.cites("finrl/architectures.py", "116")
    cell = census.SiteRow(
        "o/r", "n.ipynb", "3:1", "3:9", "eval-scope", "", "POS", "GL004", "net(X) at 26:6 with grad"
    )
    assert cell.covers("n.ipynb", "3:4") and not cell.covers("n.ipynb", "4:4")
    assert cell.cites("n.ipynb", "26:6")
    bare = census.SiteRow(
        "o/r",
        "n.ipynb",
        "17:28",
        "17:30",
        "eval-scope",
        "",
        "POS",
        "GL012",
        "evaluate -> predict_labels forward 17:24 recorded, test cell 20:4 (v1.2:3 aside)",
    )
    assert bare.cites("n.ipynb", "17:24") and bare.cites("n.ipynb", "20:4")
    assert not bare.cites("n.ipynb", "2:3") and not bare.cites("n.ipynb", "17:2")
    named = census.SiteRow(
        "o/r",
        "n.ipynb",
        "16:1",
        "16:20",
        "eval-scope",
        "",
        "POS",
        "GL012",
        "generate_session calls get_action L16:7 whose forward (cell 9 L7) records",
    )
    assert named.cites("n.ipynb", "9:7") and named.cites("n.ipynb", "16:7")
    assert not named.cites("n.ipynb", "9:16")
    assert census.same_pitfall("GL004", "GL012") and not census.same_pitfall("GL004", "GL006")


def test_a_fix_is_caught_at_a_related_location_in_a_notebook_cell(census):
    # GL007 on Kind-PyTorch-Tutorial's notebook: reported at the step (cell 5, line 7),
    # with the loop that never clears (cell 5, line 3) as a related location, which is
    # where the upstream fix is labelled.
    finding = {
        "filename": "nb/Linear.ipynb",
        "cell": 5,
        "location": {"row": 7, "column": 5},
        "related": [
            {"filename": "/tmp/x/nb/Linear.ipynb", "cell": 5, "location": {"row": 3}},
            {"filename": "/tmp/x/nb/Other.ipynb", "cell": 2, "location": {"row": 1}},
        ],
    }
    assert census._places(finding, "/tmp/x") == [
        ("nb/Linear.ipynb", "5:7"),
        ("nb/Linear.ipynb", "5:3"),
        ("nb/Other.ipynb", "2:1"),
    ]
    assert census._places(finding)[:2] == [("nb/Linear.ipynb", "5:7"), ("nb/Linear.ipynb", "5:3")]
    places = census._places(finding, "/tmp/x")
    assert any(p == "nb/Linear.ipynb" and census._near(at, (5, 3)) for p, at in places)
    assert not any(p == "nb/Linear.ipynb" and census._near(at, (3, 3)) for p, at in places)
    script = {
        "filename": "a.py",
        "location": {"row": 40},
        "related": [{"filename": "a.py", "location": {"row": 12}}],
    }
    assert census._places(script) == [("a.py", "40"), ("a.py", "12")]


def test_a_site_is_reported_by_a_related_location_in_another_file(census):
    # GL016 at train.py's training forward names the `eval()` that `eval_net` in
    # eval.py leaves on (milesial/Pytorch-UNet before 773ef215): the site in eval.py,
    # where the upstream fix added `net.train()`, is reported by it
    site = census.SiteRow(
        "o/r", "eval.py", "10", "10", "mode", "", "POS", "GL016", "eval() never undone"
    )
    finding = {
        "filename": "train.py",
        "location": {"row": 78},
        "related": [
            {"filename": "/tmp/x/train.py", "location": {"row": 97}},
            {"filename": "/tmp/x/eval.py", "location": {"row": 10}},
        ],
    }
    assert site.reported_at(census._places(finding, "/tmp/x"))
    assert not site.reported_at(census._places(finding, "/tmp/x")[:2])


def test_the_fix_benchmark_lints_the_files_that_import_the_fixed_one(census, tmp_path):
    files = {
        "eval.py": "def eval_net(net):\n    net.eval()\n",
        "train.py": "from eval import eval_net\n",
        "pkg/run.py": "from ..tools import eval as ev\n",
        "nb.ipynb": '{"cells": [{"source": ["import eval\\n"]}]}',
        "other.py": "x = eval('1')\nevaluation = 1\n",
        "evaluate.py": "from evaluate_tools import f\n",
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    assert census._importers(tmp_path, "eval.py") == ["nb.ipynb", "pkg/run.py", "train.py"]
    assert census._importers(tmp_path, "pkg/__init__.py") == []


def test_a_site_is_reported_by_a_related_location_of_a_finding_in_its_file(census):
    # GL004 at each evaluating call of a notebook's `get_sample_image(G)`, after `G.eval()`,
    # names the forward inside the helper (cell 8, line 6) as a related location: that
    # reports the helper's own site (cell 8, lines 1-11), not a site elsewhere.
    helper = census.SiteRow(
        "o/r", "n.ipynb", "8:1", "8:11", "eval-scope", "", "POS", "GL004", "G forward at 8:6"
    )
    other = census.SiteRow(
        "o/r", "n.ipynb", "12:1", "12:9", "eval-scope", "", "POS", "GL004", "D forward at 12:3"
    )
    finding = {
        "filename": "/tmp/x/n.ipynb",
        "cell": 19,
        "location": {"row": 33},
        "related": [
            {"filename": "/tmp/x/n.ipynb", "cell": 19, "location": {"row": 32}},
            {"filename": "/tmp/x/n.ipynb", "cell": 8, "location": {"row": 6}},
        ],
    }
    places = census._places(finding, "/tmp/x")
    assert helper.reported_at(places)
    assert not helper.reported_at(places[:1])
    assert not other.reported_at(places)
    elsewhere = census._places(dict(finding, filename="/tmp/x/m.ipynb"), "/tmp/x")
    assert not helper.reported_at([(p.replace("n.", "m."), at) for p, at in elsewhere])


def test_sites_are_enumerated_with_ast_alone(tmp_path):
    sys.path.insert(0, str(REAL_CODE))
    try:
        import sites
    finally:
        sys.path.remove(str(REAL_CODE))
    (tmp_path / "train.py").write_text(
        "import torch\n\n\n"
        "def evaluate(model, loader):\n"
        "    model.eval()\n"
        "    for x in loader:\n"
        "        out = model(x)\n\n\n"
        "def train(model, loader, opt):\n"
        "    h = None\n"
        "    total = 0\n"
        "    for x in loader:\n"
        "        out, h = model(x, h)\n"
        "        loss = out.sum()\n"
        "        loss.backward()\n"
        "        opt.step()\n"
        "        total += loss\n",
        encoding="utf-8",
    )
    found = {(s.kind, s.line) for s in sites.sites_of_file(tmp_path, "train.py")}
    assert ("eval-scope", "4") in found
    assert ("train-loop", "13") in found
    assert ("carried-state", "14") in found
    assert ("backward", "16") in found
    assert ("accumulator", "18") in found
    source = (REAL_CODE / "sites.py").read_text(encoding="utf-8")
    assert "import gradlint" not in source and "from gradlint" not in source


def test_levels_joins_the_consequence_rows_with_a_fresh_run_per_half_and_level(census, tmp_path):
    table = tmp_path / "consequence.tsv"
    table.write_text(
        "repo\tpath\tline\tcode\tlevel\tconsequence\treason\n"
        "o/a\ta.py\t3\tGL012\twarning\tTP\tper batch\n"
        "o/a\ta.py\t9\tGL012\twarning\tTP-minor\tonce\n"
        "o/a\tn.ipynb\t2:4\tGL001\thint\tTP\tcrash\n"
        "o/b\tb.py\t5\tGL004\thint\tTP-minor\ta test\n",
        encoding="utf-8",
    )

    def finding(half, repo, path, line, code, level, verdict="TRUE"):
        return dict(
            half=half, repo=repo, path=path, line=line, code=code, level=level, verdict=verdict
        )

    findings = [
        finding("dev", "o/a", "a.py", "3", "GL012", "warning"),
        finding("dev", "o/a", "a.py", "9", "GL012", "warning"),
        finding("dev", "o/a", "n.ipynb", "2:4", "GL001", "error"),
        finding("dev", "o/a", "a.py", "20", "GL012", "warning"),  # true, no row yet
        finding("dev", "o/a", "a.py", "30", "GL012", "warning", verdict="FALSE"),
        finding("dev", "o/a", "a.py", "31", "GL012", "hint", verdict=""),  # not judged
        finding("test", "o/b", "b.py", "5", "GL004", "hint"),
    ]
    out = io.StringIO()
    result = census.consequence_levels(findings, census.read_consequence(table), out)
    dev, test = result["levels"]["dev"], result["levels"]["test"]
    # judged as a hint once; counted at the level the fresh run gives it
    assert (dev["error"]["true"], dev["error"]["TP"], dev["error"]["share"]) == (1, 1, 1.0)
    assert dev["error"]["target"] == 0.8
    assert (dev["warning"]["true"], dev["warning"]["TP"], dev["warning"]["unjudged"]) == (3, 1, 1)
    assert dev["warning"]["share"] == 0.5  # over the judged ones only
    assert dev["hint"]["true"] == 0  # the false and the unjudged finding are left out
    assert test["hint"]["TP-minor"] == 1 and test["hint"]["share"] == 0.0
    assert test["error"]["share"] is None
    assert result["unjudged"] == [
        {
            "half": "dev",
            "repo": "o/a",
            "path": "a.py",
            "line": "20",
            "code": "GL012",
            "level": "warning",
        }
    ]
    assert "a.py:20 GL012 [warning]" in out.getvalue()


def test_a_consequence_row_must_say_tp_or_tp_minor_once(census, tmp_path):
    table = tmp_path / "consequence.tsv"
    header = "repo\tpath\tline\tcode\tlevel\tconsequence\treason\n"
    table.write_text(header + "o/a\ta.py\t3\tGL012\twarning\tFP\tno\n", encoding="utf-8")
    with pytest.raises(SystemExit, match="TP or TP-minor"):
        census.read_consequence(table)
    row = "o/a\ta.py\t3\tGL012\twarning\tTP\tper batch\n"
    table.write_text(header + row + row, encoding="utf-8")
    with pytest.raises(SystemExit, match="judged twice"):
        census.read_consequence(table)


def test_every_true_census_finding_judged_for_consequence_is_a_known_key(census):
    rows = census.read_consequence()
    assert rows, "consequence.tsv is missing"
    repos = {r["repo"] for r in csv.DictReader((REAL_CODE / "corpus.tsv").open(), delimiter="\t")}
    assert {repo for repo, *_ in rows} <= repos


def test_prepare_lays_out_each_repository_with_a_root_of_its_own(census, tmp_path, monkeypatch):
    # a repository with neither setup.py nor a kept pyproject.toml must still be a
    # project of its own, as its clone is, or the caller search climbs to the corpus
    import ledger

    git_dir = tmp_path / "src.git"
    work = tmp_path / "work"
    work.mkdir()
    (work / "train.py").write_text("import torch\n")
    (work / "README.md").write_text("not linted\n")
    run = {"cwd": work, "check": True, "capture_output": True}
    import subprocess

    subprocess.run(["git", "init", "-q", "--separate-git-dir", str(git_dir)], **run)
    subprocess.run(["git", "add", "-A"], **run)
    env = "-c user.name=t -c user.email=t@t".split()
    subprocess.run(["git", *env, "commit", "-qm", "one"], **run)
    head = subprocess.run(["git", "rev-parse", "HEAD"], **run).stdout.decode().strip()
    monkeypatch.setattr(ledger, "read_corpus", lambda: [ledger.Repo("o/n", head, "RL")])
    assert ledger.prepare(tmp_path / "corpus", str(git_dir)) == 0
    laid_out = tmp_path / "corpus" / "o+n"
    assert sorted(p.name for p in laid_out.iterdir()) == [".git", "train.py"]
    (laid_out / ".git").rmdir()  # an older layout gets its marker when prepared again
    assert ledger.prepare(tmp_path / "corpus", str(git_dir)) == 0
    assert (laid_out / ".git").is_dir()


def test_prepare_skips_a_repository_whose_git_directory_was_not_fetched(
    census, tmp_path, monkeypatch, capsys
):
    # a session may fetch only part of the corpus: the rest is laid out, the missing
    # one named on stderr, and the run still succeeds
    import subprocess

    import ledger

    work = tmp_path / "work"
    work.mkdir()
    (work / "train.py").write_text("import torch\n")
    run = {"cwd": work, "check": True, "capture_output": True}
    subprocess.run(["git", "init", "-q"], **run)  # a work tree with .git inside, as a mirror
    subprocess.run(["git", "add", "-A"], **run)
    env = "-c user.name=t -c user.email=t@t".split()
    subprocess.run(["git", *env, "commit", "-qm", "one"], **run)
    head = subprocess.run(["git", "rev-parse", "HEAD"], **run).stdout.decode().strip()
    (tmp_path / "mirrors").mkdir()
    work.rename(tmp_path / "mirrors" / "o+n")
    monkeypatch.setattr(
        ledger,
        "read_corpus",
        lambda: [ledger.Repo("o/missing", head, "RL"), ledger.Repo("o/n", head, "RL")],
    )
    assert ledger.prepare(tmp_path / "corpus", str(tmp_path / "mirrors" / "{folder}")) == 0
    assert (tmp_path / "corpus" / "o+n" / "train.py").exists()
    assert not (tmp_path / "corpus" / "o+missing").exists()
    assert "o/missing: no git directory" in capsys.readouterr().err


def test_the_fix_benchmark_skips_fixes_whose_repository_was_not_fetched(
    census, tmp_path, monkeypatch
):
    fix = {"repo": "o/missing", "fix_commit": "0" * 40, "path": "a.py", "code": "GL012"}
    fix |= {"parent_line": "3", "fix_range": "3"}
    monkeypatch.setattr(census, "read_fixes", lambda: [fix])
    out = io.StringIO()
    stats = census.cmd_fixes(str(tmp_path / "{folder}"), "all", out=out)
    half = census.half_of("o/missing")
    assert stats[half]["not here"] == 1 and stats[half].get("fixes", 0) == 0
    assert "1 fixes skipped, no git directory" in out.getvalue()


def test_the_fetch_order_puts_the_cost_trees_then_the_development_half_first(census):
    order = census.fetch_order()
    names = [r["repo"] for r in csv.DictReader((REAL_CODE / "corpus.tsv").open(), delimiter="\t")]
    assert sorted(order) == sorted(names)  # every repository, once
    first_test = next(
        i
        for i, n in enumerate(order)
        if census.half_of(n) == "test" and n not in census._COST_TREES
    )
    tail = order[first_test:]
    assert all(census.half_of(n) == "test" for n in tail)
    assert set(census._COST_TREES) <= set(order[:first_test])


@pytest.fixture(scope="module")
def fresh(census):
    sys.path.insert(0, str(REAL_CODE))
    try:
        import fresh as module

        yield module
    finally:
        sys.path.remove(str(REAL_CODE))


def test_every_fresh_sample_is_labelled_development_code_outside_the_census(census, fresh):
    samples = sorted((REAL_CODE / "fresh").glob("*.tsv"))
    assert samples
    for sample in samples:
        rows = fresh.read_sample(sample)
        assert rows and all(r.label in ("POS", "NEG") for r in rows), sample.name
        assert all(c.startswith("GL") for r in rows for c in r.codes.split()), sample.name
        assert all(census.half_of(r.repo) == "dev" for r in rows), sample.name
        for repo in {r.repo for r in rows}:
            held = {row.path for row in census.read_census(repo)}
            assert not held & {r.path for r in rows if r.repo == repo}, (sample.name, repo)


def test_a_fresh_sample_lints_the_files_its_positive_reasons_cite(fresh, tmp_path):
    root = tmp_path / "owner+name"
    (root / "pkg").mkdir(parents=True)
    for name in ("pkg/eval.py", "pkg/agent.py", "pkg/other.py", "main.py"):
        (root / name).write_text("", encoding="utf-8")
    row = dict.fromkeys(fresh.COLUMNS, "")
    positive = fresh.census.SiteRow(
        **{
            **row,
            "repo": "owner/name",
            "path": "main.py",
            "label": "POS",
            "code": "GL012",
            "reason": "act() L3 runs the forward in agent.py L12 with grad on",
        }
    )
    negative = fresh.census.SiteRow(
        **{
            **row,
            "repo": "owner/name",
            "path": "pkg/eval.py",
            "label": "NEG",
            "reason": "covered by no_grad in other.py L4",
        }
    )
    files = fresh._files_to_lint(tmp_path, [positive, negative])
    assert files == {"owner/name": {"main.py", "pkg/eval.py", "pkg/agent.py"}}


def test_a_fresh_sample_is_scored_on_the_repositories_laid_out(fresh, tmp_path, capsys):
    sample = tmp_path / "sample.tsv"
    row = ["owner/absent", "main.py", "3", "4", "eval-scope", "GL004 GL012", "POS", "GL012", "x"]
    sample.write_text("\t".join(fresh.COLUMNS) + "\n" + "\t".join(row) + "\n", encoding="utf-8")
    assert fresh.cmd_score(tmp_path, [sample], misses=False) == 0
    out, err = capsys.readouterr()
    assert "owner/absent is not in" in err
    assert "0 positive with a rule, 0 caught" in out


def test_a_fresh_sample_counts_a_catch_as_the_census_does(fresh, tmp_path, capsys):
    """One pitfall, two rules (census.FAMILY): an accumulator kept across a loop without
    backward that a reader calls GL006 is caught by gradlint's GL015 there, in a fresh
    sample as in the census (fresh.py once asked for the same code)."""
    root = tmp_path / "owner+name"
    root.mkdir()
    (root / "valid.py").write_text(
        textwrap.dedent(
            """\
            import torch
            import torch.nn as nn


            def valid(loader):
                classifier = nn.Linear(4, 1)
                loss_list = []
                for x, y in loader:
                    loss = ((classifier(x) - y) ** 2).mean()
                    loss_list.append(loss)
                return torch.stack(loss_list).mean().item()
            """
        ),
        encoding="utf-8",
    )
    sample = tmp_path / "sample.tsv"
    row = ["owner/name", "valid.py", "10", "10", "accumulator", "GL006", "POS", "GL006", "x"]
    sample.write_text("\t".join(fresh.COLUMNS) + "\n" + "\t".join(row) + "\n", encoding="utf-8")
    original = fresh.census.half_of
    fresh.census.half_of = lambda repo: "dev"
    try:
        assert fresh.cmd_score(tmp_path, [sample], misses=True) == 0
    finally:
        fresh.census.half_of = original
    out, _ = capsys.readouterr()
    assert "1 positive with a rule, 1 caught" in out, out
