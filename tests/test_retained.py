"""Retained memory per request: the figure from the strace boot's phase readings, its verdict (a
difference in blocks per request, gating on its own), and how the comment names it."""

import pytest
from test_counts import _counted
from test_gate import comparison, judged, load_figure

from benchwatch.counts import retained
from benchwatch.counts.all_targets import endpoint_figures
from benchwatch.figures.metrics import COST, INSTRUCTIONS, RETAINED, SYSCALLS, Counted
from benchwatch.judge import gate
from benchwatch.judge.calibrate import Calibration
from benchwatch.judge.verdict import EXIT_OK, EXIT_REGRESSION, compare_figures
from benchwatch.report.comment import render
from benchwatch.report.headline import headline


def test_each_phase_retains_the_growth_between_its_boundary_readings_per_request():
    counted, endpoint = _counted([40_002_000] * 3, [{"read": 1000}] * 3, [0, 0, 0])
    # one reading before each phase and one after the last: 1000 requests per strace phase
    retained.set_growth(counted.syscall_phases, [50_000, 51_000, 52_003, 52_001])
    assert [p.retained_blocks for p in counted.syscall_phases] == [1000, 1003, -2]
    assert retained.per_request(counted.syscall_phases, endpoint) == [1.0, 1.003, -0.002]
    with pytest.raises(ValueError, match="want one more"):
        retained.set_growth(counted.syscall_phases, [1, 2, 3])


def test_the_retained_figure_comes_with_the_counts_and_names_its_phases():
    counted, endpoint = _counted([40_002_000] * 3, [{"read": 1000}] * 3, [0, 0, 0])
    retained.set_growth(counted.syscall_phases, [10, 10, 12, 10])
    figures, problems = endpoint_figures(counted, endpoint)
    assert problems == [] and [f.metric for f in figures] == [
        INSTRUCTIONS.key,
        SYSCALLS.key,
        RETAINED.key,
    ]
    kept = figures[2]
    assert kept.samples == [0.0, 0.002, -0.002] and kept.value == 0.0
    assert kept.unit == "blocks" and kept.name.endswith("seq retained/req")
    assert "(+0, +2, -2)" in kept.note


def test_no_reading_no_retained_figure():
    """A target counted without the readings (an old run): instructions and calls only."""
    counted, endpoint = _counted([40_002_000] * 2, [{"read": 1000}] * 2, [0, 0])
    figures, _ = endpoint_figures(counted, endpoint)
    assert [f.metric for f in figures] == [INSTRUCTIONS.key, SYSCALLS.key]


def _memory(endpoint, samples):
    return load_figure(endpoint, RETAINED, samples, Counted())


def _counts(endpoint):
    return [
        load_figure(endpoint, INSTRUCTIONS, [400_000.0] * 3, Counted()),
        load_figure(endpoint, SYSCALLS, [3.0] * 3, Counted(), {"read": 1.0, "write": 2.0}),
    ]


def test_a_leak_of_one_object_per_request_is_a_gating_regression_named_in_the_headline():
    base = [*_counts("POST /items"), _memory("POST /items", [0.0, 0.002, -0.002])]
    head = [*_counts("POST /items"), _memory("POST /items", [1.0, 1.002, 0.998])]
    rows = judged(base, head, None)
    by = {r.metric: r for r in rows}
    row = by[RETAINED.key]
    assert row.verdict == "regression" and row.gating and gate.is_count(row)
    assert row.ratio is None  # a difference, not a ratio: base is 0
    assert row.floor == RETAINED.default_floor and row.floor_source == "default"
    assert row.text == (
        "retained memory 0 → 1.0 blocks per request (a leak: grows with requests) [+1.00, +1.00]"
    )
    assert by[COST.key].verdict == "unchanged"  # a leak is not CPU: it gates on its own
    assert gate.to_confirm(rows) == []  # a count: never measured again by timing rounds
    result = comparison(rows)
    assert result.exit_code() == EXIT_REGRESSION
    assert headline(result).startswith(
        "`POST /items`: retained memory 0 → 1.0 blocks per request (a leak: grows with requests); "
        "estimated cost per request: 0 higher"
    )
    comment = render(result)
    assert "hello POST /items seq retained_blocks_per_request (gate)" in comment
    assert "| 0.5 blocks/req (default) |" in comment


def test_a_no_op_and_a_small_or_overlapping_change_stay_quiet():
    same = [0.0, 0.004, -0.003]
    rows, _ = compare_figures([_memory("GET /", same)], [_memory("GET /", same[::-1])], None)
    assert rows[0].verdict == "unchanged" and comparison(rows).exit_code() == EXIT_OK
    # past zero but under the floor (a cache that holds 0.2 blocks more per request)
    rows, _ = compare_figures([_memory("GET /", same)], [_memory("GET /", [0.2, 0.2, 0.21])], None)
    assert rows[0].verdict == "unchanged"
    # one phase that filled a cache: the ranges overlap, the medians agree
    rows, _ = compare_figures([_memory("GET /", same)], [_memory("GET /", [3.0, 0.0, 0.0])], None)
    assert rows[0].verdict == "unchanged"


def test_a_fixed_leak_is_an_improvement_and_an_endpoint_floor_of_its_own_is_used():
    label = "hello GET / seq retained_blocks_per_request"
    cal = Calibration(
        floors={},
        method="test",
        rounds=0,
        compare_rounds=0,
        date="2026-11-28",
        detail={RETAINED.key: {label: 2.0}},
    )
    rows, _ = compare_figures(
        [_memory("GET /", [3.0, 3.0, 3.0])], [_memory("GET /", [0.0, 0.0, 0.0])], None
    )
    assert rows[0].verdict == "improvement" and "(a leak" not in rows[0].text
    rows, _ = compare_figures([_memory("GET /", [0.0] * 3)], [_memory("GET /", [1.5] * 3)], cal)
    assert rows[0].verdict == "unchanged" and rows[0].floor == 2.0
