"""Published histories (github-action-benchmark's data.js) as series of points.

benchwatch.trend.history.read checks the wrapper and that `entries` maps names to lists; every
entry is checked here too, so a damaged file is reported by path and key, never half read.
"""

from __future__ import annotations

import datetime as dt
import math
from pathlib import Path
from typing import Any

from benchwatch.errors import UserError
from benchwatch.trend.changes import Point, Series
from benchwatch.trend.history import DATA_FILE, HistoryError, range_half, read

# where a data.js sits under a gh-pages checkout: the main trend and the nightly one
LAYOUTS = (DATA_FILE, f"dev/bench/{DATA_FILE}", f"nightly/{DATA_FILE}")
BIGGER_TOOL, SMALLER_TOOL = "customBiggerIsBetter", "customSmallerIsBetter"


def find(directory: Path) -> list[Path]:
    """The data.js files of a --data argument: the file itself, or those under the layouts."""
    if directory.is_file():
        return [directory]
    found = [directory / layout for layout in LAYOUTS if (directory / layout).is_file()]
    if not found:
        raise UserError(f"--data {directory}: no data.js there (looked for {', '.join(LAYOUTS)})")
    return found


def _date(entry: dict[str, Any], commit: dict[str, Any]) -> str:
    stamp = commit.get("timestamp")
    if isinstance(stamp, str) and stamp:
        return stamp
    millis = entry.get("date")
    if isinstance(millis, int | float):
        return dt.datetime.fromtimestamp(millis / 1000, dt.UTC).isoformat(timespec="seconds")
    return ""


def _check_entry(path: Path, where: str, entry: Any) -> None:
    def bad(key: str, what: str) -> HistoryError:
        return HistoryError(f"{path}: {where}{key}: {what}; fix or move it away")

    if not isinstance(entry, dict):
        raise bad("", "must be an object")
    commit = entry.get("commit")
    if not isinstance(commit, dict) or not isinstance(commit.get("id"), str) or not commit["id"]:
        raise bad(".commit.id", "missing")
    if entry.get("tool") not in (BIGGER_TOOL, SMALLER_TOOL):
        raise bad(".tool", f"{entry.get('tool')!r} is not {BIGGER_TOOL} or {SMALLER_TOOL}")
    benches = entry.get("benches")
    if not isinstance(benches, list):
        raise bad(".benches", "must be a list")
    for j, bench in enumerate(benches):
        if not isinstance(bench, dict) or not isinstance(bench.get("name"), str):
            raise bad(f".benches[{j}].name", "missing")
        value = bench.get("value")
        if (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or not math.isfinite(value)
        ):
            raise bad(f".benches[{j}].value", f"{value!r} is not a finite number")


def series_of(path: Path, since: int | None = None) -> list[Series]:
    """Every (suite, benchmark name) of one data.js, points in published order; `since`
    keeps each suite's last N entries."""
    if not path.is_file():
        raise UserError(f"{path}: no such data.js")
    data = read(path)
    out: list[Series] = []
    for suite, entries in data["entries"].items():
        for i, entry in enumerate(entries):
            _check_entry(path, f"entries[{suite!r}][{i}]", entry)
        kept = entries[-since:] if since else entries
        points: dict[str, list[Point]] = {}
        meta: dict[str, tuple[str, bool]] = {}
        for entry in kept:
            commit = entry["commit"]
            for bench in entry["benches"]:
                point = Point(
                    commit["id"],
                    _date(entry, commit),
                    float(bench["value"]),
                    str(commit.get("url") or ""),
                    range_half(bench),
                )
                points.setdefault(bench["name"], []).append(point)
                meta[bench["name"]] = (str(bench.get("unit", "")), entry["tool"] == BIGGER_TOOL)
        for name, found in points.items():
            unit, bigger = meta[name]
            out.append(Series(str(path), suite, name, unit, bigger, tuple(found)))
    return out


def load(directories: list[Path], since: int | None = None) -> tuple[list[Path], list[Series]]:
    """Every file is read and checked before any result is computed."""
    if since is not None and since < 1:
        raise UserError(f"--since {since}: must be at least 1")
    files = [path for directory in directories for path in find(directory)]
    return files, [s for path in files for s in series_of(path, since)]
