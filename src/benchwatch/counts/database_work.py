"""The database's own work per request, for an app on PostgreSQL: shared buffers (hit + read) per
request of every counted phase, from `pg_stat_statements` read before and after it
(measure/database_work.py), by statement; and how each statement is planned.

Read in the strace boot, between its windows and outside the server (psql, connected to the
cluster's admin database): the server's instructions and system calls do not move. A buffer is an
8 kB page PostgreSQL touched; the same statement on the same data touches the same pages, so the
figure is a count, judged like one. A table the endpoints write to grows from one repeat to the
next, so a read that scans it touches more pages each time: its range shows that, and the floor
calibrated on it covers it.

A figure's detail holds, per statement, its buffers per request, and, per statement and plan (the
scans of its generic plan: `plan <statement>: Index Scan using ix_item_owner_id on item`), its
calls per request: when a plan changes between base and head, both lines move. And per statement
its rows per request (`rows <statement>`), shown on a line of their own and never judged."""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TypeVar

from benchwatch.measure import database, database_work
from benchwatch.measure.server import Server

PLAN = "plan "  # the detail keys of plans begin with it
ROWS = "rows "  # the detail keys of rows returned per request begin with it: shown, never judged
V = TypeVar("V")
SHORT = 160  # characters of a statement's text in a detail key


def shortened(query: str) -> str:
    """A statement as the comment names it: a SELECT's column list and an INSERT's columns and
    values as `…` (the tables and conditions are what tell statements apart), at most SHORT
    characters."""
    text = re.sub(r"^SELECT (?:DISTINCT )?.+? FROM ", "SELECT … FROM ", query, flags=re.S)
    text = re.sub(
        r"^(INSERT INTO \S+) \(.*?\) VALUES \(.*\)", r"\1 (…) VALUES (…)", text, flags=re.S
    )
    return text if len(text) <= SHORT else text[: SHORT - 1] + "…"


def scans(plan: str) -> str:
    """A plan's scans, in order (`Seq Scan on item`, `Index Scan using ix on item`), or its top
    node when it scans nothing (`Result`)."""
    nodes = [line.strip().removeprefix("->").strip() for line in plan.splitlines()]
    found = [node for node in nodes if " Scan " in f" {node} " or node.startswith("Scan ")]
    return " + ".join(found) if found else (nodes[0] if nodes else "")


@dataclass
class DatabaseWork:
    """One strace boot's reader: `start()` before a window, `stop()` after it, the differences kept
    per phase; `plans()` once the phases are done."""

    cluster: database.Cluster
    name: str
    phases: list[database_work.Snapshot] = field(default_factory=list)
    _before: database_work.Snapshot | None = None

    @classmethod
    def of(cls, server: Server) -> DatabaseWork | None:
        """A reader for the server's boot database, or None: no database, or a cluster without
        pg_stat_statements."""
        parts = server.context.database
        if not parts:
            return None
        where = database.cluster()
        if not database_work.available(where):
            return None
        return cls(where, parts["name"])

    def start(self) -> None:
        self._before = database_work.snapshot(self.cluster, self.name)

    def stop(self) -> None:
        after = database_work.snapshot(self.cluster, self.name)
        if self._before is None or after is None:
            self.phases.append({})
        else:
            self.phases.append(database_work.difference(self._before, after))
        self._before = None

    def plans(self) -> dict[str, str]:
        """Each statement the phases ran: the scans of its generic plan (statements that cannot be
        prepared are left out)."""
        queries = sorted({work.query for phase in self.phases for work in phase.values()})
        found: dict[str, str] = {}
        for query in queries:
            plan = database_work.generic_plan(self.cluster, self.name, query)
            if plan is not None:
                found[query] = scans(plan)
        return found


def per_request(
    phase: database_work.Snapshot, requests: int, plans: dict[str, str]
) -> tuple[float, dict[str, float]]:
    """One phase's buffers per request and its detail: buffers per request by statement, calls per
    request by statement and plan, rows per request by statement (pg_stat_statements' `rows`:
    returned by a SELECT or a RETURNING, affected by an UPDATE, DELETE or INSERT)."""
    buffers: dict[str, float] = defaultdict(float)
    calls: dict[str, float] = defaultdict(float)
    for work in phase.values():
        text = shortened(work.query)
        buffers[text] += work.buffers / requests
        calls[f"{ROWS}{text}"] += work.rows / requests
        plan = plans.get(work.query)
        if plan:
            calls[f"{PLAN}{text}: {plan}"] += work.calls / requests
    total = sum(buffers.values())
    return total, {**buffers, **calls}


def split_rows(detail: Mapping[str, V]) -> tuple[dict[str, V], dict[str, V]]:
    """A database figure's detail as (its buffers and plans, its rows by statement: ROWS taken off
    the keys), so each is shown on a line of its own."""
    rows = {key.removeprefix(ROWS): v for key, v in detail.items() if key.startswith(ROWS)}
    return {key: v for key, v in detail.items() if not key.startswith(ROWS)}, rows


def median_detail(details: Iterable[dict[str, float]]) -> dict[str, float]:
    """Per key, the median over the repeats (a key a repeat lacks counts 0 there)."""
    import statistics

    details = list(details)
    keys = sorted({key for detail in details for key in detail})
    found = {key: round(statistics.median(d.get(key, 0.0) for d in details), 3) for key in keys}
    return {key: value for key, value in found.items() if value != 0}
