"""Memory a server retains per request: the Python allocator's blocks still allocated after a full
collection (`sys.getallocatedblocks()` after `gc.collect()`, asked of the counting harness: `m`).

Measured in a boot of its own, natively, after the strace boot's sequence (counts/memory_boot.py):
per endpoint (the reads first, as the counted phases), a reading, then `repeats` segments of the
same number of requests, each followed by a reading. A segment's growth over its requests is one sample; the
figure is their median. A cache that fills once has filled in the warm-up, the settle and the
counted phases before; what grows with every request (a module-level list appended to) grows
alike in every segment: one small object kept per request is 1.0 block per request, whatever
the segment's size. A no-op keeps 0: the collection empties the interpreter's free lists, so the
count holds what is reachable. A cache that empties itself every so many requests (posts' read:
~60 blocks every ~17 requests) moves a segment by at most its size over the segment's requests:
segments are as long as SEGMENT_S of the endpoint's requests allow, at least SEGMENT_MIN
(measured noise: docs/counts.md, "Retained memory per request")."""

from __future__ import annotations

import statistics
import time
from collections.abc import Sequence

from benchwatch.counts.counted_server import Serving
from benchwatch.counts.request_budget import counted_order
from benchwatch.counts.target_counts import Phase
from benchwatch.declarations.requests import Endpoint

# a segment's requests would take about this long under strace (from its counted phases; served
# natively, they take less)
SEGMENT_S = 4.0
SEGMENT_MIN = 50
SEGMENT_MAX = 1000
# before each reading: the server finishes a request after its answer is read (a `def`
# dependency's exit, a session's close, in a worker thread); a reading taken meanwhile holds that
# request's objects
QUIET_S = 0.2


def segment_size(phases: Sequence[Phase], endpoint: Endpoint) -> int:
    """Requests per segment: SEGMENT_S's worth at the pace of the endpoint's counted phases
    (their think time included: an overestimate), within [SEGMENT_MIN, SEGMENT_MAX]."""
    mine = [p for p in phases if p.endpoint == endpoint and p.requests]
    if not mine:
        return SEGMENT_MIN
    per_request = statistics.median(p.seconds / p.requests for p in mine)
    fits = int(SEGMENT_S / per_request) if per_request > 0 else SEGMENT_MAX
    return max(SEGMENT_MIN, min(SEGMENT_MAX, fits))


def measure(s: Serving, phases: Sequence[Phase], repeats: int) -> list[Phase]:
    """Every endpoint's segments, their growth in blocks set."""
    endpoints = s.target.endpoints
    requests = s.requests
    order = list(dict.fromkeys(i for _, i in counted_order([e.method for e in endpoints], 1)))
    found: list[Phase] = []
    for i in order:
        size = segment_size(phases, endpoints[i])
        time.sleep(QUIET_S)
        before = s.allocated_blocks()
        for r in range(repeats):
            seconds = s.send(i, requests[i], size)
            time.sleep(QUIET_S)
            after = s.allocated_blocks()
            found.append(Phase(endpoints[i], r, size, seconds, retained_blocks=after - before))
            before = after
    return found


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
        f"its own boot, after the strace boot's requests: allocator blocks after a full collection, "
        f"growth over {len(mine)} segments of {sizes} requests ({growth})"
    )
