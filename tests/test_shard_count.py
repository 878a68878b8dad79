"""The shard count a pull request's compare takes when the caller leaves it to benchwatch
(reusable-pr.yml's `shards: 0`): compare/shard_count.py and `benchwatch compare-shards`."""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys

import pytest
from conftest import REPO, variant

from benchwatch.compare.shard_count import (
    ENDPOINTS_PER_SHARD,
    MAX_SHARDS,
    declared_endpoints,
    output_lines,
    shards_for,
)
from benchwatch.declarations.requests import Endpoint
from benchwatch.errors import UserError


@pytest.mark.parametrize(
    "endpoints, shards",
    [(0, 1), (1, 1), (25, 1), (26, 2), (50, 2), (51, 3), (100, 4), (250, 10), (10_000, 10)],
)
def test_one_runner_per_25_endpoints_at_most_10(endpoints: int, shards: int) -> None:
    assert (ENDPOINTS_PER_SHARD, MAX_SHARDS) == (25, 10)
    assert shards_for(endpoints) == shards


def test_the_limits_can_be_given_and_must_be_at_least_one() -> None:
    assert shards_for(7, per_shard=2, most=3) == 3 and shards_for(7, per_shard=4, most=3) == 2
    for per_shard, most in ((0, 3), (2, 0), (-1, 1)):
        with pytest.raises(UserError, match="at least 1"):
            shards_for(5, per_shard, most)


def test_each_variants_endpoint_counts_once() -> None:
    many = tuple(Endpoint(name=f"e{i}", path=f"/e{i}") for i in range(30))
    wide = dataclasses.replace(variant("wide"), endpoints=many, quick_endpoints=many[:1])
    # a flavor's variant with another id counts its own; the same variant twice does not
    assert declared_endpoints([wide, wide, variant("hello"), variant("hello", "next")]) == 32
    assert declared_endpoints([]) == 0


def test_the_output_is_the_count_and_the_matrix() -> None:
    assert output_lines(100, 4) == ["endpoints=100", "count=4", "list=[1,2,3,4]"]
    assert output_lines(0, 1) == ["endpoints=0", "count=1", "list=[1]"]


def _compare_shards(*args: str) -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in os.environ.items() if k != "BENCHWATCH_ROOT"}
    return subprocess.run(
        [sys.executable, "-m", "benchwatch", "compare-shards", *args],
        cwd=REPO,
        env=environ,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_the_command_counts_the_selected_variants_endpoints() -> None:
    from benchwatch.compare.sides import ref_variants
    from benchwatch.project.loading import load_project

    selected = ref_variants(load_project(REPO), "hello*@latest,posts@latest")
    endpoints = sum(len(v.endpoints) for v in selected)
    assert endpoints >= 3
    done = _compare_shards("-k", "hello*@latest,posts@latest", "--per-shard", "2")
    assert done.returncode == 0, done.stderr
    count = min(MAX_SHARDS, -(-endpoints // 2))
    assert done.stdout.splitlines() == output_lines(endpoints, count)


def test_a_bad_limit_is_one_error_line_and_exit_3() -> None:
    done = _compare_shards("--most", "0")
    assert done.returncode == 3 and done.stdout == ""
    assert done.stderr.strip() == "ERROR: --per-shard 25, --most 0: give numbers of at least 1"
