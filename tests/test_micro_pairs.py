"""Paired micro timings (micro/pairs.py) with the real runner on a small benchmark
package: this interpreter plays both sides, so no stack environment is built."""

import itertools
import sys
import textwrap
from pathlib import Path

from benchwatch.declarations.stacks import Stack
from benchwatch.judge.stats import paired_ratio_interval
from benchwatch.micro import pairs as micro_pairs
from benchwatch.micro.pairs import Player, time_cases

BENCH = """
import os
import time

WORK = int(os.environ.get("BENCH_WORK", "2000"))


class Cases:
    params = ["small", "large"]
    param_names = ["case"]
    timer = time.process_time

    def setup(self, name):
        if name == "large" and os.environ.get("BENCH_SETUP_FAILS"):
            raise RuntimeError("no large payload here")
        self.data = list(range(WORK if name == "small" else 4 * WORK))

    def time_sum(self, name):
        if os.environ.get("BENCH_CALL_FAILS"):
            raise ValueError("boom")
        self.calls = getattr(self, "calls", 0) + 1
        if os.environ.get("BENCH_HANGS") and self.calls > 5:  # after the runner's first check
            time.sleep(3600)
        sum(self.data)


def time_only_here():
    sum(range(100))
"""


def bench_dir(tmp_path: Path, name: str = "benchmarks", extra: str = "") -> Path:
    folder = tmp_path / name
    folder.mkdir()
    (folder / "__init__.py").write_text("")
    (folder / "bench_sum.py").write_text(textwrap.dedent(BENCH) + extra)
    return folder


def player(role: str, folder: Path, stack: str = "latest", **env: str) -> Player:
    return Player(
        role, Stack(name=stack, pins={"fastapi": "0.1"}), Path(sys.executable), folder, env or None
    )


def ratio(base, head, label):
    b = next(f for f in base if f.name.startswith(label))
    h = next(f for f in head if f.name.startswith(label))
    return paired_ratio_interval(b.samples, h.samples)


def test_both_sides_time_every_common_case_in_paired_rounds(tmp_path):
    folder = bench_dir(tmp_path)
    base, head, problems = time_cases(
        player("base", folder, "v2"),
        player("head", folder, BENCH_WORK="6000"),
        patterns=[r"time_sum"],
        rounds=6,
        sample_seconds=0.01,
    )
    assert problems == []
    assert sorted(f.name for f in base) == ["micro large sum@v2", "micro small sum@v2"]
    assert sorted(f.name for f in head) == ["micro large sum@latest", "micro small sum@latest"]
    for found in base + head:
        assert len(found.samples) == 6 and all(s > 0 for s in found.samples)
        assert (
            found.kind == "micro"
            and found.unit == "us"
            and found.params["case"] in ("small", "large")
        )
        assert "alternating with the other side's on one core" in found.note
    # head sums three times as many numbers: every round says so
    interval = ratio(base, head, "micro small sum")
    assert interval.low > 1.5


def test_a_case_failing_on_one_side_is_reported_and_the_others_are_timed(tmp_path):
    folder = bench_dir(tmp_path)
    base, head, problems = time_cases(
        player("base", folder),
        player("head", folder, BENCH_SETUP_FAILS="1"),
        patterns=[r"time_sum"],
        rounds=2,
        sample_seconds=0.005,
    )
    assert [f.name for f in base] == ["micro small sum@latest"] == [f.name for f in head]
    assert len(problems) == 1 and "large" in problems[0].endpoint
    assert "no large payload here" in problems[0].reason


def test_a_case_that_raises_while_timed_stops_that_pair_with_its_reason(tmp_path):
    folder = bench_dir(tmp_path)
    base, head, problems = time_cases(
        player("base", folder),
        player("head", folder, BENCH_CALL_FAILS="1"),
        patterns=[r"time_sum"],
        rounds=2,
        sample_seconds=0.005,
    )
    assert base == [] == head
    assert any("boom" in p.reason for p in problems)


def test_a_runner_that_stops_answering_is_killed_and_said(tmp_path, monkeypatch):
    folder = bench_dir(tmp_path)
    monkeypatch.setattr(micro_pairs, "REPLY_TIMEOUT_S", 2)
    base, head, problems = time_cases(
        player("base", folder),
        player("head", folder, BENCH_HANGS="1"),
        patterns=[r"time_sum\('small'\)"],
        rounds=2,
        sample_seconds=0.005,
    )
    assert base == [] == head
    assert any("gave no answer in 2 s" in p.reason for p in problems)


def test_a_package_that_does_not_import_is_one_problem(tmp_path):
    folder = bench_dir(tmp_path, extra="\nimport no_such_module_here\n")
    base, head, problems = time_cases(player("base", folder), player("head", folder), rounds=2)
    assert base == [] == head
    assert len(problems) == 2 and all("no_such_module_here" in p.reason for p in problems)


def test_cases_on_one_side_only_are_not_timed(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    old = bench_dir(tmp_path / "a")
    new = bench_dir(tmp_path / "b", extra="\ndef time_brand_new():\n    pass\n")
    base, head, problems = time_cases(
        player("base", old),
        player("head", new),
        patterns=[r"only_here|brand_new"],
        rounds=2,
        sample_seconds=0.005,
    )
    assert problems == []
    assert [f.metric for f in base] == ["only_here"] == [f.metric for f in head]


def test_the_micro_injector_slows_head_by_its_fraction(tmp_path):
    """The repository's benchmarks/inject.py wraps the time_ methods: head repeats half its calls."""
    folder = bench_dir(tmp_path, extra="\nfrom . import inject\ninject.inject_into(Cases)\n")
    (folder / "inject.py").write_text(
        (Path(__file__).parents[1] / "benchmarks" / "inject.py").read_text()
    )
    base, head, problems = time_cases(
        player("base", folder, BENCHWATCH_MICRO_INJECT="0"),
        player("head", folder, BENCHWATCH_MICRO_INJECT="0.5"),
        patterns=[r"time_sum\('large'\)"],
        rounds=6,
        sample_seconds=0.02,
    )
    assert problems == []
    interval = ratio(base, head, "micro large sum")
    assert 1.25 < interval.ratio < 1.75


def test_every_round_is_timed_by_a_fresh_pair_of_processes_and_none_outlives_the_call(
    tmp_path, monkeypatch
):
    folder = bench_dir(tmp_path)
    started = []
    original = micro_pairs.Runner.__init__

    def counting(self, player, cases):
        original(self, player, cases)
        started.append(self.process)

    monkeypatch.setattr(micro_pairs.Runner, "__init__", counting)
    base, head, problems = time_cases(
        player("base", folder),
        player("head", folder),
        patterns=[r"time_sum\('small'\)"],
        rounds=3,
        sample_seconds=0.005,
    )
    assert problems == [] and len(base[0].samples) == 3
    assert len(started) == 6 and len({p.pid for p in started}) == 6
    assert all(p.poll() is not None for p in started)  # every runner has exited


def test_a_cases_batches_are_spread_over_the_round_and_alternate_which_side_goes_first(
    tmp_path, monkeypatch
):
    # a host that slows a process for a stretch of time must not catch all of one side's batches
    # of a case and none of the other's: one batch of every case, then the next
    folder = bench_dir(tmp_path)
    requests = []
    original = micro_pairs._alternate

    def recording(runners, request, first):
        requests.append((request.split()[0], first))
        return original(runners, request, first)

    monkeypatch.setattr(micro_pairs, "_alternate", recording)
    base, _, problems = time_cases(
        player("base", folder),
        player("head", folder),
        patterns=[r"time_sum"],
        rounds=2,
        sample_seconds=0.005,
    )
    assert problems == [] and len(base) == 2
    per_round = 2 * micro_pairs.BATCHES
    for round_requests in (requests[:per_round], requests[per_round:]):
        cases = [case for case, _ in round_requests]
        assert len(set(cases)) == 2 and all(a != b for a, b in itertools.pairwise(cases))
        for case in set(cases):
            firsts = [first for c, first in round_requests if c == case]
            assert len(firsts) == micro_pairs.BATCHES and sorted(set(firsts)) == [0, 1]
