"""How many requests a count sends: set by the endpoint's own instructions per request, so an
endpoint costing 100x more gets 100x fewer requests and every phase costs about the same."""

from __future__ import annotations

from collections.abc import Sequence

# requests per phase, largest first: an endpoint gets the largest that fits the budget
LADDER = (1000, 500, 200, 100, 50, 20, 10, 5, 2)
# instructions per counted phase (2-4 s under callgrind here, busy). Was 100 M: halved, 10 phases
# of a boot still agree within 0.3 % (0.06-0.31 % on hello, hello-asgi, services, posts: docs/
# counts.md, "Cheaper per endpoint") and a compare spends half as long in its phases
BUDGET = 50_000_000
WARMUP_BUDGET = 50_000_000  # what the warm-up was with 100 M phases: as many requests as before
# after the warm-up, before the first counted phase: measured here, services@latest's first 250
# requests (five phases of 50) cost 0.1-0.4 % more than the next 250, posts read's first four 0.9 %;
# four phases of the 100 M budget, so eight of the 50 M one: as many requests settle as before
SETTLE_PHASES = 8
PROBE = 2  # requests of each endpoint sent first, to read its (cold) cost


def fitting(per_request: float, budget: float, cap: int) -> int:
    """The largest ladder step at most `cap` whose requests cost at most `budget` instructions."""
    found = [n for n in LADDER if n <= cap and n * per_request <= budget]
    return found[0] if found else min(LADDER[-1], cap)


def warmup_for(probe_per_request: float, cap: int) -> int:
    """Requests of an endpoint before anything is counted: its first ones run cold paths
    (imports on first use, caches, the interpreter specializing its bytecode). The probe's
    cold cost overstates a warm request, so this errs on the small side."""
    return fitting(probe_per_request, WARMUP_BUDGET, cap)


def requests_for(warm_per_request: float, cap: int) -> int:
    """N, the requests of one counted phase, from the warm-up's cost per request."""
    return fitting(warm_per_request, BUDGET, cap)


def settle_for(requests: int) -> int:
    """Requests of an endpoint sent (uncounted) after the warm-up: SETTLE_PHASES phases' worth. A count
    depends a little on how many requests came before it (0.3 % on payloads 1 kB between a
    settled and an unsettled server), so every number of the sequence is a ladder step: two
    sides whose costs differ by a few % send the same sequence."""
    return SETTLE_PHASES * requests


READS = frozenset({"GET", "HEAD", "OPTIONS"})


def counted_order(methods: Sequence[str], repeats: int) -> list[tuple[int, int]]:
    """The counted phases as (repeat, endpoint index): every repeat of the reads first, then every
    repeat of the writes. A write's counted phase changes what a read sees (a `POST /items/`
    between two repeats of `GET /items/` grows the list it reads: on the full-stack template,
    15.5M -> 17.0M -> 18.6M instructions per request over three repeats), so the reads are counted
    against the state the warm-up and settle left, the same in every repeat."""
    reads = [i for i, method in enumerate(methods) if method.upper() in READS]
    writes = [i for i, method in enumerate(methods) if method.upper() not in READS]
    return [(r, i) for group in (reads, writes) for r in range(repeats) for i in group]
