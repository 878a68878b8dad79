"""A PR watches every declared endpoint: what a compare did not measure, and why, is said (fast)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from conftest import variant

from benchwatch.declarations.requests import Endpoint
from benchwatch.judge.coverage import NOT_IN_QUICK, coverage
from benchwatch.judge.verdict import CompareExtra, Comparison, SideInfo
from benchwatch.report.comment import render
from benchwatch.results.schema import Figure, Problem


def two_endpoints(stack: str):
    quick, other = (
        Endpoint(name="list", path="/posts"),
        Endpoint(name="synthetic", path="/posts_synthetic"),
    )
    return dataclasses.replace(
        variant("posts", stack), endpoints=(quick, other), quick_endpoints=(quick,)
    )


def made(v, label: str, *, counted: bool, valid: bool = True) -> Figure:
    params = {"mode": "count"} if counted else {"mode": "closed", "concurrency": 10}
    return Figure(
        name=f"{v.id} {label} {'seq instructions' if counted else 'c=10 cpu/req'}",
        kind="load",
        variant=v.id,
        scenario=v.scenario,
        stack=v.stack.name,
        metric="instructions_per_request" if counted else "cpu_us_per_request",
        unit="x",
        bigger_is_better=False,
        samples=[1.0],
        value=1.0,
        endpoint=label,
        params=params,
        valid=valid,
    )


def test_an_endpoint_outside_quick_is_counted_only_and_said_so():
    base, head = two_endpoints("v1"), two_endpoints("v2")
    figures = {
        role: [
            made(v, label, counted=c)
            for label in ("GET /posts", "GET /posts_synthetic")
            for c in (True, False)
            if c or label == "GET /posts"
        ]
        for role, v in (("base", base), ("head", head))
    }
    found = coverage(
        [(base, head)], figures, [], quick=True, load=True, counts=True, counts_unavailable=None
    )
    assert (found.endpoints, found.timed, found.counted) == (2, 1, 2)
    (item,) = found.not_measured
    assert (item.variant, item.endpoint, item.missing, item.why) == (
        "posts@v2",
        "GET /posts_synthetic",
        "timings",
        NOT_IN_QUICK,
    )


def test_every_reason_an_endpoint_lacks_figures_is_said():
    base, head = two_endpoints("v1"), two_endpoints("v2")
    only_timings = {
        role: [made(v, "GET /posts", counted=False)] for role, v in (("base", base), ("head", head))
    }
    missing = coverage(
        [(base, head)],
        only_timings,
        [],
        quick=True,
        load=True,
        counts=True,
        counts_unavailable="valgrind not found (apt-get install valgrind)",
    )
    assert [(i.endpoint, i.missing, i.why) for i in missing.not_measured] == [
        ("GET /posts", "counts", "valgrind not found (apt-get install valgrind)"),
        (
            "GET /posts_synthetic",
            "timings and counts",
            "timings: not in quick; counts: valgrind not found (apt-get install valgrind)",
        ),
    ]
    setup_failed = Problem(
        variant="posts@v2",
        phase="setup",
        reason="head: set-up request 'login': POST /login: status 401, want 2xx",
    )
    count_setup = Problem(
        variant="posts@v2",
        phase="load",
        reason="head: count failed: boot under callgrind: set-up request 'login': status 401",
    )
    count_failed = Problem(
        variant="posts@v1",
        phase="load",
        endpoint="GET /posts_synthetic",
        reason="base: count failed: GET /posts_synthetic: status 500",
    )
    nothing = coverage(
        [(base, head)],
        {"base": [], "head": []},
        [setup_failed, count_setup, count_failed],
        quick=False,
        load=True,
        counts=True,
        counts_unavailable=None,
    )
    whys = {i.endpoint: i.why for i in nothing.not_measured}
    assert whys["GET /posts"] == f"timings: {setup_failed.reason}; counts: {count_setup.reason}"
    assert whys["GET /posts_synthetic"] == (
        f"timings: {setup_failed.reason}; counts: {count_setup.reason}; {count_failed.reason}"
    )
    # a figure measured but invalid on one side: the rows without a verdict say why
    half = coverage(
        [(base, head)],
        {"base": [made(base, "GET /posts", counted=True)], "head": []},
        [],
        quick=True,
        load=False,
        counts=True,
        counts_unavailable=None,
    )
    assert (
        half.not_measured[0].why
        == "timings: --no-load; counts: measured, but no valid figure on both sides "
        "(see the rows without a verdict)"
    )
    # an endpoint only one side declares is said too
    head_more = dataclasses.replace(
        head, endpoints=(*head.endpoints, Endpoint(name="new", path="/new"))
    )
    found = coverage(
        [(base, head_more)],
        {"base": [], "head": []},
        [],
        quick=False,
        load=False,
        counts=False,
        counts_unavailable=None,
    )
    assert ("GET /new", "not declared on base") in [(i.endpoint, i.why) for i in found.not_measured]
    assert {i.why for i in found.not_measured if i.endpoint != "GET /new"} == {
        "timings: --no-load; counts: --no-counts"
    }


def test_the_comment_lists_what_was_not_measured_and_shows_the_servers_error():
    base, head = two_endpoints("v1"), two_endpoints("v2")
    figures = {
        role: [
            made(v, "GET /posts", counted=True),
            made(v, "GET /posts", counted=False),
            made(v, "GET /posts_synthetic", counted=True),
        ]
        for role, v in (("base", base), ("head", head))
    }
    trace = (
        'Traceback (most recent call last):\n  File "app.py", line 9\nRuntimeError: pool exhausted'
    )
    problem = Problem(
        variant="posts@v2",
        phase="load",
        endpoint="GET /posts",
        detail=trace,
        reason="head: c=64: non-2xx responses: 38x 500 (and 2 2xx); the server said: RuntimeError: pool exhausted",
    )
    side = lambda role: SideInfo(role=role, spec="HEAD", kind="ref")  # noqa: E731
    extra = CompareExtra(
        coverage=coverage(
            [(base, head)],
            figures,
            [problem],
            quick=True,
            load=True,
            counts=True,
            counts_unavailable=None,
        )
    )
    text = render(
        Comparison(
            base=side("base"),
            head=side("head"),
            rounds=6,
            quick=True,
            rows=[],
            problems=[problem],
            extra=extra,
        )
    )
    assert (
        "Watched 2 declared endpoints: 1 timed, 2 counted per request; 1 not measured in full (below)."
        in text
    )
    assert "**What was not measured, and why**" in text
    assert f"- no timings: {NOT_IN_QUICK}: `posts@v2` `GET /posts_synthetic`" in text
    assert "RuntimeError: pool exhausted" in text.split("**Problems**")[1]
    assert (
        "  Traceback (most recent call last):" in text
    )  # the server's own lines, under the problem


def test_counts_problems_survive_a_compare_that_also_runs_the_micro_benchmarks(
    monkeypatch, fixture_project: Path
):
    """Before: the micro stage's problems replaced the counts' (`micro_problems = found.problems`)."""
    from benchwatch.compare import rounds
    from benchwatch.compare.compare import compare
    from benchwatch.compare.options import CompareOptions
    from benchwatch.environments import envs
    from benchwatch.project.loading import load_project

    counted = Problem(
        variant="good@latest",
        phase="load",
        endpoint="GET /items",
        reason="base: count failed: boom",
    )
    timed = Problem(variant="micro@latest", phase="micro", reason="asv failed")
    monkeypatch.setattr(envs, "prepare", lambda variants: ({}, {}))
    monkeypatch.setattr(
        rounds, "measure_counts", lambda *a, **k: rounds.CountResult(problems=[counted])
    )
    monkeypatch.setattr(
        rounds, "measure_micro", lambda *a, **k: rounds.MicroResult(problems=[timed])
    )
    comparison, _ = compare(
        load_project(fixture_project),
        "latest",
        "latest",
        CompareOptions(patterns="good@*", load=False, out=fixture_project / "out", quiet=True),
    )
    assert counted in comparison.problems and timed in comparison.problems
    assert comparison.extra.coverage is not None
    assert {(i.endpoint, i.missing) for i in comparison.extra.coverage.not_measured} >= {
        ("GET /items", "timings and counts")
    }
