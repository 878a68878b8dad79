from __future__ import annotations

import argparse
from pathlib import Path

HELP = "Combine shard runs (run directories) into one run directory"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "dirs", nargs="+", metavar="DIR", help="run directories written by load/run --shard"
    )
    parser.add_argument("--out", metavar="DIR", required=True, help="directory for the merged run")


def run(args: argparse.Namespace) -> int:
    from benchwatch.report.write import write_report
    from benchwatch.results.files import ensure_writable, read_run, write_run
    from benchwatch.results.merge import merge_runs

    out = Path(args.out)
    runs = [(Path(d), read_run(Path(d))) for d in args.dirs]
    merged = merge_runs(runs)
    ensure_writable(out)
    write_run(out, merged)
    write_report(out, merged)
    valid = len(merged.valid_figures())
    print(
        f"merged {len(runs)} runs: {valid} valid figures, {len(merged.problems)} problems; results in {out}"
    )
    return 0
