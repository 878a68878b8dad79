"""Opt-in extra CPU cost per request, for testing the regression detector.

Two settings, both off by default (unset: `with_injected_cpu(app)` returns `app` itself, so
normal runs carry no extra layer; set to 0, the layer is there and burns nothing, which is how
a compare's base side matches an injected head in everything but the injected cost):

- `BENCHWATCH_INJECT_SLOWDOWN=<fraction>`: before each HTTP request, busy-spin until the
  process has spent `fraction` x the CPU time it spent on everything else since the first
  request. The server's CPU per request grows by exactly that factor, whatever the request
  costs and however fast the machine is at the moment (a fixed spin would be a smaller share
  when the host slows the real work down).
- `BENCHWATCH_INJECT_CPU_US=<microseconds>`: a fixed spin per request.
- `BENCHWATCH_INJECT_LEAK=<objects>`: that many fresh objects appended per request to a
  module-level list that is never emptied: a leak, which benchwatch's retained memory per
  request sees (one small object: one allocator block).
- `BENCHWATCH_INJECT_LOOPS=<iterations>`: a fixed amount of work per request (an empty Python
  loop of that many iterations): the same instructions every time, however fast the machine is,
  so a counter (benchwatch's instructions per request) sees exactly this much more.
"""

from __future__ import annotations

import os
import time
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any, TypeVar

ENV_VAR = "BENCHWATCH_INJECT_CPU_US"
SLOWDOWN_ENV_VAR = "BENCHWATCH_INJECT_SLOWDOWN"
LOOPS_ENV_VAR = "BENCHWATCH_INJECT_LOOPS"
LEAK_ENV_VAR = "BENCHWATCH_INJECT_LEAK"
KEPT: list[object] = []  # what the injected leak keeps, never emptied

Scope = MutableMapping[str, Any]
ASGIApp = Callable[
    [Scope, Callable[[], Awaitable[Any]], Callable[[Any], Awaitable[None]]], Awaitable[None]
]
App = TypeVar("App")


def _setting(name: str, unit: str) -> float | None:
    raw = os.environ.get(name, "").strip()
    if not raw:
        return None
    try:
        value = float(raw)
    except ValueError:
        raise ValueError(f"{name}={raw!r}: give {unit}") from None
    if not value >= 0:
        raise ValueError(f"{name}={raw!r}: must not be negative")
    return value


def injected_cpu_us() -> float | None:
    return _setting(ENV_VAR, "a number of microseconds")


def injected_slowdown() -> float | None:
    return _setting(SLOWDOWN_ENV_VAR, "a fraction, e.g. 0.10 for 10 %")


def injected_loops() -> int | None:
    value = _setting(LOOPS_ENV_VAR, "a whole number of loop iterations")
    return None if value is None else int(value)


def injected_leak() -> int | None:
    value = _setting(LEAK_ENV_VAR, "a whole number of objects")
    return None if value is None else int(value)


def spin_cpu(microseconds: float) -> float:
    """Burn `microseconds` of this thread's CPU time (not wall time); return seconds burnt.
    Reading the thread's CPU clock is a system call, so it is read between short loops rather
    than on every iteration."""
    started = time.thread_time()
    deadline = started + microseconds / 1e6
    now = started
    while now < deadline:
        for _ in range(_SPIN_CHUNK):
            pass
        now = time.thread_time()
    return now - started


_SPIN_CHUNK = 100  # loop iterations between clock reads: ~2 µs of CPU


class InjectedCpu:
    """ASGI middleware: spin the CPU before each HTTP request."""

    def __init__(
        self,
        app: ASGIApp,
        microseconds: float = 0.0,
        slowdown: float = 0.0,
        loops: int = 0,
        leak: int = 0,
    ) -> None:
        self.app = app
        self.leak = leak
        self.microseconds = microseconds
        self.slowdown = slowdown
        self.loops = loops
        self._first: float | None = None  # process CPU time at the first request
        self._spun = 0.0  # seconds spun so far, all of it
        self._spun_for_slowdown = 0.0

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            for _ in range(self.loops):
                pass
            for _ in range(self.leak):
                KEPT.append(object())
            if self.microseconds:
                self._spun += spin_cpu(self.microseconds)
            self._burn_share()
        await self.app(scope, receive, send)

    def _burn_share(self) -> None:
        """Spin until the spin so far is `slowdown` x the CPU spent on real work. The clock is
        read once per request on both sides of a compare (a base with BENCHWATCH_INJECT_SLOWDOWN=0
        reads it and burns nothing), and everything the spin costs, its own clock reads too, is
        booked as spin from that read on: a head that skipped neither, or booked less, burnt more
        than asked (a "3 %" head read 1.09-1.11x before)."""
        now = time.process_time()
        if self._first is None:
            self._first = now
        if not self.slowdown:
            return
        owed = self.slowdown * (now - self._first - self._spun) - self._spun_for_slowdown
        if owed <= 0:
            return
        deadline, after = now + owed, now
        while after < deadline:
            for _ in range(_SPIN_CHUNK):
                pass
            after = time.process_time()
        self._spun += after - now
        self._spun_for_slowdown += after - now


def with_injected_cpu(app: App) -> App:
    microseconds, slowdown, loops = injected_cpu_us(), injected_slowdown(), injected_loops()
    leak = injected_leak()
    if microseconds is None and slowdown is None and loops is None and leak is None:
        return app
    return InjectedCpu(app, microseconds or 0.0, slowdown or 0.0, loops or 0, leak or 0)  # type: ignore[arg-type,return-value]
