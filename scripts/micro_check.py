"""How sharp is compare's micro half? Real micro-only compares, tabulated.

    .venv/bin/python scripts/micro_check.py aa -k 'services@*' --runs 3 [--inject 0,0.05] [--hog] [--no-instructions]
    .venv/bin/python scripts/micro_check.py directions -k 'services@*' --base v2-pre-rust --head latest [--runs 1] [--full]

`aa`: `benchwatch compare --base latest --head latest --quick --no-load` repeated, with head's
benchmarks repeating a fraction of their calls when --inject is given (`--inject-head-micro`);
prints per injected fraction and kind of figure (time, instructions) how many rows were called
a regression, an improvement, unchanged. `directions`: the compare base→head and head→base;
prints every micro row of both, and whether they agree (a regression one way is an improvement
the other way, or both are unchanged), --runs times. --full: full compares, not --quick.
With --hog, a busy-looping process runs beside the
compares throughout. Writes every compare.json under --out. A measurement script, not a test.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import subprocess
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
OPPOSITE = {"regression": "improvement", "improvement": "regression", "unchanged": "unchanged"}


def _spin() -> None:
    while True:
        pass


def compare(
    base: str,
    head: str,
    variants: str,
    out: Path,
    inject: float,
    instructions: bool,
    quick: bool = True,
) -> tuple[dict, float]:
    argv = [
        sys.executable,
        "-m",
        "benchwatch",
        "compare",
        "--base",
        base,
        "--head",
        head,
        "-k",
        variants,
        "--no-load",
        "-q",
        "--out",
        str(out),
    ] + (["--quick"] if quick else [])
    if inject:
        argv += ["--inject-head-micro", str(inject)]
    if not instructions:
        argv.append("--no-instructions")
    started = time.monotonic()
    done = subprocess.run(argv, cwd=REPO, capture_output=True, text=True, timeout=3600)
    if not (out / "compare.json").is_file():
        raise SystemExit(f"compare wrote no compare.json: {done.stderr.strip().splitlines()[-1:]}")
    return json.loads((out / "compare.json").read_text()), time.monotonic() - started


def kind_of(row: dict) -> str:
    return "instructions" if row["unit"] == "instructions" else "time"


def aa(args: argparse.Namespace) -> None:
    fractions = [float(f) for f in args.inject.split(",")]
    tally: dict[tuple[float, str], Counter] = defaultdict(Counter)
    ratios: dict[tuple[float, str], list[float]] = defaultdict(list)
    for run in range(args.runs):
        for fraction in fractions:  # interleaved, so drift hits every condition alike
            data, seconds = compare(
                "latest",
                "latest",
                args.variants,
                args.out / f"i{fraction:g}-run{run + 1}",
                fraction,
                args.instructions,
                args.quick,
            )
            for row in data["rows"]:
                if row["kind"] == "micro":
                    tally[(fraction, kind_of(row))][row["verdict"]] += 1
                    if row["ratio"]:
                        ratios[(fraction, kind_of(row))].append(row["ratio"])
            print(
                f"run {run + 1}/{args.runs} injected {fraction:g}: {seconds:.0f} s",
                file=sys.stderr,
                flush=True,
            )
    print(
        "| injected | figures | regression | improvement | unchanged | no verdict | ratios (min–max) |"
    )
    print("|---|---|---|---|---|---|---|")
    for (fraction, kind), counts in sorted(tally.items()):
        found = sorted(ratios[(fraction, kind)])
        span = f"{found[0]:.3f}–{found[-1]:.3f}" if found else "—"
        print(
            f"| {fraction:.0%} | {kind} | {counts['regression']} | {counts['improvement']} | "
            f"{counts['unchanged']} | {counts['no verdict']} | {span} |"
        )


def directions(args: argparse.Namespace) -> None:
    agreed = counted = 0
    for run in range(args.runs):
        where = args.out / f"run{run + 1}" if args.runs > 1 else args.out
        agree, total = one_direction_pair(args, where)
        agreed, counted = agreed + agree, counted + total
    if args.runs > 1:
        print(
            f"\nin {args.runs} runs: {agreed} of {counted} micro figures agree in both directions"
        )


def one_direction_pair(args: argparse.Namespace, out: Path) -> tuple[int, int]:
    forward, seconds_f = compare(
        args.base, args.head, args.variants, out / "forward", 0.0, args.instructions, args.quick
    )
    backward, seconds_b = compare(
        args.head, args.base, args.variants, out / "backward", 0.0, args.instructions, args.quick
    )
    back = {row["label"]: row for row in backward["rows"] if row["kind"] == "micro"}
    print(f"{args.base} → {args.head} ({seconds_f:.0f} s) and back ({seconds_b:.0f} s)\n")
    print("| figure | floor | forward | backward | agree |")
    print("|---|---|---|---|---|")
    agree = total = 0
    for row in (r for r in forward["rows"] if r["kind"] == "micro"):
        other = back.get(row["label"])
        if other is None:
            continue
        same = OPPOSITE.get(row["verdict"]) == other["verdict"]
        agree += same
        total += 1
        print(
            f"| {row['label']} | {row['floor']:.1%} | {row['verdict']}: {row['text']} | "
            f"{other['verdict']}: {other['text']} | {'yes' if same else '**no**'} |"
        )
    print(f"\n{agree} of {total} micro figures agree in both directions")
    return agree, total


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mode", choices=("aa", "directions"))
    parser.add_argument("-k", dest="variants", default="services@*")
    parser.add_argument(
        "--runs", type=int, default=3, help="aa: compares per injected fraction; directions: pairs"
    )
    parser.add_argument(
        "--full",
        dest="quick",
        action="store_false",
        help="full compares (30 micro rounds, every instruction count, peak memory), not --quick",
    )
    parser.add_argument(
        "--inject", default="0", help="aa: comma-separated fractions of extra calls on head"
    )
    parser.add_argument("--base", default="v2-pre-rust")
    parser.add_argument("--head", default="latest")
    parser.add_argument(
        "--hog", action="store_true", help="a CPU hog beside the compares throughout"
    )
    parser.add_argument("--no-instructions", dest="instructions", action="store_false")
    parser.add_argument(
        "--out",
        type=Path,
        default=REPO / "results" / f"micro-check-{time.strftime('%Y%m%d-%H%M%S')}",
    )
    args = parser.parse_args()
    hog = multiprocessing.Process(target=_spin, daemon=True) if args.hog else None
    if hog:
        hog.start()
    started = time.monotonic()
    try:
        (aa if args.mode == "aa" else directions)(args)
    finally:
        if hog:
            hog.kill()
    print(
        f"\n{args.variants}{', CPU hog running' if args.hog else ''}; {time.monotonic() - started:.0f} s; "
        f"compare.json files under {args.out}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
