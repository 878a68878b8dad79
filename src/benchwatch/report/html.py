"""report.html: one self-contained page (the inlined stylesheet, SVG, no scripts, no external requests)."""

from __future__ import annotations

from html import escape
from pathlib import Path

from benchwatch.report.markdown import Report, study_table
from benchwatch.report.tables import Table

# the one stylesheet of the report and the site (the site links it as assets/style.css)
STYLESHEET = Path(__file__).parent / "style.css"
CSS = STYLESHEET.read_text()


def table_html(table: Table, numeric_from: int = 1) -> str:
    head = "".join(f"<th>{escape(c)}</th>" for c in table.columns)
    rows = []
    for row in table.rows:
        cells = []
        for i, cell in enumerate(row):
            classes = " ".join(c for c in (cell.tone, "num" if i >= numeric_from else "") if c)
            attr = f' class="{classes}"' if classes else ""
            cells.append(f"<td{attr}>{escape(cell.text)}</td>")
        rows.append("<tr>" + "".join(cells) + "</tr>")
    note = f'<div class="note">{escape(table.note)}</div>' if table.note else ""
    label = escape(table.title or "table", quote=True)
    return (
        f'<div class="scroll" tabindex="0" role="region" aria-label="{label}"><table><thead><tr>{head}</tr>'
        f"</thead><tbody>{''.join(rows)}</tbody></table></div>"
        f'<div class="scroll-hint">← scroll sideways for more columns →</div>{note}'
    )


def _problems(report: Report) -> str:
    if not report.problems and not report.invalid:
        return '<div class="ok">No problems: every variant installed, booted, verified and survived the load.</div>'
    parts = [f'<div class="problems" id="problems"><h2>Problems ({len(report.problems)})</h2><ul>']
    for line, detail in report.problems:
        tail = "\n".join(d for d in detail.splitlines() if d.strip())[-2000:]
        parts.append(
            f"<li>{escape(line)}" + (f"<pre>{escape(tail)}</pre>" if tail else "") + "</li>"
        )
    parts.append("</ul>")
    if report.invalid:
        parts.append(
            f"<p>Invalid figures ({len(report.invalid)}), not published as data points:</p><ul>"
        )
        parts += [f"<li>{escape(line)}</li>" for line in report.invalid]
        parts.append("</ul>")
    return "".join(parts) + "</div>"


def render_html(report: Report) -> str:
    apps = [s.app for s in report.apps]
    nav = " ".join(f'<a href="#app-{escape(a)}">{escape(a)}</a>' for a in apps)
    questions_link = (
        " <a href='#questions'>questions</a>" if report.study or report.questions else ""
    )
    body = [
        f"<h1>{escape(report.title)}</h1>",
        "".join(f"<p>{escape(line)}</p>" for line in report.summary),
        f"<nav class='links'>{nav}{questions_link} <a href='#environment'>environment</a></nav>",
        _problems(report),
    ]
    if report.study or report.questions:
        body += [
            '<h2 id="questions">Questions, side by side</h2>',
            *(f"<p>{escape(line)}</p>" for line in report.side_by_side if line),
        ]
    if report.study:
        body.append(table_html(study_table(report.study), numeric_from=99))
    if report.questions:
        body.append(table_html(report.questions, numeric_from=99))
    if report.apps:
        body.append(f"<p class='note sequential'>{escape(report.sequential)}</p>")
    for section in report.apps:
        body.append(f'<h2 id="app-{escape(section.app)}">{escape(section.app)} †</h2>')
        body.append('<div class="charts">' + "".join(section.charts) + "</div>")
        for table in section.tables:
            body.append(f"<h3>{escape(table.title)}</h3>{table_html(table)}")
    if report.micro:
        body.append("<h2>Micro-benchmarks (asv)</h2>")
        body += [table_html(t) for t in report.micro]
    if report.aa_noise:
        body.append("<h2>Noise (A/A)</h2>")
        body.append(table_html(report.aa_noise))
    if report.loadgen:
        body.append("<h2>Load generator</h2><ul>")
        body += [f"<li>{escape(line)}</li>" for line in report.loadgen]
        body.append("</ul>")
    body.append('<h2 id="environment">Environment</h2><div class="scroll"><table>')
    body += [f"<tr><th>{escape(k)}</th><td>{escape(v)}</td></tr>" for k, v in report.environment]
    body.append('</table></div><div class="scroll-hint">← scroll sideways for more columns →</div>')
    body.append(table_html(report.versions, numeric_from=99))
    return (
        "<!doctype html>\n<html lang='en'><head><meta charset='utf-8'>"
        "<meta name='viewport' content='width=device-width, initial-scale=1'>"
        f"<title>{escape(report.title)}</title><style>{CSS}</style></head><body>"
        + "\n".join(body)
        + "</body></html>\n"
    )
