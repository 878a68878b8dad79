"""One estimated cost per request: the counts weighed, gated as one figure with a floor from its parts'."""

import pytest
from test_gate import WEIGHTS, comparison, judged, load_figure

from benchwatch.counts import weights
from benchwatch.counts.cost import INSTRUCTIONS_PART, cost_figure
from benchwatch.figures.metrics import COST, INSTRUCTIONS, SYSCALLS, Counted
from benchwatch.judge import gate
from benchwatch.judge.calibrate import Calibration
from benchwatch.judge.cost_floor import FROM_PARTS, floor_from_parts
from benchwatch.judge.verdict import EXIT_OK, EXIT_REGRESSION, compare_figures
from benchwatch.report.comment import render


def counts(endpoint, instructions, calls):
    own = sum(n for name, n in calls.items() if name not in ("epoll_pwait", "futex", "getpid"))
    return [
        load_figure(endpoint, INSTRUCTIONS, instructions, Counted()),
        load_figure(endpoint, SYSCALLS, [own] * len(instructions), Counted(), calls),
    ]


def by_metric(rows):
    return {r.metric: r for r in rows}


def test_a_cost_is_its_instructions_and_its_own_calls_by_name_weighed():
    instructions, syscalls = counts(
        "GET /",
        [400_000.0, 401_000.0, 402_000.0],
        {"read": 1.0, "write": 2.0, "epoll_pwait": 2.0, "futex": 6.0},
    )
    cost = cost_figure(instructions, syscalls, WEIGHTS)
    # 0.1 ns per instruction; read 1 µs, write 2 µs; polls and futexes are scheduling: not weighed
    assert cost.samples == pytest.approx([40.0 + 5.0, 40.1 + 5.0, 40.2 + 5.0])
    assert cost.value == pytest.approx(45.1)
    assert cost.metric == COST.key and cost.unit == "us" and cost.name.endswith("seq cost/req")
    assert cost.detail == {INSTRUCTIONS_PART: pytest.approx(40.1), "read": 1.0, "write": 4.0}
    assert WEIGHTS.call_us("recvfrom") == WEIGHTS.other_call_us


def test_the_floor_of_a_cost_is_its_parts_floors_weighed_by_their_shares():
    assert floor_from_parts([1.0], 0.005, 0.02) == pytest.approx(0.005)
    assert floor_from_parts([0.9], 0.005, 0.02) == pytest.approx(0.9 * 0.005 + 0.1 * 0.02)
    assert floor_from_parts([0.9, 0.8], 0.005, 0.02) == pytest.approx(
        0.8 * 0.005 + 0.2 * 0.02
    )  # the larger


def test_an_aa_within_its_parts_floors_is_unchanged_and_a_calibrated_part_floor_widens_the_cost():
    """Two boots of posts read: 1.8 % apart in instructions (glibc's heap), under its 4.8 % floor."""
    calls = {
        "read": 5.0,
        "write": 6.0,
        "fcntl": 4.0,
        "newfstatat": 3.0,
        "pread64": 1.0,
        "futex": 20.0,
    }
    base = counts("GET /posts", [23.09e6, 23.10e6, 23.10e6], calls)
    head = counts("GET /posts", [23.50e6, 23.50e6, 23.51e6], calls)
    label = "hello GET /posts seq instructions_per_request"
    cal = Calibration(
        floors={INSTRUCTIONS.key: 0.048},
        method="t",
        rounds=0,
        compare_rounds=0,
        date="d",
        detail={INSTRUCTIONS.key: {label: 0.048}},
    )
    rows = by_metric(judged(base, head, cal))
    cost = rows[COST.key]
    assert cost.floor_source == FROM_PARTS and 0.045 < cost.floor < 0.048
    assert (cost.verdict, rows[INSTRUCTIONS.key].verdict) == ("unchanged", "unchanged")
    # the same boots judged with the default floors (0.5 % for instructions) would flag both
    plain = by_metric(judged(base, head, None))
    assert plain[COST.key].verdict == "regression" and plain[COST.key].floor < 0.01


def test_far_fewer_instructions_and_one_call_more_is_an_improvement_and_exits_zero():
    """services seed-v1 -> latest (issue 32): 13x fewer instructions, one `write` more per request.
    Judged count by count, the extra call made this red (exit 1)."""
    base = counts(
        "GET /services", [13.2e6, 13.21e6, 13.22e6], {"read": 1.0, "write": 1.0, "epoll_pwait": 2.0}
    )
    head = counts(
        "GET /services", [1.0e6, 1.001e6, 1.002e6], {"read": 1.0, "write": 2.0, "epoll_pwait": 2.0}
    )
    rows = judged(base, head, None)
    found = by_metric(rows)
    assert (found[SYSCALLS.key].verdict, found[SYSCALLS.key].gating) == ("regression", False)
    assert (found[INSTRUCTIONS.key].verdict, found[INSTRUCTIONS.key].gating) == (
        "improvement",
        False,
    )
    assert (found[COST.key].verdict, found[COST.key].gating) == ("improvement", True)
    assert comparison(rows).exit_code() == EXIT_OK
    headline = render(comparison(rows)).splitlines()[1]
    # (1321 + 1 + 2) / (100.1 + 1 + 4) µs, medians
    assert headline.startswith(
        "## benchwatch: estimated cost per request 12.60x lower [12.58, 12.62] (hello GET /services)"
    )
    assert "1 regression (none gating)" in headline


def test_the_same_instructions_with_two_writes_for_one_writev_is_a_regression_that_names_the_calls():
    """hello v2-pre-rust -> latest's uvloop step (issue 32): `writev` 1 -> 0, `write` 0 -> 2 per request."""
    base = counts(
        "GET /", [435_000.0, 435_100.0, 435_200.0], {"read": 1.0, "writev": 1.0, "epoll_pwait": 2.0}
    )
    head = counts(
        "GET /", [435_050.0, 435_150.0, 435_250.0], {"read": 1.0, "write": 2.0, "epoll_pwait": 2.0}
    )
    rows = judged(base, head, None)
    found = by_metric(rows)
    assert found[INSTRUCTIONS.key].verdict == "unchanged"
    assert (found[COST.key].verdict, found[COST.key].gating) == ("regression", True)
    assert comparison(rows).exit_code() == EXIT_REGRESSION
    text = render(comparison(rows))
    assert "**Regression** in a gating figure (hello GET / seq cost_us_per_request)" in text
    assert "`write` 0.00 → 2.00" in text and "`writev` 1.00 → 0.00" in text


@pytest.mark.slow
def test_the_weights_are_measured_here_in_seconds_for_every_call_named():
    found = weights.measure()
    assert found.user_us_per_instruction > 0 and found.instructions_per_iteration > 100
    assert set(found.system_us_per_call) >= {
        "read",
        "write",
        "writev",
        "sendto",
        "recvfrom",
        "epoll_ctl",
    }
    assert all(us >= 0 for us in found.system_us_per_call.values())
    assert found.call_us("no_such_call") == found.other_call_us > 0


def test_without_weights_the_counts_gate_one_by_one_so_a_failed_measurement_never_turns_green():
    base = counts("GET /", [435_000.0, 435_100.0], {"read": 1.0, "writev": 1.0})
    head = counts("GET /", [435_050.0, 435_150.0], {"read": 1.0, "write": 2.0})
    rows, _ = compare_figures(
        base, head, None
    )  # no cost figures: the weights could not be measured
    assert comparison(rows).exit_code() == EXIT_OK
    gate.gate_counts_alone(rows)
    assert comparison(rows).exit_code() == EXIT_REGRESSION
    assert [r.label for r in comparison(rows).gating_regressions()] == [
        "hello GET / seq syscalls_per_request"
    ]
