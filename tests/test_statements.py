"""SQL statements per request: their normalization, the harness's tally (in a real Python process
over its socket), the per-phase figures, their verdict (a floor in statements per request, zero
included) and the comment line that names what moved."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from collections import Counter
from pathlib import Path

import pytest
from test_cost import counts
from test_gate import WEIGHTS, comparison, judged, load_figure

from benchwatch.counts.all_targets import endpoint_figures
from benchwatch.counts.harness_control import HARNESS_DIR, STATEMENTS_ENV, Harness
from benchwatch.counts.statements import (
    ELLIPSIS,
    MAX_TEXT,
    PhaseTally,
    Reading,
    StatementsUnreadable,
    normalize,
    per_request,
    read_answer,
)
from benchwatch.figures.metrics import COST, STATEMENTS, Counted
from benchwatch.judge.calibrate import count_floors
from benchwatch.judge.verdict import EXIT_OK, EXIT_REGRESSION
from benchwatch.report.comment import render

COMMENTS = "SELECT comment.id, comment.post_id, comment.body, comment.created_at FROM comment WHERE comment.post_id = ?"
POSTS = "SELECT post.id, post.title, post.body, post.created_at, post.is_published FROM post ORDER BY post.id DESC LIMIT ? OFFSET ?"


@pytest.mark.parametrize(
    ("raw", "grouped"),
    [
        ("select * from t where id = 1", "select * from t where id = ?"),
        (
            "select * from t where name = 'a''b' and x = 2.5e3",
            "select * from t where name = ? and x = ?",
        ),
        ("SELECT a FROM t WHERE a = %(a_1)s AND b = %s", "SELECT a FROM t WHERE a = ? AND b = ?"),
        (
            "SELECT a FROM t WHERE a = $1 AND b = :b AND c::int = $2",
            "SELECT a FROM t WHERE a = ? AND b = ? AND c::int = ?",
        ),
        ("SELECT a FROM t WHERE id IN (?, ?, ?)", "SELECT a FROM t WHERE id IN (?, …)"),
        (
            "SELECT a FROM t WHERE %(param_1)s::INTEGER = t.id AND b IN (%(b_1)s::VARCHAR(20), %(b_2)s::VARCHAR(20))",
            "SELECT a FROM t WHERE ? = t.id AND b IN (?, …)",
        ),
        (
            "SELECT a FROM t WHERE x = $1::timestamp without time zone",
            "SELECT a FROM t WHERE x = ?",
        ),
        ("SELECT a::text FROM t", "SELECT a::text FROM t"),
        ("SELECT a FROM t WHERE id IN (1, 2)", "SELECT a FROM t WHERE id IN (?, …)"),
        (
            "INSERT INTO t (a, b) VALUES (?, ?), (?, ?), (?, ?)",
            "INSERT INTO t (a, b) VALUES (?, …)",
        ),
        (
            "SELECT  t1.a,\n\t t2.b\nFROM t1 JOIN t2 ON t1.id = t2.id ;",
            "SELECT t1.a, t2.b FROM t1 JOIN t2 ON t1.id = t2.id",
        ),
        (COMMENTS, f"SELECT {ELLIPSIS} FROM comment WHERE comment.post_id = ?"),
        (
            "SELECT count(*) AS n, (SELECT max(x) FROM u) AS m, some_long_column_name, another_one FROM t",
            f"SELECT {ELLIPSIS} FROM t",
        ),
        (
            "INSERT INTO post (title, body, created_at, is_published, author_id) VALUES (?, ?, ?, ?, ?)",
            f"INSERT INTO post ({ELLIPSIS}) VALUES (?, …)",
        ),
        (
            "UPDATE post SET title=?, body=?, created_at=?, is_published=?, author_id=? WHERE post.id = ?",
            f"UPDATE post SET {ELLIPSIS} WHERE post.id = ?",
        ),
    ],
)
def test_a_statement_is_grouped_by_its_text_without_literals_markers_or_long_lists(raw, grouped):
    assert normalize(raw) == grouped


def test_a_long_statement_is_cut_to_its_first_characters():
    found = normalize("SELECT a FROM t WHERE " + " AND ".join(f"c{i} = ?" for i in range(80)))
    assert len(found) == MAX_TEXT and found.endswith(ELLIPSIS)
    assert found.startswith("SELECT a FROM t WHERE c0 = ? AND c1 = ?")


def test_the_harness_answer_is_read_with_its_texts_grouped_and_anything_else_refused():
    found = read_answer(
        b'{"ever": 12, "statements": {"select * from t where id = 1": 2, "select * from t where id = 2": 3}}'
    )
    assert found == Reading(12, Counter({"select * from t where id = ?": 5}))
    assert read_answer(b"-") is None  # the callgrind boot: not tallied
    with pytest.raises(StatementsUnreadable):
        read_answer(b'{"ever": "x"}')


def _phases(statements_per_phase, requests=10):
    """Strace phases of one endpoint, their tallies assigned as the client assigns them."""
    from test_counts import _counted

    counted, endpoint = _counted(
        [40_002_000] * len(statements_per_phase),
        [{"read": requests * 100}] * len(statements_per_phase),
        [0] * len(statements_per_phase),
    )
    for phase in counted.syscall_phases:
        phase.requests = requests
    return counted, endpoint


def test_each_phase_gets_the_reading_taken_after_it_and_the_warm_up_is_left_out():
    counted, endpoint = _phases([0, 0])
    tally = PhaseTally(
        [
            Reading(500, Counter({"warm-up": 400})),
            Reading(520, Counter({POSTS: 10, COMMENTS: 1000})),
            Reading(540, Counter({POSTS: 10, COMMENTS: 1000})),
        ]
    )
    tally.assign(counted.syscall_phases)
    (instructions, syscalls, statements), problems = endpoint_figures(counted, endpoint)
    assert problems == [] and statements.metric == STATEMENTS.key
    assert statements.samples == [101.0, 101.0] and statements.value == 101.0
    assert statements.detail == {COMMENTS: 100.0, POSTS: 1.0}
    assert statements.params == Counted().params() and statements.unit == "statements"


def test_a_server_that_sent_no_statement_has_no_statements_figure_and_a_quiet_endpoint_a_zero():
    counted, endpoint = _phases([0, 0])
    PhaseTally([Reading(0, Counter())] * 3).assign(counted.syscall_phases)
    assert len(endpoint_figures(counted, endpoint)[0]) == 2  # no database: no third figure
    counted, endpoint = _phases([0, 0])
    PhaseTally([Reading(7, Counter())] * 3).assign(
        counted.syscall_phases
    )  # statements at boot only
    found = per_request(counted.syscall_phases, endpoint)
    assert found is not None and found.samples == [0.0, 0.0] and found.detail == {}
    counted, endpoint = _phases([0, 0])
    PhaseTally([None, None, None]).assign(counted.syscall_phases)  # a harness that does not tally
    assert per_request(counted.syscall_phases, endpoint) is None


def _statements(endpoint, per_phase, detail):
    return load_figure(endpoint, STATEMENTS, per_phase, Counted(), detail)


def _sides(base_detail, head_detail, base_samples, head_samples):
    base = counts("GET /posts", [400_000.0] * 3, {"read": 1.0}) + [
        _statements("GET /posts", base_samples, base_detail)
    ]
    head = counts("GET /posts", [400_000.0] * 3, {"read": 1.0}) + [
        _statements("GET /posts", head_samples, head_detail)
    ]
    return base, head


def test_an_n_plus_one_is_a_gating_regression_named_by_its_statement_in_the_comment():
    base, head = _sides(
        {"SELECT … FROM post ORDER BY post.id DESC LIMIT ? OFFSET ?": 1.0},
        {
            "SELECT … FROM post ORDER BY post.id DESC LIMIT ? OFFSET ?": 1.0,
            "SELECT … FROM comment WHERE comment.post_id = ?": 100.0,
        },
        [1.0] * 3,
        [101.0] * 3,
    )
    rows = judged(base, head, None, WEIGHTS)
    row = next(r for r in rows if r.metric == STATEMENTS.key)
    assert row.verdict == "regression" and row.gating and row.floor == STATEMENTS.default_floor
    assert row.text == "1 → 101 per request (+100)"
    assert next(r for r in rows if r.metric == COST.key).verdict == "unchanged"  # not in the cost
    found = comparison(rows)
    assert found.exit_code() == EXIT_REGRESSION
    comment = render(found)
    assert (
        "- `GET /posts` (hello): statements 1 → 101 per request (+100): "
        "`SELECT … FROM comment WHERE comment.post_id = ?` ×100 (new)" in comment
    )
    assert "0.5/request (default)" in comment  # its floor, in statements
    assert "## benchwatch: SQL statements per request 1 → 101 (hello GET /posts);" in comment


def test_the_same_statements_are_quiet_and_a_fraction_under_the_floor_too():
    same = {"SELECT … FROM post": 1.0}
    rows = judged(*_sides(same, same, [1.0] * 3, [1.0] * 3), None, WEIGHTS)
    assert next(r for r in rows if r.metric == STATEMENTS.key).verdict == "unchanged"
    assert comparison(rows).exit_code() == EXIT_OK
    # a statement every third request more, every phase apart: under half a statement per request
    rows = judged(*_sides(same, same, [1.0] * 3, [1.333] * 3), None, WEIGHTS)
    assert next(r for r in rows if r.metric == STATEMENTS.key).verdict == "unchanged"


def test_an_endpoint_that_starts_to_query_is_a_regression_from_zero_and_one_that_stops_an_improvement():
    rows = judged(*_sides({}, {"SELECT … FROM post": 1.0}, [0.0] * 3, [1.0] * 3), None, WEIGHTS)
    row = next(r for r in rows if r.metric == STATEMENTS.key)
    assert (
        row.verdict == "regression" and row.ratio is None and row.text == "0 → 1 per request (+1)"
    )
    rows = judged(*_sides({"SELECT … FROM post": 2.0}, {}, [2.0] * 3, [0.0] * 3), None, WEIGHTS)
    row = next(r for r in rows if r.metric == STATEMENTS.key)
    assert row.verdict == "improvement" and "`SELECT … FROM post` ×2 (gone)" in render(
        comparison(rows)
    )


def test_phases_that_overlap_are_no_change_even_when_their_medians_differ():
    rows = judged(*_sides({}, {}, [1.0, 1.0, 3.0], [1.0, 3.0, 3.0]), None, WEIGHTS)
    assert next(r for r in rows if r.metric == STATEMENTS.key).verdict == "unchanged"


def test_an_aa_gives_a_statements_floor_in_statements_at_least_the_default():
    base, head = _sides({}, {}, [1.0, 1.0, 1.0], [1.0, 1.0, 1.0])
    rows = judged(base, head, None, WEIGHTS)
    assert count_floors(rows)[STATEMENTS.key] == {
        "hello GET /posts seq statements_per_request": 0.5
    }
    base, head = _sides({}, {}, [1.0, 1.5, 1.0], [1.0, 1.0, 1.2])
    rows = judged(base, head, None, WEIGHTS)
    assert count_floors(rows)[STATEMENTS.key]["hello GET /posts seq statements_per_request"] == 1.0


HARNESSED = textwrap.dedent(
    """
    import sqlite3, sys, time
    assert "sqlalchemy" not in sys.modules  # the hooks import no driver or ORM the app does not
    connection = sqlite3.connect(":memory:")
    connection.execute("create table t (id integer primary key, name text)")
    for i in range(3):
        connection.execute("insert into t (name) values (?)", (f"n{i}",))
    print("ready", flush=True)
    sys.stdin.readline()
    list(connection.execute("select name from t where id = 2"))
    print("queried", flush=True)
    sys.stdin.readline()
    """
)


@pytest.mark.parametrize("tallied", [True, False])
def test_a_real_process_tallies_its_sqlite_statements_between_two_readings(tmp_path: Path, tallied):
    """The harness as a server loads it (sitecustomize on PYTHONPATH), over its socket: a reading
    holds what was sent since the last one; a process not asked to tally answers `-`."""
    harness = Harness()
    environ = {
        **{k: v for k, v in os.environ.items() if not k.startswith("BENCHWATCH_")},
        **harness.environ(),
        **({STATEMENTS_ENV: "1"} if tallied else {}),
    }
    assert harness.environ()["PYTHONPATH"] == str(HARNESS_DIR)
    script = tmp_path / "app.py"
    script.write_text(HARNESSED)
    process = subprocess.Popen(
        [sys.executable, str(script)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=environ,
    )
    try:
        assert process.stdout is not None and process.stdin is not None
        assert process.stdout.readline().strip() == "ready"
        harness.connect()
        first = read_answer(harness.statements())
        process.stdin.write("\n")
        process.stdin.flush()
        assert process.stdout.readline().strip() == "queried"
        second = read_answer(harness.statements())
        if not tallied:
            assert first is None and second is None
            return
        assert first is not None and second is not None
        assert first.statements == Counter(
            {
                "create table t (id integer primary key, name text)": 1,
                "insert into t (name) values (?)": 3,
                "BEGIN": 1,  # the sqlite3 module's own, which SQLite runs too
            }
        )
        assert second == Reading(6, Counter({"select name from t where id = ?": 1}))
    finally:
        harness.close()
        process.stdin.close()  # type: ignore[union-attr]
        process.wait(timeout=30)


FAKE_PSYCOPG = textwrap.dedent(
    """
    class Cursor:
        def execute(self, query, params=None):
            return "ran"

        def executemany(self, query, params):
            return "ran many"


    class AsyncCursor:
        async def execute(self, query, params=None):
            return "ran"
    """
)
USES_PSYCOPG = textwrap.dedent(
    """
    import asyncio, sys
    import benchwatch_statements as hooks
    hooks.install()
    assert "psycopg" not in sys.modules
    import psycopg  # imported after the hooks: watched as it loads
    cursor = psycopg.Cursor()
    assert cursor.execute("select 1 where a = %s", (1,)) == "ran"
    cursor.executemany("insert into t values (%s)", [(1,), (2,)])
    # what SQLAlchemy hands to the driver it has seen already: not counted twice
    exec("cursor.execute('select from_sqlalchemy')", {"__name__": "sqlalchemy.engine.default", "cursor": cursor})
    assert asyncio.run(psycopg.AsyncCursor().execute("select 2")) == "ran"
    assert "sqlalchemy" not in sys.modules and "sqlite3" not in sys.modules
    sys.stdout.write(hooks.TALLY.answer().decode())
    """
)


def test_psycopg_used_directly_is_counted_and_what_sqlalchemy_sends_through_it_is_not(
    tmp_path: Path,
):
    """The hook on psycopg's cursor classes (here a stand-in package with the same names): its
    module watched as the app imports it, every execute counted once, SQLAlchemy's left to its own
    listener."""
    (tmp_path / "psycopg").mkdir()
    (tmp_path / "psycopg" / "__init__.py").write_text(FAKE_PSYCOPG)
    environ = {k: v for k, v in os.environ.items() if not k.startswith("BENCHWATCH_")}
    environ["PYTHONPATH"] = os.pathsep.join([str(HARNESS_DIR), str(tmp_path)])
    done = subprocess.run(
        [sys.executable, "-c", USES_PSYCOPG],
        capture_output=True,
        text=True,
        env=environ,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert read_answer(done.stdout.strip().encode()) == Reading(
        3,
        Counter(
            {"select ? where a = ?": 1, "insert into t values (?)": 1, "select ?": 1},
        ),
    )
