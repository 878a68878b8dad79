"""What one oha run yields: figures, invalid measurements, the A/A copy and its noise.
No servers: samples go in, figures come out."""

from __future__ import annotations

import pytest
from conftest import variant

from benchwatch.declarations.requests import Endpoint
from benchwatch.figures.metrics import Closed, Open
from benchwatch.measure.collect import AA_SUFFIX, Collector, Shot, Slot, slots_for
from benchwatch.measure.loadgen import OhaRun, Outcome

ENDPOINT = Endpoint(name="root", path="/")
CLOSED = Shot(ENDPOINT, Closed(10), 2.0, 10)
OPEN = Shot(ENDPOINT, Open(0.5, 400), 2.0, 64, rate=400)


def oha(successes: int = 1000, elapsed: float = 2.0, problems: list[str] | None = None) -> OhaRun:
    outcome = Outcome(
        successes=successes, elapsed=elapsed, p50_ms=1.5, p99_ms=4.0, problems=problems or []
    )
    return OhaRun([], outcome, elapsed, 0.2, 1)


def test_one_closed_shot_gives_four_named_figures_and_memory_three_more() -> None:
    data = Collector()
    slot = Slot(variant("svc"), "svc@latest")
    data.record(slot, CLOSED, 0, oha(), server_cpu=0.1, server_alive=True)
    data.record_memory(slot, idle=50 * 2**20, warm=60 * 2**20, peak=70 * 2**20)
    figures = {f.name: f for f in data.figures()}
    assert sorted(figures) == [
        "svc@latest GET / c=10 cpu/req",
        "svc@latest GET / c=10 p50",
        "svc@latest GET / c=10 p99",
        "svc@latest GET / c=10 rps",
        "svc@latest rss idle",
        "svc@latest rss peak",
        "svc@latest rss warm",
    ]
    assert figures["svc@latest GET / c=10 cpu/req"].value == pytest.approx(100.0)  # 0.1 s / 1000
    assert figures["svc@latest GET / c=10 rps"].value == pytest.approx(500.0)
    assert figures["svc@latest rss peak"].value == pytest.approx(70.0)
    assert all(f.valid for f in figures.values())


def test_an_open_loop_has_no_requests_per_second_and_a_side_by_side_tag() -> None:
    data = Collector(name_tag=" (side by side)")
    data.record(
        Slot(variant("svc"), "svc@latest"), OPEN, 0, oha(), server_cpu=0.1, server_alive=True
    )
    assert sorted(f.name for f in data.figures()) == [
        "svc@latest GET / rate=50% cpu/req (side by side)",
        "svc@latest GET / rate=50% p50 (side by side)",
        "svc@latest GET / rate=50% p99 (side by side)",
    ]


def test_an_invalid_shot_invalidates_its_figures_and_the_servers_memory_but_not_other_rounds() -> (
    None
):
    data = Collector()
    slot = Slot(variant("svc"), "svc@latest")
    data.record(slot, CLOSED, 0, oha(), server_cpu=0.1, server_alive=True)
    assert (
        data.record(slot, CLOSED, 1, oha(problems=["non-2xx responses: 3x 500"]), 0.1, True) is None
    )
    data.record_memory(slot, 1, 1, 1)
    figures = {f.name: f for f in data.figures()}
    assert not figures["svc@latest GET / c=10 cpu/req"].valid
    assert (
        "round 2: GET / c=10: non-2xx responses: 3x 500"
        in figures["svc@latest GET / c=10 cpu/req"].note
    )
    assert not figures["svc@latest rss peak"].valid
    assert [p.line() for p in data.problems] == [
        "svc@latest GET / [load]: c=10: non-2xx responses: 3x 500"
    ]
    assert len(data.oha_runs) == 2 and not data.oha_runs[1].valid  # the record keeps both


def test_a_server_that_died_makes_the_shot_invalid_even_when_oha_saw_answers() -> None:
    data = Collector()
    slot = Slot(variant("svc"), "svc@latest")
    assert data.record(slot, CLOSED, 0, oha(), server_cpu=0.1, server_alive=False) is None
    assert "server died during the measurement" in data.invalid["svc@latest GET / c=10 cpu/req"]


def test_the_aa_copy_is_measured_and_summarised_but_never_a_figure() -> None:
    chosen = variant("svc")
    slots = slots_for([chosen, variant("other")], "svc@latest")
    assert [s.label for s in slots] == ["svc@latest", "svc@latest" + AA_SUFFIX, "other@latest"]
    data = Collector()
    original, copy = slots[0], slots[1]
    for cpu_a, cpu_b in ((0.100, 0.102), (0.104, 0.106)):
        data.record(original, CLOSED, 0, oha(), cpu_a, True)
        data.record(copy, CLOSED, 0, oha(), cpu_b, True)
    assert not any(f.variant.endswith(AA_SUFFIX) for f in data.figures())
    noise = data.aa_noise(copy)
    entry = noise.figures["svc@latest GET / c=10 cpu/req"]
    assert entry.a == pytest.approx([100.0, 104.0]) and entry.a_prime == pytest.approx(
        [102.0, 106.0]
    )
    assert entry.ratio == pytest.approx(104.0 / 102.0)
    assert 0 < entry.cv < 0.05


def test_aa_noise_leaves_out_a_figure_invalid_on_either_side() -> None:
    slots = slots_for([variant("svc")], "svc@latest")
    data = Collector()
    data.record(slots[0], CLOSED, 0, oha(), 0.1, True)
    data.record(slots[1], CLOSED, 0, oha(problems=["request errors: 1x refused"]), 0.1, True)
    data.record(slots[1], CLOSED, 1, oha(), 0.1, True)
    assert data.aa_noise(slots[1]).figures == {}
    assert data.problems[0].reason.endswith("(A/A copy)")


def test_the_servers_error_line_is_its_exception_not_what_follows_it() -> None:
    from benchwatch.measure.collect import error_line

    sqlalchemy = (
        "ERROR:    Exception in ASGI application\n  + Exception Group Traceback (most recent call last):\n"
        "    | sqlalchemy.exc.OperationalError: (psycopg.OperationalError) connection failed: refused\n"
        "    | \tIs the server running on that host and accepting TCP/IP connections?\n"
        "    | (Background on this error at: https://sqlalche.me/e/21/e3q8)\n"
    )
    assert (
        error_line(sqlalchemy)
        == "sqlalchemy.exc.OperationalError: (psycopg.OperationalError) connection failed: refused"
    )
    chained = "KeyError: 'a'\n\nDuring handling of the above exception, another exception occurred:\napp.PoolExhausted: none left"
    assert error_line(chained) == "app.PoolExhausted: none left"
    assert (
        error_line("ERROR:    Exception in ASGI application\n")
        == "ERROR:    Exception in ASGI application"
    )
    assert error_line("") == ""
