from __future__ import annotations

import os
from pathlib import Path

import pytest

from benchwatch.errors import UserError
from benchwatch.measure import loadgen
from benchwatch.measure.loadgen import LoadSpec, build_argv, judge


def _oha_json(statuses: dict, errors: dict, total: float = 2.0) -> dict:
    return {
        "summary": {"total": total, "requestsPerSec": 999999.0, "successRate": 1.0},
        "latencyPercentiles": {"p50": 0.002, "p99": 0.010},
        "statusCodeDistribution": statuses,
        "errorDistribution": errors,
    }


def test_throughput_counts_only_2xx_and_ignores_oha_rps() -> None:
    outcome = judge(_oha_json({"200": 1000}, {"aborted due to deadline": 7}))
    assert outcome.valid
    assert outcome.rps == 500.0
    assert outcome.deadline_aborts == 7
    assert (outcome.p50_ms, outcome.p99_ms) == (2.0, 10.0)


def test_non_2xx_makes_the_measurement_invalid_even_when_oha_says_success() -> None:
    outcome = judge(_oha_json({"200": 50, "500": 3561}, {}))
    assert not outcome.valid
    assert outcome.problems == ["non-2xx responses: 3561x 500 (and 50 2xx)"]


def test_connection_errors_make_it_invalid() -> None:
    outcome = judge(_oha_json({}, {"Connection refused (os error 111)": 34816}))
    assert not outcome.valid
    assert "request errors: 34816x Connection refused (os error 111)" in outcome.problems


def test_unreadable_json_is_a_problem_not_a_crash() -> None:
    assert judge({"nothing": 1}).problems[0].startswith("unreadable oha output")


def test_argv_closed_open_and_body(tmp_path: Path) -> None:
    closed = build_argv("oha", LoadSpec(url="http://127.0.0.1:1/x", duration=1, concurrency=10))
    assert closed[:6] == ["oha", "-z", "1s", "-w", "-c", "10"]
    assert "-q" not in closed and closed[-1] == "http://127.0.0.1:1/x"
    body = tmp_path / "body"
    opened = build_argv(
        "oha",
        LoadSpec(
            url="http://h/p",
            duration=2.5,
            concurrency=64,
            rate=300,
            method="POST",
            body=b"{}",
            content_type="application/json",
        ),
        body,
    )
    assert opened[opened.index("-q") + 1] == "300" and "--latency-correction" in opened
    assert opened[opened.index("-D") + 1] == str(body)
    assert opened[opened.index("-T") + 1] == "application/json"
    assert opened[opened.index("-m") + 1] == "POST"
    counted = build_argv("oha", LoadSpec(url="http://h/p", duration=5, concurrency=10, requests=12))
    assert counted[1:3] == ["-n", "12"] and "-z" not in counted


def test_missing_oha_without_cargo_is_a_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv(loadgen.OHA_ENV, raising=False)
    with pytest.raises(
        UserError, match=r"oha not found on PATH or in ~/.cargo/bin: .*cargo install oha --locked"
    ):
        loadgen.ensure_oha()


def test_real_oha_against_a_closed_port_is_invalid() -> None:
    oha = loadgen.find_oha()
    if oha is None:
        pytest.skip("oha not installed")
    result = loadgen.run_oha(oha, LoadSpec(url="http://127.0.0.1:9/x", duration=0.3, concurrency=2))
    assert not result.outcome.valid
    assert any("request errors" in p for p in result.outcome.problems)
    assert result.cpu_seconds >= 0 and result.wall_seconds > 0
    assert os.path.basename(result.argv[0]) == "oha"
