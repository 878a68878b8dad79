"""An instruction count whose request crosses threads, without a floor of its own, is judged
against the threads' floor; its cost's floor follows (judge/threads_floor.py)."""

import pytest
from test_gate import WEIGHTS, comparison, load_figure

from benchwatch.counts.cost import cost_figures
from benchwatch.figures.metrics import COST, INSTRUCTIONS, SYSCALLS, Counted
from benchwatch.judge.calibrate import Calibration
from benchwatch.judge.cost_floor import set_cost_floors
from benchwatch.judge.threads_floor import THREADS_FLOOR, set_threads_floors
from benchwatch.judge.verdict import EXIT_OK, EXIT_REGRESSION, compare_figures
from benchwatch.report.comment import render

SYNC_CALLS = {"recvfrom": 1.0, "sendto": 1.0, "futex": 29.0, "epoll_wait": 22.6}  # a `def` endpoint
ASYNC_CALLS = {"recvfrom": 1.0, "sendto": 1.0, "epoll_wait": 2.0}  # the event loop alone
BASE = [4.336e6, 4.341e6, 4.353e6]
OTHER_BOOT = [
    4.356e6,
    4.364e6,
    4.376e6,
]  # another boot of the same code (the template's GET /users/me, 0.5 % apart)


def judged(base_instructions, head_instructions, calls, head_calls=None, calibration=None):
    def side(instructions, by_name):
        figures = [
            load_figure("GET /a", INSTRUCTIONS, instructions, Counted()),
            load_figure("GET /a", SYSCALLS, [2.0] * len(instructions), Counted(), by_name),
        ]
        return figures + cost_figures(figures, WEIGHTS)

    rows, _ = compare_figures(
        side(base_instructions, calls), side(head_instructions, head_calls or calls), calibration
    )
    set_threads_floors(rows)
    set_cost_floors(rows)
    return {r.metric: r for r in rows}


def test_two_boots_of_a_sync_endpoint_are_no_change_where_the_same_counts_served_by_the_loop_are():
    crossing = judged(BASE, OTHER_BOOT, SYNC_CALLS)
    assert (
        crossing[INSTRUCTIONS.key].low > 1.0
    )  # the ranges do not overlap: a 0.5 % floor would call it
    assert (crossing[INSTRUCTIONS.key].floor, crossing[INSTRUCTIONS.key].floor_source) == (
        THREADS_FLOOR,
        "threads",
    )
    assert crossing[INSTRUCTIONS.key].verdict == crossing[COST.key].verdict == "unchanged"
    assert (
        crossing[COST.key].floor_source == "parts"
        and crossing[COST.key].floor > 0.9 * THREADS_FLOOR
    )
    assert comparison(list(crossing.values())).exit_code() == EXIT_OK
    assert f"| {THREADS_FLOOR:.1%} (default, threads) |" in render(
        comparison(list(crossing.values()))
    )

    loop = judged(BASE, OTHER_BOOT, ASYNC_CALLS)  # no hand-off: the default floor, and a regression
    assert (loop[INSTRUCTIONS.key].floor_source, loop[INSTRUCTIONS.key].verdict) == (
        "default",
        "regression",
    )
    assert (loop[COST.key].verdict, loop[COST.key].gating) == ("regression", True)
    assert comparison(list(loop.values())).exit_code() == EXIT_REGRESSION


def test_a_sync_endpoint_seven_percent_dearer_is_still_a_gating_regression():
    rows = judged(BASE, [x * 1.07 for x in OTHER_BOOT], SYNC_CALLS)
    assert (
        rows[INSTRUCTIONS.key].floor_source == "threads"
        and rows[INSTRUCTIONS.key].verdict == "regression"
    )
    assert (rows[COST.key].verdict, rows[COST.key].gating) == ("regression", True)


def test_a_head_that_moves_the_request_into_the_thread_pool_is_judged_on_the_threads_floor():
    rows = judged(BASE, OTHER_BOOT, ASYNC_CALLS, head_calls=SYNC_CALLS)
    assert rows[INSTRUCTIONS.key].floor_source == "threads"


@pytest.mark.parametrize("own", [0.002, 0.05])
def test_a_count_with_a_floor_of_its_own_keeps_it(own):
    label = "hello GET /a seq instructions_per_request"
    calibration = Calibration(
        floors={},
        method="test",
        rounds=0,
        compare_rounds=0,
        date="2026-11-27",
        detail={INSTRUCTIONS.key: {label: own}},
    )
    rows = judged(BASE, OTHER_BOOT, SYNC_CALLS, calibration=calibration)
    assert rows[INSTRUCTIONS.key].floor_source == "figure"
    assert rows[INSTRUCTIONS.key].floor == max(own, INSTRUCTIONS.default_floor)
    assert rows[SYSCALLS.key].floor_source == "default"  # the threads' floor is the instructions'
