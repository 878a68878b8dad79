"""strace as the server's system-call counter: one trace with timestamps, cut into phases.

`strace -f -ttt` writes every call of the server's process tree with its wall-clock time; the
counting client notes when each phase began and ended (the server is idle between phases), so
one boot yields the calls of every phase by name."""

from __future__ import annotations

import re
import shutil
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

INSTALL_HINT = "install it (Debian/Ubuntu: apt-get install strace)"
# `1234 1700000000.123456 epoll_wait(3, …` (`[pid 1234]` on a terminal); a resumed call is the
# same call, so `<... epoll_wait resumed>` lines are not counted again
_CALL = re.compile(r"^(?:\[pid\s+\d+\]\s*|\d+\s+)?(\d+\.\d+)\s+(.*)$")
_NAME = re.compile(r"^([a-z_][a-z0-9_]*)\(")
# a poll that waited and timed out with nothing ready: the server's idle timer (uvicorn wakes every
# 0.1 s), in full or as the end of a call another thread interrupted in the trace
_TIMED_OUT = re.compile(
    r"^(?:epoll_p?wait\(\d+, |<\.\.\. epoll_p?wait resumed>)\[\], \d+, [1-9]\d*[,)].*= 0$"
)


# Calls whose number follows the clock and the scheduler, not the request: waiting and waking
# (polls return early or late, a thread wakes another or finds the lock free), the running-loop
# check asyncio makes on every timer tick too (`getpid`), a thread pool starting and retiring
# threads, and the memory those threads and the allocator map. Measured on the quick endpoints
# over 10 phases (docs/counts.md): `futex` 17.9-25.5 per request on one endpoint, `epoll_pwait`
# 17.4-18.0, thread starts 0-0.1; every other call a whole number in every phase. They are
# reported by name, as information; the gated count is the request's own calls.
SCHEDULING = frozenset(
    {
        "futex",
        "epoll_wait",
        "epoll_pwait",
        "epoll_pwait2",
        "poll",
        "ppoll",
        "select",
        "pselect6",
        "sched_yield",
        "nanosleep",
        "clock_nanosleep",
        "getpid",
        "clone",
        "clone3",
        "exit",
        "set_robust_list",
        "rseq",
        "gettid",
        "rt_sigprocmask",
        "mmap",
        "munmap",
        "madvise",
        "mprotect",
        "brk",
    }
)


def own_calls(by_name: dict[str, float]) -> float:
    """A request's own system calls: all of them but the scheduling ones."""
    return sum(count for name, count in by_name.items() if name not in SCHEDULING)


class StraceError(Exception):
    """A trace that cannot be read."""


@dataclass(frozen=True)
class Call:
    when: float  # wall-clock seconds
    name: str  # "" for the end of a resumed call, which is not a call of its own
    timed_out: bool = False


@dataclass
class Window:
    """The calls of one stretch of wall-clock time, by name, and the timer wake-ups among them."""

    calls: Counter[str] = field(default_factory=Counter)
    wakeups: int = 0


def unavailable_reason() -> str | None:
    if shutil.which("strace") is None:
        return f"strace not found on PATH: no system-call counts; {INSTALL_HINT}"
    return None


def wrap(trace_file: Path) -> list[str]:
    """`-s 0`: no string an argument holds is written to the trace (the server reads requests whose
    headers and bodies may carry secrets: a password in a login form); only names and times count."""
    strace = shutil.which("strace") or "strace"
    return [strace, "-f", "-ttt", "-qq", "-s", "0", "-o", str(trace_file)]


def calls(trace_file: Path) -> list[Call]:
    """Every system call in the trace (and the end of every resumed one), in file order."""
    try:
        text = trace_file.read_text(errors="replace")
    except OSError as exc:
        raise StraceError(f"{trace_file}: cannot read the trace ({exc.strerror})") from None
    found = []
    for line in text.splitlines():
        matched = _CALL.match(line)
        if matched is None:
            continue
        when, rest = float(matched.group(1)), matched.group(2)
        named = _NAME.match(rest)
        timed_out = bool(_TIMED_OUT.match(rest))
        if named or timed_out:
            found.append(Call(when, named.group(1) if named else "", timed_out))
    return found


def count_windows(found: Sequence[Call], windows: Sequence[tuple[float, float]]) -> list[Window]:
    """Calls by name, and timer wake-ups, within each [start, end] wall-clock window."""
    counted = [Window() for _ in windows]
    for call in found:
        for index, (start, end) in enumerate(windows):
            if start <= call.when <= end:
                if call.name:
                    counted[index].calls[call.name] += 1
                counted[index].wakeups += call.timed_out
                break
    return counted
