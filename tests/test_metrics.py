"""The vocabulary: figure names are published history keys, so a sample of them is pinned here."""

from __future__ import annotations

from benchwatch.declarations.stacks import Stack
from benchwatch.figures.figure_key import load_key, server_key
from benchwatch.figures.metrics import (
    CPU,
    MICRO_PEAKMEM,
    MICRO_TIME,
    P99,
    RPS,
    RSS_PEAK,
    Closed,
    Counted,
    Open,
    load_metrics,
    metric,
    setting_from_params,
)
from benchwatch.micro.figures import _figure as micro_figure
from benchwatch.results.schema import Figure, figure_label

ENDPOINT = "GET /services?offset=0"


def test_published_names_stay_the_same() -> None:
    assert (
        load_key("services@latest", ENDPOINT, Closed(10), CPU).name
        == "services@latest GET /services?offset=0 c=10 cpu/req"
    )
    assert (
        load_key("services@latest", ENDPOINT, Closed(64), RPS).name
        == "services@latest GET /services?offset=0 c=64 rps"
    )
    assert (
        load_key("hello@seed-v1", "GET /", Open(0.5, 2150), P99).name
        == "hello@seed-v1 GET / rate=50% p99"
    )
    assert load_key("hello@latest", "GET /", Open(0.25), CPU, " (side by side)").name == (
        "hello@latest GET / rate=25% cpu/req (side by side)"
    )
    assert server_key("posts@seed-v2", RSS_PEAK).name == "posts@seed-v2 rss peak"
    stack = Stack(name="latest", pins={"pydantic": "2.14.3"})
    timed = micro_figure(
        stack,
        "bench_serialization.Serialization.time_dump_json",
        ["payloads-1MB"],
        {},
        1e-3,
        None,
        [1e-3],
    )
    assert (
        timed.name == "micro payloads-1MB dump_json@latest"
        and timed.unit == "us"
        and abs(timed.value - 1000.0) < 1e-9
    )


def test_an_open_loop_yields_no_requests_per_second() -> None:
    assert [m.short for m in load_metrics(Closed(10))] == [
        "cpu/req",
        "user/req",
        "sys/req",
        "rps",
        "p50",
        "p99",
    ]
    assert [m.short for m in load_metrics(Open(0.5))] == [
        "cpu/req",
        "user/req",
        "sys/req",
        "p50",
        "p99",
    ]
    assert [m.short for m in load_metrics(Counted())] == [
        "instr/req",
        "syscalls/req",
        "retained/req",
        "db buffers/req",
    ]


def test_settings_round_trip_through_run_json_params() -> None:
    for setting in (Closed(10), Open(0.75, 300), Open(0.5), Counted()):
        assert setting_from_params(setting.params()) == setting
    assert setting_from_params({}) is None
    assert Open(0.5, 300).label == "50% of max (300 r/s)" and Closed(64).label == "c=64"
    assert sorted([Open(0.25), Closed(64), Closed(10)], key=lambda s: s.sort_key()) == [
        Closed(10),
        Closed(64),
        Open(0.25),
    ]


def test_two_sides_pair_on_the_fraction_not_on_the_rate_each_reached() -> None:
    def open_figure(rate: int, stack: str) -> Figure:
        return Figure(
            name=f"x@{stack} GET / rate=50% p99",
            kind="load",
            variant=f"x@{stack}",
            scenario="x",
            stack=stack,
            metric=P99.key,
            unit="ms",
            bigger_is_better=False,
            samples=[1.0],
            value=1.0,
            endpoint="GET /",
            params=Open(0.5, rate).params(),
        )

    base, head = open_figure(2000, "seed-v1"), open_figure(9000, "latest")
    assert base.pair_key() == head.pair_key()
    assert figure_label(base) == figure_label(head) == "x GET / rate=50% latency_p99_ms"


def test_every_figure_kind_has_its_metric() -> None:
    assert metric("load", "cpu_us_per_request") is CPU and CPU.gating and not RPS.gating
    assert metric("micro", "dump_json") is MICRO_TIME and MICRO_TIME.gating
    assert metric("micro", "peakmem_validate") is MICRO_PEAKMEM and MICRO_PEAKMEM.memory
    assert metric("load", "no_such_metric") is None


def test_instruction_counts_are_their_own_gating_metric() -> None:
    from benchwatch.figures.metrics import MICRO_INSTRUCTIONS

    found = metric("micro", "validate_json", "instructions")
    assert found is MICRO_INSTRUCTIONS and found.gating and found.unit == "instructions"
    assert metric("micro", "validate_json", "us") is MICRO_TIME


def test_cpu_per_request_splits_into_user_and_system_as_the_ticks_split() -> None:
    from benchwatch.measure.server import CpuTimes

    window = CpuTimes(2.0, 10.0, 4.0) - CpuTimes(
        1.0, 9.5, 3.0
    )  # 1 s precise; ticks 0.5 s user, 1.0 s system
    user, system = window.split()
    assert abs(user + system - 1.0) < 1e-12 and abs(user / system - 0.505 / 1.005) < 1e-12
    user, system = CpuTimes(0.3, 0.3, 0.0).split()  # no system tick in the window: still positive
    assert system > 0 and user > 50 * system
