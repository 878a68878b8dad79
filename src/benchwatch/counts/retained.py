"""Memory a server retains per request: the Python allocator's blocks still allocated after a full
collection (`sys.getallocatedblocks()` after `gc.collect()`, asked of the counting harness: `m`),
read at every boundary of the strace boot's counted phases, outside their windows.

A phase's growth is the reading after it less the reading before it; per request, that growth
over its requests. The phases come after the probe, the warm-up and the settle (four phases'
worth), so a cache that fills once has filled; one that fills in the first phase shows in that
phase alone, and the figure is the median of the repeats. What grows with every request (a
module-level list appended to) grows by the same number of blocks in every phase: a leak of one
small object per request is 1.0 block per request, whatever N. A no-op keeps 0: the collection
empties the interpreter's free lists, so the count holds what is reachable and nothing else
(measured noise: docs/counts.md, "Retained memory per request")."""

from __future__ import annotations

from collections.abc import Sequence

from benchwatch.counts.target_counts import Phase
from benchwatch.declarations.requests import Endpoint


def set_growth(phases: Sequence[Phase], blocks: Sequence[int]) -> None:
    """Each phase's growth from the readings at its boundaries (one before each phase, one after
    the last: a phase's end is the next one's start, no request in between)."""
    if len(blocks) != len(phases) + 1:
        raise ValueError(f"{len(blocks)} readings for {len(phases)} phases: want one more")
    for phase, before, after in zip(phases, blocks, blocks[1:], strict=False):
        phase.retained_blocks = after - before


def per_request(phases: Sequence[Phase], endpoint: Endpoint) -> list[float]:
    """Blocks retained per request, one value per phase of the endpoint that has its readings."""
    return [
        p.retained_blocks / p.requests
        for p in phases
        if p.endpoint == endpoint and p.retained_blocks is not None and p.requests
    ]


def note(phases: Sequence[Phase], endpoint: Endpoint) -> str:
    mine = [p for p in phases if p.endpoint == endpoint and p.retained_blocks is not None]
    growth = ", ".join(f"{p.retained_blocks:+d}" for p in mine)
    sizes = "/".join(str(n) for n in sorted({p.requests for p in mine}))
    return (
        f"strace boot: allocator blocks after a full collection, growth over {len(mine)} phases "
        f"of {sizes} requests ({growth})"
    )
