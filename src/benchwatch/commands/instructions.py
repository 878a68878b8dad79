from __future__ import annotations

import argparse
import os
from pathlib import Path

from benchwatch.commands import EVERY_VARIANT, add_shared_options, stack_names

HELP = "Count the micro-benchmarks' instructions per call under valgrind"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_shared_options(
        parser,
        variants=f"{EVERY_VARIANT}; their scenarios' figures are kept",
        stacks=True,
        quick="the cases of `micro --quick`, 2 repetitions",
        out="instructions-<time>",
    )
    parser.add_argument(
        "--bench",
        dest="pattern",
        metavar="REGEX",
        help="regex over asv benchmark names, e.g. \"'users'\" or 'Validation.time_validate_json'",
    )
    parser.add_argument(
        "--repeats", type=int, metavar="N", help="counts per case (default 3, --quick 2)"
    )
    parser.add_argument(
        "--calls", type=int, metavar="N", help="N: a count is of N and 2N calls (default 100)"
    )
    parser.add_argument(
        "--benchmark-dir",
        type=Path,
        metavar="DIR",
        default=os.environ.get("BENCHWATCH_BENCHMARK_DIR"),
        help="benchmark package to count instead of ./benchmarks (env BENCHWATCH_BENCHMARK_DIR)",
    )


def run(args: argparse.Namespace) -> int:
    import re

    from benchwatch.commands.micro import finish
    from benchwatch.errors import UserError
    from benchwatch.measure import inject
    from benchwatch.measure.session import open_session
    from benchwatch.micro.instructions import (
        DEFAULT_CALLS,
        DEFAULT_REPEATS,
        QUICK_REPEATS,
        count_instructions,
        quick_patterns,
    )
    from benchwatch.project.apps import OWN_REQUIREMENTS_STACK
    from benchwatch.project.loading import load_project
    from benchwatch.project.variants import select_figures

    for option, value in (("--repeats", args.repeats), ("--calls", args.calls)):
        if value is not None and value < 1:
            raise UserError(f"{option}: give a whole number of at least 1")
    if args.pattern:
        try:
            re.compile(args.pattern)
        except re.error as exc:
            raise UserError(f"--bench {args.pattern!r}: not a regular expression ({exc})") from None
    from benchwatch.micro.cachegrind import unavailable_reason

    missing = unavailable_reason()
    if missing:  # a missing prerequisite is bad input (exit 3), before anything is written
        raise UserError(missing)
    project = load_project()
    names = stack_names(args) or project.default_stacks
    if args.patterns:  # the stacks of the selected variants
        names = list(dict.fromkeys(v.stack.name for v in project.select(args.patterns, names)))
    stacks = [project.stack(name) for name in names if name != OWN_REQUIREMENTS_STACK]
    benchmark_dir = (args.benchmark_dir or project.root / "benchmarks").resolve()
    if not benchmark_dir.is_dir():
        raise UserError(f"{benchmark_dir}: no benchmark directory there (--benchmark-dir)")
    session = open_session(project.root, args.out, name="instructions")
    record = session.start_run()
    injected = inject.micro_from_environment()  # TESTING ONLY
    figures, problems = count_instructions(
        stacks,
        benchmark_dir=benchmark_dir,
        patterns=quick_patterns(project.root) if args.quick else (),
        within=[args.pattern] if args.pattern else (),
        repeats=args.repeats or (QUICK_REPEATS if args.quick else DEFAULT_REPEATS),
        calls=args.calls or DEFAULT_CALLS,
        extra_env={inject.MICRO_INJECT_ENV: injected} if injected else None,
    )
    figures = select_figures(figures, args.patterns)
    if not figures and not problems:
        raise UserError(f"--bench {args.pattern}: no time_ benchmark matches (see benchmarks/)")
    return finish(session.out, record, project, stacks, figures, problems, micro_inject=injected)
