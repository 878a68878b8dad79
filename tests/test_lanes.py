"""Side-by-side measurement: both lanes' samples are kept only when their oha windows match."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from benchwatch.measure import rounds as lanes
from benchwatch.measure.loadgen import OhaRun, Outcome


@dataclass
class FakeData:
    dropped: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class FakeStage:
    data: FakeData = field(default_factory=FakeData)
    recorded: list[tuple[float, int]] = field(default_factory=list)

    def record(self, slot, srv, endpoint, tag, params, round_index, run, server_cpu, requests, connections):
        self.recorded.append((server_cpu, run.outcome.successes))
        return run.outcome


@dataclass
class FakeServer:
    cpu: list[float]

    def cpu_seconds(self) -> float:
        return self.cpu.pop(0)


@dataclass
class FakeSlot:
    label: str


@dataclass
class FakeEndpoint:
    label: str = "GET /"


def shots(cpu_per_lane: list[list[float]]) -> list[lanes.Shot]:
    made = []
    for index, cpu in enumerate(cpu_per_lane):
        lane = lanes.Lane(FakeStage(), FakeSlot(f"x@{index}"), FakeServer(cpu), {})  # type: ignore[arg-type]
        made.append(lanes.Shot(lane, FakeEndpoint(), "c=10", {"mode": "closed"}, 2.0, 10))  # type: ignore[arg-type]
    return made


def run(wall: float, successes: int = 1000) -> OhaRun:
    return OhaRun([], Outcome(successes=successes, elapsed=wall), wall, 0.1, 1)


@pytest.mark.parametrize(("walls", "kept"), [((2.01, 2.05), True), ((3.41, 2.03), False)])
def test_a_pair_is_kept_only_when_both_ran_in_the_same_window(monkeypatch, walls, kept) -> None:
    pair = shots([[1.0, 1.5], [2.0, 2.6]])
    monkeypatch.setattr(lanes, "_together", lambda s: [run(w) for w in walls])
    outcomes = lanes._measure(pair, round_index=7)
    assert all(o is not None and o.successes == 1000 for o in outcomes)  # rates still learn from them
    for shot, cpu in zip(pair, (0.5, 0.6), strict=True):
        stage = shot.lane.stage
        if kept:
            assert stage.recorded == [(pytest.approx(cpu), 1000)] and stage.data.dropped == []
        else:
            assert stage.recorded == []
            assert stage.data.dropped[0]["round"] == 7
            assert "not side by side: oha ran 3.41 s and 2.03 s" in stage.data.dropped[0]["reason"]


def test_one_lane_alone_is_always_recorded(monkeypatch) -> None:
    single = shots([[1.0, 1.25]])
    monkeypatch.setattr(lanes, "_together", lambda s: [run(9.0)])
    lanes._measure(single, round_index=0)
    assert single[0].lane.stage.recorded == [(pytest.approx(0.25), 1000)]
