"""What PostgreSQL itself did for one boot's database, from `pg_stat_statements`: per normalized
statement its calls, rows and shared buffers (hit + read), read before and after a counted phase;
and a statement's generic plan (`EXPLAIN` of it prepared, parameters unbound).

The throwaway cluster loads the extension (measure/database.py); a configured cluster
(BENCHWATCH_POSTGRES_URL) may not: then `available` is False and nothing is counted. Every read
runs in psql connected to the cluster's admin database, filtered to the boot's database, so the
reads themselves are never among the boot's statements."""

from __future__ import annotations

import os
import re
import subprocess
from dataclasses import dataclass

from benchwatch.measure.database import Cluster

FIELD = "\x1f"
RECORD = "\x1e"
_TIMEOUT_S = 30
PLAN_KINDS = ("select", "update", "delete", "insert", "with")  # what EXPLAIN takes


@dataclass(frozen=True)
class StatementWork:
    """One normalized statement's totals so far (pg_stat_statements counts from the reset)."""

    query: str  # PostgreSQL's normalized text: constants replaced by $1, $2, …
    calls: int
    rows: int
    buffers: int  # shared blocks hit + read

    def minus(self, earlier: StatementWork | None) -> StatementWork:
        if earlier is None:
            return self
        return StatementWork(
            self.query,
            self.calls - earlier.calls,
            self.rows - earlier.rows,
            self.buffers - earlier.buffers,
        )


Snapshot = dict[str, StatementWork]  # by queryid


def _psql(cluster: Cluster, database: str, statement: str) -> str | None:
    """psql's unaligned output of `statement` in `database`, or None when it failed."""
    argv, environ = cluster.psql_command(
        statement, database, ("-A", "-t", "-F", FIELD, "-R", RECORD)
    )
    try:
        done = subprocess.run(
            argv,
            capture_output=True,
            text=True,
            timeout=_TIMEOUT_S,
            env={**os.environ, **environ},
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout if done.returncode == 0 else None


def available(cluster: Cluster) -> bool:
    """pg_stat_statements is loaded in the cluster and readable from its admin database."""
    return (
        _psql(cluster, cluster.admin_database, "SELECT count(*) FROM pg_stat_statements")
        is not None
    )


def _quoted(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def snapshot(cluster: Cluster, database: str) -> Snapshot | None:
    """Every statement of `database` so far, or None when pg_stat_statements cannot be read."""
    out = _psql(
        cluster,
        cluster.admin_database,
        "SELECT s.queryid, s.calls, s.rows, s.shared_blks_hit + s.shared_blks_read, s.query "
        "FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid "
        f"WHERE d.datname = {_quoted(database)}",
    )
    if out is None:
        return None
    found: Snapshot = {}
    for record in out.split(RECORD):
        if not record.strip():
            continue
        queryid, calls, rows, buffers, query = record.lstrip("\n").split(FIELD, 4)
        work = StatementWork(_one_line(query), int(calls), int(rows), int(buffers))
        before = found.get(queryid)  # one queryid per user and top-level flag: add them up
        found[queryid] = (
            work
            if before is None
            else StatementWork(
                work.query,
                before.calls + work.calls,
                before.rows + work.rows,
                before.buffers + work.buffers,
            )
        )
    return found


def difference(before: Snapshot, after: Snapshot) -> Snapshot:
    """What happened between two snapshots, statements that ran in between only."""
    moved = {key: work.minus(before.get(key)) for key, work in after.items()}
    return {key: work for key, work in moved.items() if work.calls > 0}


def _one_line(query: str) -> str:
    return re.sub(r"\s+", " ", query).strip()


def generic_plan(cluster: Cluster, database: str, query: str) -> str | None:
    """The statement's plan with its parameters unbound (PREPARE, then EXPLAIN EXECUTE with
    NULLs under plan_cache_mode = force_generic_plan, so no NULL is folded into the plan); None
    when it cannot be prepared (a utility statement, parameter types that cannot be inferred)."""
    if not query.lower().startswith(PLAN_KINDS):
        return None
    count = max((int(n) for n in re.findall(r"\$(\d+)", query)), default=0)
    arguments = f"({', '.join(['NULL'] * count)})" if count else ""
    out = _psql(
        cluster,
        database,
        "SET plan_cache_mode = force_generic_plan; "
        f"PREPARE benchwatch_plan AS {query}; "
        f"EXPLAIN (COSTS OFF) EXECUTE benchwatch_plan{arguments}",
    )
    if out is None:
        return None
    lines = [line.rstrip() for line in out.replace(RECORD, "\n").splitlines() if line.strip()]
    return "\n".join(lines) or None
