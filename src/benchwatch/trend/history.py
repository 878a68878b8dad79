"""Local trend history in github-action-benchmark's data.js format, one entry per run."""

from __future__ import annotations

import json
import math
import re
import time
from pathlib import Path
from typing import Any

from benchwatch.errors import UserError
from benchwatch.results.files import write_text_atomic
from benchwatch.results.fingerprint import git
from benchwatch.results.schema import Run, gab_entries

DEFAULT_DIR = Path(".benchwatch") / "history"
DATA_FILE = "data.js"
PREFIX = "window.BENCHMARK_DATA = "
BIGGER = "benchwatch (bigger is better)"
SMALLER = "benchwatch (smaller is better)"
COUNTS = "benchwatch counts (per request)"  # results.GAB_COUNTS: deterministic, their own suite
TOOLS = {
    BIGGER: "customBiggerIsBetter",
    SMALLER: "customSmallerIsBetter",
    COUNTS: "customSmallerIsBetter",
}


class HistoryError(UserError):
    """The history file exists but cannot be read: reported, never overwritten."""


_RANGE = re.compile(r"±\s*([0-9.eE+-]+)")


def range_half(bench: dict[str, Any]) -> float | None:
    """The half-width a bench's `range` gives ("± 0.0887": results.gab_entries' spread,
    `benchwatch relative`'s interval); None when absent or not a finite number >= 0."""
    found = _RANGE.search(str(bench.get("range") or ""))
    try:
        half = float(found.group(1)) if found else None
    except ValueError:
        return None
    return half if half is not None and math.isfinite(half) and half >= 0 else None


def read(path: Path) -> dict[str, Any]:
    if not path.exists():
        return {"lastUpdate": 0, "repoUrl": "", "entries": {}}
    try:
        text = path.read_text().strip()
    except (OSError, UnicodeDecodeError) as exc:
        raise HistoryError(
            f"{path}: cannot read the history ({exc}); fix or move it away"
        ) from None
    if not text.startswith(PREFIX):
        raise HistoryError(
            f"{path}: not a data.js history (no `{PREFIX.strip()}`); fix or move it away"
        )
    try:
        data = json.loads(text.removeprefix(PREFIX).rstrip(";"))
    except ValueError as exc:
        raise HistoryError(f"{path}: corrupt history ({exc}); fix or move it away") from None
    entries = data.get("entries") if isinstance(data, dict) else None
    if not isinstance(entries, dict) or not all(isinstance(v, list) for v in entries.values()):
        raise HistoryError(
            f"{path}: corrupt history (`entries` must map names to lists); fix or move it away"
        )
    return data


def commit_of(root: Path, run: Run) -> dict[str, Any]:
    commit = run.environment.git_commit or git(root, "rev-parse", "HEAD")
    message = git(root, "log", "-1", "--format=%s") if commit else None
    timestamp = git(root, "log", "-1", "--format=%cI") if commit else None
    dirty = " (uncommitted changes)" if run.environment.git_dirty else ""
    return {
        "id": commit or f"local-{run.started_at}",
        "message": (message or "local run") + dirty,
        "timestamp": timestamp or run.started_at,
    }


def append(directory: Path, run: Run, root: Path, repo_url: str = "") -> Path:
    """Add this run's valid figures as one entry per direction; returns the data.js path."""
    path = directory / DATA_FILE
    data = read(path)
    now_ms = int(time.time() * 1000)
    commit = commit_of(root, run)
    if repo_url:
        data["repoUrl"] = repo_url
        commit["url"] = f"{repo_url.rstrip('/')}/commit/{commit['id']}"
    for name, bigger, counts in (
        (BIGGER, True, False),
        (SMALLER, False, False),
        (COUNTS, False, True),
    ):
        benches = gab_entries(run.figures, bigger_is_better=bigger, counts=counts)
        if benches:
            entry = {"commit": commit, "date": now_ms, "tool": TOOLS[name], "benches": benches}
            data["entries"].setdefault(name, []).append(entry)
    data["lastUpdate"] = now_ms
    write_text_atomic(path, PREFIX + json.dumps(data, indent=2) + "\n")
    return path


def read_gab(path: Path) -> list[dict[str, Any]]:
    """A gab file (github-action-benchmark's custom format), every entry checked."""
    from pydantic import ValidationError

    from benchwatch.results.schema import GabEntry

    try:
        data = json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise UserError(f"{path}: not a readable gab file ({exc})") from None
    if not isinstance(data, list):
        raise UserError(f"{path}: a gab file is a JSON array of {{name, unit, value}}")
    try:
        return [GabEntry.model_validate(item).model_dump(exclude_none=True) for item in data]
    except ValidationError as exc:
        raise UserError(
            f"{path}: bad gab entry ({str(exc).splitlines()[0]}: {exc.errors()[0]['msg']})"
        ) from None


def append_entry(
    path: Path, suite: str, tool: str, benches: list[dict[str, Any]], commit: dict[str, Any]
) -> None:
    """One entry in github-action-benchmark's shape (what the action appends on gh-pages),
    under `suite`; a missing data.js is created, a damaged one is reported, never overwritten."""
    if tool not in TOOLS.values():
        raise UserError(f"tool {tool!r}: expected one of {', '.join(sorted(set(TOOLS.values())))}")
    data = read(path)
    now_ms = int(time.time() * 1000)
    data["entries"].setdefault(suite, []).append(
        {"commit": commit, "date": now_ms, "tool": tool, "benches": benches}
    )
    data["lastUpdate"] = now_ms
    write_text_atomic(path, PREFIX + json.dumps(data, indent=2) + "\n")
