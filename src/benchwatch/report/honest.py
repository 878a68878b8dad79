"""How sure a figure is: how it was measured (rounds; side by side or one after the other) and
its uncertainty (an interval where two sides were compared, the run's A/A noise band where
not). A change inside the noise, or one from a single round with no interval, is not coloured."""

from __future__ import annotations

import math
from dataclasses import dataclass

from benchwatch.figures.metrics import metric
from benchwatch.report.tables import Tone
from benchwatch.results.schema import PairedRatio, Run


@dataclass(frozen=True)
class Measured:
    rounds: int | None  # rounds per figure of the load stage (None: not recorded)
    quick: bool
    band: dict[str, float]  # metric key -> this run's largest A/A change |ratio − 1|
    aa_variant: str | None

    def judged(self) -> str:
        if self.rounds is not None and self.rounds < 2:
            return "one round and no interval: ratios are shown, never coloured as a change"
        return "a ratio is coloured only outside this run's A/A band for its metric"

    def how(self) -> str:
        rounds = (
            "rounds not recorded"
            if self.rounds is None
            else f"{self.rounds} round{'s' * (self.rounds != 1)}"
        )
        return f"{rounds}{' (quick)' if self.quick else ''}, sequential: each variant measured alone, one after the other"

    def noise(self, key: str) -> str:
        band = self.band.get(key)
        if band is None:
            return "A/A noise not measured"
        about = metric("load", key)
        return f"A/A noise {about.short if about else key} ±{band:.1%}"

    def tone(self, good: float, key: str) -> Tone:
        """better/worse only when the figures had rounds to judge and the change is outside the
        run's A/A band for that metric; else neutral."""
        band = self.band.get(key)
        if band is None or self.rounds is None or self.rounds < 2 or good <= 0:
            return ""
        if abs(math.log(good)) <= math.log1p(band):
            return ""
        return "better" if good > 1 else "worse"

    def qualifier(self, good: float, key: str) -> str:
        """Why a ratio is shown without colour (empty when it is coloured or plainly the same)."""
        if abs(good - 1.0) < 0.005 or self.tone(good, key):
            return ""
        if self.rounds is not None and self.rounds < 2:
            return ""  # every figure of the table: said once, in its note
        if key not in self.band:
            return "noise unknown, not judged"
        return "within noise"


def measured(run: Run) -> Measured:
    plan = run.extra.load.plan
    band: dict[str, float] = {}
    noise = run.extra.load.aa_noise
    for entry in noise.figures.values() if noise else ():
        band[entry.metric] = max(band.get(entry.metric, 0.0), abs(entry.ratio - 1.0))
    return Measured(
        plan.rounds if plan else None,
        bool(plan and plan.quick),
        band,
        noise.variant if noise else None,
    )


def paired_tone(ratio: PairedRatio, bigger_is_better: bool = False) -> Tone:
    """A side-by-side ratio is coloured when its interval excludes 1."""
    if ratio.ratio is None or ratio.low is None or ratio.high is None or ratio.holds_one():
        return ""
    better = ratio.ratio > 1.0 if bigger_is_better else ratio.ratio < 1.0
    return "better" if better else "worse"
