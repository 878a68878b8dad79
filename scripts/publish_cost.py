"""What publish.yml and weekly.yml cost, from the project's own estimator (LoadPlan.estimate).

Load time only: `LoadPlan.estimate` counts rounds x (boot + per endpoint warm-up, closed and
open windows); it does not count a runner's set-up (checkout, Python, uv sync, stack
environments, oha from the cache), which is an assumption here (--setup-min per job). Side by
side, base and head load at the same moment, so a compare costs one side's estimate. An
estimate, not a measurement (docs/github.md says how it compared with a measured quick run).

    .venv/bin/python scripts/publish_cost.py [--setup-min 3] [--shards-full 4]
"""

from __future__ import annotations

import argparse
from pathlib import Path

from benchwatch.compare.rounds import compare_plan
from benchwatch.compare.sides import REF_DEFAULT_PATTERNS
from benchwatch.measure.load_plan import FULL, QUICK, shard
from benchwatch.project.loading import load_project

DAYS, WEEKS = 30, 30 / 7


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--setup-min", type=float, default=3.0, help="assumed set-up per measure job, minutes"
    )
    parser.add_argument(
        "--small-job-min",
        type=float,
        default=2.0,
        help="assumed wall of a job that measures nothing (merge + changes + site, record)",
    )
    parser.add_argument("--shards-full", type=int, default=4)
    args = parser.parse_args()
    project = load_project(Path(__file__).resolve().parents[1])
    everything = project.select(None)
    latest = project.select(REF_DEFAULT_PATTERNS)
    setup, small = args.setup_min, args.small_job_min

    relative_plan = compare_plan(True, None)
    relative = relative_plan.estimate(latest) / 60
    quick = QUICK.estimate(everything) / 60
    full = [
        FULL.estimate(shard(everything, f"{i}/{args.shards_full}")) / 60
        for i in range(1, args.shards_full + 1)
    ]
    # one measure job (reusable-publish.yml: the quick run, then the relative compare on the same
    # runner), then record, then the issues job
    push_wall = relative + quick + setup + 2 * small
    push_runner = push_wall
    week_wall = max(full) + setup + 2 * small
    week_runner = sum(full) + len(full) * setup + 2 * small
    print(
        f"variants: {len(everything)} in the quick run, {len(latest)} at latest in the relative compare"
    )
    print(
        f"publish.yml per push: relative compare --quick ({relative_plan.rounds} rounds, load; its counts "
        f"per request are not estimated) {relative:.1f} min, "
        f"quick run (load) {quick:.1f} min"
    )
    print(
        f"  wall ~{push_wall:.0f} min; runner time ~{push_runner:.0f} min; "
        f"a month at one push a day ~{push_runner * DAYS:.0f} runner min"
    )
    print(
        f"weekly.yml: full plan in {args.shards_full} shards {', '.join(f'{f:.0f}' for f in full)} min (load)"
    )
    print(
        f"  wall ~{week_wall:.0f} min; runner time ~{week_runner:.0f} min + the asv job (not estimated); "
        f"a month ~{week_runner * WEEKS:.0f} runner min + asv"
    )
    print(
        f"assumed, not estimated: {setup:g} min set-up per measure job, {small:g} min per merge/record job"
    )


if __name__ == "__main__":
    main()
