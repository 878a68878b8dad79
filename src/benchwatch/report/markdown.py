"""run.json -> report.md (the PR comment body) and report.html (self-contained, offline)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from benchwatch.figures.metrics import metric, setting_from_params
from benchwatch.report.charts import app_charts
from benchwatch.report.questions import StudyRow, questions_table, study_rows
from benchwatch.report.tables import (
    Cell,
    Table,
    load_tables,
    micro_tables,
    stack_order,
    usable_reference,
)
from benchwatch.results.schema import Run

__all__ = ["Report", "build", "render_markdown"]

REPORT_MD = "report.md"
REPORT_HTML = "report.html"
MD_LIMIT = 60000  # GitHub rejects comments over 65536 characters
HEADLINE_PACKAGES = ("fastapi", "pydantic", "pydantic-core", "starlette", "uvicorn", "orjson")


@dataclass
class AppSection:
    app: str
    tables: list[Table]
    charts: list[str]


@dataclass
class Report:
    title: str
    summary: list[str]
    environment: list[tuple[str, str]]
    versions: Table
    problems: list[tuple[str, str]]
    invalid: list[str]
    study: list[
        StudyRow
    ]  # published figures beside this run's answers (only when questions carry them)
    questions: Table | None  # the questions' ratios the study does not show
    apps: list[AppSection]
    micro: list[Table]
    aa_noise: Table | None
    loadgen: list[str]
    sequential: str = ""  # the per-scenario tables are single sequential measurements
    side_by_side: list[str] = field(default_factory=list)  # how the questions' ratios were measured
    notes: list[str] = field(default_factory=list)


def build(run: Run, reference_stack: str | None = None, stacks: Sequence[str] = ()) -> Report:
    reference, said = usable_reference(run, reference_stack or run.extra.reference_stack)
    order = stack_order(run, stacks or run.extra.stack_order)
    tables = load_tables(run, reference, order)
    apps = [
        AppSection(app, app_tables, app_charts(run, app, order))
        for app, app_tables in tables.items()
    ]
    invalid = [f"{f.name}: {f.note or 'invalid'}" for f in run.figures if not f.valid]
    problems = [(p.line(), p.detail) for p in run.problems]
    return Report(
        title="benchwatch report",
        summary=_summary(run, said, len(problems), len(invalid)),
        environment=_environment(run),
        versions=_versions(run, order),
        problems=problems,
        invalid=invalid,
        study=study_rows(run),
        questions=questions_table(run, except_study=True),
        apps=apps,
        micro=micro_tables(run, reference, order),
        aa_noise=_aa_table(run),
        loadgen=_loadgen_notes(run),
        sequential=sequential_note(run),
        side_by_side=_side_by_side_summary(run),
    )


def _side_by_side_summary(run: Run) -> list[str]:
    info = run.extra.side_by_side
    if info is None or info.plan is None or not info.ratios:
        return []
    plan = info.plan
    quick = (
        " (quick: fewer and shorter rounds; 6 is the fewest that gives a paired 95 % interval)"
        if plan.quick
        else ""
    )
    return [
        f"Questions side by side: {plan.rounds} rounds{quick}, closed loop c={', '.join(map(str, plan.concurrencies))} "
        f"for {plan.duration_s:g} s per step after a {plan.warmup_s:g} s warm-up; {info.seconds:.0f} s.",
        "",
    ]


def _summary(run: Run, reference_line: str, problems: int, invalid: int) -> list[str]:
    valid = len(run.valid_figures())
    state = "complete" if run.complete else "INCOMPLETE (interrupted or failed part-way)"
    lines = [
        f"Run started {run.started_at}, finished {run.finished_at or '—'}: {state}.",
        f"{valid} valid figures, {invalid} invalid, {problems} problems.",
    ]
    plan = run.extra.load.plan
    if plan is not None:
        quick = " (quick)" if plan.quick else ""
        lines.append(
            f"Load plan{quick}: {plan.rounds} rounds of {plan.duration_s} s, "
            f"concurrency {plan.concurrencies}, open-loop rates {plan.rate_fractions} of max."
        )
    if reference_line:
        lines.append(reference_line)
    return lines


def _environment(run: Run) -> list[tuple[str, str]]:
    rows = [
        (title, str(value))
        for _, title, value in run.environment.facts()
        if value not in (None, "")
    ]
    if run.command:
        rows.append(("command", " ".join(run.command)))
    if run.extra.shard:
        rows.append(("shard", run.extra.shard))
    return rows


def _versions(run: Run, order: Sequence[str]) -> Table:
    stacks = run.environment.stacks
    names = [s for s in order if s in stacks] + [s for s in stacks if s not in order]
    table = Table("installed versions per stack", ["stack", "server Python", *HEADLINE_PACKAGES])
    for name in names:
        versions = stacks[name] or {}
        python = run.environment.interpreters.get(name)
        table.rows.append(
            [
                Cell(name),
                Cell(python.line() if python else "—"),
                *(Cell(str(versions.get(p, "—"))) for p in HEADLINE_PACKAGES),
            ]
        )
    return table


def _aa_table(run: Run) -> Table | None:
    noise = run.extra.load.aa_noise
    if noise is None or not noise.figures:
        return None
    table = Table(
        f"A/A noise: {noise.variant} measured twice in every round",
        ["figure", "CV (A and A' pooled)", "A'/A"],
    )
    for name, entry in sorted(noise.figures.items()):
        table.rows.append([Cell(name), Cell(f"{entry.cv:.1%}"), Cell(f"{entry.ratio:.3f}")])
    return table


def _loadgen_notes(run: Run) -> list[str]:
    info = run.extra.load.loadgen
    flagged = [r for r in info.runs if r.oha_bottleneck] if info else []
    if not info or not flagged:
        return []
    notes = [
        f"oha (the load generator) was the bottleneck in {len(flagged)} measurement(s)"
        f" (used ≥ {info.bottleneck_share:.0%} of its core): those figures measure oha as much as the server."
    ]
    for r in flagged[:20]:
        setting = setting_from_params(r.params)
        where = setting.label if setting is not None else ""
        notes.append(f"{r.variant} {r.endpoint} {where}: oha CPU {r.oha_cpu_share:.0%}")
    if len(flagged) > 20:
        notes.append(f"… and {len(flagged) - 20} more")
    return notes


def _md_escape(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _md_table(table: Table) -> list[str]:
    lines = [
        "| " + " | ".join(_md_escape(c) for c in table.columns) + " |",
        "|" + "---|" * len(table.columns),
    ]
    for row in table.rows:
        cells = [(f"**{c.text}**" if c.tone == "bad" else c.text) for c in row]
        lines.append("| " + " | ".join(_md_escape(c) for c in cells) + " |")
    if table.note:
        lines += ["", f"<sub>{table.note}</sub>"]
    return lines


SIDE_BY_SIDE = "ours, side by side: ratio [95 % CI] (medians)"


def study_table(rows: list[StudyRow]) -> Table:
    table = Table(
        "study: published figures next to this run's answers",
        ["who", "what", "their setup", "theirs", SIDE_BY_SIDE, "note"],
    )
    for row in rows:
        p = row.published
        who = f"{p.who} ({p.source})" if p.source else p.who
        table.rows.append(
            [
                Cell(who),
                Cell(p.what),
                Cell(p.setup),
                Cell(p.figure),
                Cell("; ".join(row.ours)),
                Cell(p.note),
            ]
        )
    table.note = STUDY_NOTE
    return table


STUDY_NOTE = (
    "Theirs: copied from what they published (benchwatch.toml's [[questions.published]]). Ours: the "
    "question's servers booted together in every round and loaded at the same moment (closed loops), "
    "head/base per round, Hodges–Lehmann ratio with the 95 % Wilcoxon interval, and the medians of "
    "base and head; cpu/req below 1 = less server CPU per request than the base; "
    "'no significant difference' when the interval holds 1."
)


def sequential_note(run: Run) -> str:
    """What marks the per-scenario tables and the dashboard's: single sequential measurements."""
    noise = aa_summary(run) or "no A/A copy was measured in this run, so their noise is unknown"
    return (
        "† single sequential measurements: each variant measured alone, one after the other, so two of "
        f"them differ by the host's speed as much as by the variants; {noise}."
    )


def aa_summary(run: Run) -> str:
    """The run's measured A/A noise in one phrase: the same variant measured twice, in turn."""
    noise = run.extra.load.aa_noise
    if noise is None or not noise.figures:
        return ""
    by_metric: dict[str, list[float]] = {}
    for entry in noise.figures.values():
        by_metric.setdefault(entry.metric, []).append(abs(entry.ratio - 1))
    parts = []
    for key, changes in by_metric.items():
        about = metric("load", key)
        parts.append(f"{about.short if about else key} up to {max(changes):.1%}")
    return (
        f"this run's A/A copy of {noise.variant} (same variant measured twice, in turn) differed by "
        + ", ".join(parts)
    )


def render_markdown(report: Report) -> str:
    out = [f"## {report.title}", "", *report.summary, ""]
    out += _md_problems(report)
    if report.study or report.questions:
        out += ["### Questions, side by side", "", *report.side_by_side]
    if report.study:
        out += [*_md_table(study_table(report.study)), ""]
    if report.questions:
        out += [*_md_table(report.questions), ""]
    body: list[str] = []
    for section in report.apps:
        body += [
            f"<details><summary><b>{section.app}</b> ({len(section.tables)} tables)</summary>",
            "",
        ]
        for table in section.tables:
            body += [f"**{section.app}: {table.title}**", "", *_md_table(table), ""]
        body += ["</details>", ""]
    if len("\n".join(out + body)) > MD_LIMIT:
        body = ["Per-scenario tables are too long for a comment: see report.html.", ""]
    out += ["### Per scenario † (plots in report.html)", "", report.sequential, "", *body]
    if report.micro:
        out += ["### Micro-benchmarks", ""]
    for table in report.micro:
        out += [
            f"<details><summary>{table.title}</summary>",
            "",
            *_md_table(table),
            "",
            "</details>",
            "",
        ]
    if report.aa_noise:
        out += [
            "### Noise (A/A)",
            "",
            "<details><summary>coefficient of variation per figure</summary>",
            "",
            *_md_table(report.aa_noise),
            "",
            "</details>",
            "",
        ]
    if report.loadgen:
        out += ["### Load generator", "", *(f"- {line}" for line in report.loadgen), ""]
    out += ["### Environment", "", "| | |", "|---|---|"]
    out += [f"| {k} | {_md_escape(v)} |" for k, v in report.environment]
    out += ["", *_md_table(report.versions), ""]
    text = "\n".join(out)
    return text if len(text) <= MD_LIMIT else text[:MD_LIMIT] + "\n\n… (cut: see report.html)\n"


def _md_problems(report: Report) -> list[str]:
    if not report.problems and not report.invalid:
        return ["No problems: every variant installed, booted, verified and survived the load.", ""]
    out = [f"### ⚠️ Problems ({len(report.problems)})", ""]
    for line, detail in report.problems:
        out.append(f"- {_md_escape(line)}")
        tail = [d for d in detail.splitlines() if d.strip()][-5:]
        if tail:
            out += ["  ```", *(f"  {d}" for d in tail), "  ```"]
    if report.invalid:
        out += ["", f"Invalid figures ({len(report.invalid)}), not published as data points:", ""]
        out += [f"- {_md_escape(line)}" for line in report.invalid[:50]]
        if len(report.invalid) > 50:
            out.append(f"- … and {len(report.invalid) - 50} more (see report.html)")
    return [*out, ""]
