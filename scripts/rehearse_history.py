"""Rehearse main's relative trend on a real, throwaway history: does `changes` find the commit
that made the app slower?

Builds a git repository holding a one-endpoint FastAPI app and N commits; commit CULPRIT adds a
small CPU cost to every request (a busy loop, about a tenth of a request on the development
machine). Then, for every commit after the first, it runs what publish.yml's measure jobs run
for a push (docs/github.md):

    benchwatch compare --base <parent> --head <commit> --quick --no-micro ...   (side by side)
    benchwatch relative <compare dir> --out gab-relative.json                   (no point if it fails)
    benchwatch trend-add data.js --gab gab-relative.json --suite "benchwatch (vs parent)" ...
    benchwatch changes --data data.js --json-file changes.json

and checks at the end that every change point in a gating series (the endpoint's c=10 and
rate=50% cpu/req, `(vs parent)`) is a regression at CULPRIT, and that there is one. `changes`
needs 8 points in such a series for a verdict: --start-history starts from an earlier data.js,
as publish.yml starts from gh-pages. Prints one line per commit and a JSON summary
(rehearsal.json in --out); exit 0 when found, 1 when not.

    .venv/bin/python scripts/rehearse_history.py --commits 10 --culprit 6 --out /tmp/rehearsal

--replay DIR measures nothing: it runs an earlier rehearsal's recorded compares (DIR is its --out,
or tests/fixtures/rehearsal/pushes) through the same relative, trend-add and changes steps.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
SUITE = "benchwatch (vs parent)"  # as reusable-publish.yml names the relative series
COUNTS_SUITE = (
    "benchwatch counts (per request)"  # benchwatch.trend.history.COUNTS: head's absolute counts
)
VARIANT = "tiny@latest"

APP = """
from fastapi import FastAPI

app = FastAPI()
LOOPS = {loops}  # the commit that makes every request slower sets this above 0


@app.get("/hi")
def hi():
    if LOOPS:
        sum(range(LOOPS))
    return {{"hello": "world"}}
"""

DECLARATION = """
name = "tiny"
app = "app:app"
stacks = ["latest"]
[[endpoints]]
name = "hi"
path = "/hi"
"""


def git(root: Path, *args: str) -> str:
    done = subprocess.run(
        [
            "git",
            "-C",
            str(root),
            "-c",
            "user.name=rehearsal",
            "-c",
            "user.email=r@example.org",
            *args,
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.strip()


def build_repository(root: Path, commits: int, culprit: int, loops: int) -> list[str]:
    """N commits; commit `culprit` (1-based) sets LOOPS, the others change a comment only."""
    app = root / "apps" / "tiny"
    app.mkdir(parents=True)
    (app / "benchwatch-app.toml").write_text(DECLARATION)
    shutil.copy(REPO / "stacks.toml", root / "stacks.toml")
    (root / "benchwatch.toml").write_text(
        '[benchwatch]\napps = ["apps/tiny"]\ndefault_stacks = ["latest"]\n'
    )
    git(root, "init", "-q", "-b", "main")
    shas = []
    for number in range(1, commits + 1):
        cost = loops if number >= culprit else 0
        (app / "app.py").write_text(APP.format(loops=cost) + f"# commit {number}\n")
        git(root, "add", "-A")
        what = (
            "add a busy loop to every request"
            if number == culprit
            else f"touch a comment ({number})"
        )
        git(root, "commit", "-q", "-m", what)
        shas.append(git(root, "rev-parse", "HEAD"))
    return shas


def benchwatch(root: Path, *args: str) -> subprocess.CompletedProcess:
    environ = {**os.environ, "BENCHWATCH_ROOT": str(root)}
    return subprocess.run(
        [sys.executable, "-m", "benchwatch", *args],
        capture_output=True,
        text=True,
        cwd=root,
        env=environ,
        timeout=1800,
    )


def push(
    root: Path,
    out: Path,
    data_js: Path,
    parent: str,
    commit: str,
    rounds: int,
    counts_js: Path | None = None,
) -> dict[str, Any]:
    """What publish.yml's measure jobs do for one push to main: compare the commit with its parent
    side by side, then publish() the compare."""
    step = out / commit[:12]
    started = time.monotonic()
    compared = benchwatch(
        root,
        "compare",
        "--base",
        parent,
        "--head",
        commit,
        "--quick",
        "--no-micro",
        "--rounds",
        str(rounds),
        "-k",
        VARIANT,
        "--out",
        str(step / "compare"),
        "-q",
    )
    found: dict[str, Any] = {
        "commit": commit,
        "compare_exit": compared.returncode,
        "compare_seconds": round(time.monotonic() - started, 1),
    }
    found.update(
        publish(root, step, data_js, described(root, commit), described(root, parent), counts_js)
    )
    return found


def described(root: Path, commit: str) -> dict[str, str]:
    """A commit as trend-add records it: its sha, subject and commit time."""
    return {
        "commit": commit,
        "message": git(root, "log", "-1", "--format=%s", commit),
        "stamp": git(root, "log", "-1", "--format=%cI", commit),
    }


def publish(
    root: Path,
    step: Path,
    data_js: Path,
    head: dict[str, str],
    base: dict[str, str],
    counts_js: Path | None,
) -> dict[str, Any]:
    """What publish.yml does with a push's compare (`step`/compare): the relative part, and
    (`counts_js`) the absolute counts per request of the pushed commit (the compare's head side).
    A counts history that does not exist yet first gets the parent's counts (the compare's base
    side), as the parent's own push would have published them: the first push has a point before it."""
    found: dict[str, Any] = {}
    gab = step / "gab-relative.json"
    made = benchwatch(root, "relative", str(step / "compare"), "--out", str(gab))
    if made.returncode != 0:
        found["point"] = None
        found["no_point"] = (made.stderr.strip().splitlines() or ["?"])[-1]
        return found
    points = json.loads(gab.read_text())
    found["point"] = {p["name"]: p["value"] for p in points}
    trend_add(root, data_js, gab, SUITE, **head)
    if counts_js is None:
        return found
    parents = step / "compare" / "base" / "gab-counts.json"
    if not counts_js.is_file() and parents.is_file() and json.loads(parents.read_text()):
        trend_add(root, counts_js, parents, COUNTS_SUITE, **base)
    counted = step / "compare" / "head" / "gab-counts.json"
    if counted.is_file() and json.loads(counted.read_text()):
        found["counts"] = {p["name"]: p["value"] for p in json.loads(counted.read_text())}
        trend_add(root, counts_js, counted, COUNTS_SUITE, **head)
    return found


def trend_add(
    root: Path, data_js: Path, gab: Path, suite: str, commit: str, message: str, stamp: str
) -> None:
    added = benchwatch(
        root,
        "trend-add",
        str(data_js),
        "--gab",
        str(gab),
        "--suite",
        suite,
        "--commit",
        commit,
        "--message",
        message,
        "--timestamp",
        stamp,
    )
    if added.returncode != 0:
        raise SystemExit(f"ERROR: trend-add failed: {added.stderr.strip()}")


def changes(root: Path, data_js: Path, out: Path) -> tuple[int, dict[str, Any]]:
    document = out / "changes.json"
    directories = [
        str(d) for d in (data_js.parent, out / "history-counts") if (d / "data.js").is_file()
    ]
    done = benchwatch(
        root,
        "changes",
        *[a for d in directories for a in ("--data", d)],
        "--json-file",
        str(document),
    )
    if done.returncode not in (0, 1):
        raise SystemExit(f"ERROR: changes failed: {done.stderr.strip()}")
    return done.returncode, json.loads(document.read_text())


def located(document: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        {
            "series": s["name"],
            "commit": c["after"]["commit"],
            "kind": c["kind"],
            "ratio": c["ratio"],
        }
        for s in document["series"]
        if s["gating"]
        for c in s["changes"]
    ]


def rehearse(
    out: Path, commits: int, culprit: int, rounds: int, loops: int, start: Path | None = None
) -> dict[str, Any]:
    if not 2 <= culprit <= commits:
        raise SystemExit(
            f"ERROR: --culprit {culprit}: give a commit between 2 and --commits ({commits})"
        )
    root = out / "repository"
    shas = build_repository(root, commits, culprit, loops)
    log = [described(root, sha) for sha in shas]

    def measured(number: int, data_js: Path, counts_js: Path) -> dict[str, Any]:
        return push(root, out, data_js, shas[number - 2], shas[number - 1], rounds, counts_js)

    summary = pushes(out, root, log, culprit, start, measured)
    return {**summary, "rounds": rounds, "loops": loops}


def replay(out: Path, recorded: Path, start: Path | None = None) -> dict[str, Any]:
    """The bookkeeping of an earlier rehearsal's pushes without measuring anything: each push's
    recorded compare (RECORDED/<commit>/compare: compare.json and both sides' gab-counts.json, as
    --out keeps them) through relative, trend-add and changes, in order. RECORDED/rehearsal.json
    names the commits (its `log`) and the culprit."""
    earlier = json.loads((recorded / "rehearsal.json").read_text())
    log, culprit = earlier["log"], earlier["culprit_number"]

    def recorded_push(number: int, data_js: Path, counts_js: Path) -> dict[str, Any]:
        head = log[number - 1]
        step = out / head["commit"][:12]
        shutil.copytree(recorded / head["commit"][:12] / "compare", step / "compare")
        was = next(s for s in earlier["steps"] if s["number"] == number)
        found = {
            "commit": head["commit"],
            "compare_exit": was["compare_exit"],
            "compare_seconds": 0.0,
        }
        return {**found, **publish(out, step, data_js, head, log[number - 2], counts_js)}

    summary = pushes(out, out, log, culprit, start, recorded_push)
    return {**summary, "replayed": str(recorded)}


def pushes(
    out: Path,
    root: Path,
    log: list[dict[str, str]],
    culprit: int,
    start: Path | None,
    one_push: Callable[[int, Path, Path], dict[str, Any]],
) -> dict[str, Any]:
    """Every commit after the first pushed in order (`one_push`), `changes` after each; the summary."""
    shas = [c["commit"] for c in log]
    commits = len(shas)
    data_js = out / "history" / "data.js"
    if start is not None:  # the published history before these pushes, as gh-pages would hold it
        data_js.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(start, data_js)
    counts_js = out / "history-counts" / "data.js"
    steps = []
    for number in range(2, commits + 1):
        step = one_push(number, data_js, counts_js)
        code, document = changes(root, data_js, out) if data_js.exists() else (0, {"series": []})
        step.update(
            number=number,
            changes_exit=code,
            changes=located(document),
            verdicts={s["name"]: s["verdict"] for s in document["series"]},
        )
        steps.append(step)
        print(
            f"[{number}/{commits}] {shas[number - 1][:8]}{' (culprit)' if number == culprit else ''}: "
            f"compare exit {step['compare_exit']} in {step['compare_seconds']} s, point {step['point']}, "
            f"changes exit {code}: {step['changes'] or step['verdicts']}",
            flush=True,
        )
    # every change point in a gating series (c=10 and rate=50% cpu/req) is the culprit, a regression
    final = steps[-1]["changes"]
    found = bool(final) and all(
        c["commit"] == shas[culprit - 1] and c["kind"] == "regression" for c in final
    )
    first_alert = next(
        (s["number"] for s in steps if any(c["commit"] == shas[culprit - 1] for c in s["changes"])),
        None,
    )
    in_counts = [
        c for c in final if "seq instr/req" in c["series"] or "seq syscalls/req" in c["series"]
    ]
    return {
        "commits": shas,
        "log": log,
        "culprit": shas[culprit - 1],
        "culprit_number": culprit,
        "found": found,
        "first_found_at_push": first_alert,
        "final_changes": final,
        "found_in_counts": bool(in_counts)
        and all(c["commit"] == shas[culprit - 1] for c in in_counts),
        "steps": steps,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--commits", type=int, default=10, help="commits in the throwaway history (default 10)"
    )
    parser.add_argument(
        "--culprit", type=int, default=6, help="the commit (1-based) that adds the cost (default 6)"
    )
    parser.add_argument(
        "--rounds", type=int, default=8, help="compare rounds per push (default 8, as publish.yml)"
    )
    parser.add_argument(
        "--loops", type=int, default=1200, help="sum(range(LOOPS)) per request at the culprit"
    )
    parser.add_argument(
        "--start-history",
        type=Path,
        metavar="DATA_JS",
        help="start from this data.js (earlier '(vs parent)' points), as publish.yml starts from gh-pages",
    )
    parser.add_argument(
        "--replay",
        type=Path,
        metavar="DIR",
        help="measure nothing: replay the pushes of an earlier rehearsal's --out (its rehearsal.json and "
        "each push's compare files) through relative, trend-add and changes",
    )
    parser.add_argument(
        "--out",
        type=Path,
        help="where to keep everything (default: a temporary directory, removed)",
    )
    args = parser.parse_args(argv)
    out = args.out or Path(tempfile.mkdtemp(prefix="benchwatch-rehearsal-"))
    if args.out and out.exists() and any(out.iterdir()):
        print(f"ERROR: --out {out}: not empty", file=sys.stderr)
        return 1
    out.mkdir(parents=True, exist_ok=True)
    try:
        if args.replay:
            summary = replay(out, args.replay, args.start_history)
        else:
            summary = rehearse(
                out, args.commits, args.culprit, args.rounds, args.loops, args.start_history
            )
        (out / "rehearsal.json").write_text(json.dumps(summary, indent=1))
        print(json.dumps({k: v for k, v in summary.items() if k not in ("steps", "log")}, indent=1))
    finally:
        if args.out is None:
            shutil.rmtree(out, ignore_errors=True)
    return 0 if summary["found"] else 1


if __name__ == "__main__":
    sys.exit(main())
