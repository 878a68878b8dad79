"""N no-op compares of one project, and the verdict of every row on the database and memory counts.

    .venv/bin/python scripts/noop_series.py --root DIR --runs 10 --out /tmp/series [-k PATTERN] [--ref HEAD] [-- EXTRA]

Each run is `benchwatch compare --base REF --head REF --quick --no-load --no-micro -k PATTERN` of
the project at --root (BENCHWATCH_ROOT=DIR, cwd DIR; default: this checkout), its folder
OUT/NN; EXTRA replaces `--quick --no-load --no-micro`. Base and head are one commit: any verdict is
a false alarm. The environment is passed on as it is (an app's `${NAME}` secrets, a configured
cluster's BENCHWATCH_POSTGRES_URL). Prints one line per run: exit code, minutes, and for
SQL statements, database buffers and retained memory per request the verdicts of their rows
(`quiet 2/2`, or each flagged row named); then every other row that was flagged. Then one line per
row of those three figures and endpoint with each run's base → head values, and a summary.
OUT/series.json holds the same. A compare that wrote no compare.json is a line with its error tail.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
WATCHED = {
    "statements_per_request": "statements",
    "db_buffers_per_request": "db buffers",
    "retained_blocks_per_request": "retained",
}
FLAGGED = ("improvement", "regression")
DEFAULT_EXTRA = ["--quick", "--no-load", "--no-micro"]


def compare(root: Path, ref: str, pattern: str | None, out: Path, extra: list[str]) -> int:
    argv = [sys.executable, "-m", "benchwatch", "compare", "--base", ref, "--head", ref]
    argv += ["-k", pattern] if pattern else []
    argv += [*(extra or DEFAULT_EXTRA), "-q", "--out", str(out)]
    with (out.parent / f"{out.name}.log").open("w") as log:
        done = subprocess.run(
            argv, cwd=root, env={**os.environ, "BENCHWATCH_ROOT": str(root)}, stdout=log, stderr=log
        )
    return done.returncode


def _value(value: float | None) -> str:
    return "-" if value is None else f"{value:.4g}"


def summarize(data: dict) -> dict:
    """The watched rows' verdicts and values, and every other flagged row."""
    watched: dict[str, list[dict]] = {key: [] for key in WATCHED}
    others = []
    for row in data["rows"]:
        entry = {
            "label": row["label"],
            "endpoint": row["endpoint"],
            "verdict": row["verdict"],
            "base": row["base_value"],
            "head": row["head_value"],
            "gating": row["gating"],
        }
        if row["metric"] in watched:
            watched[row["metric"]].append(entry)
        elif row["verdict"] in FLAGGED:
            others.append(entry)
    return {"watched": watched, "others": others}


def cell(rows: list[dict]) -> str:
    flagged = [r for r in rows if r["verdict"] in FLAGGED]
    if not rows:
        return "no rows"
    if not flagged:
        unjudged = [r for r in rows if r["verdict"] != "unchanged"]
        quiet = f"quiet {len(rows) - len(unjudged)}/{len(rows)}"
        return quiet + "".join(f"; {r['endpoint']} {r['verdict']}" for r in unjudged)
    return "; ".join(
        f"{r['verdict'].upper()} {r['endpoint']} {_value(r['base'])} → {_value(r['head'])}"
        for r in flagged
    )


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--root", type=Path, default=ROOT, help="the project (its benchwatch.toml)")
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--ref", default="HEAD", help="the commit compared with itself")
    parser.add_argument("-k", dest="pattern", help="compare's -k (variants)")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("extra", nargs="*", help="compare arguments instead of the defaults")
    args = parser.parse_args()
    root = args.root.resolve()
    if not (root / "benchwatch.toml").is_file():
        print(f"ERROR: --root {root}: no benchwatch.toml there", file=sys.stderr)
        return 3
    args.out.mkdir(parents=True, exist_ok=True)
    runs = []
    for index in range(1, args.runs + 1):
        out = args.out / f"{index:02d}"
        began = time.monotonic()
        code = compare(root, args.ref, args.pattern, out, args.extra)
        minutes = (time.monotonic() - began) / 60
        try:
            found = summarize(json.loads((out / "compare.json").read_text()))
        except (OSError, ValueError, KeyError):
            tail = (args.out / f"{out.name}.log").read_text().strip()[-300:]
            print(f"{index:2d} exit {code} {minutes:.1f} min: no compare.json: {tail}", flush=True)
            runs.append({"run": index, "exit": code, "minutes": minutes})
            continue
        runs.append({"run": index, "exit": code, "minutes": round(minutes, 1), **found})
        cells = " | ".join(f"{name}: {cell(found['watched'][k])}" for k, name in WATCHED.items())
        others = "; ".join(
            f"{r['verdict']} {r['label']}" + (" (gating)" if r["gating"] else "")
            for r in found["others"]
        )
        print(
            f"{index:2d} exit {code} {minutes:.1f} min | {cells} | other flagged: {others or 'none'}",
            flush=True,
        )
    (args.out / "series.json").write_text(json.dumps(runs, indent=1, ensure_ascii=False) + "\n")
    judged = [r for r in runs if "watched" in r]
    print("values base → head, run by run:")
    for key, name in WATCHED.items():
        labels = dict.fromkeys(row["endpoint"] for r in judged for row in r["watched"][key])
        for endpoint in labels:
            values = [
                f"{_value(row['base'])}→{_value(row['head'])}"
                for r in judged
                for row in r["watched"][key]
                if row["endpoint"] == endpoint
            ]
            print(f"  {name} {endpoint}: {', '.join(values)}")
    noisy = sum(
        any(row["verdict"] in FLAGGED for rows in r["watched"].values() for row in rows)
        for r in judged
    )
    print(
        f"runs {len(runs)}, with a compare.json {len(judged)}, exit codes "
        f"{sorted(r['exit'] for r in runs)}; runs with a verdict on a watched figure: {noisy}; "
        f"with any other flagged row: {sum(bool(r['others']) for r in judged)}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
