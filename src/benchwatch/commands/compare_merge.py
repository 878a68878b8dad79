from __future__ import annotations

import argparse
from pathlib import Path

HELP = (
    "Merge the folders of a compare's shards (compare --shard K/N) into the one comment, "
    "compare.json and exit code"
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "dirs", nargs="+", type=Path, metavar="DIR", help="the --out folder of every shard"
    )
    parser.add_argument(
        "--out", type=Path, metavar="DIR", required=True, help="the merged compare's folder"
    )


def run(args: argparse.Namespace) -> int:
    from benchwatch.compare.merge_shards import check, merge, read_shards
    from benchwatch.compare.outputs import write_outputs
    from benchwatch.report.headline import headline
    from benchwatch.results.files import ensure_writable, read_run, write_run
    from benchwatch.results.merge import merge_runs

    shards = read_shards(args.dirs)
    check(shards)  # before anything is read further or written
    sides = {  # each side's run directory, its figures from every shard
        role: merge_runs(
            [(d / role, read_run(d / role)) for d, _, _ in shards if (d / role).is_dir()]
        )
        for role in ("base", "head")
        if any((d / role).is_dir() for d, _, _ in shards)
    }
    comparison = merge(shards, sides["base"].figures if "base" in sides else [])
    args.out.mkdir(parents=True, exist_ok=True)
    ensure_writable(args.out)
    for role, run in sides.items():
        write_run(args.out / role, run)
    write_outputs(comparison, args.out)
    for row in comparison.rows:
        if row.significant or row.verdict in ("no verdict", "unconfirmed"):
            print(f"{row.verdict:<12} {row.label}: {row.text}")
    code = comparison.exit_code()
    print(
        f"merged {len(shards)} shards: {headline(comparison)}; "
        f"{args.out / 'comment.md'} (exit {code})"
    )
    return code
