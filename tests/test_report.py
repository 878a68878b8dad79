"""report.md / report.html from synthetic runs.

Every number below is TEST DATA made up for these tests (round values chosen so the
expected ratios are easy to check by hand); none of it is a measurement.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from benchwatch.cli import main
from benchwatch.report.markdown import REPORT_HTML, REPORT_MD
from benchwatch.report.write import write_report
from benchwatch.results.files import write_run
from benchwatch.results.schema import Figure, Problem, Run

STACKS = ("seed-v1", "seed-v2", "latest")
_UNITS = {
    "cpu_us_per_request": "us",
    "rps": "req/s",
    "latency_p50_ms": "ms",
    "latency_p99_ms": "ms",
}
_SHORT = {
    "cpu_us_per_request": "cpu/req",
    "rps": "rps",
    "latency_p50_ms": "p50",
    "latency_p99_ms": "p99",
}


def load_figure(
    variant: str, endpoint: str, metric: str, value: float, params: dict, valid: bool = True
) -> Figure:
    scenario, stack = variant.split("@")
    tag = (
        f"c={params['concurrency']}"
        if params["mode"] == "closed"
        else f"rate={params['rate_fraction']:.0%}"
    )
    return Figure(
        name=f"{variant} {endpoint} {tag} {_SHORT[metric]}",
        kind="load",
        variant=variant,
        scenario=scenario,
        stack=stack,
        metric=metric,
        unit=_UNITS[metric],
        bigger_is_better=metric == "rps",
        samples=[value * 0.98, value, value * 1.01],
        value=value,
        spread=value * 0.01,
        endpoint=endpoint,
        params=params,
        valid=valid,
        note="" if valid else "invalid: round 2: non-2xx responses",
    )


def endpoint_figures(
    variant: str, endpoint: str, cpu_us: float, concurrencies=(10, 64)
) -> list[Figure]:
    """A consistent synthetic set: one core fully busy, so rps = 1e6 / cpu_us."""
    rps = 1e6 / cpu_us
    figures = []
    for c in concurrencies:
        closed = {"mode": "closed", "concurrency": c}
        figures += [
            load_figure(variant, endpoint, "cpu_us_per_request", cpu_us, closed),
            load_figure(variant, endpoint, "rps", rps, closed),
            load_figure(variant, endpoint, "latency_p50_ms", 1000 * c / rps, closed),
            load_figure(variant, endpoint, "latency_p99_ms", 2500 * c / rps, closed),
        ]
    for fraction in (0.25, 0.5, 0.75):
        opened = {"mode": "open", "rate_fraction": fraction, "rate_rps": round(fraction * rps)}
        figures += [
            load_figure(variant, endpoint, "cpu_us_per_request", cpu_us * 1.1, opened),
            load_figure(
                variant, endpoint, "latency_p50_ms", cpu_us / 1000 / (1 - fraction), opened
            ),
            load_figure(
                variant, endpoint, "latency_p99_ms", 4 * cpu_us / 1000 / (1 - fraction), opened
            ),
        ]
    return figures


def memory_figures(variant: str, idle: float) -> list[Figure]:
    scenario, stack = variant.split("@")
    return [
        Figure(
            name=f"{variant} rss {what}",
            kind="load",
            variant=variant,
            scenario=scenario,
            stack=stack,
            metric=f"rss_{what}_mb",
            unit="MB",
            bigger_is_better=False,
            samples=[idle * grow],
            value=idle * grow,
            params={},
        )
        for what, grow in (("idle", 1.0), ("warm", 1.1), ("peak", 1.2))
    ]


def micro_figure(stack: str, seconds: float) -> Figure:
    return Figure(
        name=f"micro services validate_json@{stack}",
        kind="micro",
        variant=f"services@{stack}",
        scenario="services",
        stack=stack,
        metric="validate_json",
        unit="us",
        bigger_is_better=False,
        samples=[seconds * 1e6],
        value=seconds * 1e6,
        params={"case": "services"},
    )


SERVICES = "GET /services?offset=0"


def synthetic_run(*, with_posts: bool = True) -> Run:
    """TEST DATA. services: seed-v1 400 µs, seed-v2 160 µs (2.5x), latest 100 µs (4x)."""
    figures: list[Figure] = []
    for stack, cpu in zip(STACKS, (400.0, 160.0, 100.0), strict=True):
        figures += endpoint_figures(f"services@{stack}", SERVICES, cpu)
        figures += memory_figures(
            f"services@{stack}", {"seed-v1": 50, "seed-v2": 60, "latest": 55}[stack]
        )
    for stack in ("seed-v2", "latest"):
        figures += endpoint_figures(f"github_user@{stack}", "GET /pydantic_only", 200.0)
        figures += endpoint_figures(f"github_user@{stack}", "GET /pydantic_with_orjson", 200.0)
        figures += endpoint_figures(f"github_user@{stack}", "GET /pydantic_then_orjson", 180.0)
        figures += endpoint_figures(
            f"github_user-orjson_response@{stack}", "GET /pydantic_only", 210.0
        )
    if with_posts:
        for stack, read, synthetic, write in (
            ("seed-v1", 8000.0, 6000.0, 3000.0),
            ("seed-v2", 2000.0, 1000.0, 2900.0),
        ):
            figures += endpoint_figures(
                f"posts@{stack}", "GET /posts?per_page=100&page=0&order=desc", read
            )
            figures += endpoint_figures(
                f"posts@{stack}", "GET /posts_synthetic?per_page=100", synthetic
            )
            figures += endpoint_figures(f"posts@{stack}", "POST /posts", write)
            figures += memory_figures(f"posts@{stack}", {"seed-v1": 80, "seed-v2": 92}[stack])
    figures += endpoint_figures("hello@latest", "GET /", 125.0)
    figures += endpoint_figures("hello-falcon@latest", "GET /", 100.0)
    broken = load_figure(
        "services@seed-v2",
        SERVICES,
        "rps",
        999.0,
        {"mode": "closed", "concurrency": 256},
        valid=False,
    )
    figures.append(broken)
    figures += [
        micro_figure("seed-v1", 40e-6),
        micro_figure("seed-v2", 4e-6),
        micro_figure("latest", 2e-6),
    ]
    for stack, micro_us in (("seed-v1", 300.0), ("latest", 25.0)):  # explains services' cpu/req
        figures.append(
            micro_figure(stack, micro_us * 1e-6).model_copy(
                update={
                    "name": f"micro services response_model@{stack}",
                    "metric": "response_model",
                }
            )
        )
    for figure in figures:
        if figure.endpoint == SERVICES and figure.scenario == "services":
            figure.micro_case = "services"
    return Run(
        started_at="2026-01-01T00:00:00+00:00",
        finished_at="2026-01-01T00:30:00+00:00",
        complete=False,
        command=["benchwatch", "run"],
        environment={
            "cpu_model": "Test CPU",
            "cores": 2,
            "python": "3.11.7",
            "git_commit": "abc123",
            "oha_version": "1.16.0",
            "stacks": {
                "seed-v1": {"fastapi": "0.98.0", "pydantic": "1.10.9"},
                "seed-v2": {"fastapi": "0.100.0", "pydantic": "2.0.3"},
                "latest": {"fastapi": "0.165.0", "pydantic": "2.14.3"},
            },
        },
        figures=figures,
        problems=[
            Problem(
                variant="payloads@seed-v1",
                phase="boot",
                reason="server exited before ready",
                detail="Traceback\nImportError: no module named orjson",
            ),
            Problem(
                variant="services@seed-v2",
                phase="load",
                endpoint=SERVICES,
                reason="c=256: non-2xx responses: 12x 500",
            ),
        ],
        extra={
            "reference_stack": "seed-v1",
            "aa_noise": {
                "variant": "services@latest",
                "figures": {
                    f"services@latest {SERVICES} c=64 cpu/req": {
                        "cv": 0.021,
                        "ratio": 1.01,
                        "metric": "cpu_us_per_request",
                        "a": [100.0, 102.0],
                        "a_prime": [101.0, 103.0],
                    }
                },
            },
            "loadgen": {
                "bottleneck_share": 0.9,
                "bottlenecked_runs": 1,
                "runs": [
                    {
                        "variant": "hello@latest",
                        "endpoint": "GET /",
                        "params": {"mode": "closed", "concurrency": 64},
                        "round": 0,
                        "oha_cpu_share": 0.95,
                        "oha_bottleneck": True,
                        "successes": 5000,
                        "deadline_aborts": 3,
                        "elapsed_s": 5.0,
                        "valid": True,
                        "connections": 64,
                    }
                ],
            },
        },
    )


@pytest.fixture
def report_dir(tmp_path: Path) -> Path:
    write_report(tmp_path, synthetic_run(), stacks=STACKS)
    return tmp_path


def _row(markdown: str, starts: str) -> str:
    return next(line for line in markdown.splitlines() if line.startswith(starts))


def test_cpu_per_request_comes_first_and_ratios_follow_the_metric_direction(
    report_dir: Path,
) -> None:
    md = (report_dir / REPORT_MD).read_text()
    section = md.split(f"**services: {SERVICES}**")[1].split("</details>")[0]
    rows = [line for line in section.splitlines() if line.startswith("| ")]
    assert rows[0].startswith("| figure | services@seed-v1 | services@seed-v2 | services@latest |")
    assert rows[1].startswith("| server CPU µs/request c=10 |")
    metrics = [
        r.split("|")[1].strip().split(" c=")[0].split(" 25%")[0].split(" 50%")[0].split(" 75%")[0]
        for r in rows[1:]
    ]
    assert (
        metrics.index("server CPU µs/request")
        < metrics.index("requests/s")
        < metrics.index("latency p50")
    )
    cpu = rows[1]
    assert "400 µs" in cpu and "(2.50x faster)" in cpu and "(4.00x faster)" in cpu
    rps = _row(section, "| requests/s c=64 |")
    assert "2,500 req/s" in rps and "(2.50x faster)" in rps and "(4.00x faster)" in rps
    memory = md.split("**services: memory (whole server process tree)**")[1]
    idle = _row(memory, "| RSS idle |")
    assert "(1.20x larger)" in idle and "(1.10x larger)" in idle
    assert "ratios against services@seed-v1" in section


def test_problems_and_invalid_figures_are_listed_by_name(report_dir: Path) -> None:
    md = (report_dir / REPORT_MD).read_text()
    head = md.split("### Per scenario")[0]
    assert "payloads@seed-v1 [boot]: server exited before ready" in head
    assert "ImportError: no module named orjson" in head
    assert f"services@seed-v2 {SERVICES} [load]: c=256: non-2xx responses: 12x 500" in head
    assert f"services@seed-v2 {SERVICES} c=256 rps: invalid: round 2" in head
    assert "(invalid)" in _row(md, "| requests/s c=256 |")
    assert "INCOMPLETE" in head
    html = (report_dir / REPORT_HTML).read_text()
    assert "payloads@seed-v1 [boot]: server exited before ready" in html


def test_a_reference_the_run_lacks_gives_no_ratios_said_once(tmp_path: Path) -> None:
    run = synthetic_run()
    run.extra.reference_stack = "v1-last"  # benchwatch.toml's, but this run measured no v1-last
    write_report(tmp_path, run, stacks=STACKS)
    md = (tmp_path / REPORT_MD).read_text()
    said = "No ratios: the reference stack `v1-last` is not in this run (its stacks: latest, seed-v1, seed-v2)."
    assert md.count(said) == 1 and "Ratios are against" not in md
    assert "faster" not in md.split("### Per scenario")[1].split("### Micro")[0]
    assert "ratios against" not in md


def test_without_a_reference_there_are_no_ratios(tmp_path: Path) -> None:
    run = synthetic_run()
    run.extra.reference_stack = None
    write_report(tmp_path, run, stacks=STACKS)
    md = (tmp_path / REPORT_MD).read_text()
    assert md.count("No ratios between stacks: benchwatch.toml names no reference_stack.") == 1
    assert "faster" not in md and "slower" not in md and "ratios against" not in md


def test_a_run_without_questions_has_no_questions_section(report_dir: Path) -> None:
    md = (report_dir / REPORT_MD).read_text()
    html = (report_dir / REPORT_HTML).read_text()
    for text in (md, html):
        assert "questions" not in text.lower()
        assert "study" not in text.lower() and "theirs" not in text


def test_noise_loadgen_and_micro_sections(report_dir: Path) -> None:
    md = (report_dir / REPORT_MD).read_text()
    assert "| services@latest GET /services?offset=0 c=64 cpu/req | 2.1% | 1.010 |" in md
    assert "oha (the load generator) was the bottleneck in 1 measurement(s)" in md
    assert "hello@latest GET / c=64: oha CPU 95%" in md
    micro = _row(md, "| services validate_json |")
    assert "40.0 µs" in micro and "(10.00x faster)" in micro and "(20.00x faster)" in micro
    # the micro figure next to the load figure it explains: 300 of 400 µs, 25 of 100 µs
    assert f"| {SERVICES} | seed-v1 | 400 µs | 300 µs | 75% |" in md
    assert f"| {SERVICES} | latest | 100 µs | 25.0 µs | 25% |" in md
    assert f"| {SERVICES} | seed-v2 |" not in md  # no response_model micro figure for seed-v2


def test_html_is_self_contained_with_charts(report_dir: Path) -> None:
    html = (report_dir / REPORT_HTML).read_text()
    assert not re.search(r"""(src|href)\s*=\s*["']?\s*(https?:)?//""", html, re.I)
    assert "<script" not in html and "<link" not in html and "@import" not in html
    charts = re.findall(r"<svg[^>]*class=\"chart[ \"]", html)
    assert len(charts) >= 4 * 2  # services and posts: cpu, rps, latency, memory at least
    assert (
        "services: server CPU per request" in html
        and "GET /services?offset=0: latency vs offered rate" in html
    )
    assert html.count('<path d="M') >= 6  # services: p50 and p99 lines for three stacks


def test_report_command_regenerates_from_run_json(tmp_path: Path, capsys) -> None:
    write_run(tmp_path, synthetic_run())
    assert main(["report", str(tmp_path), "--reference", "seed-v2"]) == 0
    md = (tmp_path / REPORT_MD).read_text()
    assert "reference stack `seed-v2`" in md
    services = md.split(f"**services: {SERVICES}**")[1]
    assert "(1.60x faster)" in _row(services, "| server CPU µs/request c=10 |")  # latest vs seed-v2
    assert (tmp_path / REPORT_HTML).is_file()


def test_report_command_refuses_a_reference_the_run_lacks(tmp_path: Path, capsys) -> None:
    write_run(tmp_path, synthetic_run())
    assert main(["report", str(tmp_path), "--reference", "v1-last"]) == 3
    err = capsys.readouterr().err.strip()
    assert (
        err
        == "ERROR: --reference v1-last: this run has no figures of that stack (its stacks: latest, seed-v1, seed-v2)"
    )
    assert not (tmp_path / REPORT_MD).exists()


def test_report_command_on_a_missing_run_is_one_line_error(tmp_path: Path, capsys) -> None:
    assert main(["report", str(tmp_path)]) == 3
    err = capsys.readouterr().err.strip()
    assert err.startswith("ERROR:") and "run.json" in err and "\n" not in err


def test_report_and_site_name_a_broken_project_file_instead_of_ignoring_it(
    tmp_path: Path, cli, monkeypatch
) -> None:
    run_dir, project = tmp_path / "run", tmp_path / "project"
    write_run(run_dir, synthetic_run())
    project.mkdir()
    (project / "benchwatch.toml").write_text("[benchwatch]\napps = 3\n")
    for args in (
        ("report", str(run_dir)),
        ("site", "--out", str(tmp_path / "site"), "--run", str(run_dir)),
    ):
        done = cli(*args, root=project)
        assert done.returncode == 3 and done.stderr.startswith(
            f"ERROR: {project / 'benchwatch.toml'}: benchwatch.apps"
        )
    assert not (run_dir / REPORT_MD).exists()
    monkeypatch.delenv("BENCHWATCH_ROOT")
    monkeypatch.chdir(run_dir)  # no project around: the run alone is enough
    assert main(["report", str(run_dir)]) == 0 and (run_dir / REPORT_MD).is_file()
