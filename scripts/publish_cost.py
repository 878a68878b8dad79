"""What publish.yml and weekly.yml cost, from the project's own estimator (LoadPlan.estimate).

Load time only: `LoadPlan.estimate` counts rounds x (boot + per endpoint warm-up, closed and
open windows); it does not count a runner's set-up (checkout, uv sync, stack environments,
restoring oha), given here as an assumption (--setup-min). Side by side, base and head load
at the same moment, so a compare round costs one side's estimate. It is an estimate, not a
measurement: docs/github.md says how it compared with a measured quick run.

    .venv/bin/python scripts/publish_cost.py [--shards-quick 2] [--shards-full 4]
"""

from __future__ import annotations

import argparse
from pathlib import Path

from benchwatch.compare.rounds import compare_plan
from benchwatch.compare.sides import REF_DEFAULT_PATTERNS
from benchwatch.config import load_project
from benchwatch.measure.plan import FULL, QUICK, shard

DAYS, WEEKS = 30, 30 / 7


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--shards-quick", type=int, default=2)
    parser.add_argument("--shards-full", type=int, default=4)
    parser.add_argument(
        "--setup-min", type=float, default=3.0, help="assumed set-up per job (minutes)"
    )
    args = parser.parse_args()
    project = load_project(Path(__file__).resolve().parents[1])
    everything = project.select(None)
    spec = lambda i, n: f"{i}/{n}"  # noqa: E731

    relative = compare_plan(True, None).estimate(project.select(REF_DEFAULT_PATTERNS)) / 60
    quick = [QUICK.estimate(shard(everything, spec(i, args.shards_quick))) / 60
             for i in range(1, args.shards_quick + 1)]  # fmt: skip
    full = [FULL.estimate(shard(everything, spec(i, args.shards_full))) / 60
            for i in range(1, args.shards_full + 1)]  # fmt: skip
    setup = args.setup_min
    # measure jobs: the relative compare, the quick shards, then the merge (+ a few minutes)
    push_wall = max(relative, *quick) + setup + 2 * setup
    push_runner = relative + sum(quick) + setup * (1 + len(quick)) + 2 * setup
    week_wall = max(full) + setup + 2 * setup
    week_runner = sum(full) + setup * len(full) + 2 * setup
    print(
        f"variants: {len(everything)} (quick run), {len(project.select(REF_DEFAULT_PATTERNS))} at latest (compare)"
    )
    print(f"per push: relative compare --quick (8 rounds, load only) {relative:.1f} min; "
          f"quick run in {args.shards_quick} shards: {', '.join(f'{q:.1f}' for q in quick)} min")  # fmt: skip
    print(f"per push: wall ~{push_wall:.0f} min (slowest measure job + set-up + merge/record), "
          f"runner ~{push_runner:.0f} min; a month at one push a day: ~{push_runner * DAYS:.0f} runner min")  # fmt: skip
    print(f"weekly full plan in {args.shards_full} shards: {', '.join(f'{f:.0f}' for f in full)} min; "
          f"wall ~{week_wall:.0f} min, runner ~{week_runner:.0f} min; a month: ~{week_runner * WEEKS:.0f} runner min "
          "(+ the micro job, not estimated)")  # fmt: skip
    print(f"set-up assumed: {setup:.0f} min per job (not estimated by LoadPlan)")


if __name__ == "__main__":
    main()
