from __future__ import annotations

import argparse
from pathlib import Path

from benchwatch.commands import add_variants

HELP = "Split a change between two stacks into one-package steps, each compared side by side with base"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--base", required=True, metavar="STACK", help="the stack to start from (e.g. v2-pre-rust)")
    parser.add_argument("--head", required=True, metavar="STACK", help="the stack to arrive at (e.g. latest)")
    add_variants(parser, "comma-separated glob patterns over variant ids, e.g. 'hello@*' (default: every scenario on both)")
    parser.add_argument("--quick", action="store_true", help="quick endpoints and short runs")
    parser.add_argument("--rounds", type=int, metavar="N", help="side-by-side rounds per step (default: compare's)")
    parser.add_argument("--out", type=Path, metavar="DIR",
                        help="where attribution.json, attribution.md and each step's compare go "
                             "(default results/attribute-<time>)")  # fmt: skip
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress lines")


def run(args: argparse.Namespace) -> int:
    from benchwatch.attribute.run import attribute
    from benchwatch.attribute.table import ATTRIBUTION_MD, markdown
    from benchwatch.config import load_project

    result, out = attribute(load_project(), args.base, args.head, patterns=args.patterns, quick=args.quick,
                            rounds=args.rounds, out=args.out, quiet=args.quiet)  # fmt: skip
    print(markdown(result), end="")
    print(f"{out / ATTRIBUTION_MD}")
    failed = [s for s in result.steps if s.error is not None]
    return 2 if failed or not result.lines else 0
