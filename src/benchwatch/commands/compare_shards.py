"""`benchwatch compare-shards`: the shard count a pull request's compare takes, chosen from the
number of declared endpoints (compare/shard_count.py), printed as $GITHUB_OUTPUT lines."""

from __future__ import annotations

import argparse

HELP = (
    "How many runners a pull request's compare (compare --shard K/N) takes, from the number of "
    "endpoints it counts: prints endpoints=E, count=N and list=[1,…,N] (GITHUB_OUTPUT lines)"
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from benchwatch.compare.shard_count import ENDPOINTS_PER_SHARD, MAX_SHARDS

    parser.add_argument(
        "-k",
        "--variants",
        dest="patterns",
        metavar="PATTERNS",
        help="the compare's -k: comma-separated glob patterns over variant ids (default: what a "
        "compare of two git refs measures without -k)",
    )
    parser.add_argument(
        "--per-shard",
        type=int,
        default=ENDPOINTS_PER_SHARD,
        metavar="E",
        help=f"endpoints one runner counts (default {ENDPOINTS_PER_SHARD}, measured: docs/shards.md)",
    )
    parser.add_argument(
        "--most",
        type=int,
        default=MAX_SHARDS,
        metavar="N",
        help=f"at most N runners (default {MAX_SHARDS})",
    )


def run(args: argparse.Namespace) -> int:
    from benchwatch.compare.shard_count import declared_endpoints, output_lines, shards_for
    from benchwatch.compare.sides import ref_variants
    from benchwatch.project.loading import load_project

    count = shards_for(0, args.per_shard, args.most)  # the limits checked before the project
    endpoints = declared_endpoints(ref_variants(load_project(), args.patterns))
    count = shards_for(endpoints, args.per_shard, args.most)
    for line in output_lines(endpoints, count):
        print(line)
    return 0
