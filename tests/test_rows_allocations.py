"""Shown, never judged (issue 40, items 1 and 4): the rows each statement returned per request
(PostgreSQL's pg_stat_statements, in the database buffers figure's detail) and the calls into
CPython's object allocator per request (callgrind's phase files, in retained memory's detail).
Fast: a callgrind snippet, pg_stat_statements differences, the figures, the comment."""

from __future__ import annotations

from pathlib import Path

from test_counts import _counted
from test_gate import comparison, judged, load_figure

from benchwatch.counts.all_targets import endpoint_figures
from benchwatch.counts.allocations import ALLOCATIONS, allocations
from benchwatch.counts.database_work import ROWS, per_request, split_rows
from benchwatch.counts.target_counts import Phase
from benchwatch.figures.metrics import DB_BUFFERS, INSTRUCTIONS, RETAINED, SYSCALLS, Counted
from benchwatch.judge.verdict import EXIT_OK, EXIT_REGRESSION
from benchwatch.measure.database_work import StatementWork, difference
from benchwatch.report.comment import render

# as callgrind writes it: names compressed to `(id)` after their first use, a name first given by
# `fn=` and later called by its id, a recursion level (`'2`), wrappers that are not the allocator
SNIPPET = """# callgrind format
version: 1
positions: line
events: Ir
summary: 5000

ob=(1) /usr/bin/python3.11
fl=(1) ???
fn=(10) _PyObject_Malloc
0 40
fn=(11) PyObject_Malloc
0 5
cfn=(10)
calls=300 0
0 12000
fn=(12) _PyLong_New
0 7
cfn=(10)
calls=25 0
0 1000
cfn=(13) _PyObject_Calloc
calls=4 0
0 200
cfn=(14) _PyObject_Realloc
calls=9 0
0 300
fn=(15) PyMem_Malloc
0 3
cfn=(16) _PyObject_Malloc'2
calls=2 0
0 80
fn=(17) tuple_alloc
cfn=(11)
calls=300 0
0 12300
cfn=(18) malloc
calls=7 0
0 700
"""


def test_the_allocations_of_a_phase_are_the_calls_into_pymalloc_not_its_wrappers(
    tmp_path: Path,
) -> None:
    path = tmp_path / "callgrind.out.7"
    path.write_text(SNIPPET)
    # 300 + 25 into _PyObject_Malloc, 4 into _PyObject_Calloc, 2 at a recursion level: 331; the
    # wrapper's 300 (PyObject_Malloc), the realloc and glibc's malloc are not counted
    assert allocations(path) == 331


def test_allocations_per_request_take_off_the_idle_window_as_instructions_do() -> None:
    counted, endpoint = _counted([40_002_000, 40_002_000], [{"read": 1000}] * 2, [0, 0])
    for phase, made in zip(counted.instruction_phases, (31_030, 31_130), strict=True):
        phase.allocations = made
    assert counted.allocations(endpoint) == []  # the idle pause not read: nothing said
    counted.idle_allocations = 72
    counted.idle_window_instructions = 108_000.0
    for phase in counted.instruction_phases:
        phase.ticks = 0  # the timer quiet: the idle window's own calls come off whole
    assert counted.allocations(endpoint) == [(31_030 - 72) / 100, (31_130 - 72) / 100]
    # timer ticks in a phase: the idle pause's calls per tick, as for its instructions
    counted.idle_instructions_per_tick = 27_000.0  # so 18 allocations a tick
    counted.instruction_phases[1].ticks = 2
    assert counted.allocations(endpoint)[1] == (31_130 - 36) / 100


def test_allocations_go_in_the_retained_figures_detail_and_no_other_figure_changes() -> None:
    counted, endpoint = _counted([40_002_000] * 3, [{"read": 1000}] * 3, [0, 0, 0])
    counted.memory_phases = [Phase(endpoint, r, 1000, 1.0, retained_blocks=0) for r in range(3)]
    before, _ = endpoint_figures(counted, endpoint)
    counted.idle_window_instructions = 2_000.0
    counted.idle_allocations = 0
    for phase, made in zip(counted.instruction_phases, (30_000, 30_100, 29_900), strict=True):
        phase.allocations, phase.ticks = made, 0
    after, _ = endpoint_figures(counted, endpoint)
    by = {f.metric: f for f in after}
    assert by[RETAINED.key].detail == {ALLOCATIONS: 300.0}  # the median per request
    assert [f for f in after if f.metric != RETAINED.key] == before[:2]
    assert by[RETAINED.key].model_copy(update={"detail": {}}) == before[2]
    assert {f.metric: f.detail for f in before}[INSTRUCTIONS.key] == {}


def _retained(samples: list[float], made: float) -> list:
    return [
        load_figure("GET /", INSTRUCTIONS, [400_000.0] * 3, Counted()),
        load_figure("GET /", SYSCALLS, [3.0] * 3, Counted(), {"read": 1.0, "write": 2.0}),
        load_figure("GET /", RETAINED, samples, Counted(), {ALLOCATIONS: made}),
    ]


def test_allocations_are_shown_under_a_leak_and_never_judged() -> None:
    # a leak: allocations shown under the retained row as its mechanism
    rows = judged(_retained([0.0] * 3, 309.58), _retained([1.0] * 3, 310.58), None)
    result = comparison(rows)
    assert result.exit_code() == EXIT_REGRESSION
    assert "| | ↳ per request: `allocations` 309.58 → 310.58 | | | | |" in render(result)
    # allocations that move with retained memory unchanged: no verdict, nothing in the comment
    rows = judged(_retained([0.0] * 3, 309.58), _retained([0.0] * 3, 900.0), None)
    result = comparison(rows)
    assert result.exit_code() == EXIT_OK and not any(r.significant for r in rows)
    assert "allocations" not in render(result)


def _statement(query: str, calls: int, rows: int, buffers: int) -> StatementWork:
    return StatementWork(query, calls, rows, buffers)


def test_rows_per_request_by_statement_come_from_pg_stat_statements_differences() -> None:
    lookup = "SELECT items.id, items.title FROM items WHERE items.owner = $1"
    before = {"7": _statement(lookup, 100, 1_000, 300)}
    after = {"7": _statement(lookup, 110, 11_000, 330), "8": _statement("SELECT $1", 10, 10, 0)}
    total, detail = per_request(difference(before, after), 10, {})
    assert total == 3.0  # the buffers: unchanged by the rows beside them
    buffers, rows = split_rows(detail)
    assert rows == {"SELECT … FROM items WHERE items.owner = $1": 1000.0, "SELECT $1": 1.0}
    assert buffers == {"SELECT … FROM items WHERE items.owner = $1": 3.0, "SELECT $1": 0.0}


def _database(buffers: float, rows: float) -> list:
    text = "SELECT … FROM items WHERE items.owner = $1"
    detail = {text: buffers, f"{ROWS}{text}": rows}
    return [load_figure("GET /items", DB_BUFFERS, [buffers] * 3, Counted(), detail)]


def test_rows_are_shown_on_a_line_of_their_own_under_a_changed_buffers_row() -> None:
    rows = judged(_database(3.0, 10.0), _database(147.0, 1000.0), None)
    comment = render(comparison(rows))
    lines = comment.splitlines()
    at = next(i for i, line in enumerate(lines) if "db_buffers_per_request (gate) |" in line)
    assert lines[at + 1] == (
        "| | ↳ per request: `SELECT … FROM items WHERE items.owner = $1` 3.00 → 147.00 | | | | |"
    )
    assert lines[at + 2] == (
        "| | ↳ rows per request: `SELECT … FROM items WHERE items.owner = $1` 10 → 1000 | | | | |"
    )
    # rows that moved with the buffers unchanged: no verdict of their own, nothing shown
    rows = judged(_database(3.0, 10.0), _database(3.0, 1000.0), None)
    assert not any(r.significant for r in rows)
    assert "rows per request" not in render(comparison(rows))


def test_an_over_fetch_shows_its_rows_and_allocations_under_the_instructions_it_cost() -> None:
    """A read that fetches 100 rows more and answers the same (measured on posts_pg: buffers 29 →
    31, under their floor; instructions 1.30x): the rows and allocations that explain the
    instructions are shown under them, though their own rows are unchanged."""
    text = "SELECT … FROM posts ORDER BY posts.id DESC LIMIT $1::INTEGER"

    def side(instructions: float, buffers: float, rows: float, made: float) -> list:
        return [
            load_figure("GET /posts", INSTRUCTIONS, [instructions] * 3, Counted()),
            load_figure("GET /posts", SYSCALLS, [18.0] * 3, Counted(), {"read": 5.0}),
            load_figure("GET /posts", RETAINED, [0.0] * 3, Counted(), {ALLOCATIONS: made}),
            load_figure(
                "GET /posts",
                DB_BUFFERS,
                [buffers] * 3,
                Counted(),
                {text: buffers, f"{ROWS}{text}": rows},
            ),
        ]

    rows = judged(side(1.12e7, 29.0, 100.0, 6128.0), side(1.45e7, 31.0, 200.0, 8085.5), None)
    by = {r.metric: r for r in rows}
    assert by[INSTRUCTIONS.key].significant and not by[DB_BUFFERS.key].significant
    lines = render(comparison(rows)).splitlines()
    at = next(i for i, line in enumerate(lines) if "instructions_per_request |" in line)
    assert lines[at + 1 : at + 3] == [
        f"| | ↳ rows per request: `{text}` 100 → 200 | | | | |",
        "| | ↳ allocations per request: 6128 → 8085.5 | | | | |",
    ]
    # the same counts with the instructions unchanged: nothing shown of either
    rows = judged(side(1.12e7, 29.0, 100.0, 6128.0), side(1.12e7, 31.0, 200.0, 8085.5), None)
    shown = render(comparison(rows))
    assert "rows per request" not in shown and "allocations" not in shown
