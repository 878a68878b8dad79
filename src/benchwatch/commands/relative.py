from __future__ import annotations

import argparse
import sys
from pathlib import Path

from benchwatch.commands import add_compare_path

HELP = "Turn a compare of a commit with its parent into '(vs parent)' trend points (gab file)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.epilog = (
        "exit codes: 0 file written; 2 no valid point (nothing written: a failed compare "
        "publishes no relative point); 3 bad input"
    )
    add_compare_path(parser)
    parser.add_argument(
        "--out",
        type=Path,
        required=True,
        metavar="FILE",
        help="gab file to write (github-action-benchmark customSmallerIsBetter)",
    )
    parser.add_argument(
        "--all",
        action="store_true",
        help="every figure, not only the gating ones (server CPU per request, micro timings)",
    )


def relative(compare: Path, out: Path, every: bool = False) -> tuple[int, list[str]]:
    """(points written, lines about the rows that gave none)."""
    from benchwatch.errors import EXIT_UNMEASURED, UserError
    from benchwatch.results.files import write_json_atomic
    from benchwatch.trend.relative import read_comparison, relative_entries

    comparison = read_comparison(compare)
    entries, skipped = relative_entries(comparison, every)
    notes = [f"no point for {s.label}: {s.reason}" for s in skipped]
    if not entries:
        first = f" (first: {notes[0].removeprefix('no point for ')})" if notes else ""
        raise UserError(
            f"{compare}: no valid ratio in the comparison, {len(skipped)} rows without one{first}: "
            "no relative point published",
            EXIT_UNMEASURED,
        )
    write_json_atomic(out, entries)
    return len(entries), notes


def run(args: argparse.Namespace) -> int:
    count, notes = relative(args.compare, args.out, args.all)
    for note in notes:
        print(note, file=sys.stderr)
    print(f"{count} relative points, {len(notes)} rows without one; {args.out}")
    return 0
