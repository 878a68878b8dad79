"""The gh-pages site: index.html (latest results, speed-ups, nightly status, every figure's trend),
trends.html (per scenario, the gating figures over commits and nights, change points marked),
releases.html (each release's attributed effect); one nav, one stylesheet, light and dark."""

from __future__ import annotations

import itertools
import json
import shutil
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from html import escape
from pathlib import Path

from benchwatch.attribute.table import Attribution
from benchwatch.errors import UserError
from benchwatch.figure_key import decode
from benchwatch.metrics import CPU, RPS, Closed
from benchwatch.report.honest import Measured, measured
from benchwatch.report.html import table_html
from benchwatch.report.markdown import sequential_note
from benchwatch.report.palette import STACK_COLORS, shared_flavors, split_variant, stack_color
from benchwatch.report.questions import questions_table
from benchwatch.report.releases_page import render_releases
from benchwatch.report.svg import Bar, grouped_bars
from benchwatch.report.tables import (
    Cell,
    Table,
    app_of,
    goodness,
    ratio_text,
    stack_order,
    usable_reference,
    variant_order,
)
from benchwatch.report.trends import marks_by_series, read_trend, trend_section
from benchwatch.report.write import write_report
from benchwatch.results import Figure, Run, write_text_atomic
from benchwatch.trend import history

DATA_FILE = "data.js"
MAIN_TREND = "dev/bench/data.js"
NIGHTLY_TREND = "nightly/data.js"
HISTORY_TREND = "history/data.js"
ASSET_DIR = Path(__file__).parent / "site_assets"
ASSETS = ("dashboard.js", "dashboard.css")
PAGES = (("index.html", "Overview"), ("trends.html", "Trends"), ("releases.html", "Releases"))
HEADLINE_METRICS = (CPU, RPS)
DEFAULT_FILTER = "cpu/req"


@dataclass(frozen=True)
class Source:
    label: str
    path: str  # relative to the site root
    nightly: bool = False


def find_trend_files(data_dir: Path) -> dict[str, Path]:
    """data.js files at most three levels below data_dir, by their path relative to it."""
    found = {}
    for depth in range(4):
        for path in sorted(data_dir.glob("/".join(["*"] * depth + [DATA_FILE]))):
            if path.is_file() and not any(part.startswith(".git") for part in path.parts):
                found[path.relative_to(data_dir).as_posix()] = path
    return found


def series_stacks(paths: Iterable[Path]) -> dict[str, str]:
    """{figure name: its stack} of every name in these data.js files (the dashboard colours a
    line by it); a file that cannot be read adds nothing (the dashboard says why)."""
    found: dict[str, str] = {}
    for path in paths:
        try:
            data = history.read(path)
        except history.HistoryError:
            continue
        for runs in data["entries"].values():
            for run in runs:
                for bench in run.get("benches", []) if isinstance(run, dict) else []:
                    name = bench.get("name") if isinstance(bench, dict) else None
                    key = decode(name) if isinstance(name, str) else None
                    if key is not None:
                        found[name] = key.stack
    return found


def site_path(relative: str) -> str:
    return HISTORY_TREND if relative == DATA_FILE else relative


def collect_sources(out: Path, data_dirs: Sequence[Path], copy: bool = True) -> tuple[list[Source], dict[str, Path]]:
    """The two published trends always (a missing one shows a message), plus every data.js
    found under the data dirs, copied into the site at the same relative path (unless `copy` is
    off: on gh-pages, github-action-benchmark owns dev/bench and nightly). Returns the sources
    the dashboard loads and {site path: file} of the files found, for trends.html."""
    paths = [MAIN_TREND, NIGHTLY_TREND]
    found: dict[str, Path] = {}
    for data_dir in data_dirs:
        for relative, path in find_trend_files(data_dir).items():
            target = out / site_path(relative)
            if copy and path.resolve() != target.resolve():
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(path, target)
            found.setdefault(site_path(relative), path)
            if site_path(relative) not in paths:
                paths.append(site_path(relative))
    return [Source(LABELS.get(p, p.removesuffix("/" + DATA_FILE)), p, p == NIGHTLY_TREND) for p in paths], found


LABELS = {MAIN_TREND: "main: every push (dev/bench)", NIGHTLY_TREND: "nightly: newest releases",
          HISTORY_TREND: "local history (benchwatch run)"}  # fmt: skip


def headline(run: Run) -> dict[tuple[str, str | None, str], Figure]:
    """(variant, endpoint, metric) -> the valid closed-loop figure at the highest concurrency."""
    chosen: dict[tuple[str, str | None, str], Figure] = {}
    for f in run.figures:
        if f.kind != "load" or not f.valid or f.about not in HEADLINE_METRICS or not isinstance(f.setting, Closed):
            continue
        key = (f.variant, f.endpoint, f.metric)
        if key not in chosen or f.setting.concurrency > chosen[key].setting.concurrency:  # type: ignore[union-attr]
            chosen[key] = f
    return chosen


def latest_tables(run: Run, reference_stack: str | None, stacks: Sequence[str]) -> list[tuple[str, Table, str]]:
    figures = headline(run)
    how = measured(run)
    out = []
    for app in sorted({app_of(f) for f in figures.values()}):
        mine = [f for f in figures.values() if app_of(f) == app]
        variants = variant_order(mine, stacks)
        table = Table(app, ["endpoint", "figure", *variants])
        reference = f"{app}@{reference_stack}" if reference_stack else None
        for endpoint in dict.fromkeys(f.endpoint for f in mine):
            for metric in HEADLINE_METRICS:
                row = {v: figures.get((v, endpoint, metric.key)) for v in variants}
                present = [f for f in row.values() if f is not None]
                if not present:
                    continue
                ref = row.get(reference) if reference else None
                setting = present[0].setting
                title = f"{metric.title} {setting.tag if setting is not None else ''}".strip()
                table.rows.append([Cell(endpoint or ""), Cell(title), *(_cell(row[v], ref, how) for v in variants)])
        notes = [how.how(), ", ".join(how.noise(m.key) for m in HEADLINE_METRICS), how.judged(),
                 "the highest concurrency measured"]
        if reference in variants:
            notes.insert(0, f"ratios against {reference}")
        table.note = "; ".join(notes)
        cpu = {f"{e}": [Bar(v, figures[(v, e, CPU.key)].value) for v in variants
                        if (v, e, CPU.key) in figures]
               for e in dict.fromkeys(f.endpoint for f in mine)}  # fmt: skip
        chart = grouped_bars(f"{app}: server CPU per request (shorter is better)", "µs", cpu, scale_per_group=True)
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


def stack_pairs(run: Run, stacks: Sequence[str]) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """(v1→v2 pairs, release-to-release pairs) from the stacks' installed Pydantic majors."""
    installed = run.environment.stacks
    majors = {}
    for stack in stacks:
        version = str((installed.get(stack) or {}).get("pydantic", ""))
        if version[:1].isdigit():
            majors[stack] = version.split(".")[0]
    v1 = [s for s in stacks if majors.get(s) == "1"]
    v2 = [s for s in stacks if majors.get(s) == "2" and s != "next"] or [s for s in stacks if majors.get(s) == "2"]
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
    table = Table("speed-ups (server CPU per request)",
                  ["scenario", "endpoint", *(f"{a} → {b}" for a, b, _ in pairs)])  # fmt: skip
    keys = sorted({(f.scenario, f.endpoint) for f in figures.values() if f.metric == CPU.key},
                  key=lambda k: (k[0], k[1] or ""))  # fmt: skip
    for scenario, endpoint in keys:
        cells = []
        for a, b, _ in pairs:
            before = figures.get((f"{scenario}@{a}", endpoint, CPU.key))
            after = figures.get((f"{scenario}@{b}", endpoint, CPU.key))
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


def nav_html(active: str, report_link: str | None) -> str:
    links = [f"<a href='{href}'{' aria-current=page' if href == active else ''}>{label}</a>" for href, label in PAGES]
    links += ["<a href='dev/bench/'>/dev/bench/</a>", "<a href='nightly/'>/nightly/</a>", "<a href='asv/'>/asv/</a>"]
    if report_link:
        links.append(f"<a href='{report_link}'>latest report</a>")
    return f"<nav class='links'>{''.join(links)}</nav>"


def stack_key() -> str:
    """The one palette, as a legend every page shows."""
    items = "".join(f"<span class='key'><i style='background:{stack_color(s)}'></i>{escape(s)}</span>" for s in STACK_COLORS)
    return (f"<p class='stack-key'>{items}<span class='note'>one colour per stack in every chart; "
            "flavors (app-flavor@stack) by pattern, dash and marker</span></p>")  # fmt: skip


# marks each .scroll box whose table is wider than the box (on load, on resize, and when
# dashboard.js adds a table), so the "scroll sideways" hint shows under those only; without
# scripts, phones show it under every table (dashboard.css)
MARK_WIDE_TABLES = (
    "<script>(function(){function mark(){document.querySelectorAll('.scroll').forEach(function(s){"
    "s.classList.toggle('wide',s.scrollWidth>s.clientWidth+1)})}window.bwMarkScrolls=mark;"
    "document.documentElement.classList.add('js');addEventListener('resize',mark);"
    "addEventListener('load',mark);mark()})();</script>"
)


def page(file: str, title: str, body: list[str], report_link: str | None, script: str = "") -> str:
    return (
        "<!doctype html>\n<html lang='en'><head><meta charset='utf-8'>"
        "<meta name='viewport' content='width=device-width, initial-scale=1'>"
        "<meta name='color-scheme' content='light dark'>"
        f"<title>{escape(title)}</title><link rel='stylesheet' href='assets/dashboard.css'></head><body>"
        f"<header><h1>{escape(title)}</h1>{nav_html(file, report_link)}</header><main>"
        + "\n".join(body)
        + "</main>"
        + MARK_WIDE_TABLES
        + script
        + "</body></html>\n"
    )


def render_index(run: Run | None, sources: list[Source], reference_stack: str | None,
                 stacks: Sequence[str], report_link: str | None,
                 changes: list[dict] | None = None, palette_stacks: Sequence[str] = (),
                 stacks_of: dict[str, str] | None = None) -> str:  # fmt: skip
    parts = [stack_key(), "<h2>Nightly status</h2><div id='nightly-status' data-state='pending'>loading…</div>"]
    parts.append("<h2 id='latest'>Latest results</h2>")
    if run is None:
        parts.append("<div class='message'>No run given (benchwatch site --run DIR): no latest table.</div>")
    else:
        environment = run.environment
        parts.append(f"<p class='note'>run of {escape(run.started_at)} on {escape(environment.cpu_model or '?')}"
                     f" ({escape(str(environment.cores or '?'))} cores), commit "
                     f"{escape(environment.git_commit or '?')[:12]}"
                     f"{'' if run.complete else ' — INCOMPLETE'}; {len(run.problems)} problems</p>")  # fmt: skip
        parts.append(f"<p class='note sequential'>{escape(sequential_note(run))}</p>")
        side_by_side = questions_table(run)
        if side_by_side is not None:
            parts.append(f"<h3>Side by side</h3>{table_html(side_by_side)}")
        speedups = speedup_table(run, stacks)
        if speedups is not None:
            parts.append(f"<h3>Speed-ups †</h3>{table_html(speedups, numeric_from=2)}")
        for app, table, chart in latest_tables(run, reference_stack, stacks):
            parts.append(f"<h3>{escape(app)}</h3><div class='app-row'><div class='static-charts'>{chart}</div>"
                         f"<div class='table-box'>{table_html(table, 2)}</div></div>")  # fmt: skip
    parts.append("<h2>Every figure's trend</h2><p class='note'>github-action-benchmark's points, one chart per "
                 "figure name; <a href='trends.html'>Trends</a> groups the gating figures per scenario.</p>"
                 "<div class='controls'><label>filter figures: "
                 "<input id='trend-filter' type='search'></label></div><div id='trends'>loading…</div>")  # fmt: skip
    parts.append("<h2>Change points</h2><div id='change-points'>"
                 + ("loading…" if changes is not None else "no change-point analysis given "
                    "(benchwatch site --changes changes.json)") + "</div>")  # fmt: skip
    config = json.dumps({"sources": [s.__dict__ for s in sources], "filter": DEFAULT_FILTER, "changes": changes,
                         "stacks": stacks_of or {},
                         "palette": {s: stack_color(s) for s in [*STACK_COLORS, *stacks, *palette_stacks]}})  # fmt: skip
    config = config.replace("</", "<\\/")
    script = (f"\n<script type='application/json' id='bw-sources'>{config}</script>"
              "\n<script src='assets/dashboard.js'></script>")  # fmt: skip
    return page("index.html", "benchwatch: FastAPI + Pydantic performance", parts, report_link, script)


def render_trends(files: dict[str, Path], changes: list[dict] | None, report_link: str | None) -> tuple[str, list[str]]:
    """(the page, every stack its charts drew)."""
    parts = [stack_key(), "<p>Per scenario, the gating figures (server CPU per request, micro-benchmark times) "
             "over commits on main and over nights, one line per stack. Dashed vertical lines are the change "
             "points of <code>benchwatch changes</code> (red: regression, green: improvement, grey: acknowledged); "
             "the (vs parent) chart beside each one is the same figure measured against its parent side by side.</p>"]  # fmt: skip
    if changes is None:
        parts.append("<div class='message'>no change-point analysis given: no change points marked</div>")
    marks = marks_by_series(changes)
    seen: list[str] = []
    order = [MAIN_TREND, NIGHTLY_TREND, HISTORY_TREND]
    for path in sorted(files, key=lambda p: (order.index(p) if p in order else len(order), p)):
        try:
            trend = read_trend(files[path], LABELS.get(path, path.removesuffix("/" + DATA_FILE)), path == NIGHTLY_TREND)
            trend.path = path  # where it is published, not where this machine read it
        except UserError as exc:  # the command checks --data files first; here: a file already in the site
            parts.append(f"<div class='message error' data-source='{escape(path)}'>{escape(str(exc))}</div>")
            continue
        parts.append(trend_section(trend, marks))
        seen += [split_variant(line.series)[1] for charts in trend.groups.values() for chart in charts
                 for line in chart.absolute + chart.relative]  # fmt: skip
    if not files:
        parts.append("<div class='message'>no data.js given (benchwatch site --data DIR): trends appear after the "
                     "first publish</div>")  # fmt: skip
    return page("trends.html", "benchwatch: trends", parts, report_link), list(dict.fromkeys(seen))


def render_releases_page(attributions: Sequence[tuple[str, Attribution]], report_link: str | None) -> str:
    parts = ["<p>Each FastAPI / Pydantic / Starlette / uvicorn release the nightly measured, with its attributed "
             "effect per scenario: <code>benchwatch attribute</code> moves one package (or the group the resolver "
             "demands) at a time and measures each step side by side with the base.</p>",
             render_releases(attributions, table_html)]  # fmt: skip
    return page("releases.html", "benchwatch: releases and their effect", parts, report_link)


def build_site(
    out: Path, *, run: Run | None = None, data_dirs: Sequence[Path] = (),
    reference_stack: str | None = None, stacks: Sequence[str] = (), changes: list[dict] | None = None,
    attributions: Sequence[tuple[str, Attribution]] = (), copy_data: bool = True,
) -> Path:  # fmt: skip
    with shared_flavors():  # a flavor keeps its pattern on every chart of every page
        return _build_site(out, run, data_dirs, reference_stack, stacks, changes, attributions, copy_data)


def _build_site(
    out: Path, run: Run | None, data_dirs: Sequence[Path], reference_stack: str | None, stacks: Sequence[str],
    changes: list[dict] | None, attributions: Sequence[tuple[str, Attribution]], copy_data: bool,
) -> Path:  # fmt: skip
    out.mkdir(parents=True, exist_ok=True)
    assets = out / "assets"
    assets.mkdir(exist_ok=True)
    for name in ASSETS:
        write_text_atomic(assets / name, (ASSET_DIR / name).read_text())
    sources, files = collect_sources(out, data_dirs or [out], copy_data)
    report_link = None
    order: list[str] = list(stacks)
    if run is not None:
        reference_stack = usable_reference(run, reference_stack or run.extra.reference_stack)[0]
        order = stack_order(run, stacks)
        write_report(out / "latest", run, reference_stack, order)
        report_link = "latest/report.html"
    trends, seen = render_trends(files, changes, report_link)
    write_text_atomic(out / "trends.html", trends)
    write_text_atomic(out / "releases.html", render_releases_page(attributions, report_link))
    index = out / "index.html"
    write_text_atomic(index, render_index(run, sources, reference_stack, order, report_link, changes, seen,
                                          series_stacks(files.values())))  # fmt: skip
    return index
