"""Change points for the dashboard: `benchwatch changes`'s JSON document, cut to what the
charts and the table of recent change points draw (embedded in index.html: no fetch, so the
page works from file:// and offline)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from benchwatch.errors import UserError
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
            found.append({
                "suite": series["suite"], "name": series["name"], "unit": series.get("unit", ""),
                "gating": series.get("gating", False), "mode": series.get("mode", ""),
                "index": change.get("index"), "kind": change["kind"], "ratio": change.get("ratio"), "low": change.get("low"),
                "high": change.get("high"), "p_value": change.get("p_value"),
                "before": _point(change["before"]), "after": _point(change["after"]),
                "acknowledged": ack["reason"] if ack else None,
                "alert": bool(series.get("alert")) and change["kind"] == "regression" and not ack
                and series.get("gating", False),
            })  # fmt: skip
    found.sort(key=lambda m: str(m["after"].get("date") or ""), reverse=True)
    return found
