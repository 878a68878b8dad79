"""releases.html: each FastAPI / Pydantic / Starlette / uvicorn release the nightly measured, with
its attributed effect per scenario (ratio [interval], from `benchwatch attribute`'s
attribution.json). First the releases that moved a figure, one row per release and endpoint: the
estimated cost per request and its mechanism (the shared objects whose instructions moved, the
system calls by name that changed); then every figure of every step, so it can be cited line by line."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from html import escape

from benchwatch.attribute.ratios import Ratio
from benchwatch.attribute.table import Attribution
from benchwatch.compare.rounds import COMPARE_QUICK_ROUNDS
from benchwatch.environments.releases import PACKAGES
from benchwatch.figures.figure_key import label_metric
from benchwatch.figures.metrics import COUNT_KEYS
from benchwatch.publish.release_cells import (
    effect,
    figure_label,
    moved_package,
    ordered,
    release_name,
)
from benchwatch.publish.release_mechanisms import mechanism_table
from benchwatch.report.tables import Cell, Table


def how_measured(result: Attribution) -> str:
    rounds = result.rounds or COMPARE_QUICK_ROUNDS
    kinds = {label_metric(line.label) in COUNT_KEYS for line in result.lines}
    how = []
    if True in kinds:
        how.append(
            "counted once per side (instructions under callgrind, system calls by name under strace, per "
            "request; the estimated cost weighs them by what each costs on the measuring machine)"
        )
    if False in kinds or not kinds:
        how.append(
            f"loaded side by side with {result.base}: {rounds} paired rounds{' (quick)' if result.quick else ''}"
            " (server CPU per request)"
        )
    return (
        f"Each step is {result.base} with one package (or the group the resolver demands) moved to "
        f"{result.head}'s version, {' and '.join(how)}. Effect = step / {result.base}, with its 95 % interval; "
        "below 1 is less (cheaper, fewer, faster). Coloured only when the interval excludes 1 and the change "
        "exceeds the measured noise floor (compare's verdict)."
    )


def release_table(base: str, head: str, results: Sequence[Attribution]) -> Table:
    """One row per (release, scenario, figure): the four watched packages first."""
    table = Table(
        f"{base} → {head}: releases and their attributed effect",
        ["release", "moved with it", "scenario", "figure", "effect [95 % interval]"],
    )
    rows: list[tuple[tuple, list[Cell]]] = []
    for result in results:
        for step in result.steps:
            packages = ordered(step)
            lead = packages[0] if packages and step.kind != "transitive" else ""
            others = ", ".join(moved_package(step, p) for p in packages if p != lead) or "—"
            for line in result.lines:
                ratio = (
                    Ratio(text=step.error)
                    if step.error is not None
                    else Ratio(text=step.skipped)
                    if step.skipped is not None
                    else line.steps.get(step.step)
                )
                if ratio is None:
                    continue
                key = (
                    lead not in PACKAGES,
                    PACKAGES.index(lead) if lead in PACKAGES else 0,
                    lead == "",
                    lead,
                    line.scenario,
                    line.label,
                )
                rows.append(
                    (
                        key,
                        [
                            Cell(release_name(step)),
                            Cell(others),
                            Cell(line.scenario),
                            Cell(figure_label(line.label, line.scenario)),
                            effect(ratio, line.label),
                        ],
                    )
                )
    table.rows = [cells for _, cells in sorted(rows, key=lambda r: r[0])]
    return table


def check_table(result: Attribution) -> Table:
    """Product of the steps next to the ratio measured directly, per figure."""
    table = Table(
        f"{result.base} → {result.head}: do the steps add up?",
        ["scenario", "figure", "product of the steps", "measured directly", "agree"],
    )
    for line in result.lines:
        agree = {True: "yes (intervals overlap)", False: "no: the steps interact", None: "—"}[
            line.agrees
        ]
        table.rows.append(
            [
                Cell(line.scenario),
                Cell(figure_label(line.label, line.scenario)),
                Cell(line.product.shown()),
                effect(line.direct, line.label),
                Cell(agree),
            ]
        )
    table.note = (
        "the product's interval adds the steps' log half-widths in quadrature (an approximation), "
        "so many steps make it wide"
    )
    return table


def render_releases(
    results: Sequence[tuple[str, Attribution]], table_html: Callable[..., str]
) -> str:
    if not results:
        return (
            "<div class='message'>no attribution results given (benchwatch site --attribution "
            "attribution.json): the nightly writes one when a release moved the numbers</div>"
        )
    pairs: dict[tuple[str, str], list[tuple[str, Attribution]]] = {}
    for source, result in results:
        pairs.setdefault((result.base, result.head), []).append((source, result))
    parts = []
    for (base, head), found in pairs.items():
        attributions = [result for _, result in found]
        scenarios = sorted({s for result in attributions for s in result.scenarios})
        parts.append(f"<h2>{escape(base)} → {escape(head)}</h2>")
        parts.append(
            f"<p class='note how'>{escape(how_measured(attributions[0]))} Scenarios: "
            f"{escape(', '.join(scenarios))}; from {escape(', '.join(source for source, _ in found))}.</p>"
        )
        moved = mechanism_table(base, head, attributions)
        if moved.rows:
            parts.append(table_html(moved, numeric_from=len(moved.columns)))
        else:
            parts.append(
                "<div class='message'>no release moved a figure beyond its noise floor</div>"
            )
        parts.append(f"<h3>Every figure of every step: {escape(base)} → {escape(head)}</h3>")
        parts.append(table_html(release_table(base, head, attributions), numeric_from=4))
        for result in attributions:
            parts.append(
                f"<h3>Do the steps add up? {escape(', '.join(result.scenarios))}</h3>"
                f"{table_html(check_table(result), numeric_from=2)}"
            )
    return "".join(parts)
