"""Acknowledged changes: a reviewed file saying "this step is accepted, stop alerting".

    # benchwatch-acks.toml (repository root)
    [[ack]]
    figure = "services@latest GET /services?offset=0 * cpu/req*"   # glob over series names
    commit = "1a2b3c4d"                                            # >= 7 hex digits
    reason = "pydantic 2.12 validates datetimes strictly; accepted in #123"

An ack covers a change point of a matching series whose new level starts within
TOLERANCE points of the acknowledged commit (the located commit can move by a point as
history grows); in a `(vs parent)` series a change is one commit, so only that commit. Keys in errors are numbered from 1: `ack.2.figure` is the second [[ack]].
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from fnmatch import fnmatchcase
from pathlib import Path

from benchwatch.errors import UserError
from benchwatch.trend.changes import SeriesResult, params_for

ACKS_FILE = "benchwatch-acks.toml"
TOLERANCE = 2
_COMMIT = re.compile(r"[0-9a-fA-F]{7,40}")
_KEYS = ("figure", "commit", "reason")


@dataclass(frozen=True)
class Ack:
    number: int  # 1-based position in the file
    figure: str
    commit: str
    reason: str

    def matches_name(self, name: str) -> bool:
        return fnmatchcase(name, self.figure)

    def matches_commit(self, commit: str) -> bool:
        return commit.lower().startswith(self.commit.lower())


def _pattern_problem(pattern: str) -> str | None:
    if not pattern.strip():
        return "must be a non-empty glob pattern"
    depth = 0
    for char in pattern:
        if char == "[":
            if depth:
                return f"nested '[' in {pattern!r}"
            depth = 1
        elif char == "]" and depth:
            depth = 0
    return f"unclosed '[' in {pattern!r}" if depth else None


def load(path: Path, required: bool = False) -> list[Ack]:
    """The acks in `path`; none when it does not exist (unless `required`)."""
    if not path.exists():
        if required:
            raise UserError(f"{path}: no such acknowledgements file")
        return []
    try:
        data = tomllib.loads(path.read_text())
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise UserError(f"{path}: not valid TOML ({exc})") from None
    extra = sorted(set(data) - {"ack"})
    if extra:
        raise UserError(f"{path}: {extra[0]}: unknown key (only [[ack]] tables)")
    tables = data.get("ack", [])
    if not isinstance(tables, list):
        raise UserError(f"{path}: ack: must be an array of tables ([[ack]])")
    return [_one(path, number, table) for number, table in enumerate(tables, start=1)]


def _one(path: Path, number: int, table: object) -> Ack:
    where = f"{path}: ack.{number}"
    if not isinstance(table, dict):
        raise UserError(f"{where}: must be a table")
    unknown = sorted(set(table) - set(_KEYS))
    if unknown:
        raise UserError(f"{where}.{unknown[0]}: unknown key (expected {', '.join(_KEYS)})")
    for key in _KEYS:
        if key not in table:
            raise UserError(f"{where}.{key}: missing")
        if not isinstance(table[key], str):
            raise UserError(f"{where}.{key}: must be a string")
    problem = _pattern_problem(table["figure"])
    if problem:
        raise UserError(f"{where}.figure: {problem}")
    if not _COMMIT.fullmatch(table["commit"]):
        raise UserError(f"{where}.commit: {table['commit']!r} is not 7 to 40 hex digits")
    if not table["reason"].strip():
        raise UserError(f"{where}.reason: must say why the change is accepted")
    return Ack(number, table["figure"], table["commit"], table["reason"].strip())


def apply(
    path: Path, acks: list[Ack], results: list[SeriesResult]
) -> tuple[dict[tuple[int, int], Ack], list[str]]:
    """({(result index, change index): ack}, warnings). An ack whose commit or figure is not
    in the histories read is said, not an error: it may be older than --since."""
    covered: dict[tuple[int, int], Ack] = {}
    seen_commit = {ack.number: False for ack in acks}
    seen_figure = {ack.number: False for ack in acks}
    for r, result in enumerate(results):
        points = result.series.points
        near = 0 if params_for(result.series.name).mode == "spike" else TOLERANCE
        for ack in acks:
            if not ack.matches_name(result.series.name):
                continue
            seen_figure[ack.number] = True
            at = [i for i, p in enumerate(points) if ack.matches_commit(p.commit)]
            seen_commit[ack.number] |= bool(at)
            for c, change in enumerate(result.changes):
                if (r, c) not in covered and any(abs(i - change.index) <= near for i in at):
                    covered[(r, c)] = ack
    warnings = []
    for ack in acks:
        if not seen_figure[ack.number]:
            warnings.append(
                f"{path}: ack.{ack.number}.figure: {ack.figure!r} matches no series read"
            )
        elif not seen_commit[ack.number]:
            warnings.append(
                f"{path}: ack.{ack.number}.commit: {ack.commit} is not in the "
                "history of its series (older than --since, or a typo)"
            )
    return covered, warnings
