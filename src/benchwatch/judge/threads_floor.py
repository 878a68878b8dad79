"""The default floor of an instruction count whose request crosses threads.

A sync endpoint (`def`, not `async def`) runs in the thread pool: the event loop hands the request
to a worker thread and waits for it (`futex` calls). Such a request's instructions are steady
within one boot but not from one boot to the next: glibc's malloc keeps an arena per thread, and
its free lists are laid out by when the workers came and went (docs/counts.md, "Across boots":
posts read counted 23.09 M or 23.50 M instructions per request depending on the boot, 1.8 %; the
template-shaped fixture's PostgreSQL endpoints 0.5 % apart). A compare counts each side on one
boot, so its ranges do not see that difference: judged against the 0.5 % default of a request the
event loop serves alone, two boots of the same code read as a change.

So an instruction count with no A/A floor of its own (`benchwatch calibrate --counts-from`) whose
request crosses threads on either side is judged against COUNT_FLOOR_FACTOR x the largest
boot-to-boot difference measured on such a request. The estimated cost's floor then follows from
its parts (judge/cost_floor.py).
"""

from __future__ import annotations

from benchwatch.figures.figure_key import label_for_metric
from benchwatch.figures.metrics import INSTRUCTIONS, SYSCALLS
from benchwatch.judge.calibrate import COUNT_FLOOR_FACTOR
from benchwatch.judge.verdict import Row, judge_again

HANDOFF_CALL = "futex"  # a thread waiting for another: the request left the event loop's thread
# posts read (SQLite, a sync endpoint): two boots of the same server 1.8 % apart (docs/counts.md)
STRAYED_ACROSS_BOOTS = 0.018
THREADS_FLOOR = round(COUNT_FLOOR_FACTOR * STRAYED_ACROSS_BOOTS, 4)
FROM_THREADS = "threads"  # Row.floor_source of such a count


def crosses_threads(syscalls: Row) -> bool:
    """Whether the request hands off to another thread on either side: a `futex` call or more per
    request among its scheduling calls (Row.detail: name -> [base, head] per request)."""
    handoffs = syscalls.detail.get(HANDOFF_CALL, [])
    return any(count is not None and count >= 1.0 for count in handoffs)


def set_threads_floors(rows: list[Row]) -> None:
    """Each instruction row on the default floor whose endpoint crosses threads: the threads'
    floor, and its verdict judged again."""
    by_label = {r.label: r for r in rows}
    for row in rows:
        if (
            row.metric != INSTRUCTIONS.key
            or row.floor_source != "default"
            or row.floor >= THREADS_FLOOR
        ):
            continue
        syscalls = by_label.get(label_for_metric(row.label, SYSCALLS.key))  # the same endpoint's
        if syscalls is not None and crosses_threads(syscalls):
            judge_again(row, THREADS_FLOOR, FROM_THREADS)
