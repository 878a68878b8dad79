"""The PR verdict's gate: counts first, own floors only, and confirmation of timing regressions."""

from pathlib import Path

import numpy as np
import pytest

from benchwatch.counts.cost import cost_figures
from benchwatch.counts.weights import Weights
from benchwatch.figures.figure_key import load_key
from benchwatch.figures.metrics import COST, CPU, INSTRUCTIONS, SYSCALLS, Closed, Counted
from benchwatch.judge import gate
from benchwatch.judge.calibrate import Calibration
from benchwatch.judge.cost_floor import set_cost_floors
from benchwatch.judge.verdict import EXIT_OK, EXIT_REGRESSION, Comparison, SideInfo, compare_figures
from benchwatch.measure import inject as inject_seam
from benchwatch.report.comment import render
from benchwatch.results.schema import Figure

CLOSED = Closed(10)


def load_figure(endpoint, metric, samples, setting=CLOSED, detail=None, stack="latest"):
    return Figure(
        name=load_key(f"hello@{stack}", endpoint, setting, metric).name,
        kind="load",
        variant=f"hello@{stack}",
        scenario="hello",
        stack=stack,
        metric=metric.key,
        unit=metric.unit,
        bigger_is_better=False,
        samples=list(samples),
        value=float(np.median(samples)),
        endpoint=endpoint,
        params=setting.params(),
        detail=detail or {},
    )


def calibration(own_labels):
    return Calibration(
        floors={CPU.key: 0.02},
        method="test",
        rounds=16,
        compare_rounds=8,
        date="2026-11-24",
        detail={CPU.key: {label: 0.02 for label in own_labels}},
    )


def comparison(rows):
    side = lambda role: SideInfo(role=role, spec="latest", kind="stack")  # noqa: E731
    return Comparison(base=side("base"), head=side("head"), rounds=8, quick=True, rows=rows)


# 0.1 ns per instruction, 1 µs per call but `write` (2 µs): round numbers to check by hand
WEIGHTS = Weights(
    user_us_per_instruction=1e-4,
    system_us_per_call={"write": 2.0, "writev": 1.0, "read": 1.0},
    other_call_us=1.0,
    instructions_per_iteration=1000.0,
    seconds=0.0,
)


def judged(base, head, cal, weights=WEIGHTS):
    """Rows as compare makes them: the counts weighed into costs, each cost's floor from its parts'."""
    rows, _ = compare_figures(
        base + cost_figures(base, weights), head + cost_figures(head, weights), cal
    )
    set_cost_floors(rows)
    return rows


SLOW = np.linspace(104, 106, 8)  # ~5 % slower than 100
SAME = np.linspace(99.5, 100.5, 8)


def test_a_timing_figure_with_a_borrowed_floor_is_information_and_its_counts_still_gate():
    """The counts of the same endpoint still gate, as one cost: instructions +5 % make the cost
    regress (gating); the instructions row itself is the mechanism, judged but not gating."""
    calls = {"read": 1.0, "write": 2.0}
    base = [
        load_figure("GET /a", CPU, SAME),
        load_figure("GET /b", CPU, SAME),
        load_figure("GET /b", INSTRUCTIONS, [1e6, 1e6], Counted()),
        load_figure("GET /b", SYSCALLS, [3.0, 3.0], Counted(), calls),
    ]
    head = [
        load_figure("GET /a", CPU, SAME * 1.05),
        load_figure("GET /b", CPU, SAME * 1.05),
        load_figure("GET /b", INSTRUCTIONS, [1.05e6, 1.05e6], Counted()),
        load_figure("GET /b", SYSCALLS, [3.0, 3.0], Counted(), calls),
    ]
    rows = judged(base, head, calibration(["hello GET /a c=10 cpu_us_per_request"]))
    gate.demote_borrowed_floors(rows)
    by_label = {r.label: r for r in rows}
    own = by_label["hello GET /a c=10 cpu_us_per_request"]
    borrowed = by_label["hello GET /b c=10 cpu_us_per_request"]
    counted = by_label["hello GET /b seq instructions_per_request"]
    cost = by_label["hello GET /b seq cost_us_per_request"]
    assert (own.floor_source, own.gating) == ("figure", True)
    assert (borrowed.floor_source, borrowed.gating, borrowed.verdict) == (
        "metric",
        False,
        "regression",
    )
    assert borrowed.reason == gate.NOT_OWN_FLOOR
    assert (counted.gating, counted.verdict) == (False, "regression")
    assert (cost.gating, cost.verdict) == (True, "regression")
    # counts and their cost are never sent to confirmation: they are deterministic
    assert gate.to_confirm(rows) == [own]


def test_a_timing_regression_not_seen_again_is_unconfirmed_and_the_exit_is_zero():
    cal = calibration(["hello GET /a c=10 cpu_us_per_request"])
    rows, _ = compare_figures(
        [load_figure("GET /a", CPU, SAME)], [load_figure("GET /a", CPU, SLOW)], cal
    )
    flagged = gate.to_confirm(rows)
    assert [r.verdict for r in flagged] == ["regression"]
    assert comparison(rows).exit_code() == EXIT_REGRESSION
    second, _ = compare_figures(
        [load_figure("GET /a", CPU, SAME)], [load_figure("GET /a", CPU, SAME[::-1])], cal
    )
    gate.confirm(flagged, second)
    assert rows[0].verdict == "unconfirmed" and rows[0].confirmation.verdict == "unchanged"
    assert comparison(rows).exit_code() == EXIT_OK
    text = render(comparison(rows))
    assert "**Not confirmed**" in text and "again: " in text and "1 not confirmed" in text


def test_a_timing_regression_seen_again_stays_red_and_one_not_measured_again_too():
    cal = calibration(
        ["hello GET /a c=10 cpu_us_per_request", "hello GET /b c=10 cpu_us_per_request"]
    )
    rows, _ = compare_figures(
        [load_figure("GET /a", CPU, SAME), load_figure("GET /b", CPU, SAME)],
        [load_figure("GET /a", CPU, SLOW), load_figure("GET /b", CPU, SLOW)],
        cal,
    )
    flagged = gate.to_confirm(rows)
    second, _ = compare_figures(
        [load_figure("GET /a", CPU, SAME)], [load_figure("GET /a", CPU, SLOW[::-1])], cal
    )
    gate.confirm(flagged, second)  # GET /b was not measured again
    verdicts = {r.endpoint: (r.verdict, r.confirmation.verdict) for r in rows}
    assert verdicts == {
        "GET /a": ("regression", "regression"),
        "GET /b": ("regression", "no verdict"),
    }
    assert comparison(rows).exit_code() == EXIT_REGRESSION


def test_a_changed_system_call_count_names_the_calls_that_moved():
    """Two more calls: the count is the mechanism (judged, named, not gating); the cost they add gates."""
    base = [
        load_figure(
            "GET /a",
            SYSCALLS,
            [6.0, 6.0],
            Counted(),
            {"epoll_wait": 2.0, "sendto": 1.0, "epoll_ctl": 0.0},
        ),
        load_figure("GET /a", INSTRUCTIONS, [1e6, 1e6], Counted()),
    ]
    head = [
        load_figure(
            "GET /a",
            SYSCALLS,
            [8.0, 8.0],
            Counted(),
            {"epoll_wait": 2.0, "sendto": 1.0, "epoll_ctl": 2.0},
        ),
        load_figure("GET /a", INSTRUCTIONS, [1e6, 1e6], Counted()),
    ]
    rows = {r.metric: r for r in judged(base, head, None)}
    syscalls, cost = rows[SYSCALLS.key], rows[COST.key]
    assert (syscalls.verdict, syscalls.gating) == ("regression", False)
    assert syscalls.detail["epoll_ctl"] == [0.0, 2.0]
    assert (cost.verdict, cost.gating) == ("regression", True)
    text = render(comparison(list(rows.values())))
    assert "`epoll_ctl` 0.00 → 2.00" in text and "`sendto` 0.00" not in text
    # (100 + 1 + 2) / (100 + 1) µs: 1e6 instructions at 0.1 ns, `sendto` 1 µs, `epoll_ctl` 1 µs (not measured: other)
    assert "estimated cost per request 1.02x higher [1.02, 1.02] (hello GET /a)" in text
    lines = text.splitlines()
    under_cost = lines[
        1
        + next(
            i for i, line in enumerate(lines) if line.startswith("| 🔴 | hello GET /a seq cost_")
        )
    ]
    assert under_cost.startswith(
        "| | ↳ per request µs: `epoll_ctl` 0.00 → 2.00"
    )  # the cost's parts, in µs


def test_compare_measures_only_the_flagged_figures_again(monkeypatch, tmp_path):
    """compare() wiring: the flagged load figure's variant is booted again with that endpoint only."""
    from benchwatch.compare import confirm, rounds
    from benchwatch.compare.sides import Side
    from benchwatch.project.loading import load_project

    project = load_project(Path(__file__).resolve().parents[1])
    hello = next(v for v in project.variants() if v.id == "hello@latest")
    services = next(v for v in project.variants() if v.id == "services@latest")
    sides = [Side(role, "HEAD", "ref", project, [hello, services]) for role in ("base", "head")]
    measured = []

    def fake_measure_base_and_head(rig, base, head, out, environment, **kwargs):
        measured.append([(v.id, [e.label for e in v.endpoints]) for v in base.variants])
        run = type("R", (), {"figures": [load_figure("GET /", CPU, SAME)], "problems": []})
        return run, type(
            "R", (), {"figures": [load_figure("GET /", CPU, SAME[::-1])], "problems": []}
        )

    monkeypatch.setattr(rounds, "measure_base_and_head", fake_measure_base_and_head)
    cal = calibration(["hello GET / c=10 cpu_us_per_request"])
    first = {"base": [load_figure("GET /", CPU, SAME)], "head": [load_figure("GET /", CPU, SLOW)]}
    rows, _ = compare_figures(first["base"], first["head"], cal)
    again = confirm.measure_again(
        gate.to_confirm(rows),
        first,
        *sides,
        confirm.ConfirmOptions(
            rig=object(),
            environment=None,
            calibration=cal,
            key=Figure.pair_key,
            quick=True,
            patterns=None,
            out=tmp_path,
        ),
    )
    assert measured == [[("hello@latest", ["GET /"])]]
    assert [(r.label, r.verdict) for r in again.rows] == [
        ("hello GET / c=10 cpu_us_per_request", "unchanged")
    ]


MICRO_BENCH = """
import time

from . import inject


class Cases:
    params = ["svc", "svc-large"]
    param_names = ["payload"]
    timer = time.process_time

    def setup(self, payload):
        self.data = list(range(2000 if payload == "svc" else 8000))

    def time_sum(self, payload):
        sum(self.data)


inject.inject_into(Cases)
"""


def test_a_flagged_micro_case_is_timed_again_alone_with_the_same_injection(monkeypatch, tmp_path):
    """compare() wiring of a micro confirmation, with the real runner (this interpreter plays both
    stacks): only the flagged asv case is timed again, head still repeats its injected calls, and
    nothing is counted. tests/test_compare.py's real micro compare runs --no-confirm."""
    import sys

    from conftest import REPO, make_project

    from benchwatch.compare import confirm, rounds
    from benchwatch.compare.sides import Side
    from benchwatch.environments import envs
    from benchwatch.micro import pairs as micro_pairs
    from benchwatch.project.loading import load_project

    app = tmp_path / "svc"
    app.mkdir()
    (app / "benchwatch-app.toml").write_text(
        'name = "svc"\napp = "main:app"\n[[endpoints]]\nname = "r"\npath = "/"\n'
    )
    root = make_project(tmp_path / "p", [app])
    bench = root / "benchmarks"
    bench.mkdir()
    (bench / "__init__.py").write_text("")
    (bench / "inject.py").write_text((REPO / "benchmarks" / "inject.py").read_text())
    (bench / "bench_sum.py").write_text(MICRO_BENCH)
    project = load_project(root)
    sides = [
        Side(role, "latest", "stack", project, project.variants(["latest"]))
        for role in ("base", "head")
    ]
    here = Path(
        sys.executable
    ).parent.parent  # this interpreter's environment stands in for the stack's
    monkeypatch.setattr(envs, "ensure", lambda stack, **kw: envs.Env(stack.name, here, {}))
    monkeypatch.setattr(
        rounds, "_count_instructions", lambda *a, **kw: pytest.fail("a confirmation counts nothing")
    )
    real = micro_pairs.time_cases

    def few_rounds(base, head, **kw):
        return real(base, head, **{**kw, "rounds": 2, "sample_seconds": 0.005})

    monkeypatch.setattr(micro_pairs, "time_cases", few_rounds)
    with inject_seam.armed(inject_seam.Faults(head_micro=0.5)):
        first = rounds.measure_micro(
            *sides, True, None, None, tmp_path / "first", instructions=False
        )
    assert first.problems == [] and len(first.base) == len(first.head) == 2
    rows, _ = compare_figures(first.base, first.head, None, key=Figure.pair_key)
    flagged = [r for r in rows if "svc-large" in (r.base_figure or "")]
    assert len(flagged) == 1 and flagged[0].kind == "micro"
    figures = {"base": first.base, "head": first.head}
    with inject_seam.armed(inject_seam.Faults(head_micro=0.5)):
        again = confirm.measure_again(
            flagged,
            figures,
            *sides,
            confirm.ConfirmOptions(
                rig=None,
                environment=None,
                calibration=None,
                key=Figure.pair_key,
                quick=True,
                patterns=None,
                out=tmp_path / "again",
            ),
        )
    assert (
        again.problems == [] and again.figures == 1
    )  # the flagged case only, found by its asv name
    assert [r.label for r in again.rows] == [flagged[0].label]
    (row,) = again.rows
    assert len(row.base_samples) == len(row.head_samples) == 2
    # head repeats half its calls, as in the first rounds
    assert 1.2 < float(np.median(row.head_samples) / np.median(row.base_samples)) < 1.8


def test_count_floors_come_from_an_aa_compare_and_a_count_never_borrows_another_endpoints():
    from benchwatch.judge.calibrate import count_floors, floor_for

    base = [
        load_figure("GET /a", INSTRUCTIONS, [1000.0, 1001.0], Counted()),
        load_figure("GET /b", INSTRUCTIONS, [1000.0, 1000.0], Counted()),
    ]
    head = [
        load_figure("GET /a", INSTRUCTIONS, [994.0, 995.0], Counted()),  # two boots 0.5-0.6 % apart
        load_figure("GET /b", INSTRUCTIONS, [1000.0, 1000.5], Counted()),
    ]
    rows, _ = compare_figures(base, head, None)
    floors = count_floors(rows)[INSTRUCTIONS.key]
    assert floors["hello GET /a seq instructions_per_request"] == round(2 * (1 - 994 / 1001), 4)
    assert (
        floors["hello GET /b seq instructions_per_request"] == INSTRUCTIONS.default_floor
    )  # the minimum
    cal = Calibration(
        floors={INSTRUCTIONS.key: 0.0119},
        method="t",
        rounds=0,
        compare_rounds=0,
        date="d",
        detail={INSTRUCTIONS.key: floors},
    )
    assert floor_for(INSTRUCTIONS.key, cal, "hello GET /c seq instructions_per_request") == (
        INSTRUCTIONS.default_floor,
        "default",
    )


FAST = np.linspace(94, 96, 8)  # ~5 % faster than 100


def test_a_timing_improvement_is_confirmed_like_a_regression_before_it_is_reported():
    """Quiet in both directions: an improvement flagged in the first rounds is measured again; not
    seen again (or not measured again), it is 'not confirmed', never an improvement."""
    labels = [
        "hello GET /a c=10 cpu_us_per_request",
        "hello GET /b c=10 cpu_us_per_request",
        "hello GET /c c=10 cpu_us_per_request",
    ]
    cal = calibration(labels)
    rows, _ = compare_figures(
        [load_figure(e, CPU, SAME) for e in ("GET /a", "GET /b", "GET /c")],
        [load_figure(e, CPU, FAST) for e in ("GET /a", "GET /b", "GET /c")],
        cal,
    )
    flagged = gate.to_confirm(rows)
    assert sorted(r.endpoint for r in flagged) == ["GET /a", "GET /b", "GET /c"]
    second, _ = compare_figures(
        [load_figure(e, CPU, SAME) for e in ("GET /a", "GET /b")],
        [load_figure("GET /a", CPU, FAST[::-1]), load_figure("GET /b", CPU, SAME[::-1])],
        cal,
    )
    gate.confirm(flagged, second)  # GET /c was not measured again
    verdicts = {r.endpoint: (r.verdict, r.confirmation.verdict) for r in rows}
    assert verdicts == {
        "GET /a": ("improvement", "improvement"),
        "GET /b": ("unconfirmed", "unchanged"),
        "GET /c": ("unconfirmed", "no verdict"),
    }
    assert comparison(rows).exit_code() == EXIT_OK
    text = render(comparison(rows))
    assert "1 improvement, 0 unchanged, 2 not confirmed" in text
    assert "(as a regression or an improvement)" in text


def test_a_no_op_whose_first_rounds_flag_one_improvement_shows_no_verdict_after_confirmation():
    cal = calibration(["hello GET /a c=10 cpu_us_per_request"])
    rows, _ = compare_figures(
        [load_figure("GET /a", CPU, SAME)], [load_figure("GET /a", CPU, FAST)], cal
    )
    assert rows[0].verdict == "improvement"
    second, _ = compare_figures(
        [load_figure("GET /a", CPU, SAME)], [load_figure("GET /a", CPU, SAME[::-1])], cal
    )
    gate.confirm(gate.to_confirm(rows), second)
    assert [r.verdict for r in rows] == ["unconfirmed"]
    assert not [r for r in rows if r.significant]
