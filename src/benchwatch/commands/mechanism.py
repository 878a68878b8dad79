"""`benchwatch mechanism COMPARE`: through what a compare's regressions moved (the nightly-regression
issue's section; publish/regression_mechanism.py)."""

from __future__ import annotations

import argparse
from pathlib import Path

from benchwatch.commands import add_compare_path

HELP = (
    "Say through what a compare's regressions moved, per request: cost, system calls and the "
    "functions whose instructions moved most (markdown)"
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.epilog = "exit codes: 0 written (empty when no gating figure regressed); 3 bad input"
    add_compare_path(parser)
    parser.add_argument(
        "--out", type=Path, metavar="FILE", help="write the markdown there (default: print it)"
    )


def run(args: argparse.Namespace) -> int:
    from benchwatch.publish.regression_mechanism import render
    from benchwatch.results.files import write_text_atomic
    from benchwatch.trend.relative import read_comparison

    text = render(read_comparison(args.compare))
    if args.out is None:
        print(text, end="")
    else:
        write_text_atomic(args.out, text)
    return 0
