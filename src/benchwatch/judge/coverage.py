"""Which declared endpoints a compare measured, and for every one it did not fully measure, what
is missing (timings, counts) and why: a PR watches every declared endpoint (counts for all, timings
for the quick ones), and nothing is dropped without saying so. No I/O here."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence

from pydantic import BaseModel

from benchwatch.declarations.requests import PER_REQUEST_WHY
from benchwatch.measure.preflight import Skipped
from benchwatch.project.variants import Variant
from benchwatch.results.schema import Figure, Problem, is_counted

NOT_IN_QUICK = "counts only (not in quick)"
WHY_LIMIT = 240


class NotMeasured(BaseModel):
    """One endpoint of one variant (head's id; base's when head has none) lacking a kind of figure."""

    variant: str
    endpoint: str  # its label (the template)
    missing: str  # "timings", "counts", or "timings and counts"
    why: str


class Coverage(BaseModel):
    """The declared endpoints of the compared variants, and those not measured in full."""

    endpoints: int = 0  # (variant pair, endpoint) watched
    timed: int = 0  # with timings on both sides
    counted: int = 0  # with counts per request on both sides
    not_measured: list[NotMeasured] = []

    def groups(self) -> dict[tuple[str, str], list[NotMeasured]]:
        """(missing, why) -> the endpoints it holds for, in order."""
        found: dict[tuple[str, str], list[NotMeasured]] = defaultdict(list)
        for item in self.not_measured:
            found[(item.missing, item.why)].append(item)
        return dict(found)


def coverage(
    pairs: Sequence[tuple[Variant, Variant]],
    figures: dict[str, list[Figure]],
    problems: Sequence[Problem],
    *,
    quick: bool,
    load: bool,
    counts: bool,
    counts_unavailable: str | None,
    timed_here: bool = True,
    counted_here: Callable[[Variant, str], bool] | None = None,
) -> Coverage:
    """Every endpoint of every compared pair: timed when the load tests ran it (all of them, or the
    quick ones with --quick) and both sides have a valid figure; counted likewise. A shard of a
    compare (compare/shard.py) says only what is its own: its timings when `timed_here`, the counts
    of the endpoints `counted_here(base variant, label)`; the merge puts the shards' parts together."""
    timed = {role: _measured(figures[role], counted=False) for role in ("base", "head")}
    counted = {role: _measured(figures[role], counted=True) for role in ("base", "head")}
    found = Coverage()
    for base, head in pairs:
        base_labels = {e.label for e in base.endpoints}
        head_labels = {e.label for e in head.endpoints}
        quick_labels = {e.label for e in head.quick_endpoints} if quick else head_labels
        per_request = {e.label for e in (*base.endpoints, *head.endpoints) if e.per_request}
        for label in dict.fromkeys(
            [*(e.label for e in head.endpoints), *(e.label for e in base.endpoints)]
        ):
            found.endpoints += 1
            variant = head.id if label in head_labels else base.id
            if label not in base_labels or label not in head_labels:
                side = "base" if label not in base_labels else "head"
                found.not_measured.append(
                    NotMeasured(
                        variant=variant,
                        endpoint=label,
                        missing="timings and counts",
                        why=f"not declared on {side}",
                    )
                )
                continue
            has_timings = (base.id, label) in timed["base"] and (head.id, label) in timed["head"]
            has_counts = (base.id, label) in counted["base"] and (head.id, label) in counted["head"]
            timings_here = timed_here
            counts_here = counted_here is None or counted_here(base, label)
            found.timed += has_timings and timings_here
            found.counted += has_counts and counts_here
            why_timings = why_counts = None
            if not has_timings and timings_here:
                if label in per_request:
                    why_timings = PER_REQUEST_WHY
                elif not load:
                    why_timings = "--no-load"
                elif label not in quick_labels:
                    why_timings = "not in quick"
                else:
                    why_timings = _why(problems, (base.id, head.id), label, timing=True)
            if not has_counts and counts_here:
                if not counts:
                    why_counts = "--no-counts"
                elif counts_unavailable:
                    why_counts = counts_unavailable
                else:
                    why_counts = _why(problems, (base.id, head.id), label, timing=False)
            item = _item(variant, label, why_timings, why_counts)
            if item is not None:
                found.not_measured.append(item)
    return found


def _item(variant: str, label: str, timings: str | None, counts: str | None) -> NotMeasured | None:
    if timings is None and counts is None:
        return None
    if timings == "not in quick" and counts is None:
        return NotMeasured(variant=variant, endpoint=label, missing="timings", why=NOT_IN_QUICK)
    if timings is not None and counts is not None:
        why = timings if timings == counts else f"timings: {timings}; counts: {counts}"
        return NotMeasured(
            variant=variant, endpoint=label, missing="timings and counts", why=_short(why)
        )
    missing, why = ("timings", timings) if timings is not None else ("counts", counts or "")
    return NotMeasured(variant=variant, endpoint=label, missing=missing, why=_short(why))


def _measured(figures: list[Figure], *, counted: bool) -> set[tuple[str, str]]:
    """(variant, endpoint label) with at least one valid figure of the kind."""
    return {
        (f.variant, f.endpoint)
        for f in figures
        if f.kind == "load" and f.endpoint and f.valid and is_counted(f) == counted
    }


def _why(
    problems: Sequence[Problem], variants: tuple[str, str], label: str, *, timing: bool
) -> str:
    """The problems said about this endpoint (or its whole variant: a boot, a set-up) that fit the
    kind of figure; a figure measured but invalid says so."""
    said = []
    for problem in problems:
        if problem.variant not in variants or problem.endpoint not in (label, None):
            continue
        about_counts = "count failed" in problem.reason or "count did not grow" in problem.reason
        if about_counts == timing:
            continue
        said.append(problem.reason)
    if not said:
        return "measured, but no valid figure on both sides (see the rows without a verdict)"
    return _short("; ".join(dict.fromkeys(said)))


def _short(text: str) -> str:
    return text if len(text) <= WHY_LIMIT else text[: WHY_LIMIT - 1] + "…"


def add_left_out(found: Coverage, skipped: Sequence[Skipped]) -> Coverage:
    """The endpoints `compare --skip-unset` left out (they need a `${NAME}` not set here: a fork's
    pull request gets no secrets), each watched and not measured, with why."""
    for each in skipped:
        for label in each.endpoints:
            found.endpoints += 1
            found.not_measured.append(
                NotMeasured(
                    variant=each.variant,
                    endpoint=label,
                    missing="timings and counts",
                    why=_short(f"left out: {each.why}"),
                )
            )
    return found


def combine(one: NotMeasured, other: NotMeasured) -> NotMeasured:
    """One endpoint's item said in two parts by two shards of a compare: its timings by the timed
    shard, its counts by its own shard (compare/merge_shards.py); the same item twice is one."""
    if one == other:
        return one
    parts = (one, other)
    timings = next((p.why for p in parts if p.missing == "timings"), None)
    counts = next((p.why for p in parts if p.missing == "counts"), None)
    if timings == NOT_IN_QUICK:
        timings = "not in quick"
    return _item(one.variant, one.endpoint, timings, counts) or one
