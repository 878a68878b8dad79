"""Time the PR compare of the generated 100-endpoint app (scripts/make_wide_app.py): on one runner,
and in N shards run one after another as separate processes, each timed alone as an N-runner
GitHub Actions matrix would run them, then merged (`benchwatch compare-merge`). The compare is the
PR's: `--quick` (the 5 lists behind the login timed side by side, every declared endpoint counted),
a no-op (base and head the same commit), so its verdict must be quiet.

    python scripts/time_shards.py OUT [--shards 4] [--only K ...] [--no-one-runner | --one-runner-only]

OUT gets the app (OUT/wide), each compare's folder and times-<unix time>.json (one per invocation); a line per compare is printed.
`--only K` runs only those shards (when the whole matrix does not fit the time at hand: no merge
then). Timings only: nothing here decides a test."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import make_wide_app

BENCHWATCH = [sys.executable, "-m", "benchwatch"]
PR_COMPARE = ["compare", "--base", "HEAD", "--head", "HEAD", "--quick", "--no-micro", "-q"]


def environ() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k != "BENCHWATCH_ROOT"} | (
        make_wide_app.credentials()
    )


def timed(args: list[str], cwd: Path, name: str, times: dict) -> int:
    began = time.monotonic()
    done = subprocess.run(
        [*BENCHWATCH, *args], cwd=cwd, env=environ(), text=True, capture_output=True
    )
    seconds = round(time.monotonic() - began, 1)
    last = (done.stdout.strip().splitlines() or [""])[-1]
    times[name] = {"seconds": seconds, "exit": done.returncode, "said": last}
    print(f"{name}: {seconds} s, exit {done.returncode}: {last}", flush=True)
    if done.returncode not in (0, 1, 2):
        print(done.stderr[-3000:], file=sys.stderr)
    return done.returncode


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--shards", type=int, default=4)
    parser.add_argument("--only", type=int, action="append", metavar="K")
    runner = parser.add_mutually_exclusive_group()
    runner.add_argument("--no-one-runner", action="store_true")
    runner.add_argument("--one-runner-only", action="store_true")
    args = parser.parse_args()
    app = args.out / "wide"
    if not app.exists():
        app.mkdir(parents=True)
        make_wide_app.write(app)
        make_wide_app.init(app, BENCHWATCH)
    times: dict = {"load_at_start": os.getloadavg()[0], "cores": os.cpu_count()}
    if not args.no_one_runner:
        timed([*PR_COMPARE, "--out", str(args.out / "one-runner")], app, "one runner", times)
    shards = [] if args.one_runner_only else args.only or list(range(1, args.shards + 1))
    dirs = []
    for k in shards:
        out = args.out / f"shard-{k}-of-{args.shards}"
        dirs.append(str(out))
        spec = f"{k}/{args.shards}"
        timed([*PR_COMPARE, "--shard", spec, "--out", str(out)], app, f"shard {spec}", times)
    if shards and len(shards) == args.shards:
        timed(["compare-merge", *dirs, "--out", str(args.out / "merged")], app, "merge", times)
    times["load_at_end"] = os.getloadavg()[0]
    (args.out / f"times-{int(time.time())}.json").write_text(json.dumps(times, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
