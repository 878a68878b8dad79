"""Dropped load rounds made up: the round driver measures again, in make-up rounds of their own,
the shots whose pair was dropped (base and head not side by side), up to its bound; the compare
says per shot what was dropped and made up, and a timing row the host kept short does not make
the compare "not measured" when its endpoint's counts were judged. No servers, no oha."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import variant
from helpers_rounds import FakeServer, oha_run

from benchwatch.figures.metrics import CPU, RSS_IDLE
from benchwatch.judge import dropped
from benchwatch.judge.judged import explain_dropped
from benchwatch.judge.verdict import (
    EXIT_OK,
    EXIT_UNMEASURED,
    CompareExtra,
    Comparison,
    SideInfo,
    compare_figures,
)
from benchwatch.measure import one_round, rounds
from benchwatch.measure.collect import Collector, Slot
from benchwatch.measure.load_plan import QUICK, LoadPlan
from benchwatch.measure.one_round import Lane
from benchwatch.measure.rig import Rig, Track
from benchwatch.report.comment import render
from benchwatch.results.load_facts import SkippedRun
from benchwatch.results.schema import Figure

PLAN = LoadPlan(
    rounds=6,
    warmup=0.2,
    duration=1.5,
    open_duration=0.5,
    concurrencies=(10,),
    rate_fractions=(0.5,),
    quick=True,
)


class Host:
    """Fakes the boots and the oha runs: `out_of_step(round, tag)` says whether a pair's windows differ."""

    def __init__(self, out_of_step) -> None:
        self.out_of_step = out_of_step
        self.round = -1
        self.fired: list[tuple[int, str]] = []  # (round, tag) of every measured pair, each try
        self.boots: list[tuple[int, dict | None]] = []

    def boot_and_measure(
        self, rig, entries, block, *, announce=lambda r: None, done=lambda r: None, only=None
    ):
        self.boots.append((block[0], only))
        lanes = [Lane(track, slot, FakeServer(), {}, quick=True) for track, slot in entries]  # type: ignore[arg-type]
        for round_index in block:
            announce(round_index)
            self.round = round_index
            one_round.measure_lanes(rig, lanes, round_index, fresh=True, only=only)
            done(round_index)

    def together(self, rig, shots):
        tag = shots[0].shot.tag
        if tag != "warm-up":
            self.fired.append((self.round, tag))
        walls = (
            (1.5, 1.9) if tag != "warm-up" and self.out_of_step(self.round, tag) else (1.5, 1.52)
        )
        return [oha_run(w) for w in walls]


def drive(monkeypatch, out_of_step, plan: LoadPlan = PLAN) -> tuple[Host, list[Track]]:
    host = Host(out_of_step)
    monkeypatch.setattr(rounds, "boot_and_measure", host.boot_and_measure)
    monkeypatch.setattr(one_round, "_together", host.together)
    monkeypatch.setattr(one_round, "_checked", lambda lane: True)
    tracks = [Track([Slot(variant("x"), "x@latest")], Collector()) for _ in ("base", "head")]
    rounds.run_rounds(
        Rig("oha", plan, {}), tracks, progress=rounds.Progress(plan.rounds, quiet=True)
    )
    return host, tracks


def samples(track: Track, metric: str, mode: str | None = "closed") -> list[float]:
    found = [
        f
        for f in track.data.figures()
        if f.metric == metric and (mode is None or f.params.get("mode") == mode)
    ]
    assert len(found) == 1
    return found[0].samples


def test_dropped_pairs_are_made_up_in_rounds_of_their_own_and_nothing_else_is_measured_again(
    monkeypatch,
) -> None:
    host, tracks = drive(monkeypatch, lambda r, tag: tag == "c=10" and r in (1, 4))
    assert [block for block, _ in host.boots] == [
        0,
        1,
        2,
        3,
        4,
        5,
        6,
        7,
    ]  # two make-up rounds after the six
    assert host.boots[6][1] == host.boots[7][1] == {"GET /": {"c=10"}}  # only the short shot
    assert [tag for r, tag in host.fired if r >= 6] == [
        "c=10",
        "c=10",
    ]  # no open loop measured again
    for track in tracks:
        assert len(samples(track, CPU.key)) == 6  # the closed loop: 4 planned + 2 made up
        assert len(samples(track, CPU.key, mode="open")) == 6
        assert (
            len(samples(track, RSS_IDLE.key, mode=None)) == 6
        )  # memory only from the planned rounds
        assert [d.round for d in track.data.dropped] == [1, 4]
        assert track.data.short(track.slots[0], 6) == []


def test_a_host_that_drops_every_make_up_is_given_up_on_at_the_bound(monkeypatch) -> None:
    host, tracks = drive(monkeypatch, lambda r, tag: tag == "c=10" and (r == 2 or r >= 6))
    limit = rounds.make_up_limit(PLAN.rounds)
    assert limit == 3  # half of a quick compare's six rounds
    assert [block for block, _ in host.boots] == [0, 1, 2, 3, 4, 5, 6, 7, 8]
    tries = one_round.MISMATCH_RETRIES + 1
    assert (
        sum(r >= 6 for r, _ in host.fired) == limit * tries
    )  # each make-up pair fired again before it is dropped
    for track in tracks:
        assert len(samples(track, CPU.key)) == 5
        assert [d.round for d in track.data.dropped] == [2, 6, 7, 8]
        assert track.data.short(track.slots[0], 6) == [("GET /", "c=10")]


def test_one_track_alone_has_nothing_to_make_up(monkeypatch) -> None:
    host = Host(lambda r, tag: True)
    monkeypatch.setattr(rounds, "boot_and_measure", host.boot_and_measure)
    monkeypatch.setattr(one_round, "_together", lambda rig, shots: host.together(rig, shots)[:1])
    monkeypatch.setattr(one_round, "_checked", lambda lane: True)
    track = Track([Slot(variant("x"), "x@latest")], Collector())
    rounds.run_rounds(Rig("oha", QUICK, {}), [track], progress=rounds.Progress(1, quiet=True))
    assert [block for block, _ in host.boots] == [0] and track.data.dropped == []


# --- what the compare makes of it ---------------------------------------------------------------

ENDPOINT = "GET /api/v1/items/"
CLOSED = {"mode": "closed", "concurrency": 10}


def figure(metric: str, values, params=None, valid: bool = True) -> Figure:
    params = CLOSED if params is None else params
    tag = "seq" if params.get("mode") == "count" else "c=10"
    return Figure(
        name=f"app@HEAD {ENDPOINT} {tag} {metric}",
        kind="load",
        variant="app@HEAD",
        scenario="app",
        stack="latest",
        metric=metric,
        unit="us",
        bigger_is_better=False,
        samples=list(values),
        value=float(np.median(values)),
        endpoint=ENDPOINT,
        params=params,
        valid=valid,
    )


def drop(round_index: int, apart: float) -> SkippedRun:
    return SkippedRun(
        variant="app@HEAD",
        endpoint=ENDPOINT,
        params=CLOSED,
        round=round_index,
        reason="not side by side",
        windows_apart=apart,
    )


def judged(
    n_samples: int, drops: list[SkippedRun], counts: str = "judged", timing_valid: bool = True
) -> Comparison:
    """A compare of one endpoint: its CPU per request with `n_samples` rounds, and (`counts`:
    "judged", "invalid" or "none") its estimated cost per request."""
    rng = np.random.default_rng(5)
    base = [figure(CPU.key, rng.normal(400, 4, n_samples))]
    head = [figure(CPU.key, rng.normal(400, 4, n_samples), valid=timing_valid)]
    if counts != "none":
        seq = {"mode": "count"}
        base.append(figure("cost_us_per_request", [405.0, 405.2, 405.1], seq))
        head.append(
            figure("cost_us_per_request", [405.1, 405.0, 405.2], seq, valid=counts == "judged")
        )
    rows, _ = compare_figures(base, head, None)
    shorts = dropped.short_rounds(drops, base, planned=6)
    explain_dropped(rows, shorts, base)
    side = lambda role: SideInfo(role=role, spec="HEAD", kind="ref")  # noqa: E731
    return Comparison(
        base=side("base"),
        head=side("head"),
        rounds=6,
        quick=True,
        rows=rows,
        extra=CompareExtra(rounds_dropped=drops, rounds_short=shorts),
    )


def cpu_row(found: Comparison):
    return next(r for r in found.rows if r.metric == CPU.key)


def test_rounds_made_up_leave_a_verdict_and_the_comment_says_they_were_dropped() -> None:
    found = judged(6, [drop(1, 0.12), drop(4, 0.31), drop(6, 0.2)])
    (short,) = found.extra.load.short
    assert (short.dropped, short.made_up, short.dropped_again, short.missing) == (2, 2, 1, 0)
    assert cpu_row(found).verdict == "unchanged" and cpu_row(found).judged_by == ""
    assert found.exit_code() == EXIT_OK
    text = render(found)
    assert (
        "**Load rounds dropped**: base and head ran out of step (a busy host) in 1 shot; 1 made up in extra "
        "rounds, 0 not:"
    ) in text
    assert (
        "- `app@HEAD` `GET /api/v1/items/` c=10: 2 of 6 rounds dropped (base and head not side by side: oha "
        "windows 12-31 % apart), made up in 3 extra rounds, 1 of them dropped too"
    ) in text


def test_no_dropped_round_says_nothing() -> None:
    found = judged(6, [])
    assert found.extra.load.short == [] and "Load rounds dropped" not in render(found)


def test_a_timing_the_host_kept_short_is_judged_by_its_counts_and_the_compare_is_not_unmeasured() -> (
    None
):
    found = judged(4, [drop(1, 0.12), drop(3, 0.12), drop(6, 0.4), drop(7, 0.4), drop(8, 0.4)])
    cpu = cpu_row(found)
    assert cpu.verdict == "no verdict"
    assert cpu.judged_by == f"app {ENDPOINT} seq cost_us_per_request"
    assert cpu.text == (
        "no verdict: too few samples: 2 of 6 rounds dropped (base and head not side by side: oha "
        "windows 12 % and 40 % apart); 3 make-up rounds, 3 of them dropped too: 4 of 6 rounds; "
        f"judged by its counts (app {ENDPOINT} seq cost_us_per_request)"
    )
    assert found.exit_code() == EXIT_OK
    text = render(found)
    assert "in 1 shot; 0 made up in extra rounds, 1 not:" in text
    assert "**No verdict** for these (said why):" in text and cpu.text in text


@pytest.mark.parametrize(
    ("counts", "timing_valid"), [("none", True), ("invalid", True), ("judged", False)]
)
def test_without_judged_counts_or_for_another_reason_it_is_still_not_measured(
    counts: str, timing_valid: bool
) -> None:
    found = judged(5, [drop(2, 0.15)], counts=counts, timing_valid=timing_valid)
    cpu = cpu_row(found)
    assert cpu.verdict == "no verdict" and cpu.judged_by == ""
    assert found.exit_code() == EXIT_UNMEASURED
    if timing_valid:  # too few samples: said, with the rounds dropped
        assert cpu.text == (
            "no verdict: too few samples: 1 of 6 rounds dropped (base and head not side by side: oha "
            "windows 15 % apart), not made up: 5 of 6 rounds"
        )
    else:
        assert cpu.text.startswith("no verdict: invalid measurement on head")
