"""The overview's latest results: per app, the headline figures' table beside their CPU chart;
the side-by-side questions; the speed-ups between stacks, coloured only when they are changes."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from html import escape

from benchwatch.figures.figure_key import variant_id
from benchwatch.figures.metrics import CPU, RPS, Closed
from benchwatch.report.honest import Measured, measured
from benchwatch.report.html import table_html
from benchwatch.report.markdown import sequential_note
from benchwatch.report.questions import questions_table
from benchwatch.report.svg import Bar, grouped_bars
from benchwatch.report.tables import (
    Cell,
    Table,
    app_of,
    goodness,
    ratio_text,
    variant_order,
)
from benchwatch.results.schema import Figure, Run

HEADLINE_METRICS = (CPU, RPS)


def headline(run: Run) -> dict[tuple[str, str | None, str], Figure]:
    """(variant, endpoint, metric) -> the valid closed-loop figure at the highest concurrency."""
    chosen: dict[tuple[str, str | None, str], Figure] = {}
    concurrency: dict[tuple[str, str | None, str], int] = {}  # the chosen figure's
    for f in run.figures:
        if (
            f.kind != "load"
            or not f.valid
            or f.about not in HEADLINE_METRICS
            or not isinstance(f.setting, Closed)
        ):
            continue
        key = (f.variant, f.endpoint, f.metric)
        if key not in chosen or f.setting.concurrency > concurrency[key]:
            chosen[key] = f
            concurrency[key] = f.setting.concurrency
    return chosen


def latest_tables(
    run: Run, reference_stack: str | None, stacks: Sequence[str]
) -> list[tuple[str, Table, str]]:
    figures = headline(run)
    how = measured(run)
    out = []
    for app in sorted({app_of(f) for f in figures.values()}):
        mine = [f for f in figures.values() if app_of(f) == app]
        variants = variant_order(mine, stacks)
        table = Table(app, ["endpoint", "figure", *variants])
        reference = variant_id(app, reference_stack) if reference_stack else None
        for endpoint in dict.fromkeys(f.endpoint for f in mine):
            for metric in HEADLINE_METRICS:
                row = {v: figures.get((v, endpoint, metric.key)) for v in variants}
                present = [f for f in row.values() if f is not None]
                if not present:
                    continue
                ref = row.get(reference) if reference else None
                setting = present[0].setting
                title = f"{metric.title} {setting.tag if setting is not None else ''}".strip()
                table.rows.append(
                    [
                        Cell(endpoint or ""),
                        Cell(title),
                        *(_cell(row[v], ref, how) for v in variants),
                    ]
                )
        notes = [
            how.how(),
            ", ".join(how.noise(m.key) for m in HEADLINE_METRICS),
            how.judged(),
            "the highest concurrency measured",
        ]
        if reference in variants:
            notes.insert(0, f"ratios against {reference}")
        table.note = "; ".join(notes)
        cpu = {
            f"{e}": [
                Bar(v, figures[(v, e, CPU.key)].value)
                for v in variants
                if (v, e, CPU.key) in figures
            ]
            for e in dict.fromkeys(f.endpoint for f in mine)
        }
        chart = grouped_bars(
            f"{app}: server CPU per request (shorter is better)", "µs", cpu, scale_per_group=True
        )
        out.append((app, table, chart))
    return out


def _cell(figure: Figure | None, reference: Figure | None, how: Measured) -> Cell:
    if figure is None:
        return Cell("—")
    unit = "µs" if figure.unit == "us" else figure.unit
    text = f"{figure.value:,.0f} {unit}" if figure.value >= 100 else f"{figure.value:.3g} {unit}"
    if len(figure.samples) > 1 and figure.spread > 0:
        text += f" ± {figure.spread:.2g}"
    if reference is None or reference is figure:
        return Cell(text)
    good = goodness(figure.value, reference.value, figure.bigger_is_better)
    if good is None:
        return Cell(text)
    words, _ = ratio_text(good)
    why = how.qualifier(good, figure.metric)
    return Cell(f"{text} ({words}{'; ' + why if why else ''})", how.tone(good, figure.metric))


def stack_pairs(
    run: Run, stacks: Sequence[str]
) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """(v1→v2 pairs, release-to-release pairs) from the stacks' installed Pydantic majors."""
    installed = run.environment.stacks
    majors = {}
    for stack in stacks:
        version = str((installed.get(stack) or {}).get("pydantic", ""))
        if version[:1].isdigit():
            majors[stack] = version.split(".")[0]
    v1 = [s for s in stacks if majors.get(s) == "1"]
    v2 = [s for s in stacks if majors.get(s) == "2" and s != "next"] or [
        s for s in stacks if majors.get(s) == "2"
    ]
    across = []
    if v1 and v2:
        across.append((v1[0], v2[0]))
        if (v1[-1], v2[-1]) != (v1[0], v2[0]):
            across.append((v1[-1], v2[-1]))
    within = []
    for family in ("1", "2"):
        members = [s for s in stacks if majors.get(s) == family]
        within += list(itertools.pairwise(members))
    if not across and not within:
        within = list(itertools.pairwise(stacks))
    return across, within


def speedup_table(run: Run, stacks: Sequence[str]) -> Table | None:
    figures = headline(run)
    how = measured(run)
    across, within = stack_pairs(run, stacks)
    pairs = [(a, b, "v1→v2") for a, b in across] + [(a, b, "release") for a, b in within]
    if not pairs:
        return None
    table = Table(
        "speed-ups (server CPU per request)",
        ["scenario", "endpoint", *(f"{a} → {b}" for a, b, _ in pairs)],
    )
    keys = sorted(
        {(f.scenario, f.endpoint) for f in figures.values() if f.metric == CPU.key},
        key=lambda k: (k[0], k[1] or ""),
    )
    for scenario, endpoint in keys:
        cells = []
        for a, b, _ in pairs:
            before = figures.get((variant_id(scenario, a), endpoint, CPU.key))
            after = figures.get((variant_id(scenario, b), endpoint, CPU.key))
            good = goodness(after.value, before.value, False) if before and after else None
            if good is None:
                cells.append(Cell("—"))
                continue
            words, _ = ratio_text(good)
            why = how.qualifier(good, CPU.key)
            cells.append(Cell(f"{words}{' (' + why + ')' if why else ''}", how.tone(good, CPU.key)))
        if any(c.text != "—" for c in cells):
            table.rows.append([Cell(scenario), Cell(endpoint or ""), *cells])
    kinds = ", ".join(f"{a} → {b} ({kind})" for a, b, kind in pairs)
    table.note = f"{how.how()}; {how.noise(CPU.key)}; {how.judged()}; pairs: {kinds}"
    return table


def latest_section(
    run: Run | None, reference_stack: str | None, stacks: Sequence[str]
) -> list[str]:
    parts = ["<h2 id='latest'>Latest results</h2>"]
    if run is None:
        parts.append(
            "<div class='message'>No run given (benchwatch site --run DIR): no latest table.</div>"
        )
    else:
        environment = run.environment
        parts.append(
            f"<p class='note'>run of {escape(run.started_at)} on {escape(environment.cpu_model or '?')}"
            f" ({escape(str(environment.cores or '?'))} cores), commit "
            f"{escape(environment.git_commit or '?')[:12]}"
            f"{'' if run.complete else ' — INCOMPLETE'}; {len(run.problems)} problems</p>"
        )
        parts.append(f"<p class='note sequential'>{escape(sequential_note(run))}</p>")
        side_by_side = questions_table(run)
        if side_by_side is not None:
            parts.append(f"<h3>Side by side</h3>{table_html(side_by_side)}")
        speedups = speedup_table(run, stacks)
        if speedups is not None:
            parts.append(f"<h3>Speed-ups †</h3>{table_html(speedups, numeric_from=2)}")
        for app, table, chart in latest_tables(run, reference_stack, stacks):
            parts.append(
                f"<h3>{escape(app)}</h3><div class='app-row'><div class='static-charts'>{chart}</div>"
                f"<div class='table-box'>{table_html(table, 2)}</div></div>"
            )
    return parts
