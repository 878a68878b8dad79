from __future__ import annotations

import argparse
import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from benchwatch.commands import EVERY_VARIANT, add_shared_options, stack_names

if TYPE_CHECKING:  # annotations only: a command imports what it runs when it runs (start-up time)
    from benchwatch.declarations.stacks import Stack
    from benchwatch.project.variants import Project
    from benchwatch.results.schema import Figure, Problem, Run

HELP = "Run the micro-benchmarks"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_shared_options(
        parser,
        variants=f"{EVERY_VARIANT}; their scenarios' figures are kept",
        stacks=True,
        quick="a representative subset with few repeats (about 2 minutes, all stacks)",
        rounds="asv passes interleaved across the stacks (default 2, --quick 1)",
        out="micro-<time>",
    )
    parser.add_argument(
        "--bench",
        metavar="REGEX",
        help="asv --bench regex over benchmark names, e.g. 'Validation.time_validate_json'",
    )
    parser.add_argument(
        "--benchmark-dir",
        type=Path,
        metavar="DIR",
        default=os.environ.get("BENCHWATCH_BENCHMARK_DIR"),
        help="benchmark package to run instead of ./benchmarks (env BENCHWATCH_BENCHMARK_DIR)",
    )
    parser.add_argument(
        "--machine",
        metavar="NAME",
        help="asv machine name (env BENCHWATCH_MACHINE; default: the host name)",
    )


def run(args: argparse.Namespace) -> int:
    from benchwatch.measure.session import open_session
    from benchwatch.micro.asv import run_micro
    from benchwatch.project.apps import OWN_REQUIREMENTS_STACK
    from benchwatch.project.loading import load_project
    from benchwatch.project.variants import select_figures

    project = load_project()
    names = stack_names(args) or project.default_stacks
    if args.patterns:  # the stacks of the selected variants
        names = list(dict.fromkeys(v.stack.name for v in project.select(args.patterns, names)))
    stacks = [project.stack(name) for name in names if name != OWN_REQUIREMENTS_STACK]
    session = open_session(project.root, args.out, name="micro")
    record = session.start_run()
    figures, problems = run_micro(
        stacks,
        args.bench,
        args.quick,
        session.out,
        root=project.root,
        benchmark_dir=args.benchmark_dir,
        rounds=args.rounds,
        machine=args.machine,
    )
    figures = select_figures(figures, args.patterns)
    return finish(session.out, record, project, stacks, figures, problems)


def finish(
    out: Path,
    record: Run,
    project: Project,
    stacks: Sequence[Stack],
    figures: list[Figure],
    problems: list[Problem],
    **extra: Any,
) -> int:
    """Complete the micro-benchmark run `record` (run.json, gab files) and print its figures and
    problems; exit 2 (not measured) when anything failed or nothing was measured. Shared with
    `instructions`."""
    import sys

    from benchwatch.errors import EXIT_OK, EXIT_UNMEASURED
    from benchwatch.measure.session import now
    from benchwatch.results.files import write_run
    from benchwatch.results.schema import RunExtra

    record.environment.stacks = {stack.name: stack.pinned_versions() for stack in stacks}
    record.extra = RunExtra(
        reference_stack=project.reference_stack, stack_order=list(project.stacks), **extra
    )
    record.finished_at = now()
    record.complete = not problems
    record.figures, record.problems = figures, problems
    write_run(out, record)
    for figure in figures:
        print(f"{figure.name:<66} {figure.value:14,.6g} {figure.unit:<12} ± {figure.spread:.3g}")
    for problem in problems:
        print(f"PROBLEM {problem.line()}", file=sys.stderr)
    print(f"{len(figures)} figures, {len(problems)} problems -> {out}", file=sys.stderr)
    return EXIT_UNMEASURED if problems or not figures else EXIT_OK
