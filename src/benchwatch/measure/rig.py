"""What the round driver is given: the rig every measurement of a command shares, and the tracks
(streams of results) it measures. Built by the caller; nothing here boots or measures."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from benchwatch.declarations.requests import Endpoint
from benchwatch.environments import envs
from benchwatch.measure import preflight, server
from benchwatch.measure.collect import Collector, Slot
from benchwatch.measure.load_plan import LoadPlan
from benchwatch.project.variants import Variant
from benchwatch.results.schema import Problem

# side by side means the same window: when one lane's oha ran this much longer than the other's
# (a stall of the host mid-run: oha waits for the requests in flight), neither sample is kept
WINDOW_MISMATCH = 0.10


@dataclass(frozen=True)
class Rig:
    """What every measurement of a command shares: oha, the cores, the plan, the environments."""

    oha: str
    plan: LoadPlan
    environments: dict[str, envs.Env]
    server_cores: list[int] | None = None
    oha_cores: list[int] | None = None
    boot_together: bool = (
        False  # boot a round's servers at once (lanes of one question), not in turn
    )
    window_mismatch: float | None = WINDOW_MISMATCH  # None: keep pairs whatever their oha windows
    rounds_per_boot: int = 1  # >1: servers booted once are measured in that many rounds


def build_rig(oha: str, plan: LoadPlan, variants: Sequence[Variant]) -> tuple[Rig, dict[str, str]]:
    """Build every environment the variants need (once); ({stack: why}) for those that failed.
    Before anything: the variants' variables and database (measure/preflight.py)."""
    preflight.check(variants)
    ready, failed = envs.prepare(variants)
    server_cores, oha_cores = server.cpu_plan()
    return Rig(oha, plan, ready, server_cores, oha_cores), failed


@dataclass
class Track:
    """One stream of results: its slots, where their samples go, and what its servers carry."""

    slots: list[Slot]
    data: Collector = field(default_factory=Collector)
    role: str | None = None  # a compare's side ("base", "head"): what its servers carry
    # endpoint label -> step key: lanes measure a step together. By default a step is the endpoint
    # label, so lanes load the same endpoint at once; mapping endpoint A of one track and B of
    # another to one key loads A and B at the same moment (a compare of two endpoints)
    steps: dict[str, str] = field(default_factory=dict)

    def step(self, endpoint: Endpoint) -> str:
        return self.steps.get(endpoint.label, endpoint.label)

    def fail_stacks(self, failed: dict[str, str]) -> None:
        for slot in self.slots:
            reason = failed.get(slot.variant.env_key)
            if reason is not None:
                self.data.fail(slot, Problem(variant=slot.variant.id, phase="env", reason=reason))
