"""Fresh samples: sites of development files the census never sampled, labelled later.

    python bench/real-code/fresh.py sample CORPUS_DIR --skip N --take K OUT.tsv
    python bench/real-code/fresh.py score CORPUS_DIR [SAMPLE.tsv ...] [--misses]

The census labels at most eight files of each repository (sites.sampled_files, a hash of
repository and path), and twenty sessions tuned the analysis on them: its recall there
says little of code nobody tuned on. A fresh sample takes, in each development
repository, the files the same hash ranks after the census's (`--skip 0 --take 1` is the
first file past the census's eight that the census does not hold), enumerates their
sites with sites.py (plain `ast`, no gradlint) and leaves the label columns empty for a
reader who follows LABELLING.md and never runs gradlint. Development half only: nothing
of the test half is read.

`score` lints each sample's files, and the files the reasons cite, as `census.py score`
does (every rule, preview included) and reports the share of positive sites with a rule
that gradlint reports, matched as the census matches (the finding's own line or a
related location, in the site's range or at a line its reason cites). The first score of
a new sample is the honest one: once its misses are read and worked on, it is
development data like the census.
"""

from __future__ import annotations

import argparse
import csv
import sys
from collections import Counter, defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import census  # noqa: E402
import ledger  # noqa: E402
import sites as site_enum  # noqa: E402

COLUMNS = ["repo", "path", "line", "end_line", "kind", "codes", "label", "code", "reason"]
DEFAULT_SAMPLES = sorted((HERE / "fresh").glob("*.tsv"))


def _development_repos() -> list[ledger.Repo]:
    return [r for r in ledger.read_corpus() if census.half_of(r.name) == "dev"]


def cmd_sample(corpus_dir: Path, skip: int, take: int, out: Path) -> int:
    rows = []
    for repo in _development_repos():
        root = corpus_dir / repo.folder
        if not root.is_dir():
            print(f"{repo.name}: not laid out, skipped", file=sys.stderr)
            continue
        held = {row.path for row in census.read_census(repo.name)}
        ranked = site_enum.ranked_files(root, repo.name)
        past = [rel for rel in ranked[8:] if rel not in held][skip : skip + take]
        for rel in past:
            for site in site_enum.sites_of_file(root, rel):
                rows.append([repo.name, site.path, site.line, site.end_line, site.kind])
                rows[-1] += [site.codes, "", "", ""]
    with open(out, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle, delimiter="\t", lineterminator="\n")
        writer.writerow(COLUMNS)
        writer.writerows(rows)
    print(f"{len(rows)} sites in {len({(r[0], r[1]) for r in rows})} files -> {out}")
    return 0


def read_sample(path: Path) -> list[census.SiteRow]:
    with open(path, encoding="utf-8", newline="") as handle:
        return [
            census.SiteRow(**{k: row.get(k) or "" for k in COLUMNS})
            for row in csv.DictReader(handle, delimiter="\t")
        ]


def _files_to_lint(corpus_dir: Path, rows: list[census.SiteRow]) -> dict[str, set[str]]:
    """Each repository's sampled files, and the files a positive site's reason cites."""
    by_repo: dict[str, list[census.SiteRow]] = defaultdict(list)
    for row in rows:
        by_repo[row.repo].append(row)
    files: dict[str, set[str]] = {}
    for repo, held in by_repo.items():
        sampled = {row.path for row in held}
        root = corpus_dir / repo.replace("/", "+")
        files[repo] = sampled | set(census._cited_files(root, held, sampled))
    return files


def cmd_score(corpus_dir: Path, samples: list[Path], misses: bool) -> int:
    for sample in samples:
        rows = read_sample(sample)
        absent = sorted(
            {r.repo for r in rows if not (corpus_dir / r.repo.replace("/", "+")).is_dir()}
        )
        for repo in absent:
            print(f"warning: {repo} is not in {corpus_dir}", file=sys.stderr)
        rows = [r for r in rows if r.repo not in absent]  # compare on the same repositories
        unlabelled = sum(r.label not in ("POS", "NEG") for r in rows)
        places: dict[str, list[tuple[str, list[tuple[str, str]]]]] = defaultdict(list)
        for repo, paths in sorted(_files_to_lint(corpus_dir, rows).items()):
            root = corpus_dir / repo.replace("/", "+")
            for item in census._lint_files(root, sorted(paths)):
                places[repo].append((item["code"], census._places(item, root)))
        ruled = [r for r in rows if r.label == "POS" and r.code.startswith("GL")]
        caught = [
            r for r in ruled if any(census.reports_site(r, c, p) for c, p in places[r.repo])
        ]
        by_code = Counter((r.code, r in caught) for r in ruled)
        recall = len(caught) / len(ruled) if ruled else 0.0
        print(
            f"{sample.name}: {len(rows)} sites ({unlabelled} unlabelled), "
            f"{len(ruled)} positive with a rule, {len(caught)} caught, recall {recall:.2f}"
        )
        for code in sorted({c for c, _ in by_code}):
            print(
                f"  {code}: {by_code[(code, True)]}/{by_code[(code, True)] + by_code[(code, False)]}"
            )
        if misses:
            for r in ruled:
                if r not in caught:
                    print(f"  missed {r.repo} {r.path}:{r.line} {r.code} {r.reason}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[1].strip())
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("sample", help="enumerate the sites of files past the census's")
    p.add_argument("corpus_dir", type=Path)
    p.add_argument("--skip", type=int, default=0, help="files past the census's to skip")
    p.add_argument("--take", type=int, default=1, help="files per repository to take")
    p.add_argument("out", type=Path)
    p = sub.add_parser("score", help="recall over a labelled sample's positive sites")
    p.add_argument("corpus_dir", type=Path)
    p.add_argument("samples", type=Path, nargs="*", help="default: fresh/*.tsv")
    p.add_argument("--misses", action="store_true", help="print every positive site missed")
    args = parser.parse_args(argv)
    if args.command == "sample":
        return cmd_sample(args.corpus_dir, args.skip, args.take, args.out)
    return cmd_score(args.corpus_dir, args.samples or DEFAULT_SAMPLES, args.misses)


if __name__ == "__main__":
    raise SystemExit(main())
