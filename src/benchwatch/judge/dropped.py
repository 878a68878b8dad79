"""Load rounds dropped and made up: per shot (a variant's endpoint at one setting), how many of the
planned rounds lost their pair of samples (base and head not side by side: measure/one_round.py), how
many make-up rounds ran and whether they made the rounds up; what the comment says about it, and
which timing rows without a verdict it explains. No I/O here.

The rule for the verdict: a timing row left without an interval only because the host kept base
and head out of step, whose endpoint's counts (the gate, which no neighbour moves) were judged, does
not make the compare "not measured": that endpoint was measured, by its gate, and the row says why
its timings have no verdict. Without judged counts (`--no-counts`, no valgrind) the timings were
the endpoint's only gate, and the compare exits 2 as before.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable, Sequence

from pydantic import BaseModel, computed_field

from benchwatch.figures.metrics import CPU
from benchwatch.results.load_facts import SkippedRun
from benchwatch.results.schema import Figure, is_counted

TOO_FEW = "too few samples"  # how judge_pair's reason starts when an interval needs more samples


class ShortRounds(BaseModel):
    """One shot some of whose planned rounds lost their pair, as base's figures show it."""

    variant: str
    endpoint: str
    setting: str  # "c=10", "50% of max (120 r/s)"
    params: dict = {}  # the figure's (what a row's figure is matched by)
    planned: int
    dropped: int  # planned rounds whose pair was dropped
    made_up: int  # make-up rounds that gave a pair
    dropped_again: int  # make-up rounds whose pair was dropped too
    samples: int
    windows_apart: list[float] = []  # of every dropped pair, planned and make-up

    # both fields: mypy does not take a decorator over a property (python/mypy#1362);
    # pydantic's docs say to silence exactly this code
    @computed_field  # type: ignore[prop-decorator]
    @property
    def missing(self) -> int:
        return max(0, self.planned - self.samples)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def text(self) -> str:
        """'2 of 6 rounds dropped (base and head not side by side: oha windows 12 % and 31 % apart),
        made up in 2 extra rounds' — or what stayed short."""
        said = (
            f"{self.dropped} of {self.planned} rounds dropped (base and head not side by side"
            f"{_apart(self.windows_apart)})"
        )
        tried = self.made_up + self.dropped_again
        again = f", {self.dropped_again} of them dropped too" if self.dropped_again else ""
        if not self.missing:
            return f"{said}, made up in {_rounds(tried)}{again}"
        if not tried:
            return f"{said}, not made up: {self.samples} of {self.planned} rounds"
        return (
            f"{said}; {_rounds(tried, 'make-up')}{again}: {self.samples} of {self.planned} rounds"
        )


def _rounds(n: int, kind: str = "extra") -> str:
    return f"{n} {kind} round{'' if n == 1 else 's'}"


def _apart(values: Sequence[float]) -> str:
    shown = sorted({round(v * 100) for v in values})
    if not shown:
        return ""
    if len(shown) <= 2:
        return f": oha windows {' and '.join(f'{v} %' for v in shown)} apart"
    return f": oha windows {shown[0]}-{shown[-1]} % apart"


def shot_key(variant: str, endpoint: str | None, params: dict) -> tuple:
    return variant, endpoint, json.dumps(params, sort_keys=True, default=str)


def short_rounds(
    dropped: Iterable[SkippedRun], figures: Sequence[Figure], planned: int
) -> list[ShortRounds]:
    """Every shot with a dropped pair (one side's drops: both lanes drop a pair together), its
    samples read from that side's CPU figure."""
    groups: dict[tuple, list[SkippedRun]] = defaultdict(list)
    rounds: dict[tuple, list[int]] = defaultdict(list)  # the round of each of a shot's drops
    for drop in dropped:
        if drop.round is not None:
            key = shot_key(drop.variant, drop.endpoint, drop.params)
            groups[key].append(drop)
            rounds[key].append(drop.round)
    cpu = {
        shot_key(f.variant, f.endpoint, f.params): f
        for f in figures
        if f.kind == "load" and f.metric == CPU.key and not is_counted(f)
    }
    found = []
    for key, drops in groups.items():
        figure = cpu.get(key)
        samples = len(figure.samples) if figure is not None else 0
        in_plan = sum(r < planned for r in rounds[key])
        setting = (
            figure.setting.label
            if figure is not None and figure.setting is not None
            else drops[0].params
        )
        found.append(
            ShortRounds(
                variant=key[0],
                endpoint=key[1],
                setting=str(setting),
                params=drops[0].params,
                planned=planned,
                dropped=in_plan,
                made_up=max(0, samples - (planned - in_plan)),
                dropped_again=len(drops) - in_plan,
                samples=samples,
                windows_apart=[d.windows_apart for d in drops if d.windows_apart is not None],
            )
        )
    return found


def lines(shorts: Sequence[ShortRounds], limit: int = 12) -> list[str]:
    """The comment's paragraph: every shot that lost rounds, made up or not."""
    if not shorts:
        return []
    made = sum(not s.missing for s in shorts)
    out = [
        f"**Load rounds dropped**: base and head ran out of step (a busy host) in {_plural(len(shorts), 'shot')}; "
        f"{made} made up in extra rounds, {len(shorts) - made} not:",
        "",
    ]
    for found in shorts[:limit]:
        out.append(f"- `{found.variant}` `{found.endpoint}` {found.setting}: {found.text}")
    if len(shorts) > limit:
        out.append(f"- and {len(shorts) - limit} more (compare.json, `extra.load.short`)")
    return out + [""]


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"
