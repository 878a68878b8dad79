from __future__ import annotations

import argparse

from benchwatch.commands import add_shared_options

HELP = (
    "Find the first commit between two git refs that made a variant slower (side-by-side compares)"
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--good", required=True, metavar="REF", help="a ref measured fast (an ancestor of --bad)"
    )
    parser.add_argument("--bad", required=True, metavar="REF", help="a ref measured slower")
    add_shared_options(
        parser,
        variants="the variant to follow, e.g. 'api@latest'",
        required=True,
        rounds="the side-by-side rounds of each probe (default: compare's)",
        out="bisect-<time>",
    )
    parser.add_argument(
        "--figure",
        default="instructions_per_request",
        metavar="METRIC",
        help="the metric that decides (default instructions_per_request: counted once per side, "
        "no timing rounds; syscalls_per_request likewise; cpu_us_per_request for timings)",
    )
    parser.add_argument(
        "--full", action="store_true", help="every endpoint and the full plan (default: quick)"
    )


def run(args: argparse.Namespace) -> int:
    from benchwatch.attribute.bisect import bisect
    from benchwatch.errors import UserError
    from benchwatch.figures import metrics
    from benchwatch.project.loading import load_project

    metric = metrics.metric("load", args.figure)
    if metric is None:
        known = ", ".join(m.key for m in metrics.METRICS if not m.key.startswith("micro"))
        raise UserError(f"--figure {args.figure!r}: not a load metric; give one of {known}")
    result = bisect(
        load_project(),
        args.good,
        args.bad,
        args.patterns,
        metric=metric,
        quick=not args.full,
        rounds=args.rounds,
        out=args.out,
    )
    print(
        f"bisect {result.good[:10]}..{result.bad[:10]}: {len(result.commits)} commits, {result.compares} compares "
        f"(the check of bad, then {result.compares - 1} probes)"
    )
    for number, probe in enumerate(result.path, 1):
        print(f"  {number}. {probe.line()}")
    found = result.found()
    if len(result.candidates) > 1:
        print(
            "first bad commit is one of (the others were skipped): "
            + ", ".join(c[:10] for c in result.candidates)
        )
    if found is not None:
        print(
            f"first bad commit: {found.commit} {found.subject} — {found.ratio.shown() if found.ratio else ''} "
            f"({found.reason})"
        )
    return 0
