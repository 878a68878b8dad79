"""A compare's rows as github-action-benchmark entries: the `(vs parent)` series on main.

publish.yml compares each push's `before` commit with the new one side by side; every
figure's head/base ratio becomes one point named `<figure name> (vs parent)` (the compare's
" (side by side)" tag taken off). The values are oriented like smaller-is-better figures: a
bigger-is-better figure's ratio is inverted (base/head), so above 1 always means worse and
the whole file is published with the customSmallerIsBetter tool. A row without a ratio and
an interval (invalid or too few samples) gives no point: it is listed, never published.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchwatch.errors import UserError
from benchwatch.figures.figure_key import PARENT_MARK, decode
from benchwatch.judge.verdict import COMPARE_FILE, Comparison, Row
from benchwatch.results.schema import GabEntry

UNIT = "x"


@dataclass(frozen=True)
class Skipped:
    label: str
    reason: str


def read_comparison(path: Path) -> Comparison:
    """compare.json, given as the file or the compare's --out directory."""
    file = path / COMPARE_FILE if path.is_dir() else path
    try:
        return Comparison.model_validate_json(file.read_text())
    except OSError as exc:
        raise UserError(f"{file}: cannot read the comparison ({exc.strerror or exc})") from None
    except ValueError as exc:
        first = str(exc).splitlines()[0] if str(exc) else "invalid"
        raise UserError(f"{file}: not a benchwatch compare.json ({first})") from None


def series_name(row: Row) -> str:
    figure = row.base_figure or row.head_figure or row.label
    key = decode(figure)
    if key is None:  # a figure benchwatch did not name (an old compare.json): its name as it was
        return f"{figure} {PARENT_MARK}"
    return key.marked(f" {PARENT_MARK}").name


def _problem(row: Row) -> str | None:
    if row.verdict == "no verdict" or row.ratio is None or row.low is None or row.high is None:
        return row.reason or "no ratio with an interval"
    if not all(math.isfinite(x) and x > 0 for x in (row.ratio, row.low, row.high)):
        return f"ratio {row.ratio} [{row.low}, {row.high}] is not positive and finite"
    return None


def entry(row: Row, comparison: Comparison) -> dict[str, Any]:
    assert row.ratio is not None and row.low is not None and row.high is not None
    if row.bigger_is_better:  # base/head: above 1 is worse, like every other point here
        value, low, high = 1.0 / row.ratio, 1.0 / row.high, 1.0 / row.low
        how = f"base/head of a bigger-is-better figure ({row.unit}), inverted so > 1 means worse"
    else:
        value, low, high = row.ratio, row.low, row.high
        how = f"head/base ({row.unit}), > 1 means worse"
    base, head = (comparison.base.commit or "?")[:12], (comparison.head.commit or "?")[:12]
    extra = (
        f"{how}; 95% interval [{low:.4f}, {high:.4f}]; {row.verdict}; "
        f"{comparison.rounds} rounds side by side, {base} -> {head}"
    )
    half = max(value - low, high - value)
    return GabEntry(
        name=series_name(row), unit=UNIT, value=round(value, 6), range=f"± {half:.4g}", extra=extra
    ).model_dump(exclude_none=True)


def relative_entries(
    comparison: Comparison, every: bool = False
) -> tuple[list[dict[str, Any]], list[Skipped]]:
    """(gab entries of the gating figures, or of every figure; the rows that gave none)."""
    entries: list[dict[str, Any]] = []
    skipped: list[Skipped] = []
    for row in sorted(comparison.rows, key=lambda r: series_name(r)):
        if not (row.gating or every):
            continue
        problem = _problem(row)
        if problem:
            skipped.append(Skipped(row.label, problem))
        else:
            entries.append(entry(row, comparison))
    names = [e["name"] for e in entries]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise UserError(f"relative series names must be unique: {duplicates[:3]}")
    return entries, skipped
