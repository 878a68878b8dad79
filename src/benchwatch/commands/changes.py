from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

HELP = "Find change points in published histories (data.js): where, how big, how sure"

EXIT_CODES = """exit codes: 0 no unacknowledged regression in a gating series (cpu/req, micro
timings, their '(vs parent)' series); 1 at least one; 3 bad input (one ERROR line)"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.epilog = EXIT_CODES
    parser.add_argument(
        "--data",
        type=Path,
        action="append",
        required=True,
        metavar="DIR",
        help="a data.js, or a directory holding data.js, dev/bench/data.js or "
        "nightly/data.js (a gh-pages checkout); repeatable",
    )
    parser.add_argument(
        "--json", action="store_true", help="print the JSON document instead of markdown"
    )
    parser.add_argument(
        "--json-file",
        type=Path,
        metavar="PATH",
        help="also write the JSON document there (markdown still printed)",
    )
    parser.add_argument("--since", type=int, metavar="N", help="only each history's last N entries")
    parser.add_argument(
        "--acks",
        type=Path,
        metavar="FILE",
        help="acknowledged changes (default: benchwatch-acks.toml at the repository root, if any)",
    )


def _default_acks() -> Path:
    from benchwatch.errors import UserError
    from benchwatch.project.files import find_root
    from benchwatch.trend.acks import ACKS_FILE

    try:
        return find_root() / ACKS_FILE
    except UserError:  # outside a benchwatch checkout: the current directory
        return Path(ACKS_FILE)


def changes(
    data: list[Path],
    since: int | None = None,
    acks_file: Path | None = None,
    acks_required: bool = False,
) -> tuple[dict[str, Any], str, int]:
    """(JSON document, markdown, exit code): every input is read and checked first."""
    from benchwatch.trend import acks, histories, report
    from benchwatch.trend.changes import analyse_all

    files, series = histories.load(data, since)
    acknowledged = acks.load(acks_file, required=acks_required) if acks_file else []
    results = analyse_all(series)
    covered, warnings = acks.apply(acks_file, acknowledged, results) if acks_file else ({}, [])
    document = report.to_json(results, covered, files, warnings, since, acks_file)
    markdown = report.to_markdown(results, covered, files, warnings)
    return document, markdown, 1 if report.alerts(results, covered) else 0


def run(args: argparse.Namespace) -> int:
    from benchwatch.results.files import write_json_atomic

    acks_file = args.acks or _default_acks()
    document, markdown, code = changes(args.data, args.since, acks_file, args.acks is not None)
    for warning in document["warnings"]:
        print(f"WARNING: {warning}", file=sys.stderr)
    if args.json_file:
        write_json_atomic(args.json_file, document)
    print(json.dumps(document, indent=1) if args.json else markdown, end="\n" if args.json else "")
    return code
