"""Retained memory per request: the figure from the strace boot's phase readings, its verdict (a
difference in blocks per request, gating on its own), and how the comment names it."""

import json

import pytest
from conftest import REPO, benchwatch
from test_counts import _counted
from test_gate import comparison, judged, load_figure

from benchwatch.counts import retained
from benchwatch.counts.all_targets import endpoint_figures
from benchwatch.counts.target_counts import Phase
from benchwatch.figures.metrics import COST, INSTRUCTIONS, RETAINED, SYSCALLS, Counted
from benchwatch.judge import gate
from benchwatch.judge.calibrate import Calibration
from benchwatch.judge.verdict import EXIT_OK, EXIT_REGRESSION, compare_figures
from benchwatch.report.comment import render
from benchwatch.report.headline import headline


def _segments(endpoint, growth, size=1000):
    return [Phase(endpoint, r, size, 1.0, retained_blocks=g) for r, g in enumerate(growth)]


def test_the_retained_figure_is_each_segments_growth_per_request_and_names_them():
    counted, endpoint = _counted([40_002_000] * 3, [{"read": 1000}] * 3, [0, 0, 0])
    counted.memory_phases = _segments(endpoint, [0, 2, -2])
    figures, problems = endpoint_figures(counted, endpoint)
    assert problems == [] and [f.metric for f in figures] == [
        INSTRUCTIONS.key,
        SYSCALLS.key,
        RETAINED.key,
    ]
    kept = figures[2]
    assert kept.samples == [0.0, 0.002, -0.002] and kept.value == 0.0
    assert kept.unit == "blocks" and kept.name.endswith("seq retained/req")
    assert "3 segments of 1000 requests (+0, +2, -2)" in kept.note


def test_segments_last_about_as_long_as_their_endpoints_requests_allow():
    counted, endpoint = _counted([40_002_000] * 2, [{"read": 1000}] * 2, [0, 0])
    phases = counted.syscall_phases  # 1000 requests in 3 s each: 3 ms a request
    for p in phases:
        p.seconds = 0.5  # 0.5 ms a request
    assert retained.segment_size(phases, endpoint) == retained.SEGMENT_MAX
    for p in phases:
        p.seconds = 20.0  # 20 ms a request
    assert retained.segment_size(phases, endpoint) == int(retained.SEGMENT_S / 0.02)
    for p in phases:
        p.seconds = 1000.0  # a heavy endpoint: a second a request
    assert retained.segment_size(phases, endpoint) == retained.SEGMENT_MIN


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


def test_an_endpoint_whose_segments_swing_is_judged_against_its_swing():
    """posts' read, five segments of 50 requests in one boot (docs/counts.md): three of them on
    each side, apart by chance, are no leak; one object kept per request on hello's steady
    segments is."""
    segments = [2.24, 4.96, -3.38, -0.2, -2.06]
    base, head = [-3.38, -2.06, -0.2], [2.24, 4.96, 2.5]
    rows, _ = compare_figures([_memory("GET /", base)], [_memory("GET /", head)], None)
    assert rows[0].verdict == "unchanged", rows[0].text
    rows, _ = compare_figures(
        [_memory("GET /", segments)], [_memory("GET /", [s + 20.0 for s in segments])], None
    )
    assert rows[0].verdict == "regression"  # past twice its swing (8.3 blocks per request)
    rows, _ = compare_figures(
        [_memory("GET /", segments)], [_memory("GET /", [s + 1.0 for s in segments])], None
    )
    assert rows[0].verdict == "unchanged"  # a leak smaller than the swing is not seen there


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


def _compare_hello(out, *inject):
    return benchwatch(
        "compare",
        "--base",
        "latest",
        "--head",
        "latest",
        "-k",
        "hello@latest",
        "--quick",
        "--no-load",
        "--no-micro",
        "--out",
        str(out),
        "-q",
        *inject,
        root=REPO,
        timeout=1500,
    )


@pytest.mark.slow
@pytest.mark.load_independent
def test_real_compare_names_a_planted_leak_and_a_no_op_is_quiet_on_retained_memory(tmp_path):
    """hello@latest counted on both sides, head keeping one fresh object per request in a
    module-level list (apps/_inject.py): compare exits 1 naming retained memory per request and
    the endpoint; without the leak the same compare has no verdict on it."""
    leak = _compare_hello(tmp_path / "leak", "--inject-head-leak", "1")
    assert leak.returncode == 1, leak.stderr[-2000:]
    data = json.loads((tmp_path / "leak" / "compare.json").read_text())
    (row,) = [r for r in data["rows"] if r["metric"] == RETAINED.key]
    assert row["verdict"] == "regression" and row["gating"] and row["endpoint"] == "GET /"
    assert row["base_value"] == 0.0 and 0.9 <= row["head_value"] <= 1.1
    comment = (tmp_path / "leak" / "comment.md").read_text()
    assert (
        "`GET /`: retained memory 0 → 1.0 blocks per request (a leak: grows with requests)"
        in (comment.splitlines()[1])
    )
    # its mechanism, shown: the object allocator's calls per request (counts/allocations.py), one
    # `object()` more per request on head
    before, after = row["detail"]["allocations"]
    assert before > 300 and after - before >= 0.9, row["detail"]
    assert "| | ↳ per request: `allocations` " in comment
    # the leak is not CPU: the estimated cost does not gate it
    assert all(r["verdict"] != "regression" for r in data["rows"] if r["metric"] != RETAINED.key), [
        r["text"] for r in data["rows"]
    ]
    quiet = _compare_hello(tmp_path / "noop")
    data = json.loads((tmp_path / "noop" / "compare.json").read_text())
    (row,) = [r for r in data["rows"] if r["metric"] == RETAINED.key]
    assert row["verdict"] == "unchanged" and row["base_value"] == row["head_value"] == 0.0
    assert (
        "allocations" not in (tmp_path / "noop" / "comment.md").read_text()
    )  # shown, never judged
    assert quiet.returncode != 1 or any(
        r["verdict"] == "regression" for r in data["rows"] if r["metric"] != RETAINED.key
    )
