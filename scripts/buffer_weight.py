"""Measure what a PostgreSQL shared-buffer access costs on this machine, and store it.

Starts benchwatch's throwaway cluster (or uses BENCHWATCH_POSTGRES_URL's), seeds a fresh database,
times queries that touch known numbers of buffers and fits µs per buffer
(benchwatch.counts.buffer_weight says how). Prints the fit; `--write` stores it in
src/benchwatch/counts/buffer_weight.json, the weight every estimated cost of an app on PostgreSQL
uses (counts/cost.py).

    .venv/bin/python scripts/buffer_weight.py [--write]
"""

from __future__ import annotations

import argparse
import sys

from benchwatch.counts import buffer_weight
from benchwatch.measure import database

COMMAND = ".venv/bin/python scripts/buffer_weight.py --write"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--write", action="store_true", help=f"store it in {buffer_weight.STORED_FILE.name}"
    )
    args = parser.parse_args()
    try:
        with database.fresh() as boot:
            found = buffer_weight.measure(boot.cluster, boot.name, COMMAND)
    finally:
        database.stop()
    for shape in found.shapes:
        print(
            f"{shape.family:>6} {shape.buffers:>7} buffers {shape.fastest_us:>9.1f} µs  {shape.query[:60]}"
        )
    print(
        f"µs per buffer (lookups: the weight): {found.us_per_buffer} (intercept {found.intercept_us} µs, "
        f"r² {found.r_squared}); scans: {found.scan_us_per_buffer} (r² {found.scan_r_squared}); "
        f"PostgreSQL {found.postgres}, {found.machine}"
    )
    if args.write:
        buffer_weight.STORED_FILE.write_text(found.model_dump_json(indent=2) + "\n")
        print(f"written to {buffer_weight.STORED_FILE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
