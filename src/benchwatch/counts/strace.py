"""strace as the server's system-call counter: one trace with timestamps, cut into phases.

`strace -f -ttt` writes every call of the server's process tree with its wall-clock time; the
counting client notes when each phase began and ended (the server is idle between phases), so
one boot yields the calls of every phase by name."""

from __future__ import annotations

import re
import shutil
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

INSTALL_HINT = "install it (Debian/Ubuntu: apt-get install strace)"
# `1234 1700000000.123456 epoll_wait(3, …` (`[pid 1234]` on a terminal); a resumed call is the
# same call, so `<... epoll_wait resumed>` lines are not counted again
_CALL = re.compile(r"^(?:\[pid\s+\d+\]\s*|\d+\s+)?(\d+\.\d+)\s+([a-z_][a-z0-9_]*)\(")


class StraceError(Exception):
    """A trace that cannot be read."""


def unavailable_reason() -> str | None:
    if shutil.which("strace") is None:
        return f"strace not found on PATH: no system-call counts; {INSTALL_HINT}"
    return None


def wrap(trace_file: Path) -> list[str]:
    strace = shutil.which("strace") or "strace"
    return [strace, "-f", "-ttt", "-qq", "-o", str(trace_file)]


def calls(trace_file: Path) -> list[tuple[float, str]]:
    """(wall-clock time, call name) of every system call in the trace, in file order."""
    try:
        text = trace_file.read_text(errors="replace")
    except OSError as exc:
        raise StraceError(f"{trace_file}: cannot read the trace ({exc.strerror})") from None
    return [(float(m.group(1)), m.group(2)) for m in map(_CALL.match, text.splitlines()) if m]


def count_windows(found: Sequence[tuple[float, str]], windows: Sequence[tuple[float, float]]) -> list[Counter[str]]:
    """Calls by name within each [start, end] wall-clock window."""
    counted: list[Counter[str]] = [Counter() for _ in windows]
    for when, name in found:
        for index, (start, end) in enumerate(windows):
            if start <= when <= end:
                counted[index][name] += 1
                break
    return counted
