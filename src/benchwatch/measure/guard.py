"""The guard: what benchwatch started dies with benchwatch, however benchwatch ends (SIGKILL too).

A small process of its own session, started once per benchwatch process, reads one JSON line at a
time on its stdin: what to clean up should benchwatch go (a server's process group, a command such
as `pg_ctl stop` for the cluster pg_ctl daemonized, a folder), and what benchwatch cleaned up itself
(forget). benchwatch holds the only write end of that pipe, so when benchwatch exits or is killed
the kernel closes it and the guard reads end of file: it then sends SIGTERM to every group still
registered (SIGKILL to what is left after GRACE_S), runs the commands (the last registered first),
removes the folders, and exits. An orderly exit has forgotten everything: the guard does nothing.

One mechanism for every launcher (measure/launch.py: every server, run under valgrind, strace or
py-spy or not, is the leader of a process group that holds the wrapper and everything it starts;
measure/database.py: the throwaway cluster and its folder). A parent-death signal would not do:
it is Linux's only, fires when the thread that forked the child ends (a worker thread of a pool),
and reaches neither a wrapper's child nor a daemon.

The guard itself runs as `python -I -S guard.py` and imports only the standard library."""

from __future__ import annotations

import itertools
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

GRACE_S = 3.0  # between SIGTERM and SIGKILL to a group left behind
COMMAND_TIMEOUT_S = 60

_lock = threading.Lock()
_guard: subprocess.Popen | None = None
_tickets = itertools.count(1)


def watch_group(pgid: int) -> int:
    """Kill process group `pgid` if benchwatch ends before `forget(ticket)`."""
    return _register({"group": pgid})


def watch_command(argv: Sequence[str], env: Mapping[str, str] | None = None) -> int:
    """Run `argv` (with `env` over the guard's environment, which is benchwatch's at the guard's
    start) if benchwatch ends before `forget(ticket)`."""
    return _register({"command": [str(a) for a in argv], "env": dict(env or {})})


def watch_folder(path: Path) -> int:
    """Remove the folder `path` if benchwatch ends before `forget(ticket)`."""
    return _register({"folder": str(path)})


@contextmanager
def folder(path: Path) -> Iterator[Path]:
    """`path` removed by the guard should benchwatch end inside the block (the block's owner
    removes it otherwise)."""
    ticket = watch_folder(path)
    try:
        yield path
    finally:
        forget(ticket)


def forget(ticket: int) -> None:
    _send({"forget": ticket})


def guard_pid() -> int | None:
    """The guard's pid once one runs (tests)."""
    return _guard.pid if _guard is not None and _guard.poll() is None else None


def _register(what: dict[str, Any]) -> int:
    ticket = next(_tickets)
    _send({"ticket": ticket, **what})
    return ticket


def _send(message: dict[str, Any]) -> None:
    """One line to the guard, started first when none runs. Without a guard (it could not start,
    or was killed) benchwatch's own cleanup still runs on every exit but SIGKILL."""
    global _guard
    with _lock:
        try:
            if _guard is None or _guard.poll() is not None:
                _guard = subprocess.Popen(
                    [sys.executable, "-I", "-S", __file__],
                    stdin=subprocess.PIPE,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                    start_new_session=True,
                    cwd="/",
                    text=True,
                )
            assert _guard.stdin is not None
            _guard.stdin.write(json.dumps(message) + "\n")
            _guard.stdin.flush()
        except OSError:
            pass


# --- the guard process ------------------------------------------------------------------------


def main() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # ^C is benchwatch's to handle
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    pending: dict[int, dict[str, Any]] = {}
    for line in sys.stdin:
        try:
            message = json.loads(line)
        except ValueError:
            continue
        if "forget" in message:
            pending.pop(message["forget"], None)
        elif "ticket" in message:
            pending[message["ticket"]] = message
    clean_up([pending[t] for t in sorted(pending)])


def clean_up(left: list[dict[str, Any]]) -> None:
    """Groups first (a cluster is stopped once its clients are gone), then commands and folders,
    the last registered first."""
    groups = [int(m["group"]) for m in left if "group" in m]
    for sig, wait in ((signal.SIGTERM, GRACE_S), (signal.SIGKILL, 0.0)):
        for pgid in groups:
            try:
                os.killpg(pgid, sig)
            except OSError:
                pass
        deadline = time.monotonic() + wait
        while groups and time.monotonic() < deadline:
            time.sleep(0.1)
            groups = [g for g in groups if _group_alive(g)]
    for message in reversed(left):
        if "command" in message:
            try:
                subprocess.run(
                    message["command"],
                    env={**os.environ, **message.get("env", {})},
                    timeout=COMMAND_TIMEOUT_S,
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                )
            except (OSError, subprocess.SubprocessError):
                pass
        elif "folder" in message:
            shutil.rmtree(message["folder"], ignore_errors=True)


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except OSError:
        return False
    return True


if __name__ == "__main__":
    main()
