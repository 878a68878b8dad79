"""TESTING ONLY: a known extra CPU cost per request in the apps under test (apps/_inject.py),
so the detector can be checked against a change of known size. Never set in published runs."""

from __future__ import annotations

from dataclasses import dataclass

INJECT_CPU_US_ENV = "BENCHWATCH_INJECT_CPU_US"  # read by apps/_inject.py
INJECT_SLOWDOWN_ENV = "BENCHWATCH_INJECT_SLOWDOWN"
INJECT_LOOPS_ENV = "BENCHWATCH_INJECT_LOOPS"
INJECT_ENVS = (INJECT_CPU_US_ENV, INJECT_SLOWDOWN_ENV, INJECT_LOOPS_ENV)


@dataclass(frozen=True)
class Injection:
    """TESTING ONLY: extra CPU per request the apps burn (apps/_inject.py); none by default."""

    cpu_us: float = 0.0
    slowdown: float = 0.0
    loops: int = 0  # a fixed empty loop per request: the same instructions on any machine (counts)
    layer_only: bool = False  # the middleware without a cost: base's match for an injected head

    def __bool__(self) -> bool:
        return self.cpu_us > 0 or self.slowdown > 0 or self.loops > 0

    def environ(self) -> dict[str, str]:
        if self.layer_only:
            return {INJECT_SLOWDOWN_ENV: "0"}
        settings = {
            INJECT_CPU_US_ENV: self.cpu_us,
            INJECT_SLOWDOWN_ENV: self.slowdown,
            INJECT_LOOPS_ENV: self.loops,
        }
        return {name: f"{value:g}" for name, value in settings.items() if value > 0}

    def describe(self) -> str:
        parts = [f"{self.slowdown:.0%} of the server's own CPU"] if self.slowdown else []
        parts += [f"{self.cpu_us:g} µs"] if self.cpu_us else []
        parts += [f"a {self.loops}-iteration loop"] if self.loops else []
        return " + ".join(parts) + " CPU injected per request"


NO_INJECTION = Injection()
