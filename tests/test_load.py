from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest
from conftest import REPO, benchwatch, make_project, uvicorn_processes

from benchwatch.results.files import read_run

pytestmark = pytest.mark.slow

LOAD_APPS = REPO / "tests" / "fixtures" / "load_apps"
GOOD = REPO / "tests" / "fixtures" / "apps" / "good"
WRONG = REPO / "tests" / "fixtures" / "apps" / "wrong_body"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return make_project(
        tmp_path / "project", [GOOD, WRONG, LOAD_APPS / "flaky", LOAD_APPS / "dies"]
    )


def _gab_names(out: Path) -> set[str]:
    return {
        e["name"]
        for f in ("gab-bigger.json", "gab-smaller.json")
        for e in json.loads((out / f).read_text())
    }


def test_broken_variants_are_reported_and_never_published(project: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    done = benchwatch(
        "load",
        "--quick",
        "-k",
        "good@latest,wrong_body@latest,flaky@latest,dies@latest",
        "--out",
        str(out),
        root=project,
        env={"FAIL_AFTER": "5", "DIE_AFTER": "5"},
    )
    text = done.stdout + done.stderr
    assert done.returncode == 2, text  # not measured
    assert "wrong_body@latest GET /items [verify]: body differs" in text
    assert re.search(r"flaky@latest GET /hello \[load\]: \S+: non-2xx responses: \d+x 500", text), (
        text
    )
    assert "dies@latest" in text and "server died during" in text
    assert "1 of 4 variants measured cleanly; 3 with problems" in text

    run = read_run(out)
    assert run.complete
    good = {f.metric for f in run.figures if f.variant == "good@latest" and f.valid}
    assert good == {
        "cpu_us_per_request",
        "cpu_user_us_per_request",
        "cpu_sys_us_per_request",
        "rps",
        "latency_p50_ms",
        "latency_p99_ms",
        "rss_idle_mb",
        "rss_warm_mb",
        "rss_peak_mb",
    }
    cpu = next(f for f in run.figures if f.name == "good@latest GET /items c=10 cpu/req")
    assert cpu.value > 0 and cpu.unit == "us" and not cpu.bigger_is_better
    assert run.figures[0].metric == "cpu_us_per_request"  # the gating figure comes first
    published = _gab_names(out)
    assert published and all(name.startswith("good@latest ") for name in published)
    assert not [f for f in run.figures if f.variant != "good@latest" and f.valid]
    assert run.extra.load.loadgen is not None
    runs = run.extra.load.loadgen.runs
    assert all(r.oha_cpu_share >= 0 for r in runs) and any(not r.valid for r in runs)
    assert run.environment.oha_version and run.environment.stacks["latest"]["fastapi"]
    assert uvicorn_processes(str(LOAD_APPS)) == [] and uvicorn_processes(str(GOOD)) == []


def test_output_dir_not_writable_is_a_clear_error(project: Path, tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    done = benchwatch(
        "load", "--quick", "-k", "good@latest", "--out", str(blocker / "out"), root=project
    )
    assert done.returncode == 3
    assert f"ERROR: --out {blocker / 'out'}: not writable" in done.stderr


def test_missing_oha_is_a_clear_error(project: Path, tmp_path: Path) -> None:
    bare = {"PATH": str(Path(sys.executable).parent), "HOME": str(tmp_path), "BENCHWATCH_OHA": ""}
    done = benchwatch(
        "load", "--quick", "-k", "good@latest", "--out", str(tmp_path / "o"), root=project, env=bare
    )
    assert done.returncode == 3
    assert "ERROR: oha not found on PATH or in ~/.cargo/bin" in done.stderr


def test_ctrl_c_stops_servers_and_keeps_partial_results(project: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "benchwatch",
            "load",
            "--quick",
            "-k",
            "good@latest",
            "--aa",
            "good@latest",
            "--out",
            str(out),
        ],
        env={**os.environ, "BENCHWATCH_ROOT": str(project)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if _has_oha_child(process.pid) and (out / "run.json").exists():
                break
            assert process.poll() is None, process.communicate()
            time.sleep(0.1)
        else:
            pytest.fail("load never started measuring")
        process.send_signal(signal.SIGINT)
        _stdout, stderr = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 130, stderr
    assert "interrupted" in stderr
    run = read_run(out)
    assert run.complete is False
    assert any(
        f.valid and f.variant == "good@latest" for f in run.figures
    )  # the first slot's figures
    assert [p.name for p in out.iterdir() if p.name.startswith(".")] == []  # no half-written file
    assert uvicorn_processes(str(GOOD)) == []


def _has_oha_child(pid: int) -> bool:
    for child in psutil.Process(pid).children(recursive=True):
        try:
            if child.name() == "oha":
                return True
        except psutil.Error:
            continue  # it exited while we looked
    return False
