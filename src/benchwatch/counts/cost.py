"""One estimated cost per request from its counts: the instructions and each of the request's own
system calls by name, weighed by what they cost on the machine that counted them
(counts/weights.py).

    cost = instructions x µs per instruction + sum over own calls (calls by name x µs per call)
           [+ database buffers x µs per buffer]

The database's part only for an endpoint of an app on PostgreSQL (a db_buffers_per_request figure:
counts/database_work.py), weighed by the stored µs per buffer access (counts/buffer_weight.py); an
endpoint without one has the cost it had before, byte for byte.

A sample per callgrind phase: the instructions of that phase, plus the system part from the
median calls by name (the request's own calls are whole numbers in every phase: docs/counts.md)
and the database's part from the median buffers. Figure.detail holds the parts in µs per request
("instructions", each call by name, "database buffers"), so a changed cost shows what moved it.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable

from benchwatch.counts import buffer_weight
from benchwatch.counts.strace import SCHEDULING
from benchwatch.counts.weights import Weights
from benchwatch.figures.figure_key import load_key
from benchwatch.figures.metrics import COST, DB_BUFFERS, INSTRUCTIONS, SYSCALLS, Counted
from benchwatch.results.schema import Figure

INSTRUCTIONS_PART = "instructions"  # the user-space part's name in a cost's detail
DATABASE_PART = "database buffers"  # the database's part's name in a cost's detail
NOTE = (
    "estimated: instructions and own system calls weighed by this machine's CPU per instruction "
    "and per call (compare.json: extra.cost.weights)"
)
DATABASE_NOTE = (
    "estimated: instructions and own system calls weighed by this machine's CPU per instruction "
    "and per call, + database buffers x µs per buffer access (compare.json: extra.cost.weights)"
)


def _database(figure: Figure) -> bool:
    return figure.metric == DB_BUFFERS.key and figure.valid and isinstance(figure.setting, Counted)


def with_database(weights: Weights, figures: Iterable[Figure]) -> Weights:
    """`weights` with the stored µs per buffer access (counts/buffer_weight.py) when a figure among
    `figures` is an endpoint's database buffers; as they are otherwise."""
    if weights.db_us_per_buffer is not None or not any(_database(f) for f in figures):
        return weights
    return weights.model_copy(update={"db_us_per_buffer": buffer_weight.stored().us_per_buffer})


def system_part(calls_by_name: dict[str, float], weights: Weights) -> dict[str, float]:
    """µs per request of each of the request's own calls (scheduling calls apart, as in the count that gates)."""
    return {
        name: count * weights.call_us(name)
        for name, count in sorted(calls_by_name.items())
        if name not in SCHEDULING and count
    }


def cost_figure(
    instructions: Figure, syscalls: Figure, weights: Weights, buffers: Figure | None = None
) -> Figure:
    """The cost of one endpoint on one side, from its two count figures (and its database buffers,
    weighed when `weights` has a µs per buffer)."""
    system = system_part(syscalls.detail, weights)
    database = (
        {DATABASE_PART: buffers.value * weights.db_us_per_buffer}
        if buffers is not None and weights.db_us_per_buffer is not None
        else {}
    )
    system_us = sum(system.values()) + sum(database.values())
    samples = [i * weights.user_us_per_instruction + system_us for i in instructions.samples]
    user_us = statistics.median(instructions.samples) * weights.user_us_per_instruction
    name = load_key(instructions.variant, instructions.endpoint or "", Counted(), COST).name
    return instructions.model_copy(
        update={
            "name": name,
            "metric": COST.key,
            "unit": COST.unit,
            "bigger_is_better": COST.bigger_is_better,
            "samples": samples,
            "value": statistics.median(samples),
            "spread": (max(samples) - min(samples)) / 2,
            "note": DATABASE_NOTE if database else NOTE,
            "detail": {
                INSTRUCTIONS_PART: round(user_us, 4),
                **{k: round(v, 4) for k, v in system.items()},
                **{k: round(v, 4) for k, v in database.items()},
            },
        }
    )


def cost_figures(figures: Iterable[Figure], weights: Weights) -> list[Figure]:
    """A cost for every endpoint with both counts (valid) among `figures`, its database buffers
    weighed in when it has them."""
    figures = list(figures)
    weights = with_database(weights, figures)
    pairs: dict[tuple, dict[str, Figure]] = {}
    for figure in figures:
        if (
            figure.metric in (INSTRUCTIONS.key, SYSCALLS.key, DB_BUFFERS.key)
            and figure.valid
            and isinstance(figure.setting, Counted)
        ):
            pairs.setdefault((figure.variant, figure.endpoint), {})[figure.metric] = figure
    return [
        cost_figure(
            found[INSTRUCTIONS.key], found[SYSCALLS.key], weights, found.get(DB_BUFFERS.key)
        )
        for found in pairs.values()
        if INSTRUCTIONS.key in found and SYSCALLS.key in found
    ]
