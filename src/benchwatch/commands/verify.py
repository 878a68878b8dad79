from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable
from typing import TYPE_CHECKING

from benchwatch.commands import add_shared_options, stack_names
from benchwatch.errors import EXIT_OK, EXIT_UNMEASURED

if TYPE_CHECKING:  # annotations only: a command imports what it runs when it runs (start-up time)
    from benchwatch.project.variants import Variant
    from benchwatch.results.schema import Problem

HELP = "Boot each variant and check every endpoint's answer"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_shared_options(parser, stacks=True)
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress lines")
    parser.add_argument(
        "--record",
        action="store_true",
        help=(
            "write the golden bodies again from what the app answers now (each app's first variant, "
            "booted twice: keys that differ are added to `volatile`); the rest of the declaration is kept"
        ),
    )


def run(args: argparse.Namespace) -> int:
    from benchwatch.measure.stopping import install_cleanup
    from benchwatch.measure.verify import verify_variants
    from benchwatch.project.loading import load_project

    project = load_project()
    variants = project.select(args.patterns, stack_names(args))
    install_cleanup()
    if args.record:
        return record(variants, quiet=args.quiet)
    checks, problems = verify_variants(variants, quiet=args.quiet)
    print_problems(problems)
    failed = {p.variant for p in problems}
    print(f"{len(variants) - len(failed)} of {len(variants)} variants verified", end="")
    print(f"; {len(failed)} failed" if failed else "")
    return EXIT_UNMEASURED if problems else EXIT_OK


def record(variants: list[Variant], quiet: bool) -> int:
    from benchwatch.errors import UserError
    from benchwatch.scaffold.record import record_variants, recordable

    if not any(recordable(v) for v in variants):
        raise UserError(
            "verify --record: no endpoint of the variants selected has a golden body "
            "(`expect.json`) to record"
        )
    done = record_variants(variants, quiet=quiet)
    for outcome in done:
        print_problems(outcome.problems)
        for name, keys in outcome.volatile.items():
            print(
                f"record: {outcome.app} {name}: volatile now also {', '.join(keys)} (differed between requests or boots)"
            )
        if not outcome.problems:
            print(f"record: {outcome.app}: wrote {len(outcome.written)} files")
    failed = [o.app for o in done if o.problems]
    print(
        f"{len(done) - len(failed)} of {len(done)} apps recorded"
        + (f"; {', '.join(failed)} wrote nothing" if failed else "")
    )
    return EXIT_UNMEASURED if failed else EXIT_OK


def print_problems(problems: Iterable[Problem]) -> None:
    for problem in problems:
        print(f"FAIL {problem.line()}", file=sys.stderr)
        for line in problem.detail.splitlines()[-8:]:
            print(f"    | {line}", file=sys.stderr)
