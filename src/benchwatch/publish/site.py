"""The gh-pages site: index.html (latest results, speed-ups, nightly status, every figure's trend),
trends.html (per scenario, the gating figures over commits and nights, change points marked),
releases.html (each release's attributed effect); one nav, light and dark. Every chart is drawn
here, in Python, by the report's renderer (benchwatch.report.svg, .trends) from the data.js
files at hand, and styled by the report's one stylesheet (report/style.css)."""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from html import escape
from pathlib import Path

from benchwatch.attribute.table import Attribution
from benchwatch.errors import UserError
from benchwatch.publish.latest import latest_section
from benchwatch.publish.nightly import nightly_status
from benchwatch.publish.releases_page import render_releases
from benchwatch.publish.site_changes import change_table
from benchwatch.publish.trend_read import Trend, gating_only, read_trend
from benchwatch.publish.trends import marks_by_series, trend_section
from benchwatch.report.html import CSS, table_html
from benchwatch.report.palette import STACK_COLORS, shared_flavors, stack_color
from benchwatch.report.tables import stack_order, usable_reference
from benchwatch.report.write import write_report
from benchwatch.results.files import write_text_atomic
from benchwatch.results.schema import Run

DATA_FILE = "data.js"
MAIN_TREND = "dev/bench/data.js"
NIGHTLY_TREND = "nightly/data.js"
HISTORY_TREND = "history/data.js"
STYLESHEET = "assets/style.css"  # report/style.css, the report's own (inlined there)
PAGES = (("index.html", "Overview"), ("trends.html", "Trends"), ("releases.html", "Releases"))
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


def site_path(relative: str) -> str:
    return HISTORY_TREND if relative == DATA_FILE else relative


def collect_sources(
    out: Path, data_dirs: Sequence[Path], copy: bool = True
) -> tuple[list[Source], dict[str, Path]]:
    """The two published trends always (a missing one shows a message), plus every data.js
    found under the data dirs, copied into the site at the same relative path (unless `copy` is
    off: on gh-pages, github-action-benchmark owns dev/bench and nightly). Returns the sources,
    in the order the pages show them, and {site path: file} of the files found."""
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
    order = [MAIN_TREND, NIGHTLY_TREND, HISTORY_TREND]
    paths.sort(key=lambda p: (order.index(p) if p in order else len(order), p))
    return [
        Source(LABELS.get(p, p.removesuffix("/" + DATA_FILE)), p, p == NIGHTLY_TREND) for p in paths
    ], found


Loaded = Trend | str | None  # a source's trend, why it could not be read, or None: no file given


def load_trends(sources: Sequence[Source], files: dict[str, Path]) -> dict[str, Loaded]:
    """Each source's every figure, read once for both pages; a file that cannot be read is a
    message on them (the command checks its --data files first: here, a file already in the site)."""
    loaded: dict[str, Loaded] = {}
    for source in sources:
        if source.path not in files:
            loaded[source.path] = None
            continue
        try:
            trend = read_trend(files[source.path], source.label, source.nightly)
        except UserError as exc:
            loaded[source.path] = str(exc)
            continue
        trend.path = source.path  # where it is published, not where this machine read it
        loaded[source.path] = trend
    return loaded


LABELS = {
    MAIN_TREND: "main: every push (dev/bench)",
    NIGHTLY_TREND: "nightly: newest releases",
    HISTORY_TREND: "local history (benchwatch run)",
}


def nav_html(active: str, report_link: str | None) -> str:
    links = [
        f"<a href='{href}'{' aria-current=page' if href == active else ''}>{label}</a>"
        for href, label in PAGES
    ]
    links += [
        "<a href='dev/bench/'>/dev/bench/</a>",
        "<a href='nightly/'>/nightly/</a>",
        "<a href='asv/'>/asv/</a>",
    ]
    if report_link:
        links.append(f"<a href='{report_link}'>latest report</a>")
    return f"<nav class='links'>{''.join(links)}</nav>"


def stack_key() -> str:
    """The one palette, as a legend every page shows."""
    items = "".join(
        f"<span class='key'><i style='background:{stack_color(s)}'></i>{escape(s)}</span>"
        for s in STACK_COLORS
    )
    return (
        f"<p class='stack-key'>{items}<span class='note'>one colour per stack in every chart; "
        "flavors (app-flavor@stack) by pattern, dash and marker</span></p>"
    )


# marks each .scroll box whose table is wider than the box (on load, on resize), so the "scroll
# sideways" hint shows under those only; without scripts, phones show it under every table
# (style.css). The site's scripts draw nothing: every chart is in the page.
MARK_WIDE_TABLES = (
    "<script>(function(){function mark(){document.querySelectorAll('.scroll').forEach(function(s){"
    "s.classList.toggle('wide',s.scrollWidth>s.clientWidth+1)})}"
    "document.documentElement.classList.add('js');addEventListener('resize',mark);"
    "addEventListener('load',mark);mark()})();</script>"
)
# the overview's text filter: shows the pre-rendered trend charts whose figure, scenario or
# series holds the text, and says how many
FILTER_TRENDS = (
    "<script>(function(){var input=document.getElementById('trend-filter'),count=document.getElementById("
    "'trend-count'),box=document.getElementById('trends');function apply(){var q=input.value.trim().toLowerCase(),"
    "shown=0,all=0;box.querySelectorAll('figure.trend-chart').forEach(function(f){var on=f.getAttribute("
    "'data-filter').indexOf(q)>=0;f.hidden=!on;all++;if(on)shown++});box.querySelectorAll('.trend-group')"
    ".forEach(function(g){g.hidden=!g.querySelector('figure.trend-chart:not([hidden])')});count.textContent="
    "'showing '+shown+' of '+all+' charts'+(q?' matching \u201c'+input.value.trim()+'\u201d':'')}"
    "input.addEventListener('input',apply);apply()})();</script>"
)


def page(file: str, title: str, body: list[str], report_link: str | None, script: str = "") -> str:
    return (
        "<!doctype html>\n<html lang='en'><head><meta charset='utf-8'>"
        "<meta name='viewport' content='width=device-width, initial-scale=1'>"
        "<meta name='color-scheme' content='light dark'>"
        f"<title>{escape(title)}</title><link rel='stylesheet' href='{STYLESHEET}'></head><body>"
        f"<header><h1>{escape(title)}</h1>{nav_html(file, report_link)}</header><main>"
        + "\n".join(body)
        + "</main>"
        + MARK_WIDE_TABLES
        + script
        + "</body></html>\n"
    )


def source_section(source: Source, loaded: Loaded, marks: dict, *, level: int, gating: bool) -> str:
    """One data.js drawn by the one trend renderer, or the message saying why it is not."""
    if isinstance(loaded, Trend):
        what = "gating figures" if gating else "figures"
        return trend_section(
            gating_only(loaded) if gating else loaded, marks, level=level, what=what
        )
    state, text = (
        ("corrupt", loaded)
        if isinstance(loaded, str)
        else (
            "missing",
            f"{source.path}: no data.js given (none published there yet, or not given to benchwatch site --data)",
        )
    )
    return (
        f"<section class='trend-source' data-source='{escape(source.path)}' data-state='{state}'>"
        f"<h{level}>{escape(source.label)}</h{level}>"
        f"<div class='message{' error' if state == 'corrupt' else ''}'>{escape(text)}</div></section>"
    )


def render_index(
    run: Run | None,
    sources: list[Source],
    loaded: dict[str, Loaded],
    reference_stack: str | None,
    stacks: Sequence[str],
    report_link: str | None,
    changes: list[dict] | None = None,
) -> str:
    marks = marks_by_series(changes)
    nightly = next((s for s in sources if s.nightly), None)
    found = loaded.get(nightly.path) if nightly else None
    status = nightly_status(
        found if isinstance(found, Trend) else None,
        found if isinstance(found, str) else None,
        marks if changes is not None else None,
    )
    parts = [stack_key(), "<h2>Nightly status</h2>", status]
    parts += latest_section(run, reference_stack, stacks)
    parts.append(
        "<h2>Every figure's trend</h2><p class='note'>Every figure of each published trend, one chart per "
        "figure, one line per stack, change points marked, drawn as on "
        "<a href='trends.html'>Trends</a> (which shows the gating figures only).</p>"
        "<div class='controls'><label>filter charts: "
        f"<input id='trend-filter' type='search' value='{escape(DEFAULT_FILTER)}'></label> "
        "<span id='trend-count' class='note'></span></div><div id='trends'>"
    )
    parts += [
        source_section(source, loaded[source.path], marks, level=3, gating=False)
        for source in sources
    ]
    parts.append("</div>")
    parts.append("<h2>Change points</h2>" + change_table(changes))
    return page(
        "index.html",
        "benchwatch: FastAPI + Pydantic performance",
        parts,
        report_link,
        FILTER_TRENDS,
    )


def render_trends(
    sources: list[Source],
    loaded: dict[str, Loaded],
    changes: list[dict] | None,
    report_link: str | None,
) -> str:
    parts = [
        stack_key(),
        "<p>Per scenario, the gating figures (server CPU per request, micro-benchmark times) "
        "over commits on main and over nights, one line per stack. Dashed vertical lines are the change "
        "points of <code>benchwatch changes</code> (red: regression, green: improvement, grey: acknowledged); "
        "the (vs parent) chart beside each one is the same figure measured against its parent side by side.</p>",
    ]
    if changes is None:
        parts.append(
            "<div class='message'>no change-point analysis given: no change points marked</div>"
        )
    marks = marks_by_series(changes)
    given = [source for source in sources if loaded[source.path] is not None]
    parts += [
        source_section(source, loaded[source.path], marks, level=2, gating=True) for source in given
    ]
    if not given:
        parts.append(
            "<div class='message'>no data.js given (benchwatch site --data DIR): trends appear after the "
            "first publish</div>"
        )
    return page("trends.html", "benchwatch: trends", parts, report_link)


def render_releases_page(
    attributions: Sequence[tuple[str, Attribution]], report_link: str | None
) -> str:
    parts = [
        "<p>Each FastAPI / Pydantic / Starlette / uvicorn release the nightly measured, with its attributed "
        "effect per scenario: <code>benchwatch attribute</code> moves one package (or the group the resolver "
        "demands) at a time and measures each step against the base. A release that moved a figure is listed "
        "first with its estimated cost per request and its mechanism: the shared objects whose instructions "
        "moved and the system calls by name that changed.</p>",
        render_releases(attributions, table_html),
    ]
    return page("releases.html", "benchwatch: releases and their effect", parts, report_link)


def build_site(
    out: Path,
    *,
    run: Run | None = None,
    data_dirs: Sequence[Path] = (),
    reference_stack: str | None = None,
    stacks: Sequence[str] = (),
    changes: list[dict] | None = None,
    attributions: Sequence[tuple[str, Attribution]] = (),
    copy_data: bool = True,
) -> Path:
    with shared_flavors():  # a flavor keeps its pattern on every chart of every page
        return _build_site(
            out, run, data_dirs, reference_stack, stacks, changes, attributions, copy_data
        )


def _build_site(
    out: Path,
    run: Run | None,
    data_dirs: Sequence[Path],
    reference_stack: str | None,
    stacks: Sequence[str],
    changes: list[dict] | None,
    attributions: Sequence[tuple[str, Attribution]],
    copy_data: bool,
) -> Path:
    out.mkdir(parents=True, exist_ok=True)
    (out / "assets").mkdir(exist_ok=True)
    write_text_atomic(out / STYLESHEET, CSS)
    sources, files = collect_sources(out, data_dirs or [out], copy_data)
    loaded = load_trends(sources, files)
    report_link = None
    order: list[str] = list(stacks)
    if run is not None:
        reference_stack = usable_reference(run, reference_stack or run.extra.reference_stack)[0]
        order = stack_order(run, stacks)
        write_report(out / "latest", run, reference_stack, order)
        report_link = "latest/report.html"
    write_text_atomic(out / "trends.html", render_trends(sources, loaded, changes, report_link))
    write_text_atomic(out / "releases.html", render_releases_page(attributions, report_link))
    index = out / "index.html"
    write_text_atomic(
        index, render_index(run, sources, loaded, reference_stack, order, report_link, changes)
    )
    return index
