"""`benchwatch compare-merge`: the folders of a compare's shards (`compare --shard K/N`,
compare/shard.py) -> the one compare.json, comment.md and exit code a compare without shards would
have written. Every row is one shard's (an endpoint's counts are judged where both its sides were
counted; the timings and their confirmation are the timed shard's), so the merge puts rows
together and judges nothing again. Refused (bad input): a shard missing or given twice, shards of
different compares (their partitions, base's or head's commit, --quick), and shards measured on
different CPU models or interpreters, whose counts are not comparable."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TypeVar

from benchwatch.compare.shard import SHARD_FILE, ShardFacts
from benchwatch.errors import UserError
from benchwatch.judge.coverage import Coverage, NotMeasured, combine
from benchwatch.judge.judged import explain_dropped
from benchwatch.judge.verdict import Comparison, sort_rows
from benchwatch.results.schema import Figure
from benchwatch.trend.relative import read_comparison

T = TypeVar("T")
Shards = list[tuple[Path, ShardFacts, Comparison]]


def read_shards(dirs: Iterable[Path]) -> Shards:
    """Each folder's shard.json and compare.json, in shard order; a folder without them is bad input."""
    found = []
    for directory in dirs:
        path = directory / SHARD_FILE
        try:
            facts = ShardFacts.model_validate_json(path.read_text())
        except OSError:
            raise UserError(
                f"compare-merge: {directory} has no {SHARD_FILE}: give the folders of `compare --shard K/N`"
            ) from None
        except ValueError as exc:
            raise UserError(f"compare-merge: {path} is not a shard's file ({exc})") from None
        found.append((directory, facts, read_comparison(directory)))
    return sorted(found, key=lambda one: one[1].index)


def check(shards: Shards) -> None:
    """One ERROR line naming what differs, or what is missing or given twice."""
    if not shards:
        raise UserError("compare-merge: give the folders of every shard")
    _same(shards, "the shard count (N of --shard K/N)", lambda f, c: f.count)
    count = shards[0][1].count
    indices = [f.index for _, f, _ in shards]
    twice = sorted({i for i in indices if indices.count(i) > 1})
    if twice:
        dirs = [str(d) for d, f, _ in shards if f.index in twice]
        raise UserError(f"compare-merge: shard {twice[0]}/{count} given twice ({', '.join(dirs)})")
    missing = [i for i in range(1, count + 1) if i not in indices]
    if missing:
        raise UserError(
            f"compare-merge: shard{'s' if len(missing) > 1 else ''} "
            f"{', '.join(f'{i}/{count}' for i in missing)} missing"
        )
    _same(shards, "the endpoints the shards were dealt from", lambda f, c: f.partition)
    _same(shards, "--quick", lambda f, c: c.quick)
    for role in ("base", "head"):
        sides = [getattr(c, role) for _, _, c in shards]
        _same_values(shards, f"{role}'s commit", [s.commit for s in sides])
        _same_values(shards, f"{role}'s spec", [s.spec for s in sides])
        _same_values(shards, "the CPU model", [s.environment.cpu_model for s in sides])
        _same_values(shards, "benchwatch's Python", [s.environment.python for s in sides])
        _same_values(
            shards,
            f"{role}'s server interpreters",
            [{k: p.build for k, p in s.environment.interpreters.items()} for s in sides],
        )


def _same(shards: Shards, what: str, value: Callable[[ShardFacts, Comparison], object]) -> None:
    _same_values(shards, what, [value(f, c) for _, f, c in shards])


def _same_values(shards: Shards, what: str, values: list[object]) -> None:
    first_dir, first = shards[0][0], values[0]
    for (directory, _, _), one in zip(shards[1:], values[1:], strict=True):
        if one != first:
            raise UserError(
                f"compare-merge: the shards differ in {what}: {first!r} in {first_dir}, "
                f"{one!r} in {directory}; merge shards of one compare, measured on one kind of runner"
            )


def merge(shards: Shards, base_figures: Sequence[Figure]) -> Comparison:
    """The shards' rows, problems and facts as one compare's (check() first). `base_figures`: base's
    figures of every shard (its run directories), which tie a timing row the timed shard could not
    judge for lost rounds to its endpoint's count row, judged in another shard."""
    check(shards)
    timed = next(c for _, f, c in shards if f.timed)
    comparisons = [c for _, _, c in shards]
    merged = timed.model_copy(deep=True)
    rows = [row for c in comparisons for row in c.rows]
    explain_dropped(rows, timed.extra.load.short, base_figures)
    merged.rows = sort_rows(rows)
    merged.problems = [p for c in comparisons for p in c.problems]
    merged.unpaired = _unique(u for c in comparisons for u in c.unpaired)
    extra = merged.extra
    extra.notes = _unique(n for c in comparisons for n in c.extra.notes)
    extra.counts.skipped = _first(c.extra.counts.skipped for c in comparisons)
    seconds = [c.extra.counts.seconds for c in comparisons if c.extra.counts.seconds is not None]
    # the shards run at once on N runners: the counts took as long as the slowest shard
    extra.counts.seconds = max(seconds) if seconds and not extra.counts.skipped else None
    extra.counts.went = {k: v for c in comparisons for k, v in c.extra.counts.went.items()}
    extra.counts.by_object = {
        k: v for c in comparisons for k, v in c.extra.counts.by_object.items()
    }
    extra.cost.skipped = _first(c.extra.cost.skipped for c in comparisons)
    extra.coverage = merge_coverage(
        [(f, c.extra.coverage) for _, f, c in shards if c.extra.coverage is not None]
    )
    return merged


def merge_coverage(parts: list[tuple[ShardFacts, Coverage]]) -> Coverage | None:
    """Each shard said what is its own (its timings, its endpoints' counts: judge/coverage.py);
    one endpoint's two parts become the item a compare without shards writes, in its order."""
    if not parts:
        return None
    items: dict[tuple[str, str], NotMeasured] = {}
    for _, found in parts:
        for item in found.not_measured:
            key = (item.variant, item.endpoint)
            items[key] = combine(items[key], item) if key in items else item
    order = {key: i for i, key in enumerate(parts[0][0].order)}
    return Coverage(
        endpoints=parts[0][1].endpoints,
        timed=sum(c.timed for _, c in parts),
        counted=sum(c.counted for _, c in parts),
        not_measured=sorted(
            items.values(), key=lambda i: order.get((i.variant, i.endpoint), len(order))
        ),
    )


def _unique(found: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(found))


def _first(found: Iterable[T | None]) -> T | None:
    return next((one for one in found if one is not None), None)
