"""A run's answers to its project's questions, and the study: published figures set beside them.

Both read run.extra.side_by_side only (the questions as declared when the run was made, and
their ratios): a run made without questions has neither. A published figure is someone else's
number copied into benchwatch.toml; ours next to it is the question's side-by-side ratio with
its 95 % interval and the two lanes' medians — never estimated when it was not measured.
"""

from __future__ import annotations

from dataclasses import dataclass

from benchwatch.declarations.project_file import Published, Question
from benchwatch.figures.metrics import metric
from benchwatch.report.honest import paired_tone
from benchwatch.report.tables import Cell, Table
from benchwatch.results.schema import PairedRatio, Run, SideBySideInfo

NOT_RUN = "not measured side by side in this run (run without the question rounds)"


@dataclass(frozen=True)
class StudyRow:
    question: Question
    published: Published
    ours: list[str]  # each picked ratio, or why the question was not measured


def picks(question: Question, published: Published, ratio: PairedRatio) -> bool:
    """Whether this ratio of the run answers the published figure."""
    return (
        ratio.group == question.name
        and ratio.metric in published.metrics
        and (not published.heads or ratio.head in published.heads)
        and (not published.steps or ratio.step in published.steps)
    )


def study_rows(run: Run) -> list[StudyRow]:
    """One row per published figure of the run's questions; none when no question carries one."""
    info = run.extra.side_by_side
    if info is None:
        return []
    return [StudyRow(q, p, _answer_lines(info, q, p)) for q in info.questions for p in q.published]


def _answer_lines(info: SideBySideInfo, question: Question, published: Published) -> list[str]:
    if question.name in info.not_run:
        return [f"not run: {info.not_run[question.name]}"]
    if info.plan is None:
        return [NOT_RUN]
    found = [paired_text(r, medians=True) for r in info.ratios if picks(question, published, r)]
    return found or ["not measured in this run"]


def questions_table(run: Run, *, except_study: bool = False) -> Table | None:
    """The questions' ratios (except_study: only those no study row shows, so the report shows each
    ratio once) and the questions not run; None when there is nothing to show."""
    info = run.extra.side_by_side
    if info is None or (not info.ratios and not info.not_run):
        return None
    published = {q.name: q.published for q in info.questions}
    table = Table(
        "questions: each question's servers loaded at the same moment",
        ["question", "ratio [95 % CI]"],
    )
    for ratio in info.ratios:
        question = next((q for q in info.questions if q.name == ratio.group), None)
        if (
            except_study
            and question
            and any(picks(question, p, ratio) for p in published.get(ratio.group, []))
        ):
            continue
        table.rows.append(
            [Cell(_heading(question, ratio.group)), Cell(paired_text(ratio), paired_tone(ratio))]
        )
    for name, why in info.not_run.items():
        if not (except_study and published.get(name)):
            question = next((q for q in info.questions if q.name == name), None)
            table.rows.append([Cell(_heading(question, name)), Cell(f"not run: {why}")])
    if not table.rows:
        return None
    if info.plan is not None:
        table.note = (
            f"{info.plan.rounds} rounds, side by side, paired by round; head/base (cpu/req below 1: "
            "less server CPU per request than the base); coloured when the interval excludes 1"
        )
    return table


def _heading(question: Question | None, name: str) -> str:
    """A question as a table names it: its title when it has one, after its name."""
    return f"{name}: {question.title}" if question is not None and question.title else name


def paired_text(ratio: PairedRatio, medians: bool = False) -> str:
    """'head / base step: cpu/req 0.0531x [0.0498, 0.0560]'; 'no significant difference' when
    the interval holds 1; with the lanes' medians ('(300 ms → 15.9 ms)') when asked."""
    about = metric("load", ratio.metric)
    what = about.short if about else ratio.metric
    where = f"{ratio.head} / {ratio.base}" + (f" {ratio.step}" if ratio.step else "")
    if ratio.ratio is None or ratio.low is None or ratio.high is None:
        return f"{where}: {what} no interval ({ratio.reason or 'not measured'})"
    text = f"{where}: {what} {ratio.ratio:.3g}x [{ratio.low:.3g}, {ratio.high:.3g}]"
    if medians and ratio.base_value is not None and ratio.head_value is not None:
        unit = about.unit if about else ""
        text += f" ({_value(ratio.base_value, unit)} → {_value(ratio.head_value, unit)})"
    return text + (" no significant difference" if ratio.holds_one() else "")


def _value(value: float, unit: str) -> str:
    if unit == "us" and value >= 1000:
        return f"{value / 1000:.3g} ms"
    return f"{value:.3g} {'µs' if unit == 'us' else unit}"
