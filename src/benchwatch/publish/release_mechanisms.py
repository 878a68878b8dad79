"""releases.html's first table: a row per release and endpoint where the release moved a figure,
with the estimated cost per request and its mechanism (the shared objects whose instructions
moved, the system calls by name that changed)."""

from __future__ import annotations

from collections.abc import Sequence

from benchwatch.attribute.mechanism import Mechanism
from benchwatch.attribute.outcomes import StepOutcome
from benchwatch.attribute.own_units import in_own_unit
from benchwatch.attribute.ratios import Ratio
from benchwatch.attribute.table import Attribution
from benchwatch.counts.strace import SCHEDULING
from benchwatch.environments.releases import PACKAGES
from benchwatch.figures.figure_key import label_metric, label_without_metric, setting_apart
from benchwatch.figures.metrics import COST, COUNT_KEYS, INSTRUCTIONS, SYSCALLS, metric
from benchwatch.publish.release_cells import (
    effect,
    figure_label,
    moved_package,
    ordered,
    own_unit_effect,
    release_name,
)
from benchwatch.report.tables import Cell, Table, Tone

SHOWN_OBJECTS = 3  # the shared objects whose instructions moved most
OBJECT_MOVE = 0.0005  # an object moved when its change is 0.05 % of the request's instructions
_MOVED = ("regression", "improvement")


def _mechanism_of(step: StepOutcome, key: str) -> Mechanism | None:
    """The mechanism of the endpoint: its counts' (a timing's row shows its endpoint's counts)."""
    if key in step.mechanism:
        return step.mechanism[key]
    return next(
        (m for k, m in step.mechanism.items() if setting_apart(k) == setting_apart(key)), None
    )


def _counted_ratio(step: StepOutcome, key: str, metric_key: str) -> Ratio | None:
    """The step's ratio of one count (instructions, system calls) of the endpoint."""
    return next(
        (
            r
            for label, r in step.ratios.items()
            if label_metric(label) == metric_key
            and setting_apart(label_without_metric(label)) == setting_apart(key)
        ),
        None,
    )


def _short(label: str) -> str:
    found = metric("load", label_metric(label))
    return found.short if found is not None else label_metric(label)


def cost_cell(figures: dict[str, Ratio], mechanism: Mechanism | None) -> Cell:
    """The estimated cost per request (cost_alone), then what moved in its own unit: SQL statements,
    database buffers, retained memory per request (`SQL statements 1 → 101 statements per request
    (+100): more`)."""
    own = [
        own_unit_effect(r, label)
        for label, r in sorted(figures.items())
        if in_own_unit(label) and r.verdict in _MOVED and r.text
    ]
    rest = {label: r for label, r in figures.items() if not in_own_unit(label)}
    if not own:
        return cost_alone(rest, mechanism)
    cells = ([cost_alone(rest, mechanism)] if rest else []) + own
    tones = {c.tone for c in cells}
    tone: Tone = "worse" if "worse" in tones else "better" if "better" in tones else ""
    return Cell("; ".join(c.text for c in cells), tone)


def cost_alone(figures: dict[str, Ratio], mechanism: Mechanism | None) -> Cell:
    """The estimated cost per request, step / base, and both sides in µs; without a cost (not
    weighed, or an attribution from before it), the counts' ratios; without counts, the timings'."""
    by_metric = {label_metric(label): (label, r) for label, r in figures.items()}
    if COST.key in by_metric:
        cell = effect(by_metric[COST.key][1], by_metric[COST.key][0])
        if (
            mechanism is not None
            and mechanism.cost_us is not None
            and None not in mechanism.cost_us
        ):
            base, head = mechanism.cost_us
            cell = Cell(f"{cell.text}: {base:.1f} → {head:.1f} µs", cell.tone)
        return cell
    counted = [by_metric[k] for k in (INSTRUCTIONS.key, SYSCALLS.key) if k in by_metric]
    shown = counted or sorted(figures.items())
    cells = [(_short(label), effect(r, label)) for label, r in shown]
    tones = {c.tone for _, c in cells}
    tone: Tone = "worse" if "worse" in tones else "better" if "better" in tones else ""
    said = "; ".join(f"{name} {c.text}" for name, c in cells)
    return Cell(f"{'not weighed' if counted else 'not counted'}: {said}", tone)


def _without_mechanism(
    result: Attribution,
    step: StepOutcome,
    key: str,
    metric: str,
    recorded: bool,
    moved: str,
    unmoved: str,
) -> Cell | None:
    """The cell when there is no mechanism to show (none recorded in this file, or none for this
    figure: then what its count did), or None when there is."""
    if not result.mechanisms:
        return Cell("not recorded")
    if recorded:
        return None
    ratio = _counted_ratio(step, key, metric)
    if ratio is None:
        return Cell("not counted")
    return Cell(moved if ratio.verdict in _MOVED else unmoved)


def objects_cell(
    result: Attribution, step: StepOutcome, key: str, mechanism: Mechanism | None
) -> Cell:
    """The shared objects whose instructions per request moved most, and all of them base → head."""
    missing = _without_mechanism(
        result,
        step,
        key,
        INSTRUCTIONS.key,
        mechanism is not None and mechanism.instructions is not None,
        "not recorded (no callgrind breakdown)",
        "instructions unchanged",
    )
    if missing is not None:
        return missing
    assert mechanism is not None and mechanism.instructions is not None
    found = mechanism.instructions
    moved = sorted(
        (o for o in found.objects if abs(o.head - o.base) >= OBJECT_MOVE * found.base),
        key=lambda o: (-abs(o.head - o.base), o.name),
    )
    share = lambda o: f" ({(o.head - o.base) / found.base:+.2%})" if found.base else ""  # noqa: E731
    parts = [f"{o.name} {o.head - o.base:+,.0f}{share(o)}" for o in moved[:SHOWN_OBJECTS]]
    return Cell(
        f"{'; '.join(parts) or 'no shared object moved'} (all: {found.base:,.0f} → {found.head:,.0f} instr/req)"
    )


def calls_cell(
    result: Attribution, step: StepOutcome, key: str, mechanism: Mechanism | None
) -> Cell:
    """The system calls per request by name that changed: the request's own first (they are in the
    cost), then the scheduling ones (counts/strace.SCHEDULING: not in the cost)."""
    missing = _without_mechanism(
        result,
        step,
        key,
        SYSCALLS.key,
        mechanism is not None and mechanism.calls is not None,
        "not recorded",
        "no call changed",
    )
    if missing is not None:
        return missing
    assert mechanism is not None and mechanism.calls is not None
    moves = sorted(
        ((name, base or 0.0, head or 0.0) for name, (base, head) in mechanism.calls.items()),
        key=lambda m: (-abs(m[2] - m[1]), m[0]),
    )
    said = lambda found: ", ".join(f"{name} {base:.2f} → {head:.2f}" for name, base, head in found)  # noqa: E731
    if not moves:
        return Cell("no call changed")
    own = said([m for m in moves if m[0] not in SCHEDULING]) or "none of its own"
    scheduling = said([m for m in moves if m[0] in SCHEDULING])
    return Cell(own + (f"; scheduling, not in the cost: {scheduling}" if scheduling else ""))


def mechanism_table(base: str, head: str, results: Sequence[Attribution]) -> Table:
    """One row per (release, scenario, endpoint) where the release moved a figure significantly:
    its estimated cost per request and how (shared objects, system calls by name)."""
    table = Table(
        f"{base} → {head}: releases that moved a figure, and how",
        [
            "release",
            "moved with it",
            "scenario",
            "endpoint",
            "estimated cost per request, step / base [95 % interval]",
            "where the instructions went (per request, by shared object)",
            "system calls per request that changed (base → step)",
        ],
    )
    rows: list[tuple[tuple, list[Cell]]] = []
    for result in results:
        scenario_of = {line.label: line.scenario for line in result.lines}
        for step in result.steps:
            if step.error is not None:
                continue
            packages = ordered(step)
            lead = packages[0] if packages and step.kind != "transitive" else ""
            others = ", ".join(moved_package(step, p) for p in packages if p != lead) or "—"
            groups: dict[str, dict[str, Ratio]] = {}
            for label, ratio in step.ratios.items():
                groups.setdefault(label_without_metric(label), {})[label] = ratio
            for key, figures in groups.items():
                if not any(r.verdict in _MOVED for r in figures.values()):
                    continue
                scenario = scenario_of.get(next(iter(figures)), "")
                mechanism = _mechanism_of(step, key)
                order = (
                    lead not in PACKAGES,
                    PACKAGES.index(lead) if lead in PACKAGES else 0,
                    lead == "",
                    lead,
                    scenario,
                    key,
                )
                endpoint = (
                    figure_label(key, scenario).removesuffix(" seq")
                    if all(
                        label_metric(label) in COUNT_KEYS or in_own_unit(label) for label in figures
                    )
                    else figure_label(key, scenario)
                )
                rows.append(
                    (
                        order,
                        [
                            Cell(release_name(step)),
                            Cell(others),
                            Cell(scenario),
                            Cell(endpoint),
                            cost_cell(figures, mechanism),
                            objects_cell(result, step, key, mechanism),
                            calls_cell(result, step, key, mechanism),
                        ],
                    )
                )
    table.rows = [cells for _, cells in sorted(rows, key=lambda r: r[0])]
    table.note = (
        "a row per release and endpoint where a figure changed (compare's verdict); the instructions and "
        "system calls are counted per request (deterministic), the cost weighs them by what they cost on "
        "the measuring machine. Python code runs inside libpython: py-spy (compare --profile) names its "
        "functions"
    )
    return table
