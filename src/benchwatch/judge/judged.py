"""Two sides' figures paired and judged as a compare judges them: the counts' estimated costs made
with one set of weights (counts/cost.py), each row against its floor (the calibrated one, the
threads' floor of a request served by the thread pool, a cost's floor from its parts), the counts
gating alone when no cost could be made, a timing row on a borrowed floor information only.
`compare` and attribute's counts-only path both judge this way."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from benchwatch.counts.cost import cost_figures, with_database
from benchwatch.counts.weights import Weights
from benchwatch.figures import metrics
from benchwatch.judge import dropped, gate
from benchwatch.judge.buffers_layout import set_layout_floors
from benchwatch.judge.calibrate import Calibration
from benchwatch.judge.cost_floor import set_cost_floors
from benchwatch.judge.threads_floor import set_threads_floors
from benchwatch.judge.verdict import Row, compare_figures
from benchwatch.results.schema import Figure


def judged_rows(
    base: list[Figure],
    head: list[Figure],
    calibration: Calibration | None,
    weights: Weights | None,
    key: Callable[[Figure], tuple] = Figure.pair_key,
) -> tuple[list[Row], list[str]]:
    """(rows, unpaired figure names). `weights` None: no cost (not counted, or the weights failed)."""
    if weights is not None:
        weights = with_database(weights, base + head)  # one µs per buffer for both sides, or none
        base, head = base + cost_figures(base, weights), head + cost_figures(head, weights)
    rows, unpaired = compare_figures(base, head, calibration, key=key)
    set_threads_floors(rows)  # before the costs' floors, which follow from their parts'
    set_cost_floors(rows)  # with the buffers' layout allowance per side
    set_layout_floors(rows)  # after the costs': they take the allowance over each side's buffers
    if weights is None:
        gate.gate_counts_alone(rows)
    gate.demote_borrowed_floors(rows)
    return rows, unpaired


def explain_dropped(
    rows: Iterable[Row], shorts: Sequence[dropped.ShortRounds], figures: Sequence[Figure]
) -> None:
    """Timing rows without a verdict for too few samples, of a shot that lost rounds: their reason
    says so, and `judged_by` names the endpoint's judged count row (the gate) when there is one."""
    rows = list(rows)
    named = {f.name: f for f in figures}
    shots = {dropped.shot_key(s.variant, s.endpoint, s.params): s for s in shorts if s.missing}
    gates: dict[tuple[str, str | None], str] = {}
    for row in rows:
        figure = named.get(row.base_figure or "")
        if (
            figure is not None
            and row.gating
            and row.metric in metrics.COUNT_KEYS
            and row.verdict != "no verdict"
        ):
            gates.setdefault((figure.variant, figure.endpoint), row.label)
    for row in rows:
        figure = named.get(row.base_figure or "")
        if (
            row.verdict != "no verdict"
            or figure is None
            or not row.reason.startswith(dropped.TOO_FEW)
        ):
            continue
        found = shots.get(dropped.shot_key(figure.variant, figure.endpoint, figure.params))
        if found is None:
            continue
        gate = gates.get((figure.variant, figure.endpoint), "")
        row.reason = f"{dropped.TOO_FEW}: {found.text}" + (
            f"; judged by its counts ({gate})" if gate else ""
        )
        row.text = "no verdict: " + row.reason
        row.judged_by = gate
