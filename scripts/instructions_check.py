"""Are instruction counts as sharp as issue 13 asks? A/A spread, an injected slowdown, run time.

    .venv/bin/python scripts/instructions_check.py [--stacks latest,v2-pre-rust] [--bench "'services'"]
        [--aa 3] [--injected 10] [--fraction 0.02] [--out results/instructions-check.json]

Every count is one `count_instructions` of `micro --quick`'s cases matching --bench, on every
stack, one repetition each (as separate processes as two compares would be):
- A/A: --aa counts with the injector unset (as published); per figure max |ratio - 1|.
- null: one count with BENCHWATCH_MICRO_INJECT=0 (the injector's wrapper, no extra calls)
  against the A/A mean: the wrapper's own cost per call, which is why an injected head is always
  compared with a base at 0, never with the injector unset.
- injected: --injected counts with BENCHWATCH_MICRO_INJECT=<fraction>, each against the null
  count (same wrapper on both sides). Detected when ratio - 1 is beyond the floor, and the floor
  is max(3 x A/A spread, MIN_FLOOR).
- time: the wall time of each count (both stacks, all cases): the micro part of a quick compare.
A measurement script, not a test: it takes minutes.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
# the same work counted in another context moves a count a little: services validate_json@latest
# read 243,557 to 244,153 per call for N = 50 ... 1000 (0.25 %); a floor below that would flag it
MIN_FLOOR = 0.005


def count(stacks: list, bench: str, env: dict[str, str]) -> tuple[dict[str, float], float]:
    from benchwatch.measure.inject import MICRO_INJECT_ENV
    from benchwatch.micro.instructions import count_instructions, quick_patterns

    started = time.monotonic()
    figures, problems = count_instructions(
        stacks,
        benchmark_dir=REPO / "benchmarks",
        patterns=quick_patterns(REPO),
        within=[bench],
        repeats=1,
        extra_env=env,
        log=lambda line: None,
    )
    if problems:
        sys.exit("problems: " + "; ".join(p.line() for p in problems))
    label = f" {MICRO_INJECT_ENV}={env[MICRO_INJECT_ENV]}" if env else ""
    elapsed = time.monotonic() - started
    print(f"  counted {len(figures)} figures in {elapsed:.1f} s{label}", file=sys.stderr)
    return {f.name: f.value for f in figures}, elapsed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stacks", default="latest,v2-pre-rust")
    parser.add_argument("--bench", default="'services'")
    parser.add_argument("--aa", type=int, default=3)
    parser.add_argument("--injected", type=int, default=10)
    parser.add_argument("--fraction", type=float, default=0.02)
    parser.add_argument("--out", type=Path, default=REPO / "results" / "instructions-check.json")
    args = parser.parse_args()

    from benchwatch.measure.inject import MICRO_INJECT_ENV
    from benchwatch.project.loading import load_project

    project = load_project(REPO)
    stacks = [project.stack(name) for name in args.stacks.split(",")]
    aa = [count(stacks, args.bench, {}) for _ in range(args.aa)]
    null, _ = count(stacks, args.bench, {MICRO_INJECT_ENV: "0"})
    injected = [
        count(stacks, args.bench, {MICRO_INJECT_ENV: str(args.fraction)})
        for _ in range(args.injected)
    ]
    names = sorted(aa[0][0])
    spread = {n: max(abs(run[n] / aa[0][0][n] - 1) for run, _ in aa) for n in names}
    floor = max(3 * max(spread.values()), MIN_FLOOR)
    print(f"floor = max(3 x A/A spread, {MIN_FLOOR:.1%}) = {floor:.3%}")
    print(
        f"| figure | A/A max abs(ratio-1) ({args.aa} counts) | null ratio | injected {args.fraction:.0%}: "
        f"ratio (min-max) | detected |"
    )
    print("|---|---|---|---|---|")
    detected_total = 0
    rows = []
    for n in names:
        mean = statistics.fmean(run[n] for run, _ in aa)
        ratios = [run[n] / null[n] for run, _ in injected]
        detected = sum(r - 1 > floor for r in ratios)
        detected_total += detected
        rows.append(
            {
                "figure": n,
                "aa_spread": spread[n],
                "null_ratio": null[n] / mean,
                "injected_ratios": ratios,
                "detected": detected,
            }
        )
        print(
            f"| {n} | {spread[n]:.4%} | {null[n] / mean:.4f} | {min(ratios):.4f}-{max(ratios):.4f} "
            f"| {detected}/{len(ratios)} |"
        )
    times = [t for _, t in aa] + [t for _, t in injected]
    print(
        f"detected {detected_total} of {len(names) * len(injected)}; "
        f"a count of {len(names)} figures took {min(times):.0f}-{max(times):.0f} s "
        f"(median {statistics.median(times):.0f} s)"
    )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(
        json.dumps({"floor": floor, "rows": rows, "seconds": times}, indent=1) + "\n"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
