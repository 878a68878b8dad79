"""How long and how hard the load stage measures: the plans, and the sharding of work."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from benchwatch.errors import UserError
from benchwatch.project.variants import Variant
from benchwatch.results.load_facts import LoadPlanInfo


@dataclass(frozen=True)
class LoadPlan:
    rounds: int
    warmup: float
    duration: float
    concurrencies: tuple[int, ...]
    rate_fractions: tuple[float, ...]
    open_duration: float | None = None
    open_concurrency: int = 64
    quick: bool = False
    boot_overhead: float = 2.5  # seconds per boot + verify, for the estimate only

    def seconds_per_round(self, variant: Variant) -> float:
        endpoints = len(variant.timed_endpoints(self.quick))
        closed = len(self.concurrencies) * (self.duration + 0.05)
        opened = len(self.rate_fractions) * ((self.open_duration or self.duration) + 0.05)
        return self.boot_overhead + endpoints * (self.warmup + closed + opened)

    def estimate(self, variants: Sequence[Variant]) -> float:
        return self.rounds * sum(self.seconds_per_round(v) for v in variants)

    def info(self) -> LoadPlanInfo:
        return LoadPlanInfo(
            rounds=self.rounds,
            warmup_s=self.warmup,
            duration_s=self.duration,
            open_duration_s=self.open_duration or self.duration,
            concurrencies=list(self.concurrencies),
            rate_fractions=list(self.rate_fractions),
            quick=self.quick,
        )


FULL = LoadPlan(
    rounds=3, warmup=2.0, duration=5.0, concurrencies=(10, 64), rate_fractions=(0.25, 0.5, 0.75)
)
QUICK = LoadPlan(
    rounds=1,
    warmup=0.2,
    duration=0.8,
    open_duration=0.5,
    concurrencies=(10,),
    rate_fractions=(0.5,),
    quick=True,
    boot_overhead=1.5,
)


def shard(variants: Sequence[Variant], spec: str | None) -> list[Variant]:
    """`i/N`: the i-th of N stable parts of about equal work. Longest first onto the least
    loaded part, work being the full plan's estimate (ties by variant id), so the parts do
    not depend on the order the variants come in and every machine finishes at about once."""
    if not spec:
        return list(variants)
    index, total = parse_shard(spec)
    work = {v.id: FULL.seconds_per_round(v) for v in variants}
    loads = [0.0] * total
    chosen: set[str] = set()
    for variant in sorted(variants, key=lambda v: (-work[v.id], v.id)):
        lightest = min(range(total), key=lambda part: (loads[part], part))
        loads[lightest] += work[variant.id]
        if lightest == index - 1:
            chosen.add(variant.id)
    return [v for v in variants if v.id in chosen]


def parse_shard(spec: str) -> tuple[int, int]:
    try:
        index_text, total_text = spec.split("/")
        index, total = int(index_text), int(total_text)
    except ValueError:
        raise UserError(f"--shard {spec!r}: give i/N, e.g. 1/3") from None
    if total < 1 or not 1 <= index <= total:
        raise UserError(f"--shard {spec!r}: i must be between 1 and N")
    return index, total
