"""Retained memory's own boot: the server with the counting harness and no counter, natively.

The segments of counts/retained.py were served at the end of the strace boot, where every request
runs under the tracer: 3 segments of 4 s of strace's pace per endpoint were 10 s of a 25-endpoint
shard's 14 s per endpoint and side (docs/shards.md). Allocator blocks do not depend on a tracer,
so the same segments (as many requests each, sized from the strace phases' pace as before) are
served here at the server's own speed, after the sequence the strace boot served before them:
the probe and warm-up (the settle included), then every counted phase's requests, in the same
order. Caches that fill once are then as full as they were at the strace boot's end.

The boot has a fresh database and runs the app's set-up, as every boot does; it counts nothing
else, so nothing another figure reads moves."""

from __future__ import annotations

from collections.abc import Sequence

from benchwatch.counts import request_budget as plan
from benchwatch.counts import retained
from benchwatch.counts.counted_server import serve_under_counter
from benchwatch.counts.stage_clock import StageClock
from benchwatch.counts.target_counts import CountTarget, Phase

COUNTER = "the harness alone (retained memory)"  # a failed boot: "boot under the harness alone …"


def measure(
    target: CountTarget,
    traced: Sequence[Phase],
    warmups: Sequence[int],
    counts: Sequence[int],
    repeats: int,
) -> tuple[list[Phase], str]:
    """The retained-memory segments of every endpoint, and where the boot's time went.
    `traced`: the strace boot's counted phases (their pace sizes the segments); `warmups`,
    `counts`: the requests per endpoint it sent before its phases and in each."""
    clock = StageClock("boot")
    with serve_under_counter(target, [], COUNTER) as s:
        requests = s.requests
        clock.switch("warm-up")
        for i, request in enumerate(requests):
            s.send(i, request, plan.PROBE + warmups[i])
        methods = [e.method for e in target.endpoints]
        for _, i in plan.counted_order(methods, repeats):
            s.send(i, requests[i], counts[i])
        clock.switch("retained memory")
        memory = retained.measure(s, traced, repeats)
        clock.switch("stop")
    return memory, clock.line()
