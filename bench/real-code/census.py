"""The site census: recall and precision on real code, with a held-back half.

    python bench/real-code/census.py split
    python bench/real-code/census.py prepare CORPUS_DIR --git-dir-template T
    python bench/real-code/census.py sites CORPUS_DIR REPO [REPO ...] [--max-files N]
    python bench/real-code/census.py score CORPUS_DIR [--half dev|test|all] [--check]
    python bench/real-code/census.py fixes CORPUS_DIR --git-dir-template T [--half ...]
    python bench/real-code/census.py levels CORPUS_DIR [--half dev|test|all] [--check]

**Split.** Every repository of `corpus.tsv` belongs to the development half or the test
half by the parity of the first byte of sha256(lower-case "owner/name"). The rule was fixed
before any repository was labelled and does not depend on what gradlint reports. Tune only
on `dev`; score `test` only to report.

**Sites.** `sites` enumerates, with `sites.py` (plain `ast`, no gradlint), every place in a
repository's sampled files where a pitfall could be, and writes them to
`census/<owner>+<name>.tsv` with an empty label, keeping the labels of rows already there.
A person then judges each row by reading the code:

    label   POS: the pitfall is there; NEG: it is not
    code    for POS, the rule whose pitfall it is (GL001..GL017), or `other` when no rule
            describes it
    reason  one line

**Score.** `score` lints the corpus with every rule (preview included) and reports per half:

- recall: the share of POS sites whose code is an existing rule that gradlint reports at
  that site (a finding of that code in the same file whose line is in the site's range);
- precision: over every finding in the census files, FALSE when a row of `judged.tsv` or
  `ledger.tsv` read it false at its line (a site's range is coarser than a finding; such a
  finding catches no site either), else TRUE when it falls on a POS site of its code,
  FALSE when it falls only on NEG sites of its code, otherwise judged by a row of
  `judged.tsv` or `ledger.tsv`, otherwise unjudged (printed).

`--check` exits 1 when a finding is judged false or unjudged, or a POS site is missed.

**Levels.** `consequence.tsv` says, for every TRUE finding of the census files, whether it
matters (`TP`: a crash, a silently wrong result, memory that grows with the run, real waste
on a hot path) or is true but cheap (`TP-minor`), judged by reading the code as the
ledger's rows are, with the level gradlint gave it then. `levels` joins it with a fresh
`score` run and prints, per half and per level gradlint gives now (error, warning, hint),
the share of true findings that matter, and every true finding not judged yet; `--check`
exits 1 when one is.

**Fixes.** `fixes.tsv` lists commits of the corpus that fixed a pitfall: the parent is a
labelled positive at `parent_line`; the fix commit must be clean within `fix_range`. The
fixed file is linted with the files that import it; a finding catches the fix at its own
line or at a related location in the fixed file.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import io
import json
import os
import re
import subprocess
import sys
import tempfile
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import ledger  # noqa: E402
import sites as site_enum  # noqa: E402

CENSUS_DIR = HERE / "census"
FIXES_TSV = HERE / "fixes.tsv"
# Verdicts on findings that fall on no labelled site: repo, path, line, code, verdict
# (TRUE or FALSE), reason. Written by reading the code, as the ledger's rows are.
JUDGED_TSV = HERE / "judged.tsv"
# Whether each TRUE finding of the census files matters: repo, path, line, code, level (as
# gradlint gave it when judged), consequence (TP or TP-minor), reason.
CONSEQUENCE_TSV = HERE / "consequence.tsv"
CONSEQUENCE_COLUMNS = ("repo", "path", "line", "code", "level", "consequence", "reason")
SITE_COLUMNS = ("path", "line", "end_line", "kind", "codes", "label", "code", "reason")
FIX_COLUMNS = (
    "repo",
    "fix_commit",
    "path",
    "parent_line",
    "fix_range",
    "code",
    "reason",
)
LABELS = {"POS", "NEG", ""}


def _existing_rules() -> set[str]:
    """The codes of the rules gradlint has now; a POS site of any other code counts as a
    pitfall no rule covers yet."""
    try:
        from gradlint.codes import all_codes
    except ImportError:  # an older gradlint: the twelve first rules
        return {f"GL{n:03d}" for n in range(1, 13)}
    return {code for code in all_codes() if code.startswith("GL0")}


RULES = _existing_rules()
# One pitfall, two rules: a forward that records a graph nobody differentiates is GL004
# after `eval()` and GL012 in training mode. Which of the two applies turns on a mode
# switch that is often in another function, so a judge and gradlint may name different
# ones for the same forward; either names the pitfall.
FAMILY = {"GL004": "GL004/GL012", "GL012": "GL004/GL012"}
# The same for a graph kept across a loop's iterations by an accumulator (`total +=
# loss`): GL006 where the loop runs a backward, GL015 where it runs none (issue 22 names
# "a running average of model outputs" among GL015's places). Whether a backward runs in
# the loop is often in a helper; either code names the pitfall.
FAMILY |= {"GL006": "GL006/GL015", "GL015": "GL006/GL015"}


def same_pitfall(a: str, b: str) -> bool:
    return FAMILY.get(a, a) == FAMILY.get(b, b)


def reports_site(site: SiteRow, code: str, places: list[tuple[str, str]]) -> bool:
    """Does a finding of `code` at `places` (_places) report the positive site: the same
    pitfall, at the site or a line its reason cites? The census and the fresh samples
    (fresh.py) count a catch alike."""
    return same_pitfall(code, site.code) and site.reported_at(places)


# A judge names the line of the forward an evaluation scope runs when it sits in a helper
# the scope calls ("select_action forward (L286)", "net(X) at 26:6", "at cell 14:1").
_CITED = re.compile(r"(?:\bL|\bat (?:cell )?)(\d+)(?::(\d+))?")
# In a notebook a position is `CELL:ROW`, which names its place with or without a word
# before it ("predict_labels forward 17:24"), or "cell 9 L7".
_CITED_IN_NOTEBOOK = re.compile(r"(?<![\w.:])(\d+):(\d+)(?![\w:])|\bcell (\d+),? L(\d+)\b")
# ... or in another file of the repository, when the forward or the call that runs the
# scope is there ("agent.evaluate ... (ppo_discrete.py:85)", "called from main.py L107",
# "policy forward architectures.py L103-115").
_CITED_ELSEWHERE = re.compile(r"([\w./-]+\.py)(?::| L)(\d+)(?:-(\d+))?\b")


def half_of(repo: str) -> str:
    return "dev" if hashlib.sha256(repo.lower().encode()).digest()[0] % 2 == 0 else "test"


# -- census files ----------------------------------------------------------------------


@dataclass(frozen=True)
class SiteRow:
    repo: str
    path: str
    line: str
    end_line: str
    kind: str
    codes: str
    label: str
    code: str
    reason: str

    def covers(self, path: str, line: str) -> bool:
        if path != self.path:
            return False
        return _pos(self.line) <= _pos(line) <= _pos(self.end_line)

    def cites(self, path: str, line: str) -> bool:
        """The site's reason names this line as the place of its pitfall (the forward of
        an evaluation scope, or the forward a `no_grad` block was meant to cover), or the
        forward or call in another file that it names."""
        if path != self.path:
            # a line (`utils.py:85`) or a range (`architectures.py L103-115`)
            return any(
                (path == cited or path.endswith("/" + cited))
                and (0, int(row)) <= _pos(line) <= (0, int(last or row))
                for cited, row, last in _CITED_ELSEWHERE.findall(self.reason)
            )
        cell = _pos(self.line)[0]
        for match in _CITED.finditer(self.reason):
            if match.group(2) is not None:
                cited = (int(match.group(1)), int(match.group(2)))
            else:
                cited = (cell, int(match.group(1)))
            if cited == _pos(line):
                return True
        if self.path.endswith(".ipynb"):
            for match in _CITED_IN_NOTEBOOK.finditer(self.reason):
                cell_row = [int(g) for g in match.groups() if g is not None]
                if tuple(cell_row) == _pos(line):
                    return True
        return False

    def reported_at(self, places: list[tuple[str, str]]) -> bool:
        """A finding reports this site when its own line or one of its related locations
        (`_places`, each with its file) is in the site's range or at the line its reason
        cites: a forward inside a helper is reported by the finding at each evaluating
        call, which names that forward as a related location, and an `eval()` left on
        inside `evaluate()` in eval.py by GL016's finding at the training forward in
        train.py, which names it; the fix benchmark counts them the same way."""
        return any(self.covers(path, at) or self.cites(path, at) for path, at in places)


def _pos(line: str) -> tuple[int, int]:
    if ":" in line:
        cell, row = line.split(":", 1)
        return int(cell), int(row)
    return 0, int(line)


def census_file(repo: str) -> Path:
    return CENSUS_DIR / (repo.replace("/", "+") + ".tsv")


def read_census(repo: str) -> list[SiteRow]:
    path = census_file(repo)
    if not path.exists():
        return []
    rows = []
    with path.open(newline="", encoding="utf-8") as handle:
        for n, r in enumerate(csv.DictReader(handle, delimiter="\t"), start=2):
            label = (r.get("label") or "").strip()
            if label not in LABELS:
                raise SystemExit(f"{path}:{n}: unknown label {label!r}")
            code = (r.get("code") or "").strip()
            if label == "POS" and not code:
                raise SystemExit(f"{path}:{n}: a POS site needs a code")
            rows.append(
                SiteRow(
                    repo,
                    r["path"],
                    r["line"],
                    r["end_line"],
                    r["kind"],
                    r["codes"],
                    label,
                    code,
                    (r.get("reason") or "").strip(),
                )
            )
    return rows


def write_census(repo: str, rows: list[SiteRow]) -> None:
    CENSUS_DIR.mkdir(exist_ok=True)
    with census_file(repo).open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle, delimiter="\t", lineterminator="\n")
        writer.writerow(SITE_COLUMNS)
        for r in sorted(rows, key=lambda r: (r.path, _pos(r.line), r.kind)):
            writer.writerow(
                (r.path, r.line, r.end_line, r.kind, r.codes, r.label, r.code, r.reason)
            )


def cmd_sites(corpus_dir: Path, repos: list[str], max_files: int) -> int:
    known = {r.name: r for r in ledger.read_corpus()}
    for name in repos:
        if name not in known:
            raise SystemExit(f"{name} is not in corpus.tsv")
        root = corpus_dir / known[name].folder
        old = {(r.path, r.line, r.kind): r for r in read_census(name)}
        files = site_enum.sampled_files(root, name, max_files)
        rows = []
        for rel in files:
            for site in site_enum.sites_of_file(root, rel):
                prev = old.get((site.path, site.line, site.kind))
                rows.append(
                    SiteRow(
                        name,
                        site.path,
                        site.line,
                        site.end_line,
                        site.kind,
                        site.codes,
                        prev.label if prev else "",
                        prev.code if prev else "",
                        prev.reason if prev else "",
                    )
                )
        # Pitfalls a judge found by reading, where no enumerated site lies, are kept.
        rows += [r for r in old.values() if r.kind == "read"]
        write_census(name, rows)
        print(f"{name}: {len(files)} files, {len(rows)} sites -> {census_file(name)}")
    return 0


# -- scoring ---------------------------------------------------------------------------


def _lint_files(root: Path, files: list[str]) -> list[dict]:
    return ledger.lint_json(root, files, f"gradlint failed in {root}") if files else []


def _cited_files(root: Path, rows: list[SiteRow], sampled: set[str]) -> list[str]:
    """The repository's files that a positive site's reason names as the place of its
    forward or call (`ppo_discrete.py:85`), beyond the sampled ones."""
    names = {
        cited
        for r in rows
        if r.label == "POS"
        for cited, _row, _last in _CITED_ELSEWHERE.findall(r.reason)
    }
    if not names:
        return []
    found = []
    for folder, dirs, filenames in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d != ".git")
        for filename in filenames:
            path = os.path.relpath(os.path.join(folder, filename), root).replace(os.sep, "/")
            if path not in sampled and any(
                path == name or path.endswith("/" + name) for name in names
            ):
                found.append(path)
    return sorted(found)


def score(corpus_dir: Path, half: str, out=sys.stdout) -> dict:
    repos = [r for r in ledger.read_corpus() if half in ("all", half_of(r.name))]
    judged = {r.key: r.verdict for r in ledger.read_ledger()}
    judged |= read_judged()

    def judged_false(repo: str, path: str, line: str, code: str) -> bool:
        said = judged.get((repo, path, line, code))
        return said is not None and said not in ledger.GOOD

    stats = {h: Counter() for h in ("dev", "test")}
    per_rule: dict[tuple[str, str], Counter] = defaultdict(Counter)
    missed: list[str] = []
    unjudged: list[str] = []
    false: list[str] = []
    # every finding with its half, level and verdict, for `levels`
    records: list[dict[str, str]] = []
    for repo in repos:
        rows = read_census(repo.name)
        if not rows:
            continue
        h = half_of(repo.name)
        root = corpus_dir / repo.folder
        if not root.is_dir():
            print(f"warning: {repo.name} is not in {corpus_dir}", file=sys.stderr)
            continue
        files = sorted({r.path for r in rows})
        sampled = set(files)
        # findings in the files the census sampled count for precision; those in another
        # file a site's reason names only for that site's recall
        findings = []
        elsewhere = []
        # the census follows only evaluation scopes' citations to other files
        scopes = [r for r in rows if r.kind == "eval-scope"]
        linted = [f for f in files + _cited_files(root, scopes, sampled) if (root / f).exists()]
        for item in _lint_files(root, linted):
            path = os.path.relpath(item["filename"], root).replace(os.sep, "/")
            (findings if path in sampled else elsewhere).append(
                (
                    path,
                    ledger.finding_line(item),
                    item["code"],
                    item["message"],
                    item.get("severity") or "",
                    _places(item, root),
                )
            )
        stats[h]["repos"] += 1
        stats[h]["sites"] += len(rows)
        stats[h]["labelled"] += sum(1 for r in rows if r.label)
        for site in rows:
            if site.label != "POS":
                continue
            if site.code not in RULES:
                stats[h]["pos_uncovered"] += 1
                continue
            stats[h]["pos"] += 1
            per_rule[(h, site.code)]["pos"] += 1
            if any(
                reports_site(site, code, places)
                and not judged_false(repo.name, p, ln, code)
                for p, ln, code, _message, _level, places in findings + elsewhere
            ):
                stats[h]["caught"] += 1
                per_rule[(h, site.code)]["caught"] += 1
            else:
                missed.append(f"{h} {repo.name} {site.path}:{site.line} {site.code} {site.reason}")
        for path, line, code, message, level, places in findings:
            stats[h]["findings"] += 1
            per_rule[(h, code)]["findings"] += 1
            on = [s for s in rows if s.label and s.covers(path, line) and code in s.codes]
            verdict = None
            if judged_false(repo.name, path, line, code):
                verdict = "FALSE"  # read at its line: the site's range is coarser
            elif any(
                s.label == "POS" and same_pitfall(s.code, code) and s.reported_at(places)
                for s in rows
            ):
                # true where it counts as a catch: at its line, or at a related location
                # (the forward inside a helper, named by the finding at the evaluating call)
                verdict = "TRUE"
            elif (said := judged.get((repo.name, path, line, code))) is not None:
                verdict = "TRUE" if said in ledger.GOOD else "FALSE"
            elif on and all(s.label == "NEG" for s in on):
                verdict = "FALSE"
            where = f"{h} {repo.name} {path}:{line} {code} {message}"
            records.append(
                {
                    "half": h,
                    "repo": repo.name,
                    "path": path,
                    "line": line,
                    "code": code,
                    "level": level,
                    "verdict": verdict or "",
                    "message": message,
                }
            )
            if verdict == "TRUE":
                stats[h]["true"] += 1
                per_rule[(h, code)]["true"] += 1
            elif verdict == "FALSE":
                stats[h]["false"] += 1
                per_rule[(h, code)]["false"] += 1
                false.append(where)
            else:
                stats[h]["unjudged"] += 1
                unjudged.append(where)

    def ratio(a: int, b: int) -> str:
        return f"{a / b:.2f}" if b else "n/a"

    print(
        "half  repos  sites  labelled  POS  caught  recall  findings  true  false  unjudged  "
        "precision  POS-no-rule",
        file=out,
    )
    result = {}
    for h in ("dev", "test"):
        s = stats[h]
        if not s["repos"]:
            continue
        judged_n = s["true"] + s["false"]
        result[h] = dict(s) | {
            "recall": s["caught"] / s["pos"] if s["pos"] else None,
            "precision": s["true"] / judged_n if judged_n else None,
        }
        print(
            f"{h:<5} {s['repos']:>5}  {s['sites']:>5}  {s['labelled']:>8}  {s['pos']:>3}  "
            f"{s['caught']:>6}  {ratio(s['caught'], s['pos']):>6}  {s['findings']:>8}  "
            f"{s['true']:>4}  {s['false']:>5}  {s['unjudged']:>8}  "
            f"{ratio(s['true'], judged_n):>9}  {s['pos_uncovered']:>11}",
            file=out,
        )
    print("\nper rule (half code: POS caught / findings true false)", file=out)
    for (h, code), c in sorted(per_rule.items()):
        print(
            f"  {h:<5}{code}: {c['caught']}/{c['pos']} caught; "
            f"{c['findings']} findings, {c['true']} true, {c['false']} false",
            file=out,
        )
    for title, items in (("missed", missed), ("false", false), ("unjudged", unjudged)):
        if items:
            print(f"\n{title} ({len(items)}):", file=out)
            for item in items:
                print(f"  {item}", file=out)
    result["missed"], result["false"], result["unjudged"] = missed, false, unjudged
    result["findings"] = records
    return result


# -- consequence per level -------------------------------------------------------------


def read_consequence(path: Path = CONSEQUENCE_TSV) -> dict[tuple[str, str, str, str], str]:
    """(repo, path, line, code) -> TP or TP-minor."""
    if not path.exists():
        return {}
    judged = {}
    with path.open(newline="", encoding="utf-8") as handle:
        for n, r in enumerate(csv.DictReader(handle, delimiter="\t"), start=2):
            if r["consequence"] not in ledger.CONSEQUENCES:
                raise SystemExit(f"{path}:{n}: consequence must be TP or TP-minor")
            key = (r["repo"], r["path"], r["line"], r["code"])
            if key in judged:
                raise SystemExit(f"{path}:{n}: {key} is judged twice")
            judged[key] = r["consequence"]
    return judged


def consequence_levels(
    findings: list[dict[str, str]],
    judged: dict[tuple[str, str, str, str], str],
    out=sys.stdout,
) -> dict:
    """Per half and level, how many TRUE findings matter (TP), how many are cheap
    (TP-minor), how many have no consequence row yet, and the share that matters among
    the judged ones, with the issue's target for the level. A finding not judged TRUE by
    `score` (false or unjudged) has no consequence and is left out."""
    counts: dict[tuple[str, str], Counter] = defaultdict(Counter)
    unjudged = []
    for f in findings:
        if f["verdict"] != "TRUE":
            continue
        consequence = judged.get((f["repo"], f["path"], f["line"], f["code"]), "")
        counts[(f["half"], f["level"])][consequence] += 1
        if not consequence:
            unjudged.append(f)
    print("true findings by level (TP: it matters; TP-minor: true but cheap)", file=out)
    print(
        f"{'half':<5} {'level':<8} {'true':>5} {'TP':>4} {'minor':>6} {'unjudged':>8} "
        f"{'share':>6} {'target':>7}",
        file=out,
    )
    figures: dict[str, dict[str, dict]] = {}
    halves = sorted({h for h, _ in counts}, key=("dev", "test").index)
    for h in halves:
        known = [lv for lv in ledger.LEVEL_TARGETS]
        others = sorted({lv for hh, lv in counts if hh == h} - set(known))
        for level in [*known, *others]:
            c = counts.get((h, level), Counter())
            rated = c["TP"] + c["TP-minor"]
            share = c["TP"] / rated if rated else None
            target = ledger.LEVEL_TARGETS.get(level)
            figures.setdefault(h, {})[level] = {
                "true": sum(c.values()),
                "TP": c["TP"],
                "TP-minor": c["TP-minor"],
                "unjudged": c[""],
                "share": share,
                "target": target,
            }
            print(
                f"{h:<5} {level:<8} {sum(c.values()):>5} {c['TP']:>4} {c['TP-minor']:>6} "
                f"{c['']:>8} {(f'{share:.2f}' if share is not None else '-'):>6} "
                f"{(f'{target:.2f}' if target is not None else '-'):>7}",
                file=out,
            )
    if unjudged:
        print(f"\ntrue findings with no consequence row ({len(unjudged)}):", file=out)
        for f in unjudged:
            print(
                f"  {f['half']} {f['repo']} {f['path']}:{f['line']} {f['code']} "
                f"[{f['level']}] {f.get('message', '')}",
                file=out,
            )
    keys = ("half", "repo", "path", "line", "code", "level")
    return {"levels": figures, "unjudged": [{k: f[k] for k in keys} for f in unjudged]}


def read_judged() -> dict[tuple[str, str, str, str], str]:
    if not JUDGED_TSV.exists():
        return {}
    with JUDGED_TSV.open(newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle, delimiter="\t"))
    for n, r in enumerate(rows, start=2):
        if r["verdict"] not in ("TRUE", "FALSE"):
            raise SystemExit(f"{JUDGED_TSV}:{n}: verdict must be TRUE or FALSE")
    return {(r["repo"], r["path"], r["line"], r["code"]): r["verdict"] for r in rows}


# -- fix benchmark ---------------------------------------------------------------------


def read_fixes() -> list[dict[str, str]]:
    if not FIXES_TSV.exists():
        return []
    with FIXES_TSV.open(newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle, delimiter="\t"))


# A checkout of the commit is laid out whole (its Python files and the files that mark
# a project root), so the project-wide pass reads the repository as a user's checkout
# has it: a library class an example imports is there. A repository larger than this
# keeps only the linted file's folder, as the first rounds of the benchmark did.
_PROJECT_FILES = 4000
_ROOT_MARKERS = ("setup.py", "setup.cfg", "pyproject.toml")


def _lint_blob(git_dir: str, commit: str, path: str) -> list[dict]:
    """Lint `path` at `commit`, in a checkout of that commit's Python files."""
    folder = os.path.dirname(path)
    listing = subprocess.run(
        ["git", "--git-dir", git_dir, "ls-tree", "-r", "-z", commit],
        capture_output=True,
        check=True,
    ).stdout
    wanted: list[tuple[str, str]] = []
    for entry in listing.split(b"\0"):
        if not entry:
            continue
        meta, name = entry.split(b"\t", 1)
        _mode, kind, sha = meta.split()
        name_s = name.decode(errors="replace")
        if kind == b"blob" and (name_s.endswith((".py", ".ipynb")) or name_s in _ROOT_MARKERS):
            wanted.append((name_s, sha.decode()))
    if len(wanted) > _PROJECT_FILES:
        wanted = [
            (n, sha) for n, sha in wanted if os.path.dirname(n) == folder or n in _ROOT_MARKERS
        ]
    with tempfile.TemporaryDirectory() as scratch:
        batch = subprocess.run(
            ["git", "--git-dir", git_dir, "cat-file", "--batch"],
            input="".join(f"{sha}\n" for _, sha in wanted).encode(),
            capture_output=True,
            check=True,
        ).stdout
        at = 0
        for name_s, _sha in wanted:
            header_end = batch.index(b"\n", at)
            header = batch[at:header_end].split()
            at = header_end + 1
            if len(header) < 3 or header[1] == b"missing":
                continue  # a blob the snapshot does not hold (a partial clone)
            size = int(header[2])
            blob = batch[at : at + size]
            at += size + 1
            dest = Path(scratch, name_s)
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_bytes(blob)
        if not Path(scratch, path).exists():
            return []
        linted = [path] + _importers(Path(scratch), path)
        return [
            dict(
                item,
                filename=_relative(item["filename"], scratch),
                places=_places(item, scratch),
            )
            for item in _lint_files(Path(scratch), linted)
        ]


# How many of the files that import a fix's file the fix benchmark lints beside it.
_MAX_IMPORTERS = 30


def _importers(root: Path, path: str) -> list[str]:
    """The checkout's files (sorted, at most _MAX_IMPORTERS) whose text imports the
    module `path` by its name (`from eval import eval_net`, `import utils.eval as ev`,
    `from . import eval`): a user lints them with it, and a finding there may name a
    place in it (GL016 at train.py's training forward names the `eval()` inside
    eval.py's `eval_net`)."""
    stem = re.escape(Path(path).stem)
    if Path(path).suffix != ".py" or Path(path).stem == "__init__":
        return []
    pattern = re.compile(
        rf"(?:\bfrom\s+[\w.]*\b{stem}\b[\w.]*\s+import\b"
        rf"|\bimport\s+[\w.]*\b{stem}\b"
        rf"|\bfrom\s+[\w.]+\s+import\s+[^\n]*\b{stem}\b)".encode()
    )
    found = []
    for folder, dirs, filenames in os.walk(root):
        dirs.sort()
        for filename in sorted(filenames):
            if not filename.endswith((".py", ".ipynb")):
                continue
            full = os.path.join(folder, filename)
            relative = os.path.relpath(full, root).replace(os.sep, "/")
            if relative == path:
                continue
            with open(full, "rb") as handle:
                if pattern.search(handle.read()):
                    found.append(relative)
    return sorted(found)[:_MAX_IMPORTERS]


def _places(item: dict, root: Path | str | None = None) -> list[tuple[str, str]]:
    """Where a finding points: (file, line) for its own line and for each of its related
    locations (in a notebook, cell and line), the files relative to `root` (the linted
    tree; as given when None). A pitfall of two places (GL016's training forward and the
    `eval()` that left the model in eval mode, GL007's step and the loop that never
    clears) is caught whichever of them the upstream fix changed, in whichever file."""
    own = _relative(item["filename"], root)
    places = [(own, ledger.finding_line(item))]
    for related in item.get("related") or ():
        other = _relative(str(related.get("filename", "")), root)
        if root is None and other != own and other.endswith("/" + own):
            other = own  # the finding's own file, named absolutely
        # a notebook's related location names its cell, as the finding's own does
        places.append((other, ledger.finding_line(related)))
    return places


def _relative(filename: str, root: Path | str | None) -> str:
    if root is not None and os.path.isabs(filename):
        filename = os.path.relpath(filename, root)
    return filename.replace(os.sep, "/")


def _near(place: str, want: tuple[int, int]) -> bool:
    at = _pos(place)
    return at[0] == want[0] and abs(at[1] - want[1]) <= 2


def cmd_fixes(template: str, half: str, out=sys.stdout) -> dict:
    stats = {h: Counter() for h in ("dev", "test")}
    lines = []
    for fix in read_fixes():
        h = half_of(fix["repo"])
        if half not in ("all", h):
            continue
        git_dir = ledger.git_dir_of(template, fix["repo"])
        if not os.path.isdir(git_dir):
            stats[h]["not here"] += 1  # a session that fetched only part of the corpus
            continue
        parent = f"{fix['fix_commit']}^"
        covered = fix["code"] in RULES
        # `old -> new`: the fix commit also moved the file
        parent_path, _, fixed_path = fix["path"].partition(" -> ")
        before = _lint_blob(git_dir, parent, parent_path)
        after = _lint_blob(git_dir, fix["fix_commit"], fixed_path or parent_path)
        want = _pos(fix["parent_line"])
        first, _, last = fix["fix_range"].partition("-")  # "40-46", or one line: "40"
        lo, hi = _pos(first), _pos(last or first)
        # caught: a finding of the pitfall names the line, at itself or a related
        # location; clean: none names a line the fix changed
        fixed = fixed_path or parent_path
        caught = any(
            same_pitfall(i["code"], fix["code"])
            and any(p == parent_path and _near(place, want) for p, place in i["places"])
            for i in before
        )
        clean = not any(
            same_pitfall(i["code"], fix["code"])
            and any(p == fixed and lo <= _pos(place) <= hi for p, place in i["places"])
            for i in after
        )
        s = stats[h]
        s["fixes"] += 1
        if covered:
            s["covered"] += 1
            s["caught"] += caught
            s["clean"] += clean
        state = ("caught" if caught else "MISSED") if covered else "no rule"
        lines.append(
            f"  {h:<5}{fix['repo']} {fix['fix_commit'][:10]} {fix['path']}:"
            f"{fix['parent_line']} {fix['code']}: {state}, fix {'clean' if clean else 'NOT CLEAN'}"
        )
    for h in ("dev", "test"):
        if stats[h]["not here"]:
            print(f"{h}: {stats[h]['not here']} fixes skipped, no git directory", file=out)
    print("half  fixes  covered-by-a-rule  caught  recall  fix-clean", file=out)
    for h in ("dev", "test"):
        s = stats[h]
        if s["fixes"]:
            r = f"{s['caught'] / s['covered']:.2f}" if s["covered"] else "n/a"
            print(
                f"{h:<5} {s['fixes']:>5}  {s['covered']:>17}  {s['caught']:>6}  {r:>6}  "
                f"{s['clean']}/{s['covered']}",
                file=out,
            )
    print("\n".join(lines), file=out)
    return {h: dict(stats[h]) for h in stats}


# The repositories the cost figures are measured on (bench/README.md): fetched first.
_COST_TREES = ("ultralytics/yolov5", "DLR-RM/stable-baselines3")


def fetch_order() -> list[str]:
    """Every corpus repository, in the order a session that can fetch only part of the
    corpus should fetch them: the cost trees (bench/rltree.txt's repositories and
    _COST_TREES), then the development half, then the test half, each in corpus.tsv's
    order."""
    rltree = Path(__file__).resolve().parent.parent / "rltree.txt"
    first = []
    if rltree.exists():
        for line in rltree.read_text(encoding="utf-8").split():
            first.append(line.split("/", 1)[0].replace("+", "/", 1))
    first += _COST_TREES
    names = [r.name for r in ledger.read_corpus()]
    known = set(names)
    ordered = [n for n in dict.fromkeys(first) if n in known]
    for half in ("dev", "test"):
        ordered += [n for n in names if half_of(n) == half and n not in ordered]
    return ordered


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("split", help="print each corpus repository's half")
    sub.add_parser(
        "fetch-order",
        help="print every repository, cost trees and the development half first "
        "(for a session that can fetch only part of the corpus)",
    )
    p = sub.add_parser("prepare", help="lay out the corpus (see ledger.py prepare)")
    p.add_argument("corpus_dir", type=Path)
    p.add_argument("--git-dir-template", help="read each repo from this git dir, e.g. /m/{folder}")
    p = sub.add_parser("sites", help="enumerate the sites of repositories")
    p.add_argument("corpus_dir", type=Path)
    p.add_argument("repos", nargs="+")
    p.add_argument("--max-files", type=int, default=8)
    p = sub.add_parser("score", help="recall and precision per half")
    p.add_argument("corpus_dir", type=Path)
    p.add_argument("--half", choices=("dev", "test", "all"), default="dev")
    p.add_argument("--check", action="store_true")
    p.add_argument("--json", type=Path)
    p = sub.add_parser("levels", help="the share of true findings that matter, per level")
    p.add_argument("corpus_dir", type=Path)
    p.add_argument("--half", choices=("dev", "test", "all"), default="dev")
    p.add_argument("--check", action="store_true", help="exit 1 on a true finding not judged")
    p.add_argument("--json", type=Path)
    p = sub.add_parser("fixes", help="the fix benchmark per half")
    p.add_argument("--git-dir-template", required=True)
    p.add_argument("--half", choices=("dev", "test", "all"), default="dev")
    args = parser.parse_args(argv)
    if args.command == "split":
        for repo in ledger.read_corpus():
            print(f"{half_of(repo.name)}\t{repo.name}")
        return 0
    if args.command == "fetch-order":
        print("\n".join(fetch_order()))
        return 0
    if args.command == "prepare":
        return ledger.prepare(args.corpus_dir, args.git_dir_template)
    if args.command == "sites":
        return cmd_sites(args.corpus_dir, args.repos, args.max_files)
    if args.command == "fixes":
        cmd_fixes(args.git_dir_template, args.half)
        return 0
    if args.command == "levels":
        scored = score(args.corpus_dir, args.half, out=io.StringIO())
        levels = consequence_levels(scored["findings"], read_consequence())
        if args.json:
            args.json.write_text(json.dumps(levels, indent=2), encoding="utf-8")
        return 1 if args.check and levels["unjudged"] else 0
    result = score(args.corpus_dir, args.half)
    if args.json:
        args.json.write_text(json.dumps(result, indent=2), encoding="utf-8")
    if args.check and (result["missed"] or result["false"] or result["unjudged"]):
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
