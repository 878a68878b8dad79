"""No-op PR compares beside a CPU load: does a busy host make a quiet PR "not measured"?

    .venv/bin/python scripts/busy_noop.py --runs 10 --out /tmp/busy [--burners 2] [--repo DIR] [-- EXTRA]
    .venv/bin/python scripts/busy_noop.py --runs 10 --out /tmp/busy --here 'hello@latest'

The template-shaped fixture (tests/fixtures/fullstack_repo) is copied under --out, committed, and
adopted with `init` as tests/test_fullstack.py does (a throwaway PostgreSQL cluster: benchwatch
starts its own); --repo reuses one adopted before. Each run is `benchwatch compare --base HEAD
--head HEAD --quick` of it while --burners busy loops (one process each, normal priority) keep
the cores busy for the whole compare; they are stopped after it. Prints one line per run: exit
code, load rounds dropped and made up, rows without a verdict and why, gating verdicts; the
compare folders stay under --out. `--here PATTERN`: this checkout's own scenarios instead
(`-k PATTERN`, HEAD against itself). The login below is the fixture's, not a secret.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = ROOT / "tests" / "fixtures" / "fullstack_repo"
LOGIN = {
    "BENCHWATCH_USER": "admin@example.com",
    "BENCHWATCH_PASSWORD": "pw-5d4c3b2a19",
    "APP_SECRET_KEY": "k-8f7e6d5c4b",
}
PINNED = (
    "--workflows-from=someone/benchwatch@0123456789abcdef0123456789abcdef01234567"  # no network
)
SETTINGS = [
    "--pre-start",
    "bash scripts/prestart.sh",
    "--env",
    "POSTGRES_SERVER={database_host}",
    "--env",
    "POSTGRES_PORT={database_port}",
    "--env",
    "POSTGRES_USER={database_user}",
    "--env",
    "POSTGRES_PASSWORD={database_password}",
    "--env",
    "POSTGRES_DB={database_name}",
    "--env",
    "SECRET_KEY=${APP_SECRET_KEY}",
    "--env",
    "FIRST_SUPERUSER=${BENCHWATCH_USER}",
    "--env",
    "FIRST_SUPERUSER_PASSWORD=${BENCHWATCH_PASSWORD}",
]
BURN = "while True:\n    pass\n"


def _environ() -> dict[str, str]:
    return {**{k: v for k, v in os.environ.items() if k != "BENCHWATCH_ROOT"}, **LOGIN}


def _bw(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "benchwatch", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        env=_environ(),
    )


def _git(repo: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t", *args],
        check=True,
        capture_output=True,
    )


def adopt(repo: Path) -> None:
    """The fixture copied to `repo`, committed, adopted with `init`, verified and committed."""
    shutil.copytree(FIXTURE, repo, ignore=shutil.ignore_patterns("__pycache__"))
    _git(repo, "init", "-q")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "the template's backend")
    for args in (("init", PINNED, *SETTINGS), ("verify",)):
        done = _bw(*args, cwd=repo)
        if done.returncode != 0:
            raise SystemExit(
                f"ERROR: `benchwatch {args[0]}` of the fixture failed (exit {done.returncode}):\n"
                f"{done.stdout[-2000:]}{done.stderr[-2000:]}"
            )
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "benchwatch")


def summary(data: dict) -> dict:
    """What a run says about dropped rounds and verdicts (compare.json)."""
    extra = data.get("extra") or {}
    rows = data["rows"]
    dropped = extra.get("rounds_dropped") or []
    planned = (extra.get("load_plan") or {}).get("rounds") or data.get("rounds")
    no_verdict = [r for r in rows if r["verdict"] == "no verdict"]
    return {
        "dropped": sum(1 for d in dropped if d.get("round") is not None and d["round"] < planned),
        "dropped_in_make_up": sum(
            1 for d in dropped if d.get("round") is not None and d["round"] >= planned
        ),
        "made_up": sum((m.get("made_up") or 0) for m in extra.get("rounds_short") or []),
        "short": [
            f"{m['variant']} {m['endpoint']} {m['setting']}: {m['text']}"
            for m in extra.get("rounds_short") or []
        ],
        "no_verdict": [f"{r['label']}: {r['text']}" for r in no_verdict],
        "gating_verdicts": [
            f"{r['label']} {r['verdict']}"
            for r in rows
            if r["gating"] and r["verdict"] in ("regression", "improvement")
        ],
        "rows": len(rows),
    }


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument(
        "--burners", type=int, default=2, help="busy-loop processes beside each compare"
    )
    parser.add_argument(
        "--repo", type=Path, help="an adopted copy of the fixture from an earlier run"
    )
    parser.add_argument(
        "--here",
        metavar="PATTERN",
        help="compare this checkout's variants (-k PATTERN), not the fixture",
    )
    parser.add_argument("extra", nargs="*", help="more compare arguments (after --)")
    args = parser.parse_args()
    stopping: list[
        int
    ] = []  # SIGTERM: the running compare (same process group) stops its servers; then stop here
    signal.signal(signal.SIGTERM, lambda *_: stopping.append(1))
    repo = ROOT if args.here else args.repo or args.out / "repo"
    args.out.mkdir(parents=True, exist_ok=bool(args.repo or args.here))
    if args.repo is None and not args.here:
        adopt(repo)
    if args.here:
        args.extra = ["-k", args.here, *args.extra]
    results = []
    for index in range(args.runs):
        if stopping:
            break
        out = args.out / f"{index + 1:02d}"
        burners = [subprocess.Popen([sys.executable, "-c", BURN]) for _ in range(args.burners)]
        began = time.monotonic()
        try:
            done = _bw(
                "compare",
                "--base",
                "HEAD",
                "--head",
                "HEAD",
                "--quick",
                "-q",
                "--out",
                str(out),
                *args.extra,
                cwd=repo,
            )
        finally:
            for burner in burners:
                burner.kill()
                burner.wait()
        load = os.getloadavg()[0]
        minutes = (time.monotonic() - began) / 60
        try:
            found = summary(json.loads((out / "compare.json").read_text()))
        except (OSError, ValueError):
            print(
                f"{index + 1:2d}: exit {done.returncode}, no compare.json: {done.stderr.strip()[-400:]}",
                flush=True,
            )
            results.append({"run": index + 1, "exit": done.returncode})
            continue
        results.append(
            {
                "run": index + 1,
                "exit": done.returncode,
                "minutes": round(minutes, 1),
                "load": load,
                **found,
            }
        )
        print(
            f"{index + 1:2d}: exit {done.returncode}, {minutes:.1f} min, load {load:.1f}; load rounds dropped "
            f"{found['dropped']} (+{found['dropped_in_make_up']} in make-up rounds), made up {found['made_up']}; "
            f"{len(found['no_verdict'])} of {found['rows']} rows without a verdict; gating verdicts: "
            f"{', '.join(found['gating_verdicts']) or 'none'}",
            flush=True,
        )
        for line in found["short"] + found["no_verdict"]:
            print(f"    {line}", flush=True)
        (args.out / "series.json").write_text(json.dumps(results, indent=1))
    codes = [r["exit"] for r in results]
    print(f"exit codes: {', '.join(map(str, codes))}; exit 2: {codes.count(2)} of {len(codes)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
