"""benchwatch micro: real asv passes on two stacks, failures per stack, asv results -> figures."""

from __future__ import annotations

import json
import math
import subprocess
from pathlib import Path

import pytest
from conftest import REPO

from benchwatch.declarations.stacks import Stack
from benchwatch.environments.envs import ensure
from benchwatch.errors import UserError
from benchwatch.micro.asv import run_micro
from benchwatch.micro.figures import figures_from_results, results_path, version_number
from benchwatch.project.stacks import load_stacks

STACKS = load_stacks(REPO)
TWO_STACKS = [STACKS["seed-v1"], STACKS["latest"]]


def _git_repo(directory: Path) -> Path:
    """asv records results per commit: a throwaway repository with one commit."""
    directory.mkdir(parents=True)
    git = ["git", "-C", str(directory), "-c", "user.email=t@example.com", "-c", "user.name=t"]
    subprocess.run([*git, "init", "-q", "-b", "main"], check=True)
    subprocess.run([*git, "commit", "-q", "--allow-empty", "-m", "test"], check=True)
    return directory


def _head(repo: Path) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True, text=True, check=True
    ).stdout.strip()


TINY_BENCHMARKS = """
import time

import pydantic


class Tiny:
    params = [["small", "large"]]
    param_names = ["case"]
    timer = time.process_time

    def setup(self, case):
        if case == "large" and pydantic.VERSION.startswith("2."):
            raise NotImplementedError("large only runs on v1")
        self.count = 10 if case == "small" else 1000

    def time_sum(self, case):
        sum(range(self.count))

    def time_v2_only(self, case):
        if not pydantic.VERSION.startswith("2."):
            raise ValueError("this API needs pydantic 2")
        sum(range(self.count))
"""


@pytest.mark.slow
def test_a_benchmark_failing_on_one_stack_is_reported_and_the_rest_go_on(tmp_path: Path) -> None:
    figures, problems = run_micro(
        TWO_STACKS,
        "Tiny",
        True,
        tmp_path / "out",
        root=REPO,
        benchmark_dir=_tiny_benchmark_dir(tmp_path),
        repo=_git_repo(tmp_path / "repo"),
        machine="test-machine",
    )
    names = sorted(f.name for f in figures)
    assert names == [
        "micro large sum@seed-v1",
        "micro small sum@latest",
        "micro small sum@seed-v1",
        "micro small v2_only@latest",
    ]
    assert sorted((p.variant, p.endpoint) for p in problems) == [
        ("micro@seed-v1", "large v2_only"),
        ("micro@seed-v1", "small v2_only"),
    ]
    assert all("ValueError: this API needs pydantic 2" in p.reason for p in problems)
    for figure in figures:
        assert figure.unit in ("ns", "us", "ms") and figure.value > 0 and figure.samples
    assert (tmp_path / "out" / "asv-html" / "index.html").is_file()
    seed_v1_results = next(
        (tmp_path / "out" / "asv" / "results" / "test-machine").glob("*seed-v1*.json")
    )
    kept = json.loads(seed_v1_results.read_text())["results"]
    assert "bench_tiny.Tiny.time_v2_only" not in kept  # nothing invalid reaches asv publish
    assert "bench_tiny.Tiny.time_sum" in kept


@pytest.mark.slow
def test_real_benchmarks_on_two_stacks_record_their_pinned_versions(tmp_path: Path) -> None:
    pattern = r"(Serialization\.time_dump_json\('services'\)|track_)"
    figures, problems = run_micro(
        TWO_STACKS,
        pattern,
        True,
        tmp_path / "out",
        root=REPO,
        repo=_git_repo(tmp_path / "repo"),
        machine="test-machine",
    )
    assert problems == []  # the track_ versions equal the pins (a mismatch is a problem)
    by_name = {f.name: f for f in figures}
    assert set(by_name) == {f"micro services dump_json@{stack.name}" for stack in TWO_STACKS}
    for stack in TWO_STACKS:
        results = json.loads(
            results_path(
                tmp_path / "out" / "asv" / "results",
                "test-machine",
                _head(tmp_path / "repo"),
                ensure(stack).python,
            ).read_text()
        )
        for package in ("fastapi", "pydantic"):
            tracked = results["results"][f"bench_versions.track_{package}_version"][0][0]
            assert tracked == version_number(stack.pins[package])
        dumped = by_name[f"micro services dump_json@{stack.name}"]
        assert dumped.scenario == "services" and dumped.metric == "dump_json"
        assert len(dumped.samples) >= 3


def test_a_stack_without_results_is_a_problem(tmp_path: Path) -> None:
    figures, problems = figures_from_results(
        results_dir=tmp_path,
        machine="m",
        commit="0" * 40,
        python=Path("/nowhere/bin/python"),
        stack=STACKS["latest"],
        output="line one\nasv: something broke\n",
    )
    assert figures == []
    assert len(problems) == 1
    assert problems[0].variant == "micro@latest" and problems[0].reason == "asv wrote no results"
    assert "something broke" in problems[0].detail


def _write_asv_results(path: Path, python: Path) -> None:
    columns = [
        "result",
        "params",
        "version",
        "started_at",
        "duration",
        "stats_ci_99_a",
        "stats_ci_99_b",
        "stats_q_25",
        "stats_q_75",
        "stats_number",
        "stats_repeat",
        "samples",
    ]
    results = {
        "bench_x.X.time_op": [
            [2.5e-5, float("nan"), None],
            [["'a'", "'b'", "'c'"]],
            "v1",
            0,
            1.0,
            [2.4e-5, None, None],
            [2.6e-5, None, None],
            [2.45e-5, None, None],
            [2.55e-5, None, None],
            [100, None, None],
            [3, None, None],
            [[2.4e-5, 2.5e-5, 2.6e-5], None, None],
        ],
        "bench_x.X.peakmem_op": [[3.5e7], [["'payloads-1MB'"]], "v2", 0, 1.0],
        "bench_x.track_pydantic_version": [[21403], [], "v3", 0, 1.0],
    }
    path.parent.mkdir(parents=True)
    path.write_text(
        json.dumps(
            {
                "commit_hash": "a" * 40,
                "env_name": "x",
                "date": 0,
                "params": {"machine": "m", "python": str(python)},
                "python": str(python),
                "requirements": {},
                "env_vars": {},
                "result_columns": columns,
                "results": results,
                "durations": {},
                "version": 2,
            }
        )
    )


def test_asv_results_become_figures_and_failures_become_problems(tmp_path: Path) -> None:
    python = Path("/envs/latest/bin/python")
    path = results_path(tmp_path, "m", "a" * 40, python)
    _write_asv_results(path, python)
    (tmp_path / "benchmarks.json").write_text(
        json.dumps(
            {
                "bench_x.X.time_op": {"type": "time", "unit": "seconds"},
                "bench_x.X.peakmem_op": {"type": "peakmemory", "unit": "bytes"},
                "bench_x.track_pydantic_version": {"type": "track", "unit": "version"},
            }
        )
    )
    output = (
        "[ 50%] ··· ..._x.X.time_op        1/3 failed\n   Traceback (most recent call last):\n"
        "   KeyError: 'missing'\n[ 75%] ··· bench_x.X.peakmem_op  ok\n"
    )
    figures, problems = figures_from_results(
        results_dir=tmp_path,
        machine="m",
        commit="a" * 40,
        python=python,
        stack=STACKS["latest"],
        output=output,
    )
    by_name = {f.name: f for f in figures}
    assert sorted(by_name) == ["micro a op@latest", "micro payloads-1MB peakmem_op@latest"]
    timed = by_name["micro a op@latest"]
    assert timed.unit == "us"  # always µs, so a trend never sees 999 us turn into 1.001 ms
    assert math.isclose(timed.value, 25.0) and math.isclose(timed.spread, 1.0)
    assert [round(s, 6) for s in timed.samples] == [24.0, 25.0, 26.0]
    memory = by_name["micro payloads-1MB peakmem_op@latest"]
    assert (
        memory.unit == "MB"
        and memory.value == 35.0
        and memory.params == {"case": "payloads-1MB", "size": "1MB"}
    )
    failed, wrong_version = problems  # 21403 is not latest's pydantic 2.14.3 (2014003)
    assert failed.endpoint == "c op" and failed.reason == "benchmark failed: KeyError: 'missing'"
    assert wrong_version.endpoint == "track_pydantic_version"
    assert "2014003" in wrong_version.reason and "21403" in wrong_version.reason
    rewritten = json.loads(path.read_text())
    assert rewritten["params"]["stack"] == "latest"
    assert rewritten["params"]["pydantic"] == STACKS["latest"].pins["pydantic"]


def test_micro_names_an_unknown_stack(cli) -> None:
    done = cli("micro", "--stacks", "nope", "--out", "/tmp/benchwatch-test-unused", root=REPO)
    assert done.returncode == 3
    assert done.stderr.startswith("ERROR: ") and "nope" in done.stderr


def _tiny_benchmark_dir(tmp_path: Path) -> Path:
    bench = tmp_path / "tiny_benchmarks"
    bench.mkdir()
    (bench / "__init__.py").write_text("")
    (bench / "bench_tiny.py").write_text(TINY_BENCHMARKS)
    return bench


@pytest.mark.slow
def test_a_stack_whose_env_fails_to_build_is_reported_and_the_others_run(tmp_path: Path) -> None:
    broken = Stack(name="broken", pins={"pydantic": "99.99.99"})
    figures, problems = run_micro(
        [broken, STACKS["latest"]],
        r"Tiny\.time_sum",
        True,
        tmp_path / "out",
        root=REPO,
        benchmark_dir=_tiny_benchmark_dir(tmp_path),
        repo=_git_repo(tmp_path / "repo"),
        machine="test-machine",
        publish=False,
    )
    assert [f.name for f in figures] == ["micro small sum@latest"]
    assert [(p.variant, p.phase) for p in problems] == [("micro@broken", "env")]
    assert "broken" in problems[0].reason


@pytest.mark.slow
def test_a_pattern_matching_nothing_is_a_user_error(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="no benchmark matches"):
        run_micro(
            [STACKS["latest"]],
            "no_such_benchmark",
            True,
            tmp_path / "out",
            root=REPO,
            benchmark_dir=_tiny_benchmark_dir(tmp_path),
            repo=_git_repo(tmp_path / "repo"),
            machine="test-machine",
        )
