"""How often does `benchwatch compare` flag a change? Repeated real compares, tabulated.

    .venv/bin/python scripts/detector_check.py --runs 10 --slowdowns 0,0.05,0.10 [--hog] [-k services@latest]

Each run is one `benchwatch compare --base latest --head latest --quick --no-micro` (an A/A
compare when the slowdown is 0, otherwise head's servers burn that fraction more CPU per
request: `--inject-head-slowdown`). With --hog, a busy-looping process runs beside the servers
for the whole compare. The measured head/base ratios are printed too: what was injected is
the spin's own CPU, what the servers pay for it is a little more.
Prints, per slowdown and metric, how many runs called it a regression / an improvement, and
writes every compare.json under --out. A measurement script, not a test: it takes minutes.
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


def _spin() -> None:
    while True:
        pass


def compare(variant: str, slowdown: float, out: Path) -> dict:
    argv = [
        sys.executable,
        "-m",
        "benchwatch",
        "compare",
        "--base",
        "latest",
        "--head",
        "latest",
        "-k",
        variant,
        "--quick",
        "--no-micro",
        "-q",
        "--out",
        str(out),
    ]
    if slowdown:
        argv += ["--inject-head-slowdown", str(slowdown)]
    subprocess.run(argv, cwd=REPO, capture_output=True, text=True, timeout=1800)
    return json.loads((out / "compare.json").read_text())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--slowdowns", default="0,0.05,0.10")
    parser.add_argument("-k", dest="variant", default="services@latest")
    parser.add_argument("--hog", action="store_true", help="a CPU hog beside the server throughout")
    parser.add_argument(
        "--out", type=Path, default=REPO / "results" / f"detector-{time.strftime('%Y%m%d-%H%M%S')}"
    )
    args = parser.parse_args()
    slowdowns = [float(s) for s in args.slowdowns.split(",")]
    hog = multiprocessing.Process(target=_spin, daemon=True) if args.hog else None
    if hog:
        hog.start()
    tally: dict[float, dict[str, Counter]] = {s: defaultdict(Counter) for s in slowdowns}
    ratios: dict[float, list[float]] = defaultdict(list)
    started = time.monotonic()
    try:
        for run in range(args.runs):
            for slowdown in slowdowns:  # interleaved, so drift hits every condition alike
                data = compare(args.variant, slowdown, args.out / f"s{slowdown:g}-run{run + 1}")
                for row in data["rows"]:
                    key = f"{row['metric']} {row['label'].split(' ')[-2]}"
                    tally[slowdown][key][row["verdict"]] += 1
                    if (
                        row["metric"] == "cpu_us_per_request"
                        and row["ratio"]
                        and "c=" in row["label"]
                    ):
                        ratios[slowdown].append(row["ratio"])
                print(
                    f"run {run + 1}/{args.runs} slowdown {slowdown:g}: exit {data['summary']['exit_code']} "
                    f"({time.monotonic() - started:.0f} s)",
                    file=sys.stderr,
                    flush=True,
                )
    finally:
        if hog:
            hog.kill()
    print(
        f"\n{args.variant}, {args.runs} runs per condition{', CPU hog running' if args.hog else ''}; "
        f"{time.monotonic() - started:.0f} s; compare.json files under {args.out}\n"
    )
    print("| injected slowdown | figure | regression | improvement | unchanged | no verdict |")
    print("|---|---|---|---|---|---|")
    for slowdown in slowdowns:
        for key, counts in sorted(tally[slowdown].items()):
            print(
                f"| {slowdown:.0%} | {key} | {counts['regression']} | {counts['improvement']} | "
                f"{counts['unchanged']} | {counts['no verdict']} |"
            )
    for slowdown in slowdowns:
        found = sorted(ratios[slowdown])
        if found:
            print(
                f"\ncpu/req head/base ratio at {slowdown:.0%}: median {found[len(found) // 2]:.3f}, "
                f"range {found[0]:.3f}–{found[-1]:.3f}"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
