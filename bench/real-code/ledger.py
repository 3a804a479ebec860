"""The real-code ledger: gradlint measured on public PyTorch repositories.

    python bench/real-code/ledger.py prepare CORPUS_DIR [--git-dir-template T]
    python bench/real-code/ledger.py run CORPUS_DIR [--check] [--json FILE]

`corpus.tsv` pins each repository to a commit. `prepare` lays each one out as
CORPUS_DIR/<owner>+<name>/ with the commit's .py and .ipynb files (cloned from GitHub, or
read from an existing git directory named by the template, e.g.
`/mirrors/{owner}+{name}.git`).

`ledger.tsv` holds one row per judged place: repo, commit, path, line, code, verdict,
reason. `line` is the reported line of a `.py` file; for a notebook (`.ipynb`) it is
`CELL:ROW`, the cell (1-based, markdown cells counted, as gradlint's JSON `cell` field)
and the row inside that cell, as gradlint reports them (`path:cell N:row:col`). Verdicts:

- TRUE   gradlint reports it and it is the pitfall the rule describes.
- FALSE  gradlint reported it and it is not (the reason says why); it must stay fixed.
- MISS   a real pitfall found by reading the code; gradlint should report it there.
- TRAP   correct code that looks like the pitfall; gradlint must stay silent there.

A TRUE (or MISS) row also says whether it matters, judged by reading the code
(`consequence`):

- TP        it matters: a crash, a silently wrong result, memory that grows with the run,
            or real waste on a hot path (a forward per batch or per environment step).
- TP-minor  true but cheap: a one-off forward in a test, a plot or a script's last
            lines, a few KB of graph nodes per batch, a tiny policy's per-step action.

`run` then reports, per severity level gradlint gives the true findings, the share that
matters: the target (issue 20) is at least 0.8 of error-level and 0.5 of warning-level
findings, the cheap ones hints or unselected by default.

Rows may also name repositories outside `corpus.tsv` (with their own commit): recall
evidence, such as a public bug report checked out at the commit before its fix. They are
kept as the record but not scored.

`run` lints the corpus and prints, per rule and overall: findings, how many are judged
true (TRUE or MISS rows) or false (FALSE or TRAP rows), the precision over judged
findings, how many MISS rows are now caught, and every finding not judged yet. With
--check it exits 1 when a finding is unjudged or judged false, or a TRUE one is lost, so a change to the
analysis that adds a false positive fails loudly.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import subprocess
import sys
import tempfile
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
CORPUS_TSV = HERE / "corpus.tsv"
LEDGER_TSV = HERE / "ledger.tsv"
COLUMNS = ("repo", "commit", "path", "line", "code", "verdict", "consequence", "reason")
GOOD = frozenset({"TRUE", "MISS"})
CONSEQUENCES = ("TP", "TP-minor")
# The levels gradlint reports, loudest first, and the share of true findings at each that
# must matter.
LEVEL_TARGETS = {"error": 0.8, "warning": 0.5, "hint": None}
BAD = frozenset({"FALSE", "TRAP"})
VERDICTS = GOOD | BAD
LINTED_SUFFIXES = (".py", ".ipynb")


@dataclass(frozen=True)
class Repo:
    name: str  # owner/name
    commit: str
    kind: str

    @property
    def folder(self) -> str:
        return self.name.replace("/", "+")


@dataclass(frozen=True)
class Row:
    repo: str
    commit: str
    path: str
    line: str  # "12", or "CELL:ROW" in a notebook
    code: str
    verdict: str
    reason: str
    consequence: str = ""  # TP / TP-minor for TRUE and MISS rows

    @property
    def key(self) -> tuple[str, str, str, str]:
        return (self.repo, self.path, self.line, self.code)


def read_corpus(path: Path = CORPUS_TSV) -> list[Repo]:
    with path.open(newline="", encoding="utf-8") as handle:
        return [
            Repo(r["repo"], r["commit"], r["kind"]) for r in csv.DictReader(handle, delimiter="\t")
        ]


def read_ledger(path: Path = LEDGER_TSV) -> list[Row]:
    if not path.exists():
        return []
    rows = []
    with path.open(newline="", encoding="utf-8") as handle:
        for n, r in enumerate(csv.DictReader(handle, delimiter="\t"), start=2):
            if r["verdict"] not in VERDICTS:
                raise SystemExit(f"{path}:{n}: unknown verdict {r['verdict']!r}")
            consequence = (r.get("consequence") or "").strip()
            if consequence and (consequence not in CONSEQUENCES or r["verdict"] not in GOOD):
                raise SystemExit(
                    f"{path}:{n}: consequence {consequence!r} (TP or TP-minor, on TRUE/MISS rows)"
                )
            rows.append(
                Row(
                    r["repo"],
                    r["commit"],
                    r["path"],
                    _checked_line(r["line"], path, n),
                    r["code"],
                    r["verdict"],
                    r["reason"],
                    consequence,
                )
            )
    return rows


def line_key(line: str) -> tuple[int, ...]:
    """`12` and `3:12` (cell 3, row 12) in numeric order."""
    return tuple(int(part) for part in line.split(":"))


def _checked_line(text: str, path: Path, n: int) -> str:
    line = text.strip()
    try:
        line_key(line)
    except ValueError:
        raise SystemExit(f"{path}:{n}: line {text!r} is neither LINE nor CELL:ROW") from None
    return line


def finding_line(item: dict) -> str:
    """A JSON finding's place as the ledger records it."""
    row = item["location"]["row"]
    return f"{item['cell']}:{row}" if item.get("cell") else str(row)


def write_ledger(rows: list[Row], path: Path = LEDGER_TSV) -> None:
    rows = sorted(rows, key=lambda r: (r.repo, r.path, line_key(r.line), r.code))
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle, delimiter="\t", lineterminator="\n")
        writer.writerow(COLUMNS)
        for r in rows:
            writer.writerow(
                [r.repo, r.commit, r.path, r.line, r.code, r.verdict, r.consequence, r.reason]
            )


# -- prepare ---------------------------------------------------------------------------


def _extract(git_dir: str, commit: str, dest: Path) -> int:
    """Write the commit's linted files under dest. Reads blob by blob, so a snapshot
    whose large binaries are missing still yields all of its source."""
    listing = subprocess.run(
        ["git", "--git-dir", git_dir, "ls-tree", "-r", "-z", commit],
        check=True,
        capture_output=True,
    ).stdout
    count = 0
    for entry in listing.split(b"\0"):
        if not entry:
            continue
        meta, raw_path = entry.split(b"\t", 1)
        _mode, kind, sha = meta.split()
        path = os.fsdecode(raw_path)
        if kind != b"blob" or not path.endswith(LINTED_SUFFIXES):
            continue
        blob = subprocess.run(
            ["git", "--git-dir", git_dir, "cat-file", "blob", sha.decode()], capture_output=True
        )
        if blob.returncode != 0:
            print(f"  {path}: blob missing, skipped", file=sys.stderr)
            continue
        target = dest / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(blob.stdout)
        count += 1
    return count


def _mark_root(checkout: Path) -> None:
    """An empty `.git` folder, as a clone has: only source files are extracted, so
    without it a repository with no setup.py has no project root of its own, and the
    project-wide pass climbs to the corpus folder and searches every repository at once."""
    (checkout / ".git").mkdir(exist_ok=True)


def git_dir_of(template: str, name: str) -> str:
    """The git directory a template names for `owner/name` (`{owner}`, `{name}`,
    `{folder}`), or the `.git` inside it when it names a work tree (a fetched mirror's
    `repo/`)."""
    owner, repo = name.split("/")
    git_dir = template.format(owner=owner, name=repo, folder=f"{owner}+{repo}")
    inner = os.path.join(git_dir, ".git")
    return inner if os.path.isdir(inner) else git_dir


def prepare(corpus_dir: Path, template: str | None) -> int:
    """Lay out each repository's commit under corpus_dir. With a template, one whose git
    directory is not there (a session that could fetch only part of the corpus) is
    skipped with a line on stderr; one that fails to extract is reported and the rest go
    on. 1 when one failed."""
    corpus_dir.mkdir(parents=True, exist_ok=True)
    skipped = failed = 0
    for repo in read_corpus():
        dest = corpus_dir / repo.folder
        if dest.exists():
            _mark_root(dest)
            print(f"{repo.name}: present")
            continue
        with tempfile.TemporaryDirectory() as scratch:
            if template:
                git_dir = git_dir_of(template, repo.name)
                if not os.path.isdir(git_dir):
                    print(f"{repo.name}: no git directory at {git_dir}, skipped", file=sys.stderr)
                    skipped += 1
                    continue
            else:
                git_dir = os.path.join(scratch, "repo.git")
                url = f"https://github.com/{repo.name}.git"
                subprocess.run(["git", "clone", "--bare", "--quiet", url, git_dir], check=True)
            staging = Path(scratch) / "out"
            staging.mkdir()
            try:
                count = _extract(git_dir, repo.commit, staging)
            except subprocess.CalledProcessError as exc:
                reason = exc.stderr.decode(errors="replace").strip().splitlines()
                print(
                    f"{repo.name}: cannot read {repo.commit[:12]} ({reason[0] if reason else exc})",
                    file=sys.stderr,
                )
                failed += 1
                continue
            _mark_root(staging)
            staging.rename(dest)
        print(f"{repo.name}: {count} files at {repo.commit[:12]}")
    if skipped:
        print(f"{skipped} repositories skipped: no git directory", file=sys.stderr)
    return 1 if failed else 0


# -- run -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Finding:
    repo: str
    path: str
    line: str
    code: str
    message: str
    severity: str = ""
    group: str = ""
    impact: str = ""

    @property
    def key(self) -> tuple[str, str, str, str]:
        return (self.repo, self.path, self.line, self.code)


def lint_json(root: Path, paths: list[str], failure: str) -> list[dict]:
    """gradlint's JSON findings for `paths` under `root`, every rule (preview included)
    at its default level; a file gradlint could not lint is reported on stderr, not
    judged, so it is left out here."""
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "gradlint",
            "--isolated",
            "--no-cache",
            "--select",
            "ALL",
            "--preview",  # preview rules are measured here before they ship
            "--output-format",
            "json",
            "--exit-zero",
            *paths,
        ],
        cwd=root,
        capture_output=True,
        text=True,
    )
    if proc.returncode != 0:
        raise SystemExit(f"{failure}: {proc.stderr.strip()}")
    return [item for item in json.loads(proc.stdout or "[]") if item.get("code")]


def lint_corpus(corpus_dir: Path, repos: list[Repo]) -> list[Finding]:
    """Every finding, paths relative to the repo, with the level, group and impact
    gradlint gives it by default."""
    findings = []
    for repo in repos:
        root = corpus_dir / repo.folder
        if not root.is_dir():
            print(f"warning: {repo.name} is not in {corpus_dir} (run `prepare`)", file=sys.stderr)
            continue
        for item in lint_json(root, ["."], f"gradlint failed on {repo.name}"):
            path = os.path.relpath(item["filename"], root).replace(os.sep, "/")
            findings.append(
                Finding(
                    repo.name,
                    path,
                    finding_line(item),
                    item["code"],
                    item["message"],
                    item.get("severity") or "",
                    item.get("group") or "",
                    item.get("impact") or "",
                )
            )
    return findings


def report(findings, rows: list[Row], out=sys.stdout) -> dict:
    by_key = {r.key: r for r in rows}
    per_rule: dict[str, Counter] = defaultdict(Counter)
    unjudged = []
    false_hits = []
    found_keys = set()
    # level -> consequence (TP, TP-minor, or "" when not judged yet) -> count
    by_level: dict[str, Counter] = defaultdict(Counter)
    for finding in findings:
        key = finding.key
        code = finding.code
        found_keys.add(key)
        row = by_key.get(key)
        counts = per_rule[code]
        counts["findings"] += 1
        if row is None:
            counts["unjudged"] += 1
            unjudged.append(finding)
        elif row.verdict in GOOD:
            counts["true"] += 1
            by_level[finding.severity][row.consequence] += 1
        else:
            counts["false"] += 1
            false_hits.append(row)
    lost = [r for r in rows if r.verdict == "TRUE" and r.key not in found_keys]
    misses = [r for r in rows if r.verdict == "MISS"]
    for r in misses:
        per_rule[r.code]["misses"] += 1
        if r.key in found_keys:
            per_rule[r.code]["caught"] += 1

    def ratio(a: int, b: int) -> str:
        return f"{a / b:.2f}" if b else "-"

    total = Counter()
    print(
        f"{'rule':<6} {'findings':>8} {'true':>5} {'false':>5} {'unjudged':>8} {'precision':>9} {'misses caught':>14}",
        file=out,
    )
    for code in sorted(per_rule):
        c = per_rule[code]
        total.update(c)
        print(
            f"{code:<6} {c['findings']:>8} {c['true']:>5} {c['false']:>5} {c['unjudged']:>8} "
            f"{ratio(c['true'], c['true'] + c['false']):>9} {c['caught']:>6} / {c['misses']:<5}",
            file=out,
        )
    print(
        f"{'all':<6} {total['findings']:>8} {total['true']:>5} {total['false']:>5} {total['unjudged']:>8} "
        f"{ratio(total['true'], total['true'] + total['false']):>9} {total['caught']:>6} / {total['misses']:<5}",
        file=out,
    )
    if false_hits:
        print("\nfindings judged false (fix the analysis, not the ledger):", file=out)
        for r in false_hits:
            print(f"  {r.repo} {r.path}:{r.line} {r.code} [{r.verdict}] {r.reason}", file=out)
    if lost:
        print(
            "\nTRUE findings no longer reported (a lost true positive is a regression):", file=out
        )
        for r in lost:
            print(f"  {r.repo} {r.path}:{r.line} {r.code} {r.reason}", file=out)
    still_missed = [r for r in misses if r.key not in found_keys]
    if still_missed:
        print("\nreal pitfalls still missed:", file=out)
        for r in still_missed:
            print(f"  {r.repo} {r.path}:{r.line} {r.code} {r.reason}", file=out)
    levels = consequence_by_level(by_level, out)
    if unjudged:
        print("\nfindings not judged yet (read the code, then add a row):", file=out)
        for f in unjudged:
            print(f"  {f.repo} {f.path}:{f.line} {f.code} {f.message}", file=out)
    return {
        "per_rule": {k: dict(v) for k, v in per_rule.items()},
        "total": dict(total),
        "by_level": levels,
        "false": [r.key for r in false_hits],
        "lost": [r.key for r in lost],
        "unjudged": [u.key for u in unjudged],
    }


def consequence_by_level(by_level: dict[str, Counter], out=sys.stdout) -> dict:
    """Per level gradlint gives the true findings: how many matter (TP), how many are
    cheap (TP-minor), how many are not judged for consequence yet, the share that
    matters, and the issue's target for that level."""
    print("\ntrue findings by level (TP: it matters; TP-minor: true but cheap):", file=out)
    print(
        f"{'level':<8} {'true':>5} {'TP':>4} {'minor':>6} {'unrated':>8} {'share':>6} {'target':>7}",
        file=out,
    )
    figures = {}
    for level in [*LEVEL_TARGETS, *sorted(set(by_level) - set(LEVEL_TARGETS))]:
        c = by_level.get(level, Counter())
        rated = c["TP"] + c["TP-minor"]
        share = c["TP"] / rated if rated else None
        target = LEVEL_TARGETS.get(level)
        figures[level] = {
            "true": sum(c.values()),
            "TP": c["TP"],
            "TP-minor": c["TP-minor"],
            "unrated": c[""],
            "share": share,
            "target": target,
        }
        print(
            f"{level:<8} {sum(c.values()):>5} {c['TP']:>4} {c['TP-minor']:>6} {c['']:>8} "
            f"{(f'{share:.2f}' if share is not None else '-'):>6} "
            f"{(f'{target:.2f}' if target is not None else '-'):>7}",
            file=out,
        )
    return figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("prepare", help="lay out the pinned corpus under CORPUS_DIR")
    p.add_argument("corpus_dir", type=Path)
    p.add_argument(
        "--git-dir-template", help="read each repo from this git dir: {owner}, {name}, {folder}"
    )
    r = sub.add_parser("run", help="lint the corpus and score it against the ledger")
    r.add_argument("corpus_dir", type=Path)
    r.add_argument("--check", action="store_true", help="exit 1 on unjudged or false findings")
    r.add_argument("--json", type=Path, help="also write the figures as JSON")
    r.add_argument("--repo", action="append", help="only this repo (owner/name); repeatable")
    args = parser.parse_args(argv)
    if args.command == "prepare":
        return prepare(args.corpus_dir, args.git_dir_template)
    rows = read_ledger()
    # The ledger judges its own 29 repositories; corpus.tsv also pins the census's
    # others, whose findings census.py scores against the labelled sites.
    ledgered = {row.repo for row in rows}
    repos = [r for r in read_corpus() if r.name in ledgered]
    if args.repo:
        repos = [r for r in repos if r.name in set(args.repo)]
    findings = lint_corpus(args.corpus_dir, repos)
    names = {r.name for r in repos}
    figures = report(findings, [row for row in rows if row.repo in names])
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")
    if args.check and (figures["unjudged"] or figures["false"] or figures["lost"]):
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
