"""counts/one_target.py: a target's strace boot runs beside its callgrind boot, waits for the plan
callgrind measured (warm-up and phase sizes), and stops when callgrind fails before making one;
retained memory's boot comes last, with the sequence the strace boot sent."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from conftest import REPO

from benchwatch.counts import memory_boot, one_target
from benchwatch.counts.target_counts import CountFailed, CountTarget
from benchwatch.project.loading import load_project


def _target() -> CountTarget:
    variant = load_project(REPO).select("hello@latest")[0]
    return CountTarget(variant, None, variant.endpoints)  # type: ignore[arg-type]


def test_the_strace_boot_waits_for_callgrinds_plan_and_sends_strace_times_its_requests(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    strace_booted = threading.Event()
    seen: dict[str, object] = {}

    def fake_callgrind(target, out_file, cap, repeats, quiet_idle_s, plan_made):
        # the strace boot is up before callgrind has its plan: they run side by side
        assert strace_booted.wait(10)
        plan_made([60, 120], [300, 600])
        return one_target._Run([], [60, 120], [300, 600], stages="1.0 s: boot 1.0")

    def fake_strace(target, trace, planned, repeats, quiet_idle_s):
        strace_booted.set()
        seen["plan"] = planned()
        seen["repeats"], seen["idle"] = repeats, quiet_idle_s
        warmups, counts = seen["plan"]
        return one_target._Run([], warmups, counts, stages="2.0 s: boot 2.0")

    def fake_memory(target, traced, warmups, counts, repeats):
        seen["memory"] = (list(warmups), list(counts), repeats)
        return [], "0.5 s: boot 0.5"

    monkeypatch.setattr(one_target, "_callgrind", fake_callgrind)
    monkeypatch.setattr(one_target, "_strace", fake_strace)
    monkeypatch.setattr(memory_boot, "measure", fake_memory)
    monkeypatch.setattr(one_target, "SIDE_BY_SIDE", True)
    said: list[str] = []
    one_target.count_target(
        _target(), tmp_path, cap=1000, repeats=3, say=said.append, strace_times=2
    )
    assert seen == {
        "plan": ([60, 120], [600, 1000]),
        "repeats": 3,
        "idle": one_target.QUIET_IDLE_S,
        "memory": ([60, 120], [600, 1000], 3),  # what strace sent, then its segments
    }
    assert (tmp_path / one_target.STAGES).read_text() == (
        "callgrind 1.0 s: boot 1.0\nstrace 2.0 s: boot 2.0\nmemory 0.5 s: boot 0.5\n"
    )
    assert any(line.endswith("strace 2.0 s: boot 2.0") for line in said)


def test_a_callgrind_failure_before_the_plan_stops_the_strace_boot_and_is_the_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    waited: list[str] = []

    def fake_callgrind(target, out_file, cap, repeats, quiet_idle_s, plan_made):
        raise CountFailed("boot under callgrind: it exited")

    def fake_strace(target, trace, planned, repeats, quiet_idle_s):
        try:
            planned()
        except CountFailed as exc:
            waited.append(exc.reason)
            raise
        raise AssertionError("no plan was made")

    monkeypatch.setattr(one_target, "_callgrind", fake_callgrind)
    monkeypatch.setattr(one_target, "_strace", fake_strace)
    monkeypatch.setattr(one_target, "SIDE_BY_SIDE", True)
    with pytest.raises(CountFailed, match="boot under callgrind: it exited"):
        one_target.count_target(_target(), tmp_path, cap=1000, repeats=3, say=lambda _: None)
    assert waited == ["the callgrind boot failed first"]


def test_without_free_cores_strace_boots_after_callgrind_with_its_plan(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    order: list[str] = []

    def fake_callgrind(target, out_file, cap, repeats, quiet_idle_s, plan_made):
        order.append("callgrind")
        plan_made([60], [300])
        order.append("callgrind done")
        return one_target._Run([], [60], [300])

    def fake_strace(target, trace, planned, repeats, quiet_idle_s):
        order.append(f"strace {planned()}")
        return one_target._Run([], [], [])

    def fake_memory(target, traced, warmups, counts, repeats):
        order.append("memory")
        return [], ""

    monkeypatch.setattr(one_target, "_callgrind", fake_callgrind)
    monkeypatch.setattr(one_target, "_strace", fake_strace)
    monkeypatch.setattr(memory_boot, "measure", fake_memory)
    monkeypatch.setattr(one_target, "SIDE_BY_SIDE", False)
    one_target.count_target(_target(), tmp_path, cap=500, repeats=3, say=lambda _: None)
    assert order == ["callgrind", "callgrind done", "strace ([60], [500])", "memory"]
