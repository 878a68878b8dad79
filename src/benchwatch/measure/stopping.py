"""Stopping servers: a wrapper interrupted so it writes what it recorded, the whole process group
ended, every server this process started stopped at exit (SIGTERM included)."""

from __future__ import annotations

import atexit
import os
import signal
import subprocess
import threading

import psutil

from benchwatch.measure import database, guard

_live: dict[int, subprocess.Popen] = {}
_guarded: dict[int, int] = {}  # server pid -> its guard ticket (measure/guard.py)


def register(process: subprocess.Popen) -> None:
    """A server just started, stopped by stop_all at exit; its process group leads everything it
    starts (the wrapper too), registered with the guard: killed should benchwatch end without
    stopping it, SIGKILL included."""
    _live[process.pid] = process
    _guarded[process.pid] = guard.watch_group(process.pid)


def interrupt(process: subprocess.Popen, wait: float = 15.0) -> None:
    """SIGINT to the group (a wrapper such as py-spy writes its output and exits), then wait."""
    try:
        os.killpg(process.pid, signal.SIGINT)
        process.wait(timeout=wait)
    except (ProcessLookupError, PermissionError, subprocess.TimeoutExpired):
        pass


def stop(process: subprocess.Popen, grace: float = 5.0) -> None:
    """SIGTERM to the process group, SIGKILL after `grace` seconds, then to whatever is left of
    it and of the process's children; its registration forgotten."""
    try:
        leftovers = psutil.Process(process.pid).children(recursive=True)
    except psutil.Error:
        leftovers = []
    for sig, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, 5.0)):
        if process.poll() is not None:
            break
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            break
        try:
            process.wait(timeout=wait)
        except subprocess.TimeoutExpired:
            continue
    for child in leftovers:
        try:
            child.kill()
        except psutil.Error:
            pass
    try:
        os.killpg(process.pid, signal.SIGKILL)  # anything left in the group
    except (ProcessLookupError, PermissionError):
        pass
    _live.pop(process.pid, None)
    ticket = _guarded.pop(process.pid, None)
    if ticket is not None:
        guard.forget(ticket)


def stop_all() -> None:
    """Every server this process started, then the database cluster it started (if any)."""
    for process in list(_live.values()):
        stop(process, grace=2.0)
    database.stop()


def _on_sigterm(signum: int, frame: object) -> None:
    raise SystemExit(128 + signum)


def install_cleanup() -> None:
    """Stop every server at exit, and turn SIGTERM into an orderly exit (context managers run).
    Installed once however often it is called."""
    atexit.unregister(stop_all)
    atexit.register(stop_all)
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _on_sigterm)
