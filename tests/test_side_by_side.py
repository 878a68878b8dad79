"""Two variants (or two endpoints) compared side by side, and the questions measured that way:
side parsing, pairing, the round driver's steps, the ratios and their rendering. No servers.
The questions are this repository's (benchwatch.toml's [[questions]])."""

from __future__ import annotations

import pytest
from conftest import REPO, variant
from helpers_rounds import FakeServer, oha_run

from benchwatch.compare import sides
from benchwatch.compare.findings_rounds import QUICK as FINDINGS_QUICK
from benchwatch.compare.findings_rounds import group_ratios, lane_track
from benchwatch.compare.questions import chosen_lanes, group_of
from benchwatch.declarations.project_file import Question
from benchwatch.declarations.requests import Endpoint
from benchwatch.errors import UserError
from benchwatch.figures.metrics import CPU, CPU_SYS, CPU_USER, RSS_PEAK, Closed
from benchwatch.judge.verdict import CompareExtra, Comparison, SideInfo, compare_figures
from benchwatch.measure import one_round, rounds
from benchwatch.measure.collect import Collector, Shot, Slot
from benchwatch.measure.load_plan import QUICK
from benchwatch.measure.one_round import Lane
from benchwatch.measure.rig import Rig, Track
from benchwatch.project.loading import load_project
from benchwatch.report.comment import render
from benchwatch.report.markdown import build, render_markdown
from benchwatch.report.questions import NOT_RUN, paired_text, study_rows
from benchwatch.results.load_facts import AAFigure, AANoise
from benchwatch.results.schema import Figure, PairedRatio, Run, SideBySideInfo


@pytest.fixture(scope="module")
def project():
    return load_project(REPO)


QUESTIONS = load_project(REPO).questions
GROUPS = tuple(group_of(q) for q in QUESTIONS)
BY_KEY = {group.key: group for group in GROUPS}


def resolve(project, base: str, head: str, patterns: str | None = None):
    with sides.resolve(project, base, head, patterns) as found:
        return found


# --- sides ---------------------------------------------------------------------------------


def test_a_variant_side_names_one_variant_and_an_endpoint_narrows_it(project) -> None:
    base, head = resolve(
        project, "payloads@latest:model_model_default_1kb", "payloads@latest:dict_none_orjson_1mb"
    )
    assert (base.kind, head.kind) == ("variant", "variant")
    assert [e.name for e in base.variants[0].endpoints] == ["model_model_default_1kb"]
    assert [e.name for e in head.variants[0].selected_endpoints(quick=True)] == [
        "dict_none_orjson_1mb"
    ]
    assert base.steps() == {"GET /model_model_default?file=1kb": sides.NAMED_ENDPOINT_STEP}
    assert head.steps() == {"GET /dict_none_orjson?file=1mb": sides.NAMED_ENDPOINT_STEP}
    matched, alone = sides.pairs(base, head)
    assert [(b.id, h.id) for b, h in matched] == [
        ("payloads@latest", "payloads@latest")
    ] and alone == []


def test_two_flavors_pair_as_one_variant_each(project) -> None:
    base, head = resolve(project, "github_user@latest", "github_user-orjson_response@latest")
    assert base.endpoint is None and base.steps() == {}
    matched, _ = sides.pairs(base, head)
    assert [(b.id, h.id) for b, h in matched] == [
        ("github_user@latest", "github_user-orjson_response@latest")
    ]


@pytest.mark.parametrize(
    ("base", "head", "patterns", "message"),
    [
        (
            "hello@latest:nope",
            "hello@latest",
            None,
            "hello@latest has no endpoint 'nope'; its endpoints: hello",
        ),
        ("hello@latest:hello", "hello-falcon@latest", None, "name an endpoint on both sides"),
        (
            "hello@latest",
            "latest",
            None,
            "must both be stacks, both git refs or both variants (got a variant and a stack)",
        ),
        (
            "hello@latest",
            "hello-falcon@latest",
            "hello*",
            "-k does not apply when --base and --head name variants",
        ),
        (
            "hello@nowhere",
            "hello@latest",
            None,
            "'hello@nowhere' names no variant (see `benchwatch list`)",
        ),
    ],
)
def test_a_bad_variant_side_is_one_clear_error(project, base, head, patterns, message) -> None:
    with pytest.raises(UserError) as caught:
        resolve(project, base, head, patterns)
    assert message in str(caught.value)
    assert "\n" not in str(caught.value)


# --- pairing --------------------------------------------------------------------------------


def cpu_figure(scenario: str, endpoint: str, samples: list[float]) -> Figure:
    return Figure(
        name=f"{scenario}@latest {endpoint} c=10 cpu/req",
        kind="load",
        variant=f"{scenario}@latest",
        scenario=scenario,
        stack="latest",
        metric=CPU.key,
        unit="us",
        bigger_is_better=False,
        samples=samples,
        value=sorted(samples)[len(samples) // 2],
        endpoint=endpoint,
        params=Closed(10).params(),
    )


def test_two_variants_pair_without_the_scenario_and_named_endpoints_without_the_endpoint(
    project,
) -> None:
    base = [cpu_figure("hello", "GET /", [100.0, 101, 99, 100, 102, 98, 100, 101])]
    head = [cpu_figure("hello-falcon", "GET /", [80.0, 81, 79, 80, 82, 78, 80, 81])]
    rows, unpaired = compare_figures(
        base, head, None
    )  # the default key keeps the scenario: no pair
    assert rows == [] and len(unpaired) == 2
    key = sides.pair_key(*resolve(project, "hello@latest", "hello-falcon@latest"))
    rows, unpaired = compare_figures(base, head, None, key=key)
    assert unpaired == [] and rows[0].verdict == "improvement"
    assert rows[0].label == "hello vs hello-falcon GET / c=10 cpu_us_per_request"
    other = [cpu_figure("hello", "GET /other", [80.0, 81, 79, 80, 82, 78, 80, 81])]
    assert (
        compare_figures(base, other, None, key=key)[0] == []
    )  # endpoints not named: they must match
    named = sides.pair_key(
        *resolve(
            project,
            "payloads@latest:model_model_default_1kb",
            "payloads@latest:dict_none_orjson_1kb",
        )
    )
    rows, _ = compare_figures(base, other, None, key=named)
    assert rows[0].label == "hello GET / vs GET /other c=10 cpu_us_per_request"


def test_the_comment_and_compare_json_say_what_was_compared() -> None:
    def side(role, v, e):
        return SideInfo(role=role, spec=f"{v}:x", kind="variant", variants=[v], endpoint=e)

    comparison = Comparison(
        base=side("base", "payloads@latest", "GET /a"),
        head=side("head", "payloads@latest", "GET /b"),
        rounds=6,
        quick=True,
        rows=[],
        extra=CompareExtra(notes=["micro-benchmarks are per stack"]),
    )
    text = render(comparison)
    assert (
        "**base** variant `payloads@latest` endpoint `GET /a` vs **head** variant `payloads@latest` endpoint `GET /b`"
        in text
    )
    assert "Note: micro-benchmarks are per stack." in text
    dumped = comparison.model_dump(mode="json")
    assert (dumped["base"]["kind"], dumped["head"]["endpoint"]) == ("variant", "GET /b")


# --- the round driver's steps ---------------------------------------------------------------


def test_lanes_with_different_endpoints_mapped_to_one_step_are_loaded_together(monkeypatch) -> None:
    a, b = Endpoint(name="a", path="/a"), Endpoint(name="b", path="/b")
    base_variant = variant("x")
    head_variant = variant("x").__class__(
        **{**base_variant.__dict__, "endpoints": (b,), "quick_endpoints": (b,)}
    )
    base_variant = base_variant.__class__(
        **{**base_variant.__dict__, "endpoints": (a,), "quick_endpoints": (a,)}
    )
    lanes = []
    for v, endpoint in ((base_variant, a), (head_variant, b)):
        track = Track([Slot(v, v.id)], Collector(), steps={endpoint.label: "one step"})
        lanes.append(Lane(track, track.slots[0], FakeServer(), {}, quick=True))  # type: ignore[arg-type]
    batches: list[list[str]] = []

    def together(rig, shots):
        batches.append([s.shot.endpoint.path for s in shots])
        return [oha_run(0.8) for _ in shots]

    monkeypatch.setattr(one_round, "_together", together)
    one_round._measure_step(Rig("oha", QUICK, {}), lanes, "one step", round_index=0)
    assert ["/a", "/b"] in batches  # both endpoints in one batch: at the same moment
    assert all(len(batch) == 2 for batch in batches)
    closed = [
        f.endpoint
        for lane in lanes
        for f in lane.data.figures()
        if f.metric == CPU.key and f.setting == Closed(10)
    ]
    assert closed == ["GET /a", "GET /b"]


def test_a_track_without_steps_measures_by_endpoint_label() -> None:
    track = Track([Slot(variant("x"), "x@latest")])
    assert track.step(Endpoint(name="root", path="/")) == "GET /"


# --- the questions --------------------------------------------------------------------------


def test_only_questions_whose_variants_were_selected_run(project) -> None:
    selected = [v.id for v in project.select("hello*@latest")]
    ran = [g.key for g in GROUPS if not isinstance(chosen_lanes(g, selected), str)]
    assert ran == ["hello_frameworks"]
    assert chosen_lanes(BY_KEY["services_v1_v2"], selected) == (
        "not selected (services@latest, services@seed-v1, services@seed-v2 not in this run)"
    )
    only_one = chosen_lanes(BY_KEY["hello_frameworks"], ["hello@latest"])
    assert isinstance(only_one, str) and "hello-falcon@latest" in only_one
    payloads = BY_KEY["payloads"]  # seed-v1 and seed-v2 alone: only their pair runs
    assert [
        lane.name for lane in chosen_lanes(payloads, ["payloads@seed-v1", "payloads@seed-v2"])
    ] == ["seed-v1", "seed-v2"]


def test_every_lane_names_a_real_variant_and_endpoint(project) -> None:
    every = {v.id: v for v in project.variants(list(project.stacks))}
    for group in GROUPS:
        for lane in group.lanes:
            track = lane_track(every[lane.variant], lane, group.steps)
            assert [track.step(e) for e in track.slots[0].variant.endpoints] == list(group.steps)


def filled(
    project, lane, steps, samples: dict[str, list[float]], memory: list[float] | None = None
) -> Track:
    """A lane's track with `samples` (per step) recorded as its closed-loop CPU figures."""
    track = lane_track(
        next(v for v in project.variants(list(project.stacks)) if v.id == lane.variant), lane, steps
    )
    slot = track.slots[0]
    for endpoint in slot.variant.endpoints:
        for value in samples[track.step(endpoint)]:
            shot = Shot(endpoint, Closed(4), 0.5, 4)
            track.data.record(slot, shot, 0, oha_run(0.5, 1000), value / 1e6 * 1000, True)
    for value in memory or []:
        track.data.record_memory(slot, 50 * 2**20, 60 * 2**20, int(value * 2**20))
    return track


def test_group_ratios_are_paired_intervals_and_say_when_the_interval_holds_one(project) -> None:
    group = BY_KEY["payloads"]
    v1, v2 = group.lanes[1], group.lanes[2]
    rng = [1.00, 1.02, 0.98, 1.01, 0.99, 1.03]
    base = filled(
        project, v1, group.steps, {"1kb": [100 * r for r in rng], "1mb": [300_000 * r for r in rng]}
    )
    head = filled(
        project,
        v2,
        group.steps,
        {"1kb": [100 * r * 1.001 for r in rng[::-1]], "1mb": [15_000 * r for r in rng[::-1]]},
    )
    found = {r.step: r for r in group_ratios(group, [v1, v2], [base, head])}
    assert set(found) == {"1kb", "1mb"}  # only the pair whose two lanes ran
    assert found["1mb"].ratio == pytest.approx(0.05) and found["1mb"].low < 0.05 < found["1mb"].high
    assert found["1mb"].pairs == 6 and not found["1mb"].holds_one()
    assert paired_text(found["1mb"]).startswith("seed-v2 / seed-v1 1mb: cpu/req 0.05x [")
    assert found["1kb"].holds_one() and paired_text(found["1kb"]).endswith(
        "no significant difference"
    )


def test_too_few_rounds_or_a_failed_lane_give_a_reason_not_an_interval(project) -> None:
    group = BY_KEY["hello_frameworks"]
    base = filled(project, group.lanes[0], group.steps, {"hello": [100.0, 101, 99]})
    head = filled(project, group.lanes[1], group.steps, {"hello": [80.0, 81, 79]})
    assert (
        "cannot give a 95% interval" in group_ratios(group, group.lanes[:2], [base, head])[0].reason
    )
    head.data.failed["hello-falcon@latest"] = "server exited with code 1 at boot"
    ratio = group_ratios(group, group.lanes[:2], [base, head])[0]
    assert ratio.ratio is None and ratio.reason == "failed: server exited with code 1 at boot"
    assert (
        paired_text(ratio)
        == "Falcon / FastAPI hello: cpu/req no interval (failed: server exited with code 1 at boot)"
    )


def test_memory_is_one_ratio_per_server(project) -> None:
    group = BY_KEY["posts_v1_v2"]
    six = {step: [100.0] * 6 for step in group.steps}
    base = filled(project, group.lanes[0], group.steps, six, memory=[70, 71, 72, 70, 71, 72])
    head = filled(project, group.lanes[1], group.steps, six, memory=[84, 85, 86, 84, 85, 86])
    peak = next(
        r for r in group_ratios(group, group.lanes[:2], [base, head]) if r.metric == RSS_PEAK.key
    )
    assert peak.step == "" and peak.ratio == pytest.approx(85 / 71, rel=0.02)


# --- run.json and the report ----------------------------------------------------------------


def answered_run() -> Run:
    ratios = [
        PairedRatio(
            group="services_v1_v2",
            base="seed-v1",
            head="seed-v2",
            step="list",
            metric=CPU.key,
            ratio=0.4,
            low=0.38,
            high=0.42,
            pairs=6,
            base_value=400.0,
            head_value=160.0,
        ),
        PairedRatio(
            group="hello_frameworks",
            base="FastAPI",
            head="Falcon",
            step="hello",
            metric=CPU.key,
            ratio=0.99,
            low=0.95,
            high=1.03,
            pairs=6,
        ),
        PairedRatio(
            group="hello_frameworks",
            base="FastAPI",
            head="raw ASGI",
            step="hello",
            metric=CPU.key,
            ratio=0.3,
            low=0.28,
            high=0.32,
            pairs=6,
        ),
    ]
    info = SideBySideInfo(
        plan=FINDINGS_QUICK.info(),
        ratios=ratios,
        seconds=80.0,
        questions=list(QUESTIONS),
        not_run={"posts_v1_v2": "not selected (posts@seed-v1 is not in this run)"},
    )
    run = Run(started_at="2026-11-23T00:00:00+00:00")
    run.extra.side_by_side = info
    run.extra.load.aa_noise = AANoise(
        variant="services@latest",
        figures={
            "services@latest GET /services?offset=0 c=10 cpu/req": AAFigure(
                cv=0.05, ratio=1.091, a=[1.0], a_prime=[1.091], metric=CPU.key
            )
        },
    )
    return run


def test_every_published_figure_has_an_interval_or_says_why_not() -> None:
    run = Run.model_validate_json(
        answered_run().model_dump_json()
    )  # run.json round trip, questions included
    rows = {(r.published.who[:8], r.published.what): r.ours for r in study_rows(run)}
    assert (
        len(rows) == sum(len(q.published) for q in QUESTIONS) == 11
    )  # the five seeds' and pyperformance's
    assert rows[("seed 000", "latency percentiles, Pydantic v1 → v2")] == [
        "seed-v2 / seed-v1 list: cpu/req 0.4x [0.38, 0.42] (400 µs → 160 µs)"
    ]
    assert rows[("seed 004", "hello-world saturation: FastAPI vs Falcon")] == [
        "Falcon / FastAPI hello: cpu/req 0.99x [0.95, 1.03] no significant difference"
    ]
    assert rows[("seed 003", "server memory, v1 → v2")] == [
        "not run: not selected (posts@seed-v1 is not in this run)"
    ]
    assert rows[("seed 001", "ORJSONResponse vs default response (Pydantic v2)")] == [
        "not measured in this run"
    ]
    cpython = next(lines for (who, _), lines in rows.items() if who == "pyperfor")
    assert cpython == ["not measured in this run"]  # an axis is asked for by name: not in this run
    assert all(lines for lines in rows.values())
    skipped = answered_run()
    skipped.extra.side_by_side = SideBySideInfo(questions=list(QUESTIONS))  # run --no-questions
    assert {tuple(r.ours) for r in study_rows(skipped)} == {(NOT_RUN,)}
    old = Run.model_validate_json(
        '{"schema_version": 2, "started_at": "x", "extra": {}}'
    )  # before this field
    assert study_rows(old) == []


def test_the_report_shows_each_ratio_once_the_study_first() -> None:
    markdown = render_markdown(build(answered_run()))
    header = next(line for line in markdown.splitlines() if line.startswith("| who |"))
    assert "theirs" in header and "ours, side by side: ratio [95 % CI] (medians)" in header
    assert "Questions side by side: 6 rounds (quick: fewer and shorter rounds" in markdown
    assert markdown.count("seed-v2 / seed-v1 list: cpu/req 0.4x [0.38, 0.42]") == 1
    # raw ASGI answers no published figure: it is in the questions table, alone
    assert (
        "| hello_frameworks: hello-world JSON: FastAPI, Falcon, bare Starlette, raw ASGI (latest) | raw ASGI / FastAPI hello: cpu/req 0.3x [0.28, 0.32] |"
        in markdown
    )
    assert markdown.count("Falcon / FastAPI hello") == 1
    assert (
        "seed 002 (jirispilka/fastapi-pydantic-v2-benchmark) (https://github.com/jirispilka/"
        in markdown
    )
    assert "json_serializer=orjson.dumps" in markdown and "accepted and never used" in markdown
    # the A/A noise now sits under the per-scenario tables it qualifies
    assert (
        "this run's A/A copy of services@latest (same variant measured twice, in turn) differed by cpu/req up to 9.1%"
        in markdown
    )


def test_a_question_published_figures_are_kept_from_the_declaration() -> None:
    by_name = {q.name: q for q in QUESTIONS}
    assert [p.figure for p in by_name["payloads"].published] == [
        "v1 311 ms vs v2 15 ms per request (20.7x)",
        "3–10 ms per request",
    ]
    assert isinstance(by_name["posts_v1_v2"], Question) and by_name["posts_v1_v2"].published[
        -1
    ].metrics == ["rss_idle_mb", "rss_peak_mb"]


def test_servers_booted_once_serve_every_round_of_their_block(monkeypatch) -> None:
    tracks = [Track([Slot(variant("x"), "x@latest")]), Track([Slot(variant("y"), "y@latest")])]
    calls: list[tuple[list[int], list[str]]] = []

    def boot_and_measure(rig, entries, block, *, announce, done):
        calls.append((list(block), [slot.label for _, slot in entries]))
        for round_index in block:
            announce(round_index)
            done(round_index)

    monkeypatch.setattr(rounds, "boot_and_measure", boot_and_measure)
    plan = FINDINGS_QUICK
    progress = rounds.Progress(plan.rounds, quiet=True)
    rounds.run_rounds(Rig("oha", plan, {}, rounds_per_boot=6), tracks, progress=progress)
    assert calls == [([0, 1, 2, 3, 4, 5], ["x@latest", "y@latest"])]
    calls.clear()
    rounds.run_rounds(Rig("oha", plan, {}, rounds_per_boot=1), tracks, progress=progress)
    assert [block for block, _ in calls] == [[0], [1], [2], [3], [4], [5]]
    assert [order[0] for _, order in calls] == [
        "x@latest",
        "y@latest",
    ] * 3  # who boots first alternates


def test_a_reused_server_is_not_verified_again_and_records_no_memory(monkeypatch) -> None:
    def never(lane):
        raise AssertionError("a reused server is not verified again")

    monkeypatch.setattr(one_round, "_checked", never)
    monkeypatch.setattr(
        one_round,
        "_together",
        lambda rig, shots: [oha_run(0.5) for _ in shots],
    )
    track = Track([Slot(variant("x"), "x@latest")])
    lane = Lane(track, track.slots[0], FakeServer(), {}, quick=True)  # type: ignore[arg-type]
    one_round.measure_lanes(Rig("oha", FINDINGS_QUICK, {}), [lane], round_index=3, fresh=False)
    figures = track.data.figures()
    assert {f.metric for f in figures} == {
        CPU.key,
        CPU_USER.key,
        CPU_SYS.key,
        "rps",
        "latency_p50_ms",
        "latency_p99_ms",
    }  # no RSS
