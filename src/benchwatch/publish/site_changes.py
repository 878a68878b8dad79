"""Change points for the site: `benchwatch changes`'s JSON document, cut to what the trend charts
mark (benchwatch.publish.trends) and the overview's table of recent change points lists."""

from __future__ import annotations

import json
import re
from html import escape
from pathlib import Path
from typing import Any

from benchwatch.errors import UserError
from benchwatch.publish.trends import mark_size
from benchwatch.trend.report import SCHEMA_VERSION


def read_changes(path: Path) -> dict[str, Any]:
    try:
        document = json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise UserError(f"--changes {path}: not a readable changes.json ({exc})") from None
    if not isinstance(document, dict) or document.get("schema_version") != SCHEMA_VERSION:
        raise UserError(
            f"--changes {path}: not a `benchwatch changes` document (schema_version {SCHEMA_VERSION})"
        )
    return document


def _point(point: dict[str, Any]) -> dict[str, Any]:
    return {k: point.get(k) for k in ("commit", "date", "url", "value")}


def marks(document: dict[str, Any]) -> list[dict[str, Any]]:
    """One entry per change point: where (series, the commits either side), how big, and
    whether it is acknowledged (with the reason) or alerting."""
    found = []
    for series in document.get("series", []):
        for change in series.get("changes", []):
            ack = change.get("acknowledged")
            # statements, retained memory: judged by a difference in their unit (trend/changes.py)
            moved = (
                {"difference": change["difference"]}
                if isinstance(change.get("difference"), int | float)
                else {}
            )
            found.append(
                {
                    "suite": series["suite"],
                    "name": series["name"],
                    "unit": series.get("unit", ""),
                    "gating": series.get("gating", False),
                    "mode": series.get("mode", ""),
                    "index": change.get("index"),
                    "kind": change["kind"],
                    "ratio": change.get("ratio"),
                    "low": change.get("low"),
                    "high": change.get("high"),
                    "p_value": change.get("p_value"),
                    "before": _point(change["before"]),
                    "after": _point(change["after"]),
                    "acknowledged": ack["reason"] if ack else None,
                    **moved,
                    "alert": bool(series.get("alert"))
                    and change["kind"] == "regression"
                    and not ack
                    and series.get("gating", False),
                }
            )
    found.sort(key=lambda m: str(m["after"].get("date") or ""), reverse=True)
    return found


RECENT = 30
_URL = re.compile(r"https?://\S+")


def _commit(point: dict[str, Any]) -> str:
    short = escape(str(point.get("commit") or "?")[:8])
    url = str(point.get("url") or "")
    return (
        f"<a href='{escape(url)}'>{short}</a>" if _URL.fullmatch(url) else f"<code>{short}</code>"
    )


def change_table(changes: list[dict[str, Any]] | None) -> str:
    """The most recent change points first (`marks`' order), with links to their commits."""
    if changes is None:
        return (
            "<div id='change-points' data-state='missing'><div class='message'>no change-point analysis given "
            "(benchwatch site --changes changes.json)</div></div>"
        )
    if not changes:
        return (
            "<div id='change-points' data-state='ok'><div class='message'>no change points in the published "
            "trends</div></div>"
        )
    rows = []
    for mark in changes[:RECENT]:
        day = str(mark["after"].get("date") or "")[:10]
        status = (
            f"acknowledged: {mark['acknowledged']}"
            if mark.get("acknowledged")
            else (mark["kind"] + (", alert" if mark.get("alert") else ""))
        )
        rows.append(
            f"<tr data-commit='{escape(str(mark['after'].get('commit')))}' class='{escape(mark['kind'])}'>"
            f"<td>{escape(mark['name'])} ({escape(mark['suite'])})</td>"
            f"<td>{_commit(mark['before'])} → {_commit(mark['after'])}{f' ({escape(day)})' if day else ''}</td>"
            f"<td>{escape(mark_size(mark))}</td><td>{escape(status)}</td></tr>"
        )
    more = (
        f"<p class='note'>the {RECENT} most recent of {len(changes)}</p>"
        if len(changes) > RECENT
        else ""
    )
    return (
        "<div id='change-points' data-state='ok'><div class='scroll' tabindex='0' role='region' "
        "aria-label='change points'><table class='change-points'><thead><tr><th>series</th><th>between</th>"
        f"<th>change</th><th>status</th></tr></thead><tbody>{''.join(rows)}</tbody></table></div>"
        f"<div class='scroll-hint'>← scroll sideways for more columns →</div>{more}</div>"
    )
