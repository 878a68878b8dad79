"""Opt-in CPU cost per request, for testing the regression detector.

`BENCHWATCH_INJECT_CPU_US=<microseconds>` makes every HTTP request busy-spin that much CPU
time before the app sees it. Unset (the default), `with_injected_cpu(app)` returns `app`
itself, so normal runs carry no extra layer.
"""

from __future__ import annotations

import os
import time
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any, TypeVar

ENV_VAR = "BENCHWATCH_INJECT_CPU_US"

Scope = MutableMapping[str, Any]
ASGIApp = Callable[
    [Scope, Callable[[], Awaitable[Any]], Callable[[Any], Awaitable[None]]], Awaitable[None]
]
App = TypeVar("App")


def injected_cpu_us() -> float:
    raw = os.environ.get(ENV_VAR, "").strip()
    if not raw:
        return 0.0
    try:
        value = float(raw)
    except ValueError:
        raise ValueError(f"{ENV_VAR}={raw!r}: give a number of microseconds") from None
    if value < 0:
        raise ValueError(f"{ENV_VAR}={raw!r}: must not be negative")
    return value


def spin_cpu(microseconds: float) -> None:
    """Burn `microseconds` of this thread's CPU time (not wall time)."""
    deadline = time.thread_time() + microseconds / 1e6
    while time.thread_time() < deadline:
        pass


class InjectedCpu:
    """ASGI middleware: spin the CPU before each HTTP request."""

    def __init__(self, app: ASGIApp, microseconds: float) -> None:
        self.app = app
        self.microseconds = microseconds

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            spin_cpu(self.microseconds)
        await self.app(scope, receive, send)


def with_injected_cpu(app: App) -> App:
    microseconds = injected_cpu_us()
    if microseconds <= 0:
        return app
    return InjectedCpu(app, microseconds)  # type: ignore[arg-type,return-value]
