"""benchwatch instructions: cachegrind totals, asv-style discovery, per-call counts, problems,
and the micro injector (benchmarks/inject.py)."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO, benchwatch

from benchwatch.declarations.stacks import Stack
from benchwatch.measure.inject import MICRO_INJECT_ENV
from benchwatch.micro import cachegrind
from benchwatch.micro.cases import Case, check, discover, runner_env, select
from benchwatch.micro.instructions import (
    Target,
    _count_target,
    count_instructions,
    per_call,
    quick_patterns,
)
from benchwatch.project.stacks import load_stacks

SAMPLE = REPO / "tests" / "fixtures" / "cachegrind" / "small.out"
TINY_STACK = Stack(name="tiny", pins={"python": "3"})
HAS_VALGRIND = cachegrind.unavailable_reason() is None
needs_valgrind = pytest.mark.skipif(
    not HAS_VALGRIND, reason="valgrind not installed (.ci/run installs it)"
)

TINY_BENCHMARKS = f"""
import os
import sys
from typing import ClassVar

sys.path.insert(0, {str(REPO)!r})
from benchmarks import inject  # the repository's own injector


class Work:
    params: ClassVar = [["small", "large"]]
    param_names: ClassVar = ["size"]

    def setup(self, size):
        if size == "large" and os.environ.get("TINY_SKIP_LARGE"):
            raise NotImplementedError("large is skipped here")
        self.data = list(range(300 if size == "small" else 3000))[::-1]

    def time_sort(self, size):
        sorted(self.data)

    def time_crash_under_valgrind(self, size):
        if "vgpreload" in os.environ.get("LD_PRELOAD", ""):  # valgrind's preloaded library
            os.abort()
        sorted(self.data)

    def time_fails(self, size):
        raise ValueError("broken on purpose")


class Cached:
    def setup_cache(self):
        return list(range(500))

    def setup(self, data):
        self.total = len(data)

    def time_sum(self, data):
        sum(data)


def time_module_level():
    pass


inject.inject_into(Work)
"""


@pytest.fixture
def tiny(tmp_path: Path) -> Path:
    package = tmp_path / "tinybench"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "bench_tiny.py").write_text(TINY_BENCHMARKS)
    return package


def _python(_stack: Stack) -> Path:
    return Path(sys.executable)


def test_reads_the_instruction_total_of_a_cachegrind_file() -> None:
    assert cachegrind.read_total(SAMPLE) == 4001855  # the Ir column of several events


def test_a_file_without_a_summary_is_refused(tmp_path: Path) -> None:
    broken = tmp_path / "cg.out"
    broken.write_text(SAMPLE.read_text().replace("summary:", "total:"))
    with pytest.raises(cachegrind.CachegrindError, match="no `events:`/`summary:` line"):
        cachegrind.read_total(broken)
    broken.write_text("events: I1mr\nsummary: 12\n")
    with pytest.raises(cachegrind.CachegrindError, match="no Ir"):
        cachegrind.read_total(broken)


def test_per_call_is_the_extra_over_n_and_must_grow() -> None:
    assert per_call(250_000, 100) == 2500.0
    assert per_call(0, 100) is None  # 2N calls no dearer than N: invalid
    assert per_call(-1_000, 100) is None


def test_a_count_not_monotone_in_n_is_a_problem_not_a_figure() -> None:
    grows, shrinks = (
        Case("m.C.time_a", 0, "m.C.time_a('x')", ("x",)),
        Case("m.C.time_b", 0, "m.C.time_b('x')", ("x",)),
    )

    class Counter:  # what the valgrind process would have read: case b cost less for 2N calls
        def group(self, target: Target, cases: tuple) -> dict:
            return {grows: [500_000, 500_100], shrinks: [300, -200]}

    target = Target(TINY_STACK, Path(sys.executable), (grows, shrinks), (100, 100))
    counted, problems = _count_target(Counter(), target, lambda line: None)  # type: ignore[arg-type]
    assert counted == {grows: [5000.0, 5001.0]}
    assert [(p.endpoint, p.reason) for p in problems] == [
        (
            "m.C.time_b('x')",
            "instruction count not monotone in N ([300, -200] more for 100 more calls); not published",
        )
    ]


def test_discovery_follows_asv_conventions(tiny: Path) -> None:
    cases = discover(Path(sys.executable), tiny, runner_env())
    names = [c.name for c in cases]
    assert "bench_tiny.Work.time_sort('small')" in names
    assert "bench_tiny.Work.time_sort('large')" in names
    assert "bench_tiny.Cached.time_sum" in names
    assert "bench_tiny.time_module_level" in names
    assert not any("setup" in n or "inject" in n for n in names)
    chosen = select(cases, [r"Work\.time_sort"], [r"'small'"])
    assert [c.short for c in chosen] == ["small sort"]


def test_check_reports_failures_and_skips_per_case(tiny: Path) -> None:
    cases = discover(Path(sys.executable), tiny, runner_env())
    checked = check(Path(sys.executable), tiny, cases, runner_env({"TINY_SKIP_LARGE": "1"}))
    failed = {c.name: why for c, why in checked.failed.items()}
    assert set(failed) == {"bench_tiny.Work.time_fails('small')"}  # large is skipped first
    assert "ValueError: broken on purpose" in failed["bench_tiny.Work.time_fails('small')"]
    assert {c.name for c in checked.skipped} == {
        f"bench_tiny.Work.time_{op}('large')" for op in ("sort", "crash_under_valgrind", "fails")
    }
    assert "bench_tiny.Cached.time_sum" in {c.name for c in checked.working}  # setup_cache -> args


def test_without_valgrind_there_are_no_figures_and_one_reason(
    tiny: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    figures, problems = count_instructions([TINY_STACK], benchmark_dir=tiny, python_for=_python)
    assert figures == []
    assert [p.reason for p in problems] == [
        "valgrind not found on PATH: no instruction counts; install it (Debian/Ubuntu: apt-get install valgrind)"
    ]


def test_cli_says_what_to_fix(tmp_path: Path) -> None:
    done = benchwatch("instructions", "--bench", "(", "--stacks", "latest", "--out", str(tmp_path))
    assert done.returncode == 3
    assert done.stderr.startswith("ERROR: --bench '(': not a regular expression")
    done = benchwatch(
        "instructions",
        "--stacks",
        "latest",
        "--out",
        str(tmp_path),
        env={"PATH": str(tmp_path / "empty")},
    )
    assert done.returncode == 3  # a missing prerequisite: nothing measured, nothing written
    assert done.stderr.strip().splitlines() == [
        "ERROR: valgrind not found on PATH: no instruction counts; install it (Debian/Ubuntu: apt-get install valgrind)"
    ]
    assert not (tmp_path / "run.json").exists()


def test_quick_cases_are_micro_quick_timed_ones() -> None:
    assert quick_patterns(REPO) and not any("track_" in p for p in quick_patterns(REPO))


def test_injector_setting_is_one_name() -> None:
    from benchmarks import inject

    assert inject.ENV_VAR == MICRO_INJECT_ENV


def test_injector_repeats_the_call_a_fraction_of_the_time(monkeypatch: pytest.MonkeyPatch) -> None:
    from benchmarks import inject

    class Bench:
        def __init__(self) -> None:
            self.made = 0

        def time_op(self) -> None:
            self.made += 1

    original = Bench.time_op
    monkeypatch.delenv(inject.ENV_VAR, raising=False)
    inject.inject_into(Bench)
    assert Bench.time_op is original  # off: nothing wrapped
    monkeypatch.setenv(inject.ENV_VAR, "0.02")
    inject.inject_into(Bench)
    bench = Bench()
    for _ in range(100):
        bench.time_op()
    assert bench.made == 102
    monkeypatch.setenv(inject.ENV_VAR, "two percent")
    with pytest.raises(ValueError, match="BENCHWATCH_MICRO_INJECT='two percent': give a fraction"):
        inject.injected_fraction()


@pytest.mark.slow
@needs_valgrind
def test_reads_a_real_cachegrind_file(tmp_path: Path) -> None:
    out = tmp_path / "cg.out"
    done = subprocess.run(
        cachegrind.command([sys.executable, "-c", "sum(range(1000))"], out),
        capture_output=True,
        text=True,
        check=True,
    )
    reported = re.search(r"I\s+refs:\s+([\d,]+)", done.stderr)
    assert reported, done.stderr
    assert cachegrind.read_total(out) == int(reported.group(1).replace(",", ""))


@pytest.mark.slow
@needs_valgrind
@pytest.mark.load_independent
def test_a_case_crashing_under_valgrind_is_reported_and_the_others_counted(tiny: Path) -> None:
    figures, problems = count_instructions(
        [TINY_STACK],
        benchmark_dir=tiny,
        patterns=[r"time_sort|time_crash|time_fails"],
        within=[r"'small'"],
        repeats=1,
        python_for=_python,
        log=lambda line: None,
    )
    assert [f.name for f in figures] == ["micro small sort instructions@tiny"]
    assert figures[0].unit == "instructions" and figures[0].value > 1000
    assert figures[0].params == {"case": "small", "counter": "instructions"}
    reasons = {p.endpoint: p.reason for p in problems}
    assert set(reasons) == {
        "bench_tiny.Work.time_crash_under_valgrind('small')",
        "bench_tiny.Work.time_fails('small')",
    }
    assert reasons["bench_tiny.Work.time_crash_under_valgrind('small')"].startswith(
        "instruction count failed"
    )
    assert reasons["bench_tiny.Work.time_fails('small')"].startswith("fails natively: ValueError")


@pytest.mark.slow
@needs_valgrind
@pytest.mark.load_independent
def test_aa_counts_agree_and_an_injected_two_percent_shows(tiny: Path) -> None:
    def count(extra_env: dict[str, str] | None = None) -> float:
        figures, problems = count_instructions(
            [TINY_STACK],
            benchmark_dir=tiny,
            patterns=[r"Work\.time_sort\('large'\)"],
            repeats=2,
            python_for=_python,
            extra_env=extra_env,
            log=lambda line: None,
        )
        assert not problems and len(figures) == 1
        return figures[0].value

    first, second = (
        count({MICRO_INJECT_ENV: "0"}),
        count({MICRO_INJECT_ENV: "0"}),
    )  # wrapped, no extra
    assert abs(second / first - 1) <= 0.002  # the A/A target
    injected = count({MICRO_INJECT_ENV: "0.02"}) / first
    assert 1.015 <= injected <= 1.025, injected


@pytest.mark.slow
def test_discovers_every_time_method_of_the_repository_benchmarks() -> None:
    from benchwatch.environments.envs import ensure

    python = ensure(load_stacks(REPO)["latest"]).python
    keys = {c.key for c in discover(python, REPO / "benchmarks", runner_env())}
    written = set()
    for path in sorted((REPO / "benchmarks").glob("bench_*.py")):
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, ast.ClassDef):
                written |= {
                    f"{path.stem}.{node.name}.{f.name}"
                    for f in node.body
                    if isinstance(f, ast.FunctionDef) and f.name.startswith("time_")
                }
    assert written and keys == written
