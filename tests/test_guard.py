"""The guard (measure/guard.py) on a small scale: a Python process registers a `sleep` group and a
folder with it, then dies by SIGKILL; what it did not forget is stopped and removed, what it forgot
is not. tests/test_faults.py does the same to real benchwatch commands (slow)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import psutil

OWNER = textwrap.dedent("""
    import os, signal, subprocess, sys
    from pathlib import Path
    from benchwatch.measure import guard
    sleeper = subprocess.Popen(["sleep", "120"], start_new_session=True, stdout=subprocess.DEVNULL)
    ticket = guard.watch_group(sleeper.pid)
    guard.watch_folder(Path(sys.argv[1]))
    guard.watch_command(["touch", sys.argv[2]])
    if sys.argv[3] == "forget":
        guard.forget(ticket)
    print(sleeper.pid, guard.guard_pid(), flush=True)
    sys.stdin.readline()
    os.kill(os.getpid(), signal.SIGKILL)
""")


def _owner(tmp_path: Path, mode: str) -> tuple[subprocess.Popen, int, int]:
    folder = tmp_path / "scratch"
    folder.mkdir()
    owner = subprocess.Popen(
        [sys.executable, "-c", OWNER, str(folder), str(tmp_path / "ran"), mode],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert owner.stdout is not None
    sleeper, guard = map(int, owner.stdout.readline().split())
    return owner, sleeper, guard


def _running(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def _gone(pid: int, seconds: float = 10) -> bool:
    deadline = time.monotonic() + seconds
    while _running(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    return not _running(pid)


def test_what_a_killed_process_registered_is_stopped_run_and_removed(tmp_path: Path) -> None:
    owner, sleeper, guard = _owner(tmp_path, "keep")
    assert _running(sleeper) and _running(guard)
    assert (
        psutil.Process(guard).parent().pid == owner.pid and os.getsid(guard) == guard
    )  # a session of its own
    owner.communicate("go\n", timeout=30)
    assert owner.returncode == -signal.SIGKILL
    assert _gone(sleeper) and _gone(guard)
    assert not (tmp_path / "scratch").exists() and (tmp_path / "ran").exists()


def test_what_was_forgotten_is_left_alone(tmp_path: Path) -> None:
    owner, sleeper, guard = _owner(tmp_path, "forget")
    try:
        owner.communicate("go\n", timeout=30)
        assert _gone(guard)
        assert _running(sleeper)  # benchwatch stopped it itself, the guard must not touch it
        assert not (tmp_path / "scratch").exists()  # the folder was not forgotten
    finally:
        os.killpg(sleeper, signal.SIGKILL)
