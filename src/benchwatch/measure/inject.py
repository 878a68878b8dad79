"""TESTING ONLY: the one seam for test-only fault injection, so the detector can be checked
against a change of known size. Never set in published runs; a run made with it says so.

Every test-only knob lives here: what head's servers burn per request (apps/_inject.py reads
`BENCHWATCH_INJECT_*`), the extra calls head's micro-benchmarks repeat (benchmarks/inject.py reads
`BENCHWATCH_MICRO_INJECT`), and what a result file says about them. The command that takes the
`--inject-head-*` flags arms the seam for its duration (`armed(Faults(...))`); production code asks
it where an injection applies, by the side a server or a run belongs to (`for_side("head")`), and
passes no injection along: a server's environment (measure/server_command.py), a counted server's note
(counts/all_targets.py), a micro run's environment (`micro_environ`), compare.json's `injected`
and a side's `inject_*` (`recorded`), the comment's line (`said`)."""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass

from benchwatch.errors import UserError

INJECT_CPU_US_ENV = "BENCHWATCH_INJECT_CPU_US"  # read by apps/_inject.py
INJECT_SLOWDOWN_ENV = "BENCHWATCH_INJECT_SLOWDOWN"
INJECT_LOOPS_ENV = "BENCHWATCH_INJECT_LOOPS"
INJECT_LEAK_ENV = "BENCHWATCH_INJECT_LEAK"
INJECT_ENVS = (INJECT_CPU_US_ENV, INJECT_SLOWDOWN_ENV, INJECT_LOOPS_ENV, INJECT_LEAK_ENV)
# read by benchmarks/inject.py (which imports nothing of ours)
MICRO_INJECT_ENV = "BENCHWATCH_MICRO_INJECT"


@dataclass(frozen=True)
class Injection:
    """TESTING ONLY: extra CPU per request the apps burn (apps/_inject.py); none by default."""

    cpu_us: float = 0.0
    slowdown: float = 0.0
    loops: int = 0  # a fixed empty loop per request: the same instructions on any machine (counts)
    # fresh objects kept per request in a module-level list: a leak (retained memory per request)
    leak: int = 0
    layer_only: bool = False  # the middleware without a cost: base's match for an injected head

    def __bool__(self) -> bool:
        return self.cpu_us > 0 or self.slowdown > 0 or self.loops > 0 or self.leak > 0

    def environ(self) -> dict[str, str]:
        if self.layer_only:
            return {INJECT_SLOWDOWN_ENV: "0"}
        settings = {
            INJECT_CPU_US_ENV: self.cpu_us,
            INJECT_SLOWDOWN_ENV: self.slowdown,
            INJECT_LOOPS_ENV: self.loops,
            INJECT_LEAK_ENV: self.leak,
        }
        return {name: f"{value:g}" for name, value in settings.items() if value > 0}

    def describe(self) -> str:
        parts = [f"{self.slowdown:.0%} of the server's own CPU"] if self.slowdown else []
        parts += [f"{self.cpu_us:g} µs"] if self.cpu_us else []
        parts += [f"a {self.loops}-iteration loop"] if self.loops else []
        what = [" + ".join(parts) + " CPU"] if parts else []
        what += [f"{self.leak} object(s) kept"] if self.leak else []
        return " and ".join(what) + " injected per request"


NO_INJECTION = Injection()
# base carries the same (empty) middleware as an injected head, so only the cost differs
LAYER_ONLY = Injection(layer_only=True)


@dataclass(frozen=True)
class Faults:
    """TESTING ONLY: what a command injects into head (`--inject-head-*`); none by default."""

    head: Injection = NO_INJECTION
    head_micro: float = 0.0  # the fraction of calls head's micro-benchmarks repeat

    def __bool__(self) -> bool:
        return bool(self.head) or self.head_micro > 0

    def check(self) -> None:
        head = self.head
        if head.cpu_us < 0 or head.loops < 0 or head.leak < 0 or not 0 <= head.slowdown < 10:
            raise UserError(
                "--inject-head-*: give a non-negative amount (slowdown as a fraction, e.g. 0.10)"
            )
        if not 0 <= self.head_micro < 1:
            raise UserError(
                "--inject-head-*: give a non-negative amount (slowdown as a fraction, e.g. 0.10)"
            )

    def for_side(self, role: str | None) -> Injection:
        """What a server of that side carries: head its injection, base the bare layer."""
        if role == "head":
            return self.head
        return LAYER_ONLY if role == "base" and self.head else NO_INJECTION

    def micro_environ(self) -> dict[str, dict[str, str] | None]:
        """A micro run's extra environment by side: base carries the injector's wrapper with
        nothing to add, so only the extra calls differ."""
        if not self.head_micro:
            return {"base": None, "head": None}
        return {"base": {MICRO_INJECT_ENV: "0"}, "head": {MICRO_INJECT_ENV: f"{self.head_micro:g}"}}

    def recorded(self) -> dict[str, float] | None:
        """compare.json's `extra.injected`: what head was made to burn (None: nothing)."""
        found: dict[str, float] | None = None
        if self.head:
            found = {"slowdown": self.head.slowdown, "cpu_us_per_request": self.head.cpu_us}
            if self.head.loops:
                found["loops"] = float(self.head.loops)
            if self.head.leak:
                found["leak"] = float(self.head.leak)
        if self.head_micro:
            found = {**(found or {}), "micro_calls": self.head_micro}
        return found


NO_FAULTS = Faults()
_armed: list[Faults] = [NO_FAULTS]  # a plain global: servers are booted and counted in threads


@contextmanager
def armed(faults: Faults) -> Iterator[Faults]:
    """TESTING ONLY: `faults` injected for the duration (the command of the `--inject-head-*`
    flags, or a test)."""
    _armed.append(faults)
    try:
        yield faults
    finally:
        _armed.pop()


def active() -> Faults:
    return _armed[-1]


def for_side(role: str | None) -> Injection:
    """What a server of that side (`"base"`, `"head"`; None: not a compare's) carries now."""
    return active().for_side(role)


def micro_from_environment() -> str | None:
    """`BENCHWATCH_MICRO_INJECT` as `benchwatch instructions` was started with it (run.json's
    `micro_inject` says so)."""
    return os.environ.get(MICRO_INJECT_ENV)


def micro_note(environ: Mapping[str, str] | None) -> str:
    """A micro figure's note when its benchmarks repeated calls ("" for none)."""
    injected = (environ or {}).get(MICRO_INJECT_ENV, "")
    return f"injected {injected}" if injected else ""


def said(cpu_us: float, slowdown: float) -> str:
    """A side's injection as the comment says it (compare.json's `inject_*`); "" for none."""
    injection = Injection(cpu_us=cpu_us, slowdown=slowdown)
    return f"TEST ONLY: {injection.describe()}" if injection else ""
