"""counts/stage_clock.py: a boot's wall time summed by stage, a nested stage charged to itself."""

from __future__ import annotations

from benchwatch.counts.stage_clock import StageClock


def test_time_is_charged_to_the_running_stage_and_a_nested_one_returns_to_it() -> None:
    now = [0.0]
    clock = StageClock("boot", now=lambda: now[0])
    now[0] = 7.0
    clock.switch("phases")
    now[0] = 9.0
    with clock.during("dumps"):
        now[0] = 10.5
    now[0] = 12.0  # back in phases
    clock.switch("phases")  # a stage run again adds up
    now[0] = 13.0
    clock.switch("stop")
    now[0] = 15.5
    assert clock.line() == "15.5 s: boot 7.0, phases 4.5, dumps 1.5, stop 2.5"
    assert clock.seconds == {"boot": 7.0, "phases": 4.5, "dumps": 1.5, "stop": 2.5}


def test_a_stage_that_took_no_time_is_left_out_of_the_line() -> None:
    now = [0.0]
    clock = StageClock("boot", now=lambda: now[0])
    now[0] = 1.0
    clock.switch("idle")
    clock.switch("stop")
    now[0] = 1.02
    assert clock.line() == "1.0 s: boot 1.0"
