"""SQL statements per request, by statement: what the server's harness tallied in each counted
phase of the boot under strace (counts/harness/benchwatch_statements.py), read between phases,
normalized (literals and bind markers out, whitespace collapsed, long lists shortened) and divided
by the phase's requests.

A server that sent no statement at all, from its boot to the end of its count, uses no database
here: it gets no statements figure (not a figure of zeros). A server that did gets one for every
counted endpoint, a zero included (`GET /health`: 0 statements), so an endpoint that starts to
query shows as 0 → n, not as a figure measured on one side only.
"""

from __future__ import annotations

import json
import re
import statistics
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from benchwatch.counts.target_counts import CountFailed, Phase
from benchwatch.declarations.requests import Endpoint

if TYPE_CHECKING:
    from benchwatch.counts.counted_server import Serving

MAX_TEXT = 200  # characters of a normalized statement kept; the rest is "…"
LONG_LIST = 40  # a column list longer than this is shown as "…"
ELLIPSIS = "…"

_STRING = re.compile(r"'(?:[^']|'')*'")
_NUMBER = re.compile(r"(?<![\w.$])\d+(?:\.\d+)?(?:[eE][-+]?\d+)?(?![\w.])")
# psycopg's %(name)s and %s, PostgreSQL's $1, named :name (not a ::cast), qmark ?
_MARKER = re.compile(r"%\(\w+\)s|%s|\$\d+|(?<![:\w]):\w+|\?")
# a marker's cast, as SQLAlchemy writes them for psycopg: %(param_1)s::INTEGER, ?::VARCHAR(200)[]
_CAST = re.compile(
    r"\?::[A-Za-z_][\w.]*(?:\s+(?:WITH|WITHOUT)\s+TIME\s+ZONE)?(?:\s*\(\s*\d+(?:\s*,\s*\d+)?\s*\))?(?:\[\])*",
    re.IGNORECASE,
)
_MARKER_LIST = re.compile(r"\(\s*\?(?:\s*,\s*\?)+\s*\)")  # IN (?, ?, ?) of any length
_REPEATED_ROWS = re.compile(r"\(\?, …\)(?:\s*,\s*\(\?, …\))+")  # VALUES (?, …), (?, …), …
_SPACE = re.compile(r"\s+")
_INSERT_COLUMNS = re.compile(r"^(INSERT INTO \S+ )\(([^()]*)\)", re.IGNORECASE)
_UPDATE_SET = re.compile(r"^(UPDATE \S+ SET )(.*?)( WHERE |$)", re.IGNORECASE)


def normalize(text: str) -> str:
    """One statement's text as it is grouped: string and number literals and every bind marker as
    `?` (its cast dropped: psycopg's `%(param_1)s::INTEGER` through SQLAlchemy), a list of them as `(?, …)`, whitespace collapsed, a long SELECT, INSERT or SET column list
    as `…`, at most MAX_TEXT characters."""
    found = _STRING.sub("?", text)
    found = _MARKER.sub("?", found)
    found = _CAST.sub("?", found)
    found = _NUMBER.sub("?", found)
    found = _SPACE.sub(" ", found).strip().rstrip(";").strip()
    found = _MARKER_LIST.sub("(?, …)", found)
    found = _REPEATED_ROWS.sub("(?, …)", found)
    found = _shorten_columns(found)
    if len(found) > MAX_TEXT:
        found = found[: MAX_TEXT - 1].rstrip() + ELLIPSIS
    return found


def _shorten_columns(text: str) -> str:
    if text[:7].upper() == "SELECT ":
        start = 7
        if text[start : start + 9].upper() == "DISTINCT ":
            start += 9
        end = _top_level_from(text, start)
        if end is not None and end - start > LONG_LIST:
            return text[:start] + ELLIPSIS + text[end:]
        return text
    columns = _INSERT_COLUMNS.match(text)
    if columns and len(columns.group(2)) > LONG_LIST:
        return f"{columns.group(1)}({ELLIPSIS}){text[columns.end() :]}"
    setting = _UPDATE_SET.match(text)
    if setting and len(setting.group(2)) > LONG_LIST:
        return f"{setting.group(1)}{ELLIPSIS}{setting.group(3)}{text[setting.end() :]}"
    return text


def _top_level_from(text: str, start: int) -> int | None:
    """Where ` FROM ` begins outside parentheses (a subquery's FROM is not the list's end)."""
    depth = 0
    upper = text.upper()
    for i in range(start, len(text)):
        if text[i] == "(":
            depth += 1
        elif text[i] == ")":
            depth -= 1
        elif depth == 0 and upper.startswith(" FROM ", i):
            return i
    return None


class StatementsUnreadable(ValueError):
    """The harness answered something that is not a tally."""


@dataclass(frozen=True)
class Reading:
    """One answer of the harness: statements since boot, and those since the last answer."""

    ever: int
    statements: Counter[str]


def read_answer(answer: bytes) -> Reading | None:
    """The harness's line as a Reading (texts normalized and merged); None when that server does
    not tally statements (`-`)."""
    if answer == b"-":
        return None
    try:
        found = json.loads(answer)
        ever = int(found["ever"])
        raw = found["statements"]
        counted: Counter[str] = Counter()
        for text, count in raw.items():
            counted[normalize(str(text))] += int(count)
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise StatementsUnreadable(
            f"the counting harness's statements are unreadable ({exc}): {answer[:80]!r}"
        ) from None
    return Reading(ever, counted)


@dataclass
class PhaseTally:
    """Readings taken between the strace phases: one before the first phase (the boot, probe and
    warm-up: left out), then one after each phase."""

    readings: list[Reading | None] = field(default_factory=list)

    def take(self, serving: Serving) -> None:
        try:
            self.readings.append(read_answer(serving.statements()))
        except StatementsUnreadable as exc:
            raise CountFailed(str(exc), stderr_tail=serving.srv.stderr_tail()) from None

    def assign(self, phases: Sequence[Phase]) -> None:
        """Each phase's statements (Phase.statements), when the server sent any statement at all."""
        last = self.readings[-1] if self.readings else None
        if last is None or last.ever == 0 or len(self.readings) != len(phases) + 1:
            return
        for phase, reading in zip(phases, self.readings[1:], strict=True):
            phase.statements = dict(reading.statements) if reading is not None else {}


@dataclass(frozen=True)
class PerRequest:
    """An endpoint's statements per request: one total per phase, and by statement (the median
    over its phases)."""

    samples: list[float]
    detail: dict[str, float]


def per_request(phases: Iterable[Phase], endpoint: Endpoint) -> PerRequest | None:
    """None when the statements were not tallied (a server that sent none)."""
    mine = [p for p in phases if p.endpoint == endpoint and p.statements is not None]
    if not mine:
        return None
    by_phase = [
        {text: count / p.requests for text, count in (p.statements or {}).items()} for p in mine
    ]
    texts = sorted({text for found in by_phase for text in found})
    detail = {
        text: round(statistics.median(found.get(text, 0.0) for found in by_phase), 3)
        for text in texts
    }
    return PerRequest(
        [float(round(sum(found.values()), 6)) for found in by_phase],
        {text: value for text, value in detail.items() if value},
    )
