"""Measure the change-point detector on histories built from real A/A samples.

    ./bw calibrate -k 'hello@latest' --rounds 16 --out /tmp/aa-hello && git checkout calibration.json
    .venv/bin/python scripts/changepoint_check.py /tmp/aa-hello

Each A/A run holds, per figure, one sample per round for two identical servers measured
side by side. From them:
- relative series: each point is compare's paired Hodges–Lehmann ratio
  (benchwatch.judge.stats.paired_ratio_interval) of a random 8 of the rounds (what one
  `(vs parent)` point is);
- absolute series: each point is one side's median of a random 8 rounds (what one
  published run is).
Steps of known size are multiplied in at known commits. A `(vs parent)` series compares
each commit with its parent, so a regression there is one point (a spike), not a step: its
rows multiply one point, the newest (the push that brought it), and must find it at once. The targets (issue 11): a 5 % step
in a relative series found within 2 commits in >= 95 % of trials, a 10 % step in an
absolute series within 5 commits in >= 90 %, and <= 1 false change point per 100 commits
on flat series. "Found within k commits" is read strictly: the history ends k points after
the step (the step's commit and k-1 more) and a change point is reported at exactly the
step's commit, in the right direction; "within 1 commit" allows the located commit to be
one off. Rows without a target show how the rate grows as more commits land.

`--library` measures the other candidates the same way, for the choice of library; they do
not install next to benchwatch (numpy and typing-extensions pins), so use scratch venvs:
`uv pip install apache-otava ruptures` (otava) or `signal-processing-algorithms ruptures`
(spa), then `PYTHONPATH=src <venv>/bin/python scripts/changepoint_check.py ...`.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from benchwatch.judge.stats import paired_ratio_interval
from benchwatch.trend.changes import ABSOLUTE, PARENT, RELATIVE, Params, boundaries, spikes

ROUNDS = 8  # rounds per compare --quick point (abrounds.COMPARE_QUICK_ROUNDS)
POOL = 300  # resampled points per figure
Detector = Callable[[np.ndarray], list[int]]  # values -> indices of the first new points


def aa_samples(directory: Path, metric: str) -> list[tuple[str, np.ndarray, np.ndarray]]:
    """(figure name, base samples, head samples) of every valid A/A figure of `metric`."""
    found = []
    for base_file in sorted(directory.glob("*/base-load/run.json")):
        base = json.loads(base_file.read_text())
        head = json.loads((base_file.parent.parent / "head-load" / "run.json").read_text())
        heads = {f["name"]: f for f in head["figures"] if f["valid"]}
        for f in base["figures"]:
            other = heads.get(f["name"])
            usable = f["metric"] == metric and f["valid"] and other and len(f["samples"]) >= ROUNDS
            if usable and len(f["samples"]) == len(other["samples"]):
                found.append((f["name"], np.array(f["samples"]), np.array(other["samples"])))
    if not found:
        sys.exit(f"ERROR: {directory}: no A/A run.json with valid {metric} figures")
    return found


def pools(figures, rng: np.random.Generator) -> dict[str, list[np.ndarray]]:
    relative, absolute = [], []
    for _, base, head in figures:
        rel, ab = np.empty(POOL), np.empty(POOL)
        for i in range(POOL):
            pick = rng.permutation(len(base))[:ROUNDS]
            rel[i] = paired_ratio_interval(base[pick], head[pick]).ratio
            ab[i] = np.median((base, head)[i % 2][pick])
        relative.append(rel)
        absolute.append(ab)
    return {"relative": relative, "absolute": absolute}


def history(pool: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
    return rng.choice(pool, size=n, replace=True)


def ours(params: Params) -> Detector:
    find = spikes if params.mode == "spike" else boundaries
    return lambda values: [i for i, _ in find(np.log(values), params)]


def candidate(name: str, params: Params) -> Detector:
    if name == "benchwatch":
        return ours(params)
    if name == "ruptures-pelt":  # the library alone: PELT on the scaled logs, no rank test
        return ours(Params(params.min_side, params.penalty, 1.0, params.min_points))
    if name == "otava":
        from otava.analysis import compute_change_points

        def otava(values: np.ndarray) -> list[int]:
            found = compute_change_points(np.asarray(values), window_len=50, max_pvalue=0.001)
            found = found[0] if isinstance(found, tuple) else found  # 0.8 also returns weak ones
            return [cp.index for cp in found]

        return otava
    if name == "spa":  # signal-processing-algorithms 2.x (1.3.5 fails on Python 3.11)
        from signal_processing_algorithms.energy_statistics.energy_statistics import e_divisive

        return lambda v: sorted(
            e_divisive(np.asarray(v, dtype=float), pvalue=0.01, permutations=100)
        )
    raise SystemExit(f"ERROR: --library {name}: unknown")


def trial(
    detect: Detector, pool, step: float, k: int, before: int, rng, spike: bool = False
) -> tuple[int | None, int]:
    """(location error of the nearest change point in the step's direction, or None;
    number of other change points) on a flat history of `before` points followed by `k`
    points one step up or down."""
    up = rng.random() < 0.5
    values = history(pool, before + k, rng)
    changed = slice(before, before + 1) if spike else slice(before, None)
    values[changed] *= (1.0 + step) if up else 1.0 / (1.0 + step)
    got = detect(values)
    rest = np.median(np.delete(values, changed))
    right = [i for i in got if (np.median(values[i : i + 1 if spike else None]) > rest) == up]
    nearest = min(right, key=lambda i: abs(i - before), default=None)
    error = None if nearest is None else nearest - before
    return error, len(got) - (error is not None)


ROWS = (  # (series kind, step, points from the step on, target, detector parameters)
    ("vs parent", 0.05, 1, 0.95, PARENT),
    ("vs parent", 0.03, 1, None, PARENT),
    ("relative", 0.05, 2, 0.95, RELATIVE),
    ("relative", 0.05, 3, None, RELATIVE),
    ("absolute", 0.10, 5, 0.90, ABSOLUTE),
    ("absolute", 0.10, 6, None, ABSOLUTE),
    ("absolute", 0.10, 8, None, ABSOLUTE),
)


def run(directory: Path, metric: str, library: str, trials: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    figures = aa_samples(directory, metric)
    pool = pools(figures, rng)
    print(
        f"{len(figures)} {metric} figures from {directory}; {POOL} resampled points each; "
        f"{trials} trials per row; detector {library}\n"
    )
    print(
        "| series | step | history (before + after) | target | at the step's commit | "
        "within 1 commit | false per 100 commits |"
    )
    print("|---|---|---|---|---|---|---|")
    started = time.perf_counter()
    for kind, step, k, target, params in ROWS:
        spike = params.mode == "spike"
        detect = ours(params) if spike else candidate(library, params)
        series = pool["relative" if spike else kind]
        for before in (20, 60):
            exact = near = extra = 0
            for t in range(trials):
                error, other = trial(detect, series[t % len(figures)], step, k, before, rng, spike)
                exact += error == 0
                near += error is not None and abs(error) <= 1
                extra += other
            rate = exact / trials
            verdict = "" if target is None else (" met" if rate >= target else " NOT met")
            goal = f">= {target:.0%}" if target else "-"
            print(
                f"| {kind} | {step:.0%} | {before} + {k} | {goal} | {exact}/{trials} = "
                f"{rate:.1%}{verdict} | {near / trials:.1%} | "
                f"{100 * extra / (trials * (before + k)):.2f} |"
            )
    for kind, params in (("vs parent", PARENT), ("relative", RELATIVE), ("absolute", ABSOLUTE)):
        detect = ours(params) if params.mode == "spike" else candidate(library, params)
        series = pool["absolute" if kind == "absolute" else "relative"]
        false = sum(len(detect(history(series[t % len(figures)], 100, rng))) for t in range(trials))
        per100 = 100 * false / (trials * 100)
        print(
            f"| {kind} | none | 100 | <= 1 per 100 | - | - | {false} in {trials * 100} commits = "
            f"{per100:.2f}{' met' if per100 <= 1 else ' NOT met'} |"
        )
    print(f"\n{time.perf_counter() - started:.1f} s of detection")


def speed(directory: Path, entries: int = 200, series: int = 200, seed: int = 7) -> None:
    """Write a data.js of `entries` commits x `series` figures (every tenth one steps 10 %
    at 60 % of the history) and time `benchwatch changes` on it in-process."""
    from benchwatch.commands.changes import changes
    from benchwatch.trend.history import PREFIX, SMALLER

    rng = np.random.default_rng(seed)
    kinds = ("cpu/req", "cpu/req (vs parent)", "p99", "cpu/req (vs baseline)")
    names = [f"app{j}@latest GET /e{j % 5} c=10 {kinds[j % 4]}" for j in range(series)]
    level = np.where(["(vs " in n for n in names], 1.0, 100.0)
    data = []
    for i in range(entries):
        values = level * np.exp(rng.normal(0.0, 0.02, series))
        values[::10] *= 1.1 if i >= 0.6 * entries else 1.0
        commit = {"id": f"{i:040x}", "message": "m", "timestamp": "2026-11-01T00:00:00Z"}
        benches = [
            {"name": n, "unit": "us", "value": float(v)} for n, v in zip(names, values, strict=True)
        ]
        data.append(
            {"commit": commit, "date": i, "tool": "customSmallerIsBetter", "benches": benches}
        )
    directory.mkdir(parents=True, exist_ok=True)
    body = {"lastUpdate": 0, "repoUrl": "", "entries": {SMALLER: data}}
    (directory / "data.js").write_text(PREFIX + json.dumps(body))
    started = time.perf_counter()
    document, _, _ = changes([directory])
    print(
        f"{directory / 'data.js'}: {entries} entries x {series} series: "
        f"{time.perf_counter() - started:.2f} s in changes(); {document['summary']}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "aa_dir",
        type=Path,
        help="a `benchwatch calibrate --out` directory "
        "(with --speed: where to write the timing history)",
    )
    parser.add_argument(
        "--speed",
        action="store_true",
        help="instead: time `changes` on a 200 entries x 200 series history",
    )
    parser.add_argument("--metric", default="cpu_us_per_request")
    parser.add_argument(
        "--library", default="benchwatch", choices=["benchwatch", "ruptures-pelt", "otava", "spa"]
    )
    parser.add_argument("--trials", type=int, default=200)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    if args.speed:
        speed(args.aa_dir)
    else:
        run(args.aa_dir, args.metric, args.library, args.trials, args.seed)


if __name__ == "__main__":
    main()
