"""Does this host run a process slower for stretches of time? The reason compare's micro
timings spread a case's batches over the whole round (micro/pairs.py).

    .venv/bin/python scripts/slow_stretches.py [--stack latest] [--case "time_response_model\\('services'\\)"]
        [--seconds 5] [--batch-ms 1]

One runner process (micro/runner.py `serve`, as compare times micro-benchmarks), pinned
to the timing core, times one asv case in back-to-back batches of about --batch-ms for
--seconds. Prints how the batches are spread (µs per call; fastest, median, 90th percentile,
slowest), and the stretches of consecutive batches slower than 1.25x the fastest: how many,
how long (ms), and the share of the time they took. A measurement script, not a test.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SLOW = 1.25  # a batch this much slower than the fastest belongs to a slow stretch
REPEATS = 50  # batches per request: the runner times them back to back


def batches(player, case, seconds: float, batch_s: float) -> tuple[list[float], int]:
    """Seconds per call of every batch, in order, and the calls per batch."""
    from benchwatch.micro.pairs import SETUP_TIMEOUT_S, PairsError, Runner, timing_core

    runner = Runner(player, [case])
    try:
        report = json.loads(runner.receive(SETUP_TIMEOUT_S))
        if case.ident not in report["seconds"]:
            sys.exit(f"{case.name}: {report['failed'].get(case.ident, 'not built')}")
        runner.pin(timing_core())
        calls = max(1, round(batch_s / max(report["seconds"][case.ident], 1e-9)))
        found: list[float] = []
        started = time.monotonic()
        while time.monotonic() - started < seconds:
            runner.send(f"0 {calls} {REPEATS}")
            reply = runner.receive().split()
            if not reply or reply[0] == "error":
                sys.exit(f"runner: {' '.join(reply)}")
            found += [float(s) / calls for s in reply]
        return found, calls
    except PairsError as exc:
        sys.exit(f"runner: {exc}")
    finally:
        runner.close()  # no runner outlives the script, whatever stopped it


def stretches(per_call: list[float]) -> list[int]:
    """Lengths (in batches) of the runs of batches slower than SLOW x the fastest."""
    limit = SLOW * min(per_call)
    lengths, current = [], 0
    for value in per_call:
        if value > limit:
            current += 1
        elif current:
            lengths.append(current)
            current = 0
    return lengths + ([current] if current else [])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stack", default="latest")
    parser.add_argument(
        "--case", default=r"time_response_model\('services'\)", help="a regex over asv case names"
    )
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--batch-ms", type=float, default=1.0)
    args = parser.parse_args()

    from benchwatch.environments.envs import ensure
    from benchwatch.micro.cases import discover, runner_env, select
    from benchwatch.micro.pairs import Player
    from benchwatch.project.loading import load_project

    stack = load_project(REPO).stack(args.stack)
    python = ensure(stack).python
    chosen = select(discover(python, REPO / "benchmarks", runner_env()), [args.case])
    if not chosen:
        sys.exit(f"--case {args.case!r}: no asv case matches")
    case = chosen[0]
    player = Player("timed", stack, python, REPO / "benchmarks")
    per_call, calls = batches(player, case, args.seconds, args.batch_ms / 1000)
    us = sorted(v * 1e6 for v in per_call)
    fastest = us[0]
    slow = stretches(per_call)
    batch_ms = statistics.median(per_call) * calls * 1000
    print(
        f"{case.name} on {args.stack}: {len(us)} batches of ~{batch_ms:.1f} ms in {args.seconds:g} s"
    )
    print(
        f"µs per call: fastest {fastest:.2f}, median {statistics.median(us):.2f} "
        f"({statistics.median(us) / fastest:.2f}x), 90th percentile {us[int(0.9 * len(us))]:.2f} "
        f"({us[int(0.9 * len(us))] / fastest:.2f}x), slowest {us[-1]:.2f} ({us[-1] / fastest:.2f}x)"
    )
    if slow:
        print(
            f"stretches slower than {SLOW}x the fastest: {len(slow)}, {sum(slow)} of {len(us)} batches "
            f"({sum(slow) / len(us):.0%}); longest {max(slow) * batch_ms:.0f} ms, "
            f"median {statistics.median(slow) * batch_ms:.1f} ms"
        )
    else:
        print(f"no batch slower than {SLOW}x the fastest")
    return 0


if __name__ == "__main__":
    sys.exit(main())
