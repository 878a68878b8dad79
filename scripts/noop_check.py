"""The per-PR false-alarm rate, measured: compares in which nothing measured changed.

    .venv/bin/python scripts/noop_check.py --runs 10 --out /tmp/noop [--pairs HEAD..HEAD,HEAD~3..HEAD] [-- EXTRA]

Each run is `benchwatch compare --base A --head B --quick` for the next pair (A..B, taken in
turn), every scenario (`*@latest`, compare's default for refs). A pair of refs whose apps,
benchmarks and stacks are identical can only be red by a false alarm. Prints one line per run
(exit code, gating figures, timing figures flagged in the first rounds, confirmed, and the gating
verdicts the PR shows: a regression or an improvement, either is a false alarm here) and the
per-PR rates; compare.json of each run stays under --out. EXTRA goes to every compare.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

from benchwatch.figures.metrics import COUNT_KEYS

ROOT = Path(__file__).resolve().parents[1]
MEASURED = ("apps", "benchmarks", "stacks.toml", "benchwatch.toml")


def changed_measured(base: str, head: str) -> list[str]:
    done = subprocess.run(
        ["git", "-C", str(ROOT), "diff", "--name-only", base, head, "--", *MEASURED],
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.split()


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument(
        "--pairs", default="HEAD..HEAD,HEAD~3..HEAD", help="comma-separated BASE..HEAD ref pairs"
    )
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("extra", nargs="*", help="more compare arguments (after --)")
    args = parser.parse_args()
    pairs = [tuple(p.split("..", 1)) for p in args.pairs.split(",")]
    for base, head in pairs:
        moved = changed_measured(base, head)
        if moved:
            print(
                f"ERROR: {base}..{head} changes what is measured ({', '.join(moved[:3])}): not a no-op pair",
                file=sys.stderr,
            )
            return 3
    red = shown_any = 0
    flagged_total = confirmed_total = gating_total = 0
    for index in range(args.runs):
        base, head = pairs[index % len(pairs)]
        out = args.out / f"{index + 1:02d}"
        began = time.monotonic()
        done = subprocess.run(
            [
                str(ROOT / "bw"),
                "compare",
                "--base",
                base,
                "--head",
                head,
                "--quick",
                "-q",
                "--out",
                str(out),
                *args.extra,
            ],
            cwd=ROOT,
            capture_output=True,
            text=True,
        )
        seconds = time.monotonic() - began
        try:
            data = json.loads((out / "compare.json").read_text())
        except (OSError, ValueError):
            print(
                f"{index + 1:2d} {base}..{head}: exit {done.returncode}, no compare.json: {done.stderr.strip()[-300:]}"
            )
            continue
        rows = data["rows"]
        gating = [r for r in rows if r["gating"]]
        confirmation = (data.get("extra") or {}).get("confirmation") or {}
        flagged, confirmed = confirmation.get("flagged", []), confirmation.get("confirmed", [])
        reds = [r["label"] for r in rows if r["gating"] and r["verdict"] == "regression"]
        shown = [
            r["label"]
            for r in rows
            if r["gating"] and r["verdict"] in ("improvement", "regression")
        ]
        shown_any += bool(shown)
        counted = [r for r in rows if r["metric"] in COUNT_KEYS]
        moved = [r["label"] for r in counted if r["verdict"] in ("improvement", "regression")]
        counts_s = (data.get("extra") or {}).get("counts_seconds")
        red += done.returncode == 1
        flagged_total += len(flagged)
        confirmed_total += len(confirmed)
        gating_total += len(gating)
        print(
            f"{index + 1:2d} {base}..{head}: exit {done.returncode}, {len(rows)} rows, {len(gating)} gating, "
            f"{len(flagged)} timing flagged, {len(confirmed)} confirmed; {len(counted)} count rows, "
            f"{len(moved)} moved (counts {counts_s or 0:.0f} s); {seconds / 60:.1f} min"
            + (f"; red: {', '.join(reds)}" if reds else "")
            + (f"; shown: {', '.join(shown)}" if shown else "")
            + (f"; flagged: {', '.join(flagged)}" if flagged else "")
            + (f"; counts moved: {', '.join(moved)}" if moved else ""),
            flush=True,
        )
    print(
        f"red PRs: {red} of {args.runs}; PRs showing any gating verdict (either way): {shown_any} of {args.runs}; gating verdicts {gating_total}; timing figures flagged in the first "
        f"rounds {flagged_total}, confirmed {confirmed_total}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
