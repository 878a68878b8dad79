from __future__ import annotations

import argparse

from benchwatch.commands import add_shared_options, stack_names

HELP = "Count instructions and system calls per request of each variant's server"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_shared_options(
        parser, stacks=True, quick="only the quick endpoints of every variant", out="<time>"
    )
    parser.add_argument(
        "--repeats", type=int, metavar="N", help="counted phases per endpoint (default 3)"
    )
    parser.add_argument(
        "--requests",
        type=int,
        metavar="N",
        help="at most N requests per phase (default 1000; heavier endpoints get fewer)",
    )
    parser.add_argument(
        "--jobs", type=int, default=2, metavar="N", help="servers counted at once (default 2)"
    )


def run(args: argparse.Namespace) -> int:
    import sys

    from benchwatch.counts import DEFAULT_REPEATS, DEFAULT_REQUESTS, count_requests, targets_for
    from benchwatch.counts.database_work import split_rows
    from benchwatch.environments.envs import prepare
    from benchwatch.errors import UserError
    from benchwatch.figures.metrics import RETAINED
    from benchwatch.measure import preflight
    from benchwatch.measure.session import now, open_session
    from benchwatch.project.loading import load_project
    from benchwatch.results.files import write_run
    from benchwatch.results.schema import Problem

    for option, value in (
        ("--repeats", args.repeats),
        ("--requests", args.requests),
        ("--jobs", args.jobs),
    ):
        if value is not None and value < 1:
            raise UserError(f"{option}: give a whole number of at least 1")
    project = load_project()
    variants = project.select(args.patterns, stack_names(args))
    if not variants:
        raise UserError(f"-k {args.patterns}: no variant matches (see `benchwatch list`)")
    preflight.check(variants)
    session = open_session(project.root, args.out)
    out = session.out
    record = session.start_run()
    record.extra.reference_stack = project.reference_stack
    record.extra.stack_order = list(project.stacks)
    environments, failed = prepare(variants)
    record.environment.record_environments(environments)
    problems = [
        Problem(variant=v.id, phase="env", reason=failed[v.env_key])
        for v in variants
        if v.env_key in failed
    ]
    targets = targets_for(variants, environments, args.quick)
    figures, trouble = count_requests(
        targets,
        out_dir=out / "counts",
        requests=args.requests or DEFAULT_REQUESTS,
        repeats=args.repeats or DEFAULT_REPEATS,
        jobs=args.jobs,
    )
    record.figures, record.problems = figures, problems + trouble
    record.complete = not record.problems
    record.finished_at = now()
    write_run(out, record)
    for figure in figures:
        spread = (max(figure.samples) - min(figure.samples)) / figure.value if figure.value else 0.0
        shown = f"range {spread:.2%}"
        if figure.metric == RETAINED.key:  # a difference: its range in blocks, not a share of 0
            shown = f"range {min(figure.samples):+.2f} to {max(figure.samples):+.2f}"
        print(f"{figure.name:<70} {figure.value:14,.2f} {figure.unit:<12} {shown}")
        detail, rows = split_rows(figure.detail)  # rows by statement: a line of their own
        for parts in (detail, {f"rows {text}": n for text, n in rows.items()}):
            if parts:
                print("    " + ", ".join(f"{name} {value:.2f}" for name, value in parts.items()))
    for problem in record.problems:
        print(f"PROBLEM {problem.line()}", file=sys.stderr)
        if problem.detail:
            print("    " + problem.detail.strip().replace("\n", "\n    "), file=sys.stderr)
    print(f"{len(figures)} figures, {len(record.problems)} problems -> {out}", file=sys.stderr)
    return 2 if record.problems or not figures else 0  # 2: not (all) measured
