"""Side-by-side measurement: both lanes' samples are kept only when their oha windows match."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from conftest import variant

from benchwatch.declarations.requests import Endpoint
from benchwatch.figures.metrics import Closed
from benchwatch.measure import one_round
from benchwatch.measure.collect import Shot, Slot
from benchwatch.measure.load_plan import QUICK
from benchwatch.measure.loadgen import OhaRun, Outcome
from benchwatch.measure.one_round import Aimed, Lane
from benchwatch.measure.rig import Rig, Track
from benchwatch.measure.server import CpuTimes


@dataclass
class FakeServer:
    cpu: list[float]

    def cpu_times(self) -> CpuTimes:
        total = self.cpu.pop(0)
        return CpuTimes(total, total * 0.75, total * 0.25)

    def alive(self) -> bool:
        return True


RIG = Rig(oha="oha", plan=QUICK, environments={})
ENDPOINT = Endpoint(name="root", path="/")


def shots(cpu_per_lane: list[list[float]]) -> list[Aimed]:
    made = []
    for index, cpu in enumerate(cpu_per_lane):
        slot = Slot(variant(f"x{index}"), f"x{index}@latest")
        lane = Lane(Track([slot]), slot, FakeServer(cpu), {}, quick=True)  # type: ignore[arg-type]
        made.append(Aimed(lane, Shot(ENDPOINT, Closed(10), 2.0, 10)))
    return made


def run(wall: float, successes: int = 1000) -> OhaRun:
    return OhaRun(
        [], Outcome(successes=successes, elapsed=wall, p50_ms=1.0, p99_ms=2.0), wall, 0.1, 1
    )


@pytest.mark.parametrize(("walls", "kept"), [((2.01, 2.05), True), ((3.41, 2.03), False)])
def test_a_pair_is_kept_only_when_both_ran_in_the_same_window(monkeypatch, walls, kept) -> None:
    tries = one_round.MISMATCH_RETRIES + 1
    pair = shots([[1.0, 1.5] * tries, [2.0, 2.6] * tries])
    fired = []
    monkeypatch.setattr(
        one_round, "_together", lambda rig, s: fired.append(1) or [run(w) for w in walls]
    )
    outcomes = one_round._measure(RIG, pair, round_index=7)
    assert len(fired) == (
        1 if kept else tries
    )  # out of step: fired again before the pair is dropped
    assert all(
        o is not None and o.successes == 1000 for o in outcomes
    )  # rates still learn from them
    for aimed, cpu in zip(pair, (0.5, 0.6), strict=True):
        data = aimed.lane.data
        figures = {f.metric: f for f in data.figures()}
        if kept:
            assert figures["cpu_us_per_request"].samples == [pytest.approx(cpu / 1000 * 1e6)]
            assert data.dropped == []
        else:
            assert figures == {}
            assert data.dropped[0].round == 7
            assert (
                f"not side by side: oha windows 68% apart (3.41 s and 2.03 s, in {tries} tries)"
                in data.dropped[0].reason
            )
            assert data.dropped[0].windows_apart == pytest.approx(3.41 / 2.03 - 1)
            assert data.short(aimed.lane.slot, rounds=6) == [("GET /", "c=10")]


def test_a_pair_out_of_step_once_is_fired_again_and_kept(monkeypatch) -> None:
    pair = shots([[1.0, 1.5, 3.0, 3.5], [2.0, 2.6, 4.0, 4.7]])  # CPU before and after each try
    walls = iter([(3.41, 2.03), (2.02, 2.04)])
    monkeypatch.setattr(one_round, "_together", lambda rig, s: [run(w) for w in next(walls)])
    one_round._measure(RIG, pair, round_index=3)
    for aimed, cpu in zip(pair, (0.5, 0.7), strict=True):  # the second try's CPU, not the first's
        data = aimed.lane.data
        assert {f.metric: f for f in data.figures()}["cpu_us_per_request"].samples == [
            pytest.approx(cpu / 1000 * 1e6)
        ]
        assert data.dropped == []


def test_one_lane_alone_is_always_recorded(monkeypatch) -> None:
    single = shots([[1.0, 1.25]])
    monkeypatch.setattr(one_round, "_together", lambda rig, s: [run(9.0)])
    one_round._measure(RIG, single, round_index=0)
    cpu = next(f for f in single[0].lane.data.figures() if f.metric == "cpu_us_per_request")
    assert cpu.samples == [pytest.approx(250.0)]  # 0.25 s of server CPU over 1000 answers


class WarmLane:
    """What measure_lanes reads of a lane: endpoints by step, a server with memory, its data."""

    def __init__(self, name: str, endpoints: dict[str, Endpoint]) -> None:
        self.by_step = endpoints
        self.track = type(
            "T",
            (),
            {"step": staticmethod(lambda e: next(k for k, v in endpoints.items() if v is e))},
        )()
        self.slot = Slot(variant(name), f"{name}@latest")
        self.seconds_per_request: dict[str, float] = {}
        self.idle_rss = 1
        self.srv = type("S", (), {"rss_bytes": lambda self: 2, "rss_peak": lambda self: _Peak()})()
        self.data = type("D", (), {"record_memory": lambda self, *a: None})()

    def endpoints(self) -> list[Endpoint]:
        return list(self.by_step.values())

    def endpoint(self, step: str) -> Endpoint | None:
        return self.by_step.get(step)

    def alive(self, why: str) -> bool:
        return True


class _Peak:
    def __enter__(self):
        return (3,)

    def __exit__(self, *exc):
        return False


def test_warm_ups_run_step_by_step_so_a_big_endpoint_does_not_slow_a_small_ones(
    monkeypatch,
) -> None:
    small, big = Endpoint(name="small", path="/small"), Endpoint(name="big", path="/big")
    lanes = [WarmLane(n, {"small": small, "big": big}) for n in ("base", "head")]
    fired: list[list[str]] = []

    def together(rig, aimed):
        fired.append([a.shot.endpoint.name for a in aimed])
        return [run(0.2, successes=200 if a.shot.endpoint is small else 2) for a in aimed]

    monkeypatch.setattr(one_round, "_checked", lambda lane: True)
    monkeypatch.setattr(one_round, "_together", together)
    monkeypatch.setattr(one_round, "_measure_step", lambda rig, lanes, step, i, tags=None: lanes)
    one_round.measure_lanes(RIG, lanes, round_index=0)  # type: ignore[arg-type]
    assert fired == [
        ["small", "small"],
        ["big", "big"],
    ]  # each step's endpoint on both lanes at once
    assert lanes[0].seconds_per_request == {
        small.label: pytest.approx(0.001),
        big.label: pytest.approx(0.1),
    }
