from __future__ import annotations

import argparse
from pathlib import Path

from benchwatch.commands import add_shared_options

HELP = (
    "Split a change between two stacks into one-package steps, each compared side by side with base"
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--base", required=True, metavar="STACK", help="the stack to start from (e.g. v2-pre-rust)"
    )
    parser.add_argument(
        "--head", required=True, metavar="STACK", help="the stack to arrive at (e.g. latest)"
    )
    add_shared_options(
        parser,
        variants="every scenario on both stacks",
        quick="the quick endpoints and short runs",
        rounds="the side-by-side rounds of each step (default: compare's)",
        out="attribute-<time>",
    )
    parser.add_argument(
        "--changed-in",
        type=Path,
        metavar="COMPARE_DIR",
        help="only the scenarios whose gating figures changed significantly in that compare "
        "(instead of -k); nothing to do when none did",
    )
    parser.add_argument(
        "--timings",
        action="store_true",
        help="also the side-by-side load rounds of every step: CPU per request split into user and "
        "system (default: counts only, instructions and system calls per request)",
    )
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress lines")


def run(args: argparse.Namespace) -> int:
    from benchwatch.attribute.attribute import AttributeOptions, attribute, changed_scenarios
    from benchwatch.attribute.table import ATTRIBUTION_MD, markdown
    from benchwatch.errors import EXIT_OK, EXIT_UNMEASURED, UserError
    from benchwatch.project.loading import load_project

    patterns = args.patterns
    if args.changed_in is not None:
        if patterns:
            raise UserError("give -k or --changed-in, not both")
        changed = changed_scenarios(args.changed_in)
        if not changed:
            print(
                f"no gating figure changed significantly in {args.changed_in}: nothing to attribute"
            )
            return 0
        patterns = ",".join(f"{scenario}@*" for scenario in changed)
    options = AttributeOptions(
        patterns=patterns,
        quick=args.quick,
        rounds=args.rounds,
        out=args.out,
        quiet=args.quiet,
        timings=args.timings,
    )
    result, out = attribute(load_project(), args.base, args.head, options)
    print(markdown(result), end="")
    print(f"{out / ATTRIBUTION_MD}")
    failed = [s for s in [*result.steps, result.direct] if s.error is not None]
    return EXIT_UNMEASURED if failed or not result.lines else EXIT_OK
