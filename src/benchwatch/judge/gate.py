"""Which rows decide a compare, and the confirmation that holds false alarms per PR, both ways.

A floor is the 99th percentile of a figure's A/A ratios, so each timing figure alone raises a
false alarm about once in a hundred compares; a PR judges ~160 of them. Two rules keep the
verdict of the whole PR trustworthy:

- **Counts gate first, as one cost.** A request's instructions and its own system calls by name,
  weighed by what each costs on the measuring machine, are one estimated cost per request
  (counts/cost.py) with a floor made of its parts' floors (judge/cost_floor.py); it gates. The
  counts themselves are its mechanism, judged and shown, not gating one by one (a change can trade
  one for the other). Instructions per call of a micro-benchmark gate as they are. Counts are
  deterministic: a change past their floor is a change, on any machine.
- **A timing change must be seen twice, either way.** Every gating timing figure (server CPU per
  request, a micro-benchmark's time) flagged as a regression *or an improvement* is measured
  again, side by side, in fresh rounds of only the flagged figures; it keeps its verdict only
  when that second, independent measurement gives the same one. Under no change each figure
  then alarms twice with probability about 1 % x 1 %, so ~160 figures give a false verdict
  about once in 60 no-op PRs instead of most of them (measured: docs/verdict.md). An
  improvement that is not there is a false alarm too: the author believes the change helped.

A timing figure with no floor of its own (never calibrated, `floor_source` "metric": the
largest floor of another figure) is shown as information, never gated by another endpoint's
floor; the counts of the same endpoint still gate.
"""

from __future__ import annotations

from collections.abc import Iterable

from benchwatch.figures.metrics import COUNT_KEYS, COUNTS, MICRO_INSTRUCTIONS, RETAINED
from benchwatch.judge.verdict import Confirmation, Row

PARTS = frozenset(m.key for m in COUNTS)  # what an estimated cost is made of
NOT_OWN_FLOOR = (
    "no calibrated floor of its own (run `benchwatch calibrate` on it): information, not a gate"
)


def is_count(row: Row) -> bool:
    """A deterministic count: instructions, system calls or retained blocks per request,
    instructions per call."""
    return (
        row.metric in COUNT_KEYS
        or row.metric == RETAINED.key
        or row.floor_key == MICRO_INSTRUCTIONS.key
    )


def demote_borrowed_floors(rows: Iterable[Row]) -> None:
    """A timing row whose floor is another figure's ('metric') is information only."""
    for row in rows:
        if row.gating and not is_count(row) and row.floor_source == "metric":
            row.gating = False
            row.reason = row.reason or NOT_OWN_FLOOR


def gate_counts_alone(rows: Iterable[Row]) -> None:
    """No cost could be made (its weights failed to measure): the instructions and system calls
    gate one by one, as before there was a cost. A failed measurement never turns a verdict green."""
    for row in rows:
        if row.metric in PARTS:
            row.gating = True


def to_confirm(rows: Iterable[Row]) -> list[Row]:
    """Gating timing rows judged a regression or an improvement: each is measured once more
    before it counts."""
    return [r for r in rows if r.gating and r.significant and not is_count(r)]


def confirm(flagged: Iterable[Row], second: Iterable[Row]) -> None:
    """Keep a flagged row's verdict (regression or improvement) only when its second measurement
    (rows of the confirmation rounds, matched by label) gives the same one; otherwise it is
    'unconfirmed' (shown, never gating). A regression the confirmation could not measure stays a
    regression: the verdict never turns green because a measurement failed; an improvement it
    could not measure is not confirmed: it is never reported on one measurement."""
    again = {r.label: r for r in second}
    for row in flagged:
        found = again.get(row.label)
        if found is None or found.verdict == "no verdict":
            row.confirmation = Confirmation(
                verdict="no verdict", text=found.text if found else "not measured again"
            )
            if row.verdict == "improvement":
                row.verdict = "unconfirmed"
            continue
        row.confirmation = Confirmation(
            verdict=found.verdict,
            ratio=found.ratio,
            low=found.low,
            high=found.high,
            text=found.text,
        )
        if found.verdict != row.verdict:
            row.verdict = "unconfirmed"
