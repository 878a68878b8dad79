from __future__ import annotations

import argparse
import sys

from benchwatch.commands import add_shared_options, stack_names
from benchwatch.errors import EXIT_OK, EXIT_UNMEASURED

HELP = "Boot each variant and check every endpoint's answer"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_shared_options(parser, stacks=True)
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress lines")


def run(args: argparse.Namespace) -> int:
    from benchwatch.config import load_project
    from benchwatch.measure.server import install_cleanup
    from benchwatch.measure.verify import verify_variants

    project = load_project()
    variants = project.select(args.patterns, stack_names(args))
    install_cleanup()
    checks, problems = verify_variants(variants, quiet=args.quiet)
    print_problems(problems)
    failed = {p.variant for p in problems}
    print(f"{len(variants) - len(failed)} of {len(variants)} variants verified", end="")
    print(f"; {len(failed)} failed" if failed else "")
    return EXIT_UNMEASURED if problems else EXIT_OK


def print_problems(problems) -> None:
    for problem in problems:
        print(f"FAIL {problem.line()}", file=sys.stderr)
        for line in problem.detail.splitlines()[-8:]:
            print(f"    | {line}", file=sys.stderr)
