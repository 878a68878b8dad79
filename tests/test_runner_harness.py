"""tests/runner/harness.py without act: whatever way a run ends, nothing act started survives it
(issue 30: a killed act left the servers its jobs had booted running). A shell script stands in
for act and starts what a job does: a child in its group, one that ignores SIGTERM, and one in a
session of its own (as benchwatch starts its servers)."""

from __future__ import annotations

import signal
import subprocess
import time
from pathlib import Path

import psutil
import pytest
from runner import harness
from runner.harness import Sandbox, run_in_own_group
from runner.stub_api import StubAPI

pytestmark = pytest.mark.slow  # real processes that must be seen to end: 1.5-3.5 s a test

FAKE_ACT = r"""#!/bin/bash
# act as far as processes go: starts what jobs start, says their pids, then $MODE
sleep 300 & echo $! >> "$PIDS"
if [[ "${IGNORE_TERM:-}" == 1 ]]; then (trap '' TERM; exec sleep 301) & echo $! >> "$PIDS"; fi
setsid bash -c 'echo $$ >> "$PIDS"; exec sleep 302' &
while [[ $(wc -l < "$PIDS") -lt $(( ${IGNORE_TERM:-0} + 2 )) ]]; do sleep 0.05; done
echo started
case "$MODE" in
  exit) sleep 1; exit 3 ;;  # a run of act lasts minutes: the harness sees what it started
  *) wait ;;
esac
"""


@pytest.fixture
def fake_act(tmp_path: Path) -> Path:
    path = tmp_path / "act"
    path.write_text(FAKE_ACT)
    path.chmod(0o755)
    return path


def alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def started(pids: Path) -> list[int]:
    found = [int(line) for line in pids.read_text().split()]
    assert len(found) >= 2, found
    return found


def run(fake_act: Path, tmp_path: Path, mode: str, timeout: float):
    """(a call of run_in_own_group on the stand-in, with a child ignoring SIGTERM; its pid file)"""
    pids = tmp_path / "pids"
    pids.write_text("")
    env = {"PATH": "/usr/bin:/bin", "PIDS": str(pids), "MODE": mode, "IGNORE_TERM": "1"}

    def call() -> subprocess.CompletedProcess:
        with (tmp_path / "log").open("w") as out:
            return run_in_own_group(
                [str(fake_act)], cwd=tmp_path, env=env, out=out, timeout=timeout, grace=1.0
            )

    return call, pids


def test_the_planted_processes_run_until_they_are_killed(fake_act, tmp_path):
    """The stand-in itself: with nothing ending them, its three children outlive it."""
    pids = tmp_path / "pids"
    pids.write_text("")
    env = {"PATH": "/usr/bin:/bin", "PIDS": str(pids), "MODE": "exit", "IGNORE_TERM": "1"}
    with (tmp_path / "log").open("w") as out:  # not a pipe: the children hold it open
        done = subprocess.run([str(fake_act)], env=env, stdout=out, timeout=30)
    assert done.returncode == 3 and (tmp_path / "log").read_text() == "started\n"
    found = started(pids)
    try:
        assert len(found) == 3 and all(alive(pid) for pid in found)
    finally:
        for pid in found:
            psutil.Process(pid).kill()


def test_act_that_exits_leaves_nothing_running(fake_act, tmp_path):
    call, pids = run(fake_act, tmp_path, "exit", timeout=60)
    done = call()
    assert done.returncode == 3 and "started" in (tmp_path / "log").read_text()
    assert [pid for pid in started(pids) if alive(pid)] == []


def test_act_past_its_timeout_is_ended_with_everything_it_started(fake_act, tmp_path):
    call, pids = run(fake_act, tmp_path, "wait", timeout=2)
    with pytest.raises(subprocess.TimeoutExpired):
        call()
    assert [pid for pid in started(pids) if alive(pid)] == []


def test_an_exception_while_act_runs_ends_everything_it_started(fake_act, tmp_path):
    """What pytest-timeout (signal method) or ^C does: an exception in the waiting thread."""

    def interrupt(signum, frame):
        raise RuntimeError("interrupted")

    call, pids = run(fake_act, tmp_path, "wait", timeout=60)
    previous = signal.signal(signal.SIGALRM, interrupt)
    signal.setitimer(signal.ITIMER_REAL, 2.0)
    try:
        with pytest.raises(RuntimeError, match="interrupted"):
            call()
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    assert [pid for pid in started(pids) if alive(pid)] == []


@pytest.mark.parametrize("mode, timeout", [("exit", 60), ("wait", 3)])
def test_sandbox_act_ends_what_act_started(fake_act, tmp_path, monkeypatch, mode, timeout):
    """Sandbox.act itself (the stand-in as act): a run that ends and one that times out."""
    pids = tmp_path / "pids"
    pids.write_text("")
    for name, value in {"PIDS": str(pids), "MODE": mode, "IGNORE_TERM": "0"}.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setattr(harness, "act_binary", lambda: str(fake_act))
    source = tmp_path / "source"
    (source / ".github" / "workflows").mkdir(parents=True)
    (source / ".github" / "workflows" / "x.yml").write_text("on: push\njobs: {}\n")
    with StubAPI("o/r") as api:
        sandbox = Sandbox(tmp_path / "sandbox", api, "o/r")
        sha = sandbox.start(source, [])
        began = time.monotonic()
        if mode == "exit":
            assert sandbox.act("push", "x.yml", {}, sha, 1, timeout=timeout).returncode == 3
        else:
            with pytest.raises(subprocess.TimeoutExpired):
                sandbox.act("push", "x.yml", {}, sha, 1, timeout=timeout)
        assert time.monotonic() - began < 30  # what obeys SIGTERM is not waited for the whole grace
    assert [pid for pid in started(pids) if alive(pid)] == []
