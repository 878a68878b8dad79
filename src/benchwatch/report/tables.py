"""Tables of a run's figures: stacks side by side, ratios against the reference stack."""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Literal

from benchwatch.errors import UserError
from benchwatch.figures import figure_key
from benchwatch.figures.figure_key import variant_id
from benchwatch.figures.metrics import CPU, Closed, Open, metric_rank, setting_sort_key
from benchwatch.results.schema import Figure, Run

Tone = Literal["", "better", "worse", "bad"]

_UNIT_TEXT = {"us": "µs"}
_TIME_SCALE = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0}


@dataclass(frozen=True)
class Cell:
    text: str
    tone: Tone = ""


@dataclass
class Table:
    title: str
    columns: list[str]
    rows: list[list[Cell]] = field(default_factory=list)
    note: str = ""


def app_of(figure: Figure) -> str:
    return figure_key.app_of(figure.scenario)


def fmt_value(value: float, unit: str) -> str:
    unit = _UNIT_TEXT.get(unit, unit)
    if abs(value) >= 1000:
        text = f"{value:,.0f}"
    elif abs(value) >= 100:
        text = f"{value:.0f}"
    elif abs(value) >= 10:
        text = f"{value:.1f}"
    else:
        text = f"{value:.3g}"
    return f"{text} {unit}".strip()


def goodness(value: float, reference: float, bigger_is_better: bool) -> float | None:
    """> 1 when `value` is better than `reference`, whatever the metric's direction."""
    if value <= 0 or reference <= 0:
        return None
    return value / reference if bigger_is_better else reference / value


def ratio_text(good: float, memory: bool = False) -> tuple[str, Tone]:
    better, worse = ("smaller", "larger") if memory else ("faster", "slower")
    if abs(good - 1.0) < 0.005:
        return "same", ""
    if good > 1.0:
        return f"{good:.2f}x {better}", "better"
    return f"{1 / good:.2f}x {worse}", "worse"


def is_memory(figure: Figure) -> bool:
    return bool(figure.about and figure.about.memory)


def _row_key(figure: Figure) -> tuple:
    """One table row per metric and setting; an open loop's rate differs per variant."""
    setting = figure.setting
    return (
        metric_rank(figure.metric),
        setting_sort_key(setting),
        figure.metric,
        json.dumps(setting.pair_params(), sort_keys=True) if setting is not None else "",
    )


def stack_order(run: Run, preferred: Sequence[str] = ()) -> list[str]:
    seen = [f.stack for f in run.figures]
    known = [s for s in preferred if s in seen]
    return known + [s for s in dict.fromkeys(seen) if s not in known]


def variant_order(figures: Iterable[Figure], stacks: Sequence[str]) -> list[str]:
    """The plain app first, then flavors; within each, stacks in their declared order."""
    rank = {s: i for i, s in enumerate(stacks)}
    variants = {f.variant: f for f in figures}
    return sorted(
        variants,
        key=lambda v: (
            variants[v].scenario != app_of(variants[v]),
            variants[v].scenario,
            rank.get(variants[v].stack, 99),
        ),
    )


def run_stacks(run: Run) -> list[str]:
    return sorted({f.stack for f in run.figures})


def usable_reference(run: Run, reference: str | None) -> tuple[str | None, str]:
    """(the stack ratios are taken against, or None; the one line the report says about it).
    A reference the run lacks gives no ratios, said once, plainly."""
    stacks = run_stacks(run)
    if reference is None:
        return None, (
            "No ratios between stacks: benchwatch.toml names no reference_stack."
            if len(stacks) > 1
            else ""
        )
    if reference not in stacks:
        return (
            None,
            f"No ratios: the reference stack `{reference}` is not in this run (its stacks: {', '.join(stacks) or 'none'}).",
        )
    return reference, (
        f"Ratios are against the reference stack `{reference}` "
        "(x faster/slower in the metric's own direction; server CPU per request first)."
    )


def require_reference(run: Run, reference: str | None) -> None:
    """A reference named on the command line must be a stack of the run."""
    if reference is not None and reference not in run_stacks(run):
        stacks = ", ".join(run_stacks(run)) or "none"
        raise UserError(
            f"--reference {reference}: this run has no figures of that stack (its stacks: {stacks})"
        )


def reference_variant(app: str, reference_stack: str | None) -> str | None:
    return variant_id(app, reference_stack) if reference_stack else None


def cell_for(figure: Figure | None, reference: Figure | None) -> Cell:
    if figure is None:
        return Cell("—")
    text = fmt_value(figure.value, figure.unit)
    if figure.spread > 0:
        text += f" ± {fmt_value(figure.spread, figure.unit).split(' ')[0]}"
    if not figure.valid:
        return Cell(f"{text} (invalid)", "bad")
    if reference is None or reference is figure or not reference.valid:
        return Cell(text)
    good = goodness(figure.value, reference.value, figure.bigger_is_better)
    if good is None:
        return Cell(text)
    words, tone = ratio_text(good, is_memory(figure))
    return Cell(f"{text} ({words})", tone)


def load_tables(
    run: Run, reference_stack: str | None, stacks: Sequence[str]
) -> dict[str, list[Table]]:
    """Per app: one table per endpoint (CPU/request first) and one for memory."""
    by_app: dict[str, list[Figure]] = defaultdict(list)
    for figure in run.figures:
        if figure.kind == "load":
            by_app[app_of(figure)].append(figure)
    tables: dict[str, list[Table]] = {}
    for app in sorted(by_app):
        figures = by_app[app]
        ref_variant = reference_variant(app, reference_stack)
        endpoints = list(dict.fromkeys(f.endpoint for f in figures))
        endpoints.sort(key=lambda e: e is None)
        app_tables = []
        for endpoint in endpoints:
            chosen = [f for f in figures if f.endpoint == endpoint]
            title = endpoint or "memory (whole server process tree)"
            app_tables.append(_table(title, chosen, ref_variant, stacks))
        tables[app] = app_tables
    return tables


def _table(
    title: str, figures: list[Figure], ref_variant: str | None, stacks: Sequence[str]
) -> Table:
    variants = variant_order(figures, stacks)
    cells: dict[tuple, dict[str, Figure]] = defaultdict(dict)
    for figure in figures:
        cells[_row_key(figure)][figure.variant] = figure
    table = Table(title, ["figure", *variants])
    for key in sorted(cells, key=lambda k: k[:3]):
        row = cells[key]
        sample = next(iter(row.values()))
        label = sample.about.title if sample.about else sample.metric
        where = (
            f"{sample.setting.fraction:.0%} of max"
            if isinstance(sample.setting, Open)
            else (sample.setting.label if sample.setting is not None else "")
        )
        reference = row.get(ref_variant) if ref_variant else None
        table.rows.append(
            [Cell(f"{label} {where}".strip()), *(cell_for(row.get(v), reference) for v in variants)]
        )
    if ref_variant and not any(ref_variant in row for row in cells.values()):
        table.note = f"no ratios: the reference {ref_variant} was not measured here"
    elif ref_variant:
        table.note = f"ratios against {ref_variant}"
    return table


def micro_tables(run: Run, reference_stack: str | None, stacks: Sequence[str]) -> list[Table]:
    """Micro-benchmarks: one row per benchmark and case, stacks side by side."""
    figures = [f for f in run.figures if f.kind == "micro"]
    if not figures:
        return []
    order = [s for s in stacks if any(f.stack == s for f in figures)]
    rows: dict[tuple, dict[str, Figure]] = defaultdict(dict)
    for figure in figures:
        key = (
            figure.scenario,
            figure.metric,
            json.dumps(figure.params, sort_keys=True, default=str),
        )
        rows[key][figure.stack] = figure
    table = Table("asv figures per stack", ["benchmark", *order])
    for key in sorted(rows):
        row = rows[key]
        reference = row.get(reference_stack) if reference_stack else None
        params = json.loads(key[2])
        label = " ".join(
            [
                str(params.get("case", key[0])),
                key[1],
                *(str(v) for k, v in params.items() if k not in ("case", "size")),
            ]
        )
        table.rows.append([Cell(label), *(_micro_cell(row.get(s), reference) for s in order)])
    if reference_stack:
        table.note = f"ratios against {reference_stack}"
    explained = micro_explains_load(run, order)
    return [table, explained] if explained.rows else [table]


def micro_explains_load(run: Run, stacks: Sequence[str]) -> Table:
    """For each endpoint that declares a `micro_case`: the server's CPU per request next to
    the micro-benchmark of FastAPI's response_model path on the same data, per stack."""
    micro = {
        (f.params.get("case"), f.stack): f
        for f in run.figures
        if f.kind == "micro" and f.valid and f.metric == "response_model"
    }
    table = Table(
        "what the micro-benchmarks explain: FastAPI's response_model path vs the whole request",
        [
            "endpoint",
            "stack",
            "server CPU per request (c=10 or lowest)",
            "response_model micro",
            "share of the request",
        ],
    )
    rank = {s: i for i, s in enumerate(stacks)}
    load = [
        f
        for f in run.figures
        if f.kind == "load"
        and f.valid
        and f.micro_case
        and f.metric == CPU.key
        and isinstance(f.setting, Closed)
        and f.scenario == app_of(f)
    ]
    by_place: dict[tuple, list[Figure]] = defaultdict(list)
    for figure in load:
        by_place[(figure.endpoint, figure.stack)].append(figure)
    lowest = {
        place: min(found, key=lambda f: setting_sort_key(f.setting))
        for place, found in by_place.items()
    }
    for (endpoint, stack), figure in sorted(
        lowest.items(), key=lambda i: (i[0][0], rank.get(i[0][1], 99))
    ):
        partner = micro.get((figure.micro_case, stack))
        request_s, micro_s = in_seconds(figure), in_seconds(partner) if partner else None
        if partner is None or not request_s or micro_s is None:
            continue
        table.rows.append(
            [
                Cell(str(endpoint)),
                Cell(stack),
                Cell(fmt_value(figure.value, figure.unit)),
                Cell(fmt_value(partner.value, partner.unit)),
                Cell(f"{micro_s / request_s:.0%}"),
            ]
        )
    table.note = (
        "a share near or above 100 % means serialization is the request; the micro "
        "figure is single-threaded CPU time of the same payload, the load figure the "
        "server's CPU per successful response"
    )
    return table


def in_seconds(figure: Figure) -> float | None:
    scale = _TIME_SCALE.get(figure.unit)
    return None if scale is None else figure.value * scale


def _micro_cell(figure: Figure | None, reference: Figure | None) -> Cell:
    if figure is None:
        return Cell("—")
    text = fmt_value(figure.value, figure.unit)
    if not figure.valid:
        return Cell(f"{text} (invalid)", "bad")
    if reference is None or reference is figure or not reference.valid:
        return Cell(text)
    mine, theirs = in_seconds(figure), in_seconds(reference)
    if mine is None or theirs is None:
        if figure.unit != reference.unit:
            return Cell(text)
        mine, theirs = figure.value, reference.value
    good = goodness(mine, theirs, figure.bigger_is_better)
    if good is None:
        return Cell(text)
    words, tone = ratio_text(good, is_memory(figure))
    return Cell(f"{text} ({words})", tone)
