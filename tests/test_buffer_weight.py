"""The database's work in the estimated cost: a µs per PostgreSQL buffer access measured on real
PostgreSQL (scripts/buffer_weight.py, stored in counts/buffer_weight.json), buffers x that weight
added to an endpoint's cost, equal buffers quiet, a dropped index moving the cost, and apps without
a database weighed exactly as before."""

import json

import pytest
from test_cost import by_metric, counts
from test_gate import WEIGHTS, comparison, judged, load_figure

from benchwatch.counts import buffer_weight
from benchwatch.counts.cost import DATABASE_PART, NOTE, cost_figures, with_database
from benchwatch.figures.metrics import COST, DB_BUFFERS, Counted
from benchwatch.judge.verdict import EXIT_OK, EXIT_REGRESSION
from benchwatch.report.comment import render

CALLS = {"read": 1.0, "write": 2.0, "sendto": 2.0, "recvfrom": 2.0}


def on_postgres(instructions, buffers):
    """One endpoint's counts and its database buffers per request (one sample per phase)."""
    return [
        *counts("GET /items/1", instructions, CALLS),
        load_figure(
            "GET /items/1", DB_BUFFERS, buffers, Counted(), {"SELECT … FROM items": buffers[0]}
        ),
    ]


def plan_json(hit, read, ms):
    return json.dumps(
        [
            {
                "Plan": {
                    "Node Type": "Seq Scan",
                    "Shared Hit Blocks": hit,
                    "Shared Read Blocks": read,
                },
                "Execution Time": ms,
            }
        ],
        indent=2,
    )


def test_the_plans_psql_prints_are_read_as_buffers_and_microseconds():
    text = "\n".join([plan_json(3, 0, 0.011), plan_json(300, 19, 1.5)]) + "\n"
    assert buffer_weight.parse_plans(text) == [
        (3, pytest.approx(11.0)),
        (319, pytest.approx(1500.0)),
    ]


def test_the_weight_is_the_lookups_slope_and_the_scans_slope_is_kept_beside_it():
    statements = [("scan", "s1"), ("scan", "s2"), ("lookup", "l1"), ("lookup", "l2")]
    # warm round, then two timed rounds: the fastest of each statement is kept
    plans = [(10, 999.0), (50, 999.0), (3, 99.0), (300, 999.0)]
    plans += [(10, 60.0), (50, 300.0), (3, 12.0), (300, 111.0)]
    plans += [(10, 61.0), (50, 301.0), (3, 11.5), (300, 110.5)]
    shapes = buffer_weight.shapes_of(statements, plans)
    assert [(s.buffers, s.fastest_us) for s in shapes] == [
        (10, 60.0),
        (50, 300.0),
        (3, 11.5),
        (300, 110.5),
    ]
    found = buffer_weight.weight_from(shapes, "the command", "15.18")
    assert found.us_per_buffer == pytest.approx((110.5 - 11.5) / 297, abs=1e-5)
    assert found.scan_us_per_buffer == pytest.approx(6.0)
    assert found.r_squared == 1.0 and found.command == "the command"


def test_a_statement_whose_buffers_move_between_rounds_is_refused():
    with pytest.raises(ValueError, match="moved between rounds"):
        buffer_weight.shapes_of([("scan", "s")], [(10, 1.0), (10, 1.0), (11, 1.0)])


def test_the_stored_weight_says_when_how_and_where_it_was_measured():
    found = buffer_weight.stored()
    assert 0 < found.us_per_buffer < found.scan_us_per_buffer
    assert found.measured.startswith("20") and "scripts/buffer_weight.py" in found.command
    assert (
        found.postgres and found.machine and {s.family for s in found.shapes} == {"lookup", "scan"}
    )


def test_an_endpoint_on_postgresql_costs_its_buffers_times_the_stored_weight():
    figures = on_postgres([400_000.0, 401_000.0, 402_000.0], [147.0, 147.0, 147.0])
    (cost,) = cost_figures(figures, WEIGHTS)
    weight = buffer_weight.stored().us_per_buffer
    assert cost.detail[DATABASE_PART] == pytest.approx(147 * weight, abs=1e-4)
    # instructions 40.1 µs, own calls 1 + 4 + 2 + 2 µs, then the database
    assert cost.value == pytest.approx(40.1 + 9.0 + 147 * weight)
    assert "database buffers" in cost.note
    assert with_database(WEIGHTS, figures).db_us_per_buffer == weight


def test_without_database_buffers_the_cost_and_the_weights_are_as_before():
    figures = counts("GET /", [400_000.0, 401_000.0, 402_000.0], CALLS)
    (cost,) = cost_figures(figures, WEIGHTS)
    assert DATABASE_PART not in cost.detail and cost.note == NOTE
    assert with_database(WEIGHTS, figures) is WEIGHTS
    assert "db_us_per_buffer" not in WEIGHTS.model_dump(mode="json")
    text = render(comparison(judged(figures, figures, None)))
    assert "database" not in text


def test_equal_buffers_on_both_sides_keep_the_cost_unchanged():
    base = on_postgres([400_000.0, 400_100.0, 400_200.0], [147.0, 147.0, 147.0])
    head = on_postgres([400_050.0, 400_150.0, 400_100.0], [147.0, 147.0, 147.0])
    rows = by_metric(judged(base, head, None))
    assert rows[COST.key].verdict == "unchanged"
    assert rows[DB_BUFFERS.key].verdict == "unchanged"
    assert comparison(list(rows.values())).exit_code() == EXIT_OK


def test_a_dropped_index_moves_the_cost_as_well_as_the_buffers_and_the_comment_says_what_it_weighs():
    """3 → 147 buffers per request (a primary key dropped) on the same server instructions."""
    base = on_postgres([400_000.0, 400_100.0, 400_200.0], [3.0, 3.0, 3.0])
    head = on_postgres([400_050.0, 400_150.0, 400_100.0], [147.0, 147.0, 147.0])
    rows = by_metric(judged(base, head, None, with_database(WEIGHTS, base + head)))
    cost = rows[COST.key]
    assert cost.verdict == "regression" and cost.gating
    assert cost.detail[DATABASE_PART][1] > cost.detail[DATABASE_PART][0]
    assert rows[DB_BUFFERS.key].verdict == "regression"
    result = comparison(list(rows.values()))
    result.extra.cost.weights = with_database(WEIGHTS, base + head)
    assert result.exit_code() == EXIT_REGRESSION
    text = render(result)
    assert "+ each database buffer per request" in text and "scripts/buffer_weight.py" in text
    assert f"`{DATABASE_PART}`" in text  # the part that moved, under the cost's row


def test_the_cost_floor_takes_the_buffers_floor_for_the_database_share():
    """A cost that is mostly database work is judged against the buffers' 10 % floor in proportion."""
    base = on_postgres([10_000.0, 10_000.0, 10_000.0], [1000.0, 1000.0, 1000.0])
    rows = by_metric(judged(base, base, None, with_database(WEIGHTS, base)))
    cost = rows[COST.key]
    weight = buffer_weight.stored().us_per_buffer
    d = 1000 * weight / (1.0 + 9.0 + 1000 * weight)
    assert cost.floor == pytest.approx(
        (1.0 / cost.base_value) * 0.005
        + (9.0 / cost.base_value) * 0.02
        + d * DB_BUFFERS.default_floor,
        rel=1e-3,
    )
