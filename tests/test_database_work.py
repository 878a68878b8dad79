"""The database's own work per request (counts/database_work.py): PostgreSQL's buffers per request
by statement from pg_stat_statements, and each statement's plan. Fast: the plan summary and the
figure's detail. Slow, on a real cluster benchwatch starts itself (it loads pg_stat_statements): a
commit that drops the index a lookup uses is a regression of that endpoint's database buffers, the
statement and both plans named in the comment; the endpoints it does not touch stay quiet."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO, uvicorn_processes

from benchwatch.counts.database_work import (
    PLAN,
    ROWS,
    median_detail,
    per_request,
    scans,
    shortened,
)
from benchwatch.measure.database_work import StatementWork, difference

PLAN_TEXT = """Limit
  ->  Sort
        Sort Key: id
        ->  Bitmap Heap Scan on items
              Recheck Cond: (owner = $1)
              ->  Bitmap Index Scan on ix_items_owner
                    Index Cond: (owner = $1)"""


def test_a_statement_is_named_by_its_tables_and_conditions_its_columns_shortened() -> None:
    assert (
        shortened("SELECT posts.id, posts.title FROM posts WHERE posts.id > $1 ORDER BY posts.id")
        == "SELECT … FROM posts WHERE posts.id > $1 ORDER BY posts.id"
    )
    assert (
        shortened("INSERT INTO posts (title, content) VALUES ($1, $2) RETURNING posts.id")
        == "INSERT INTO posts (…) VALUES (…) RETURNING posts.id"
    )
    assert shortened("UPDATE items SET title = $1 WHERE id = $2") == (
        "UPDATE items SET title = $1 WHERE id = $2"
    )
    long = "DELETE FROM items WHERE " + " OR ".join(f"id = ${n}" for n in range(1, 60))
    assert len(shortened(long)) == 160 and shortened(long).endswith("…")


def test_a_plan_is_named_by_its_scans_in_order_or_its_top_node() -> None:
    assert scans(PLAN_TEXT) == "Bitmap Heap Scan on items + Bitmap Index Scan on ix_items_owner"
    assert scans("Seq Scan on items\n  Filter: (id = $1)") == "Seq Scan on items"
    assert scans("Result") == "Result"


def test_a_phase_is_its_buffers_per_request_by_statement_and_its_calls_per_plan() -> None:
    before = {"1": StatementWork("SELECT a FROM t WHERE id = $1", 10, 10, 20)}
    after = {
        "1": StatementWork("SELECT a FROM t WHERE id = $1", 30, 30, 60),
        "2": StatementWork("SELECT b FROM u", 5, 0, 0),  # new: ran in the phase only
        "3": StatementWork("SELECT c FROM v", 0, 0, 0),
    }
    phase = difference(before, after)
    assert set(phase) == {"1", "2"}  # a statement that did not run is not in the phase
    total, detail = per_request(
        phase, 20, {"SELECT a FROM t WHERE id = $1": "Index Scan using t_pkey on t"}
    )
    assert total == 2.0
    assert detail == {
        "SELECT … FROM t WHERE id = $1": 2.0,
        "SELECT … FROM u": 0.0,
        f"{PLAN}SELECT … FROM t WHERE id = $1: Index Scan using t_pkey on t": 1.0,
        f"{ROWS}SELECT … FROM t WHERE id = $1": 1.0,  # 20 rows over 20 requests
        f"{ROWS}SELECT … FROM u": 0.0,
    }
    # over the repeats, the median; a part that is 0 everywhere is left out
    assert median_detail([detail, {**detail, "SELECT … FROM t WHERE id = $1": 4.0}]) == {
        "SELECT … FROM t WHERE id = $1": 3.0,
        f"{PLAN}SELECT … FROM t WHERE id = $1: Index Scan using t_pkey on t": 1.0,
        f"{ROWS}SELECT … FROM t WHERE id = $1": 1.0,
    }


ITEMS = REPO / "tests" / "fixtures" / "items_api"
SECRETS = {
    "ITEMS_TEST_SECRET": "k3y-for-signing-4e5f6a",
    "BENCH_USER": "bench",
    "BENCH_PASSWORD": "pw-3b2a1c0d9e",
}
# rows of someone else's, so a lookup without its index reads the whole table
BULK = (
    '    if engine.dialect.name == "postgresql":\n'
    "        db.execute(text(\"INSERT INTO items (title, owner) SELECT 'row ' || g, 'someone_else' "
    'FROM generate_series(1, 20000) g"))\n'
    '        db.execute(text("ANALYZE items"))\n'
)


def _git(repo: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t", *args], check=True
    )


@pytest.mark.slow
@pytest.mark.postgres
@pytest.mark.load_independent
@pytest.mark.timeout(1800)
def test_a_dropped_index_is_a_regression_of_the_database_buffers_naming_the_statement_and_plans(
    tmp_path: Path,
) -> None:
    from benchwatch.measure import database

    if database.server_bin() is None:
        pytest.skip("no PostgreSQL server binaries: benchwatch starts its own cluster here")
    repo = tmp_path / "repo"
    shutil.copytree(ITEMS, repo / "items_api", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(REPO / "stacks.toml", repo / "stacks.toml")
    (repo / "benchwatch.toml").write_text(
        '[benchwatch]\napps = ["items_api/postgres"]\ndefault_stacks = ["latest"]\n'
    )
    migrate = repo / "items_api" / "migrate.py"
    text = migrate.read_text()
    anchor = "    db.execute(text(\"INSERT INTO users VALUES ('someone_else', 'x')\"))\n"
    assert anchor in text
    migrate.write_text(text.replace(anchor, anchor + BULK))
    _git(repo, "init", "-q")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "items with 20,000 rows of someone else's")
    keyed = 'f"CREATE TABLE items (id {serial}, title TEXT NOT NULL, owner TEXT NOT NULL)"'
    assert keyed in migrate.read_text()
    migrate.write_text(
        migrate.read_text().replace(
            keyed,
            '"CREATE TABLE items (id SERIAL, title TEXT NOT NULL, owner TEXT NOT NULL)"'
            ' if engine.dialect.name == "postgresql" else ' + keyed,
        )
    )
    _git(repo, "commit", "-qam", "items without their primary key's index")
    environ = {
        k: v
        for k, v in os.environ.items()
        if k not in ("BENCHWATCH_ROOT", database.URL_ENV)  # a cluster of benchwatch's own
    }
    out = tmp_path / "out"
    command = [
        sys.executable,
        "-m",
        "benchwatch",
        "compare",
        "--base",
        "HEAD~1",
        "--head",
        "HEAD",
        "--quick",
        "--rounds",
        "2",
        "--no-micro",
        "--out",
        str(out),
    ]
    done = subprocess.run(
        command,
        cwd=repo,
        env={**environ, **SECRETS},
        capture_output=True,
        text=True,
        timeout=1700,
    )
    assert done.returncode == 1, done.stdout + done.stderr
    rows = json.loads((out / "compare.json").read_text())["rows"]
    buffers = {r["endpoint"]: r for r in rows if r["metric"] == "db_buffers_per_request"}
    assert set(buffers) == {"GET /items?limit={setup.seeded}", "GET /items/{item_id}"}
    lookup = buffers["GET /items/{item_id}"]
    assert lookup["verdict"] == "regression" and lookup["gating"], lookup
    base_value, head_value = lookup["base_value"], lookup["head_value"]
    assert head_value > 10 * base_value, (base_value, head_value)
    comment = (out / "comment.md").read_text()
    statement = "SELECT … FROM items WHERE id = $1"  # its column list shortened
    assert f"`{statement}`" in comment
    assert f"`{PLAN}{statement}: Index Scan using items_pkey on items` 1.00 → 0.00" in comment
    assert f"`{PLAN}{statement}: Seq Scan on items` 0.00 → 1.00" in comment
    # the work moved into the database, and the estimated cost weighs it: its database part grew
    # (buffers x the stored µs per buffer access), the server's instructions did not regress
    cost = _row(rows, "GET /items/{item_id}", "cost_us_per_request")
    assert cost["verdict"] == "regression" and cost["gating"], cost
    before, after = cost["detail"]["database buffers"]
    assert after > 10 * before, cost["detail"]
    assert _row(rows, "GET /items/{item_id}", "instructions_per_request")["verdict"] != "regression"
    weights = json.loads((out / "compare.json").read_text())["extra"]["cost_weights"]
    assert weights["db_us_per_buffer"] > 0
    assert "+ each database buffer per request" in comment
    secrets = (SECRETS["ITEMS_TEST_SECRET"], SECRETS["BENCH_PASSWORD"])
    assert not [s for s in secrets if s in comment + done.stdout + done.stderr]
    assert uvicorn_processes(str(repo)) == []
    # a no-op of the commit without the index (counts only: two rounds give timings no interval):
    # equal buffers on both sides, an unchanged cost
    noop = tmp_path / "noop"
    again = subprocess.run(
        [*command[:5], "HEAD", *command[6:-2], "--no-load", "--out", str(noop)],
        cwd=repo,
        env={**environ, **SECRETS},
        capture_output=True,
        text=True,
        timeout=1700,
    )
    assert again.returncode == 0, again.stdout + again.stderr
    rows = json.loads((noop / "compare.json").read_text())["rows"]
    quiet = _row(rows, "GET /items/{item_id}", "cost_us_per_request")
    assert quiet["verdict"] == "unchanged" and "database buffers" in quiet["detail"], quiet
    assert not [
        r for r in rows if r["metric"] == "db_buffers_per_request" and r["verdict"] != "unchanged"
    ]
    assert uvicorn_processes(str(repo)) == []


def _row(rows: list[dict], endpoint: str, metric: str) -> dict:
    found = [r for r in rows if r["endpoint"] == endpoint and r["metric"] == metric]
    assert len(found) == 1, found
    return found[0]


def _buffers_figures(per_phase: list[dict[str, StatementWork]]) -> list:
    """The database buffers figures of one endpoint whose strace phases ran these statements."""
    from test_counts import _counted

    from benchwatch.counts.all_targets import endpoint_figures
    from benchwatch.figures.metrics import DB_BUFFERS

    counted, endpoint = _counted([40_002_000] * 2, [{"read": 1000}] * 2, [0, 0])
    counted.database_plans = {}  # the database's work was read
    for phase, ran in zip(counted.syscall_phases, per_phase, strict=True):
        phase.database = ran
    figures, _ = endpoint_figures(counted, endpoint)
    return [f for f in figures if f.metric == DB_BUFFERS.key]


def test_every_endpoint_of_a_server_that_ran_a_statement_has_a_buffers_figure_zero_included() -> (
    None
):
    """As for statements: a server whose counted phases ran no statement has no figure; one that
    ran any has one for every endpoint, 0 included (a `SELECT 1` touches no page)."""
    assert _buffers_figures([{}, {}]) == []
    ping = {"1": StatementWork("SELECT $1", 1000, 1000, 0)}
    (found,) = _buffers_figures([ping, ping])
    assert found.samples == [0.0, 0.0] and found.value == 0.0


def _buffers_rows(base_samples: list[float], head_samples: list[float]) -> object:
    from test_gate import WEIGHTS, judged, load_figure

    from benchwatch.figures.metrics import DB_BUFFERS, Counted

    def side(samples: list[float]) -> list:
        return [load_figure("GET /items", DB_BUFFERS, samples, Counted())]

    rows = judged(side(base_samples), side(head_samples), None, WEIGHTS)
    return next(r for r in rows if r.metric == DB_BUFFERS.key)


def test_buffers_from_zero_are_judged_by_their_difference_and_zero_to_zero_is_quiet() -> None:
    """No ratio from 0: 0 → 0 is unchanged, 0 → 3 a regression (a page more than one per
    request), 0 → 0.5 (a statement every other request) unchanged; without a zero, the ratio."""
    row = _buffers_rows([0.0] * 3, [0.0] * 3)
    assert row.verdict == "unchanged" and row.text == "0 → 0 per request"  # type: ignore[attr-defined]
    row = _buffers_rows([0.0] * 3, [3.0] * 3)
    assert row.verdict == "regression" and row.text == "0 → 3 per request (+3)"  # type: ignore[attr-defined]
    row = _buffers_rows([3.0] * 3, [0.0] * 3)
    assert row.verdict == "improvement"  # type: ignore[attr-defined]
    assert _buffers_rows([0.0] * 3, [0.5] * 3).verdict == "unchanged"  # type: ignore[attr-defined]
    row = _buffers_rows([3.0] * 3, [147.0] * 3)
    assert row.verdict == "regression" and round(row.ratio, 6) == 49.0  # type: ignore[attr-defined]
