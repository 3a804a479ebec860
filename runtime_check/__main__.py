"""python -m runtime_check [--device cpu|cuda|auto] [--json FILE] [PATHS...]
python -m runtime_check saved-tensors [--write | --check]
python -m runtime_check consequences [--write | --check]"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

from runtime_check.harness import DEFAULT_TIMEOUT, run


def _device(text: str) -> str:
    if not re.fullmatch(r"cpu|auto|cuda(:\d+)?", text):
        raise argparse.ArgumentTypeError("use cpu, cuda, cuda:N or auto")
    return text


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m runtime_check",
        description=(
            "Run gradlint fixtures under torch, check each one's documented outcome "
            "(raises / grows / silent / clean), and cross-check gradlint's findings. "
            "Exit status 1 on any mismatch. `python -m runtime_check saved-tensors "
            "--help` measures the saved-tensor table that GL011 reads."
        ),
    )
    parser.add_argument(
        "paths",
        nargs="*",
        metavar="PATH",
        help="fixture files or folders (default: gradlint's own fixtures/, wherever the "
        "command is run from)",
    )
    parser.add_argument(
        "--device",
        type=_device,
        default="auto",
        help="cpu, cuda[:N] or auto (default; GRADLINT_DEVICE, else cuda if available, else cpu)",
    )
    parser.add_argument(
        "--json", metavar="FILE", help="also write the report as JSON ('-': stdout)"
    )
    parser.add_argument(
        "--jobs", "-j", type=int, default=None, help="fixtures run at once (default: CPU count)"
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=DEFAULT_TIMEOUT,
        help=f"seconds one fixture may take (default {DEFAULT_TIMEOUT:g})",
    )
    parser.add_argument(
        "--no-lint", action="store_true", help="skip the cross-check against gradlint's findings"
    )
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["saved-tensors"]:
        # The table of what each operation saves for backward (GL011 reads it).
        from runtime_check import saved_tensors

        return saved_tensors.main(argv[1:])
    if argv[:1] == ["consequences"]:
        # What each bad fixture's finding costs (docs/consequences.md, the rule docs).
        from runtime_check import consequences

        return consequences.main(argv[1:])
    args = build_parser().parse_args(argv)
    try:
        report = run(
            args.paths or None,
            device=args.device,
            jobs=args.jobs,
            timeout=args.timeout,
            lint=not args.no_lint,
        )
    except (FileNotFoundError, ValueError) as exc:
        print(f"runtime_check: {exc}", file=sys.stderr)
        return 2
    if not report.rows:
        print(
            "runtime_check: no fixtures found (bad_*.py, good_*.py, bad_*.fixed.py)",
            file=sys.stderr,
        )
        return 2
    if args.json == "-":
        print(report.to_json())
    else:
        print(report.table())
        if args.json:
            Path(args.json).write_text(report.to_json() + "\n", encoding="utf-8")
    return 0 if report.ok else 1


if __name__ == "__main__":
    sys.exit(main())
