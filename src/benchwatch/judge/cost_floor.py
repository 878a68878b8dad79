"""The floor of an estimated cost per request, from the floors of its parts.

A cost is  C = U + S  (U: instructions x µs per instruction, S: own system calls by name x µs per
call), so head/base - 1 of the cost is the weighted mean of its parts' changes:

    C'/C - 1 = u (I'/I - 1) + s (S'/S - 1),   u = U/C, s = S/C  (base's shares)

If the instructions stray from 1 by at most their floor f_I when nothing changed (their A/A floor:
calibration.json) and the system part by at most f_S, the cost strays by at most

    floor = u f_I + s f_S

That is the cost's floor. An endpoint on PostgreSQL adds its database buffers' part D (buffers x µs
per buffer access, d = D/C): floor = u f_I + s f_S + d f_D, f_D the buffers' floor (10 % by
default), at least the buffers' layout allowance in pages over that side's buffers per request
(judge/buffers_layout.py: the buffers' own row takes it after the costs). The weights are the
same for both sides, so they cancel in an A/A. Both sides' shares are tried and the larger floor
kept. A cost with an A/A floor of its own (`calibrate --counts-from` on a compare that had costs)
keeps the larger of the two.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable

from benchwatch.counts.cost import DATABASE_PART, INSTRUCTIONS_PART
from benchwatch.figures.figure_key import label_for_metric
from benchwatch.figures.metrics import COST, DB_BUFFERS, INSTRUCTIONS, SYSCALLS
from benchwatch.judge.buffers_layout import allowance
from benchwatch.judge.verdict import Row, judge_again

FROM_PARTS = "parts"  # Row.floor_source of a cost whose floor came from its parts'


def floor_from_parts(
    shares: Iterable[float], instructions_floor: float, syscalls_floor: float
) -> float:
    """The largest u f_I + (1 - u) f_S over the user shares u given."""
    return max(u * instructions_floor + (1.0 - u) * syscalls_floor for u in shares)


def user_share(detail: dict[str, float]) -> float:
    total = sum(detail.values())
    return detail.get(INSTRUCTIONS_PART, 0.0) / total if total > 0 else 1.0


def database_share(detail: dict[str, float]) -> float:
    total = sum(detail.values())
    return detail.get(DATABASE_PART, 0.0) / total if total > 0 else 0.0


def set_cost_floors(rows: list[Row]) -> None:
    """Each cost row's floor from its parts' rows (its detail holds both sides' parts in µs), and its
    verdict judged again against that floor."""
    by_label = {r.label: r for r in rows}
    for row in rows:
        if row.metric != COST.key or not row.detail:
            continue
        instructions, syscalls = (
            by_label.get(label_for_metric(row.label, m.key)) for m in (INSTRUCTIONS, SYSCALLS)
        )
        if instructions is None or syscalls is None:
            continue
        sides = [{name: pair[i] or 0.0 for name, pair in row.detail.items()} for i in (0, 1)]
        derived = floor_from_parts(
            [user_share(d) for d in sides], instructions.floor, syscalls.floor
        )
        buffers = by_label.get(label_for_metric(row.label, DB_BUFFERS.key))
        if DATABASE_PART in row.detail and buffers is not None:
            # the database's share d takes its floor's place out of the system calls' share; its
            # floor on each side at least the layout allowance over that side's buffers
            pages = allowance(buffers)
            medians = [
                statistics.median(s) if s else 0.0
                for s in (buffers.base_samples, buffers.head_samples)
            ]
            derived = max(
                u * instructions.floor
                + (1.0 - u - d) * syscalls.floor
                + d * max(buffers.floor, pages / b if b > 0 else 0.0)
                for (u, d), b in zip(
                    ((user_share(s), database_share(s)) for s in sides), medians, strict=True
                )
            )
        if row.floor_source == "figure" and row.floor >= derived:
            continue
        judge_again(row, derived, FROM_PARTS)
