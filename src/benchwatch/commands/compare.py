from __future__ import annotations

import argparse
import sys
from pathlib import Path

from benchwatch.commands import add_shared_options

HELP = "Compare base and head (two stacks, git refs or variants) on this machine, side by side"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--base",
        required=True,
        metavar="X",
        help="stack name, git ref (e.g. origin/main) or variant, optionally one of its endpoints "
        "(api@latest, api@latest:users; see `benchwatch list`)",
    )
    parser.add_argument(
        "--head", required=True, metavar="Y", help="the same kind as --base (e.g. HEAD)"
    )
    add_shared_options(
        parser,
        variants="every variant of both stacks; '*@latest' of two git refs",
        quick="short runs timing the quick endpoints (every declared endpoint is still counted)",
        rounds="the load rounds, base and head side by side in each (default 8, 6 with --quick; 6 or "
        "more for an interval); micro timings take 20 paired rounds (30 without --quick)",
        out="compare-<time>",
    )
    parser.add_argument("--no-micro", action="store_true", help="skip the asv micro-benchmarks")
    parser.add_argument("--no-load", action="store_true", help="skip the oha load tests")
    parser.add_argument(
        "--no-counts",
        action="store_true",
        help="skip the counts per request of the servers (instructions under valgrind, system "
        "calls under strace), which gate first",
    )
    parser.add_argument(
        "--no-instructions",
        action="store_true",
        help="skip the instruction counts of the micro-benchmarks (valgrind)",
    )
    profile = parser.add_mutually_exclusive_group()
    profile.add_argument(
        "--profile",
        action="store_const",
        const=True,
        default=False,
        help="after the measured rounds, one more side by side under py-spy: the comment says "
        "where the time went (never part of a verdict)",
    )
    profile.add_argument(
        "--profile-on-regression",
        dest="profile",
        action="store_const",
        const="on-regression",
        help="the same, only when a gating figure regressed",
    )
    parser.add_argument(
        "--no-confirm",
        action="store_true",
        help="do not measure flagged timing regressions once more (each timing figure then "
        "alone decides; false alarms per PR rise with the number of figures)",
    )
    parser.add_argument(
        "--skip-unset",
        action="store_true",
        help="leave out the variants, set-up requests and endpoints that need a ${NAME} not set "
        "here, and list them as not measured (a pull request from a fork gets no secrets; "
        "reusable-pr.yml passes it then)",
    )
    parser.add_argument(
        "--shard",
        metavar="K/N",
        help="count only shard K of N of the declared endpoints (a fixed, balanced split; base and "
        "head of an endpoint in one shard); shard 1 also times the quick set, the others only count. "
        "`benchwatch compare-merge` makes the one comment of the N folders (docs/shards.md)",
    )
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress lines")
    parser.add_argument(
        "--inject-head-cpu-us",
        type=float,
        default=0.0,
        metavar="US",
        help="TESTING ONLY, never for published runs: busy-spin US µs of CPU per request in head's servers",
    )
    parser.add_argument(
        "--inject-head-micro",
        type=float,
        default=0.0,
        metavar="FRACTION",
        help="TESTING ONLY: head's micro-benchmarks repeat FRACTION more of their calls (0.02: 2 %%)",
    )
    parser.add_argument(
        "--inject-head-loops",
        type=int,
        default=0,
        metavar="N",
        help="TESTING ONLY: head's servers run an empty Python loop of N iterations per request (the same "
        "instructions on any machine: what the counts must see)",
    )
    parser.add_argument(
        "--inject-head-leak",
        type=int,
        default=0,
        metavar="N",
        help="TESTING ONLY: head's servers keep N fresh objects per request in a list never emptied "
        "(a leak: what retained memory per request must see)",
    )
    parser.add_argument(
        "--inject-head-slowdown",
        type=float,
        default=0.0,
        metavar="FRACTION",
        help="TESTING ONLY: head's servers burn FRACTION more CPU per request than they otherwise would (0.10: 10 %%)",
    )


def run(args: argparse.Namespace) -> int:
    from benchwatch.compare.compare import compare
    from benchwatch.compare.options import CompareOptions
    from benchwatch.compare.shard import parse_shard
    from benchwatch.judge.moved import terminal_lines
    from benchwatch.measure import inject
    from benchwatch.project.loading import load_project
    from benchwatch.report.headline import headline

    options = CompareOptions(
        patterns=args.patterns,
        quick=args.quick,
        rounds=args.rounds,
        out=args.out,
        load=not args.no_load,
        micro=not args.no_micro,
        quiet=args.quiet,
        instructions=not args.no_instructions,
        profile=args.profile,
        confirm=not args.no_confirm,
        counts=not args.no_counts,
        skip_unset=args.skip_unset,
        shard=parse_shard(args.shard) if args.shard is not None else None,
    )
    head = inject.Injection(
        cpu_us=args.inject_head_cpu_us,
        slowdown=args.inject_head_slowdown,
        loops=args.inject_head_loops,
        leak=args.inject_head_leak,
    )
    with inject.armed(inject.Faults(head, args.inject_head_micro)):  # TESTING ONLY
        comparison, out = compare(load_project(), args.base, args.head, options)
    for line in terminal_lines(comparison.extra.moved):
        print(line)
    for row in comparison.rows:
        if row.significant or row.verdict in ("no verdict", "unconfirmed"):
            print(f"{row.verdict:<12} {row.label}: {row.text}")
    for problem in comparison.problems:
        print(f"FAIL {problem.line()}", file=sys.stderr)
    code = comparison.exit_code()
    # the comment's headline: the changed cost first, and how many of each verdict gate
    print(f"{headline(comparison)}; {Path(out) / 'comment.md'} (exit {code})")
    return code
