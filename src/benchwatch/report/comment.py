"""compare.json -> the sticky PR comment (markdown)."""

from __future__ import annotations

from benchwatch.counts import buffer_weight
from benchwatch.counts.weights import Weights
from benchwatch.figures.metrics import COST, STATEMENTS
from benchwatch.judge import dropped
from benchwatch.judge.buffers_layout import FROM_LAYOUT, layout_text
from benchwatch.judge.verdict import Comparison, Row, SideInfo
from benchwatch.measure import inject
from benchwatch.profiling.speedscope import markdown as profile_markdown
from benchwatch.report.headline import headline, plural
from benchwatch.report.package_moves import moved_lines
from benchwatch.report.retained import floor_text, is_retained
from benchwatch.report.rows import beside_instructions, rows_lines, without_rows
from benchwatch.report.statements import moved_statements, statements_line
from benchwatch.results.schema import PER_STACK_FACTS, Environment, Problem

MARKER = "<!-- benchwatch-compare -->"
HEADLINE_PACKAGES = ("fastapi", "pydantic", "pydantic-core", "starlette", "uvicorn")


def _side_title(side: SideInfo) -> str:
    if side.kind == "variant":
        what = f"variant `{side.variants[0] if side.variants else side.spec}`"
        if side.endpoint:
            what += f" endpoint `{side.endpoint}`"
    else:
        what = f"stack `{side.spec}`" if side.kind == "stack" else f"ref `{side.spec}`"
    if side.commit:
        what += f" ({side.commit[:10]})"
    if said := inject.said(side.inject_cpu_us, side.inject_slowdown):
        what += f" — {said}"
    if side.declarations_from:
        what += f" — no benchwatch.toml at this ref: measured with `{side.declarations_from}`'s declarations"
    return what


def _value(value: float | None, unit: str) -> str:
    return "—" if value is None else f"{value:.4g} {unit}"


def _table(rows: list[Row], every: list[Row] | None = None) -> list[str]:
    lines = ["| | figure | base | head | change [95 % CI] | floor |", "|---|---|---|---|---|---|"]
    icons = {
        "regression": "🔴",
        "improvement": "🟢",
        "unchanged": "⚪",
        "no verdict": "⚠️",
        "unconfirmed": "🟡",
    }
    for row in rows:
        gate = " (gate)" if row.gating else ""
        floor = (floor_text(row) if is_retained(row) else f"{row.floor:.1%}") + {
            "figure": "",
            "metric": " (metric)",
            "default": " (default)",
            "parts": " (its parts')",
            "threads": " (default, threads)",
        }.get(row.floor_source, "")
        if row.floor_source == FROM_LAYOUT:  # database buffers: its allowance in pages
            floor = f"{row.floor:.1%}" + layout_text(row)
        if row.metric == STATEMENTS.key:  # a number of statements per request (judge/statements.py)
            floor = floor.replace(f"{row.floor:.1%}", f"{row.floor:g}/request", 1)
        text = row.text
        if row.confirmation is not None:
            text += f"; again: {row.confirmation.text}"
        lines.append(
            f"| {icons[row.verdict]} | {row.label}{gate} | {_value(row.base_value, row.unit)} "
            f"| {_value(row.head_value, row.unit)} | {text} | {floor} |"
        )
        lines += _parts(row) + beside_instructions(row, every or [])
    return lines


def _parts(row: Row, limit: int = 6) -> list[str]:
    """Under a changed count: its parts that moved, largest first ("epoll_ctl 0.00 → 2.00 per request";
    a cost's in µs)."""
    if not row.detail or not row.significant:
        return []
    if row.metric == STATEMENTS.key:
        shown = ", ".join(moved_statements(row, limit))
        return [f"| | ↳ per request: {shown or 'no statement moved by 0.01'} | | | | |"]
    moved = [
        (name, b or 0.0, h or 0.0)
        for name, (b, h) in without_rows(row).items()
        if round(b or 0.0, 2) != round(h or 0.0, 2)
    ]
    moved.sort(key=lambda item: -abs(item[2] - item[1]))
    shown = ", ".join(f"`{name}` {b:.2f} → {h:.2f}" for name, b, h in moved[:limit])
    unit = " µs" if row.metric == COST.key else ""
    return [
        f"| | ↳ per request{unit}: {shown or 'no part moved by 0.01'} | | | | |",
        *rows_lines(row, limit),
    ]


def render(comparison: Comparison) -> str:
    base, head = comparison.base, comparison.head
    significant = [r for r in comparison.rows if r.significant]
    unconfirmed = [r for r in comparison.rows if r.verdict == "unconfirmed"]
    unmeasured = [r for r in comparison.rows if r.verdict == "no verdict"]
    unchanged = [r for r in comparison.rows if r.verdict == "unchanged"]
    out = [
        MARKER,
        f"## benchwatch: {headline(comparison)}",
        "",
        f"**base** {_side_title(base)} vs **head** {_side_title(head)} — same machine, "
        f"{comparison.rounds} rounds{' (quick)' if comparison.quick else ''}, both servers loaded side by side "
        f"in each{'' if base.kind == 'variant' else '; micro-benchmarks in alternating batches'}.",
        "",
        *_watched(comparison),
        *moved_lines(comparison),
        *(f"Note: {note}." for note in comparison.extra.notes),
        *([""] if comparison.extra.notes else []),
    ]
    regressions = comparison.gating_regressions()
    if regressions:
        out += [
            f"**Regression** in a gating figure ({', '.join(r.label for r in regressions[:3])}).",
            "",
        ]
    sql = [r for r in significant if r.metric == STATEMENTS.key]
    if sql:
        out += [f"- {statements_line(r)}" for r in sql] + [""]
    if significant:
        out += _table(significant, comparison.rows) + [""]
    for label, table in comparison.extra.counts.went.items():
        out += [
            f"<details><summary>Where the instructions went: {label}</summary>",
            "",
            table.rstrip(),
            "",
            "</details>",
            "",
        ]
    if unconfirmed:
        out += (
            [
                "**Not confirmed**: flagged in the first rounds (as a regression or an improvement), not again "
                "when measured once more side by side (neither; see how this is judged):",
                "",
            ]
            + _table(unconfirmed)
            + [""]
        )
    if unmeasured:
        out += ["**No verdict** for these (said why):", ""] + _table(unmeasured) + [""]
    if unchanged:
        out += [f"<details><summary>{len(unchanged)} unchanged</summary>", ""]
        out += _table(unchanged) + ["", "</details>", ""]
    out += _not_measured(comparison)
    out += dropped.lines(comparison.extra.load.short)
    if comparison.extra.counts.skipped:
        out += [
            f"Counts per request (instructions, system calls): not measured ({comparison.extra.counts.skipped}); "
            "only timings decided.",
            "",
        ]
    out += _weights(comparison)
    if comparison.extra.micro.skipped:
        out += [
            f"Micro-benchmark instruction counts: not measured ({comparison.extra.micro.skipped}).",
            "",
        ]
    if comparison.problems:
        out += ["**Problems**", ""]
        for problem in comparison.problems:
            folded = _detail(problem.detail)
            # a blank line apart: a paragraph holding HTML keeps its `@`s broken (the PR comment's neutraliser)
            out += [f"- {_problem_line(problem)}", *([""] if folded else []), *folded]
        out += [""]
    if comparison.unpaired:
        out += [
            f"<details><summary>{len(comparison.unpaired)} measured on one side only</summary>",
            "",
        ]
        out += [f"- {u}" for u in comparison.unpaired] + ["", "</details>", ""]
    if comparison.extra.profile is not None:
        out += profile_markdown(comparison.extra.profile)
    out += _method(comparison)
    out += _fingerprints(base, head)
    return "\n".join(out).rstrip() + "\n"


def _weights(comparison: Comparison, shown: int = 12) -> list[str]:
    """The weights the estimated costs were made with, or why there are none."""
    if comparison.extra.cost.skipped:
        return [
            f"Estimated cost per request: not made ({comparison.extra.cost.skipped}); the instructions "
            "and system calls per request gate one by one instead.",
            "",
        ]
    found = comparison.extra.cost.weights
    if found is None:
        return []
    calls = ", ".join(
        f"`{name}` {us:.2f}" for name, us in sorted(found.system_us_per_call.items())[:shown]
    )
    return [
        "<details><summary>The estimated cost's weights (measured on this machine)</summary>",
        "",
        f"Estimated cost per request = instructions × {found.user_us_per_instruction * 1000:.4f} ns + each own "
        f"system call × its µs: {calls}; any other call {found.other_call_us:.2f} µs"
        f"{_database_weight(found)}. Measured in {found.seconds:g} s: {found.method}.",
        "",
        "</details>",
        "",
    ]


def _database_weight(found: Weights) -> str:
    """What the cost adds for an app on PostgreSQL: its database buffers and their weight; nothing
    for a compare without database buffers (its line reads as before)."""
    if found.db_us_per_buffer is None:
        return ""
    stored = buffer_weight.stored()
    return (
        f" + each database buffer per request (PostgreSQL's shared buffers, hit or read) × "
        f"{found.db_us_per_buffer:.3f} µs (measured {stored.measured[:10]} on {stored.machine} by "
        f"`{stored.command}`)"
    )


def _watched(comparison: Comparison) -> list[str]:
    """One line: how many declared endpoints the compare watched, and how many it timed and counted."""
    found = comparison.extra.coverage
    if found is None or not found.endpoints:
        return []
    return [
        f"Watched {plural(found.endpoints, 'declared endpoint')}: {found.timed} timed, {found.counted} counted "
        f"per request{f'; {len(found.not_measured)} not measured in full (below)' if found.not_measured else ''}.",
        "",
    ]


def _not_measured(comparison: Comparison, shown: int = 8) -> list[str]:
    """Every endpoint lacking timings or counts, grouped by why: nothing is dropped silently."""
    found = comparison.extra.coverage
    if found is None or not found.not_measured:
        return []
    out = ["**What was not measured, and why**", ""]
    for (missing, why), items in found.groups().items():
        names = [f"`{item.variant}` `{item.endpoint}`" for item in items]
        listed = ", ".join(names[:shown]) + (
            f" and {len(names) - shown} more" if len(names) > shown else ""
        )
        out.append(f"- no {missing}: {why}: {listed}")
        if len(names) > shown:
            out += [
                "  <details><summary>all of them</summary>",
                "",
                *(f"  - {n}" for n in names),
                "",
                "  </details>",
            ]
    return out + [""]


def _problem_line(problem: Problem) -> str:
    """Problem.line() with the variant id and endpoint as code: copyable as they are (the PR
    comment breaks an `@` that would mention someone only outside code spans)."""
    where = f"`{problem.variant}`" + (f" `{problem.endpoint}`" if problem.endpoint else "")
    return f"{where} [{problem.phase}]: {problem.reason}"


def _detail(text: str, lines: int = 20) -> list[str]:
    """A problem's detail (the server's last error: its traceback) folded under it."""
    kept = text.strip().splitlines()[-lines:]
    if not kept:
        return []
    fence = "~~~~" if any("```" in line for line in kept) else "```"
    return [
        "  <details><summary>the server's last lines</summary>",
        "",
        f"  {fence}text",
        *(f"  {line}" for line in kept),
        f"  {fence}",
        "",
        "  </details>",
    ]


def _method(comparison: Comparison) -> list[str]:
    calibration = comparison.calibration
    source = (
        f"noise floors from `calibration.json` ({calibration.get('date', '?')}, "
        f"{calibration.get('rounds', '?')} A/A rounds)"
        if calibration
        else "**default noise floors** (no `calibration.json`: run `benchwatch calibrate`)"
    )
    return [
        "<details><summary>How this is judged</summary>",
        "",
        "Change = head/base with a 95 % confidence interval. Load-test figures are paired by "
        "round (both servers measured at the same moment): the Hodges–Lehmann estimate of the "
        "per-round log ratios, interval from the Wilcoxon signed-rank test. Micro-benchmark "
        "times (asv's cases, timed by benchwatch) are paired the same way: in each round base and head "
        "time the same case in short batches that alternate on one core, each side's fastest batch "
        "its sample. Instruction counts (valgrind's cachegrind, instructions per call "
        "from N and 2N calls) are deterministic: the bracket is the range of every base repetition "
        "against every head repetition. Significant only when the interval excludes 1 "
        f"**and** the change exceeds the figure's noise floor; {source}. Counts gate first: "
        "instructions and system calls per request of the real server (a fixed sequence of requests "
        "on one connection, counted in phases under callgrind and strace, the idle server's own cost taken "
        "off), weighed into one estimated cost per request (each instruction and each system call by name at "
        "what it costs on this machine; its floor from its parts' floors), and instructions per call "
        "of the micro-benchmarks are deterministic; the instructions and system calls are shown as the "
        "cost's mechanism, not gating one by one. Timings (server CPU µs per request, micro-benchmark "
        "time) gate only with a floor of their own, and a timing regression or improvement counts only when fresh "
        "side-by-side rounds of just the flagged figures see it again, so false alarms stay rare per "
        "PR, not only per figure. Exit 1 on a gating regression, 2 when something could not be "
        "measured, 3 on bad input.",
        "",
        "</details>",
        "",
    ]


def _fingerprints(base: SideInfo, head: SideInfo) -> list[str]:
    """The machine once per side, then each side's own stacks (a stack compare has one per side)."""
    out = ["<details><summary>Environment</summary>", "", "| | base | head |", "|---|---|---|"]
    for key in Environment.model_fields:
        if key in PER_STACK_FACTS:
            continue
        b, h = getattr(base.environment, key), getattr(head.environment, key)
        if b is None and h is None:
            continue
        out.append(f"| {key} | {b} | {h} |")
    for stack in dict.fromkeys([*base.environment.stacks, *head.environment.stacks]):
        cells = []
        for side in (base, head):
            pins = side.environment.stacks.get(stack, {})
            cells.append(
                ", ".join(f"{p} {v}" for p, v in sorted(pins.items()) if p in HEADLINE_PACKAGES)
            )
        out.append(f"| stack {stack} | {cells[0]} | {cells[1]} |")
        pythons = [side.environment.interpreters.get(stack) for side in (base, head)]
        if any(pythons):
            out.append(
                f"| server Python ({stack}) | {' | '.join(p.line() if p else '—' for p in pythons)} |"
            )
    out += ["", "</details>"]
    return out
