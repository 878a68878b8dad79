from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from benchwatch.commands import add_shared_options, stack_names
from benchwatch.errors import EXIT_OK, EXIT_UNMEASURED

if TYPE_CHECKING:  # annotations only: a command imports what it runs when it runs (start-up time)
    from benchwatch.measure.session import Session
    from benchwatch.project.variants import Project, Variant
    from benchwatch.results.schema import Run

HELP = "Run the oha load tests: throughput, latency at fixed rates, CPU per request, memory"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_load_options(parser)
    parser.add_argument(
        "--aa",
        metavar="VARIANT",
        help="also measure VARIANT a second time, interleaved, for the A/A noise (e.g. api@latest)",
    )


def add_load_options(parser: argparse.ArgumentParser) -> None:
    add_shared_options(
        parser,
        stacks=True,
        quick="one short round over the quick endpoints of every variant",
        rounds="the load rounds, interleaved over the variants (default 3, --quick 1)",
        out="<time>",
    )
    parser.add_argument(
        "--shard", metavar="I/N", help="measure only the I-th of N stable parts of the variants"
    )
    parser.add_argument(
        "--counts",
        action="store_true",
        help="after the load rounds, count instructions (valgrind) and system calls (strace) per "
        "request of every selected endpoint (minutes per stack; compare counts by default)",
    )
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress lines")


def run(args: argparse.Namespace) -> int:
    record, _out = execute(args, aa_variant=args.aa)
    return EXIT_UNMEASURED if record.problems else EXIT_OK


def execute(
    args: argparse.Namespace,
    aa_variant: str | None,
    project: Project | None = None,
    variants: list[Variant] | None = None,
    session: Session | None = None,
) -> tuple[Run, Path]:
    """Select (unless the caller already did), open the session (unless the caller did), measure,
    print; returns (Run, results directory)."""
    from benchwatch.measure import preflight
    from benchwatch.measure.load_plan import shard
    from benchwatch.measure.session import open_session
    from benchwatch.pipeline.load_stage import load
    from benchwatch.project.loading import load_project

    project = project or load_project()
    if variants is None:
        variants = shard(project.select(args.patterns, stack_names(args)), args.shard)
    preflight.check(variants)
    session = session or open_session(project.root, args.out, load_tests=True)
    record = load(
        project,
        variants,
        session,
        quick=args.quick,
        rounds=args.rounds,
        aa_variant=aa_variant,
        shard=args.shard,
        quiet=args.quiet,
        counts=args.counts,
    )
    print_outcome(record, session.out, len(variants))
    return record, session.out


def print_outcome(record: Run, out: Path, variant_count: int) -> None:
    from benchwatch.commands.verify import print_problems
    from benchwatch.figures.metrics import CPU, RPS, Closed

    print_problems(record.problems)
    closed = [
        (f, f.setting)
        for f in record.figures
        if f.kind == "load" and f.valid and isinstance(f.setting, Closed)
    ]
    rps = {(f.variant, f.endpoint, setting): f for f, setting in closed if f.metric == RPS.key}
    for figure, setting in closed:
        if figure.metric != CPU.key:
            continue
        partner = rps.get((figure.variant, figure.endpoint, setting))
        tail = f"  {partner.value:9.0f} req/s" if partner else ""
        where = f"{figure.variant} {figure.endpoint} {setting.tag}"
        print(f"{where:<70} {figure.value:8.1f} us/req{tail}")
    failed = {
        p.variant for p in record.problems if p.phase in ("env", "boot", "setup", "verify", "load")
    }
    print(
        f"{variant_count - len(failed)} of {variant_count} variants measured cleanly"
        f"{f'; {len(failed)} with problems' if failed else ''}; results in {out}"
    )
    bottlenecked = record.extra.load.loadgen.bottlenecked_runs if record.extra.load.loadgen else 0
    if bottlenecked:
        print(
            f"WARNING: oha was the bottleneck (> 90 % of its cores) in {bottlenecked} run(s)",
            file=sys.stderr,
        )
