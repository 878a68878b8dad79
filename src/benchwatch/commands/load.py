from __future__ import annotations

import argparse
import sys
from pathlib import Path

from benchwatch.commands import add_selection, stack_names

HELP = "Run the oha load tests: throughput, latency at fixed rates, CPU per request, memory"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_load_options(parser)
    parser.add_argument(
        "--aa", metavar="VARIANT",
        help="also measure VARIANT a second time, interleaved, for the A/A noise (e.g. services@latest)",
    )  # fmt: skip


def add_load_options(parser: argparse.ArgumentParser) -> None:
    add_selection(parser)
    parser.add_argument("--quick", action="store_true",
                        help="one short round over the quick endpoints of every variant")  # fmt: skip
    parser.add_argument(
        "--out", metavar="DIR", help="results directory (default results/<timestamp>)"
    )
    parser.add_argument(
        "--shard", metavar="I/N", help="measure only the I-th of N stable parts of the variants"
    )
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress lines")


def run(args: argparse.Namespace) -> int:
    run_record, _out = execute(args, aa_variant=args.aa)
    return 1 if run_record.problems else 0


def execute(args: argparse.Namespace, aa_variant: str | None):
    """Select, check prerequisites, measure; returns (Run, results directory)."""
    from benchwatch import fingerprint
    from benchwatch.config import load_project
    from benchwatch.measure import load, loadgen
    from benchwatch.measure.server import install_cleanup
    from benchwatch.results import ensure_writable

    project = load_project()
    variants = load.shard(project.select(args.patterns, stack_names(args)), args.shard)
    out = Path(args.out) if args.out else load.default_out_dir(project)
    ensure_writable(out)
    oha = loadgen.ensure_oha()
    install_cleanup()
    plan = load.QUICK if args.quick else load.FULL
    environment = fingerprint.collect(project.root, loadgen.oha_version(oha))
    record = load.start_run(["benchwatch", *sys.argv[1:]], environment)
    record.extra.update(reference_stack=project.reference_stack, stack_order=list(project.stacks))
    if args.shard:
        record.extra["shard"] = args.shard
    stage = load.LoadStage(
        project, variants, plan, out, run=record, aa_variant=aa_variant, quiet=args.quiet
    )
    load.say(f"load: {len(stage.slots)} variant slots x {plan.rounds} round(s), "
             f"about {plan.estimate([s.variant for s in stage.slots]) / 60:.1f} min; results in {out}",
             args.quiet)  # fmt: skip
    record = stage.execute()
    print_outcome(record, out, len(variants))
    return record, out


def print_outcome(record, out: Path, variant_count: int) -> None:
    from benchwatch.commands.verify import print_problems

    print_problems(record.problems)
    shown = [f for f in record.figures if f.kind == "load" and f.valid and f.metric == "cpu_us_per_request"
             and f.params.get("mode") == "closed"]  # fmt: skip
    for figure in shown:
        rps = next(
            (f for f in record.figures if f.name == figure.name.removesuffix("cpu/req") + "rps"),
            None,
        )
        tail = f"  {rps.value:9.0f} req/s" if rps else ""
        print(f"{figure.name.removesuffix(' cpu/req'):<70} {figure.value:8.1f} us/req{tail}")
    failed = {p.variant for p in record.problems if p.phase in ("env", "boot", "verify", "load")}
    print(f"{variant_count - len(failed)} of {variant_count} variants measured cleanly"
          f"{f'; {len(failed)} with problems' if failed else ''}; results in {out}")  # fmt: skip
    bottlenecked = record.extra.get("loadgen", {}).get("bottlenecked_runs", 0)
    if bottlenecked:
        print(
            f"WARNING: oha was the bottleneck (> 90 % of its cores) in {bottlenecked} run(s)",
            file=sys.stderr,
        )
