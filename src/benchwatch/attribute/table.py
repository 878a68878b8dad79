"""The attribution table: per variant and gating figure, each step's ratio against base, the
product of the steps, and the ratio measured directly from base to head."""

from __future__ import annotations

from collections.abc import Iterable

from pydantic import BaseModel

from benchwatch.attribute.interactions import Consistency, Interaction
from benchwatch.attribute.outcomes import Line, StepOutcome
from benchwatch.attribute.own_units import in_own_unit
from benchwatch.attribute.ratios import Ratio, overlap, product
from benchwatch.figures.figure_key import open_loop_label
from benchwatch.figures.metrics import (
    COST,
    COUNTS,
    CPU,
    CPU_SYS,
    CPU_USER,
    DB_BUFFERS,
    RETAINED,
    STATEMENTS,
)
from benchwatch.judge.stats import CONFIDENCE
from benchwatch.judge.verdict import Comparison, Row

ATTRIBUTION_JSON = "attribution.json"
ATTRIBUTION_MD = "attribution.md"


class Attribution(BaseModel):
    base: str
    head: str
    scenarios: list[str]
    quick: bool
    rounds: int | None
    steps: list[StepOutcome]
    direct: StepOutcome
    lines: list[Line] = []
    consistency: Consistency | None = None  # said when a line disagrees
    interactions: list[Interaction] = []  # the second-order steps of the disagreeing lines
    seconds: float | None = None
    # the steps carry their mechanism (StepOutcome.mechanism); False in an attribution written before
    # it was kept, whose mechanism is "not recorded" rather than "nothing moved"
    mechanisms: bool = False
    method: str = "compare"  # "counts": every stack counted, base once (attribute/by_counts.py); "compare": a compare per step
    repeats: int | None = None  # "counts": the counted phases per endpoint

    def responsible(self) -> list[tuple[StepOutcome, str, Ratio]]:
        """(step, figure label, ratio) for every step that changed a gating figure significantly."""
        return [
            (s, label, r)
            for s in self.steps
            for label, r in s.ratios.items()
            if r.verdict in ("regression", "improvement")
        ]


# what a step is judged by: the estimated cost and the counts it is made of, and CPU per request
# with its user/system split; and what gates on its own beside the cost, in its own unit
# (attribute/own_units.py): SQL statements, database buffers, retained memory per request
ATTRIBUTED = frozenset(
    m.key for m in (COST, *COUNTS, CPU, CPU_USER, CPU_SYS, STATEMENTS, DB_BUFFERS, RETAINED)
)
NOT_MULTIPLIED = "not multiplied: a count in its own unit adds up over the steps"


def gating_ratios(comparison: Comparison) -> dict[str, tuple[str, Ratio]]:
    """{figure label: (scenario, ratio)} for a compare's estimated cost and counts per request and
    CPU per request (with its user/system split), whether or not the compare gated on them."""
    return attributed_ratios(comparison.rows)


def attributed_ratios(rows: Iterable[Row]) -> dict[str, tuple[str, Ratio]]:
    """{figure label: (scenario, ratio)} of the rows of the attributed figures: a compare's, or
    the counts-only path's (base's counts paired with a step's, compare.verdict.compare_figures)."""
    return {
        row.label: (row.scenario, Ratio.of(row))
        for row in rows
        if row.kind == "load" and row.metric in ATTRIBUTED
    }


def build_lines(
    steps: list[StepOutcome], direct: StepOutcome, scenario_of: dict[str, str]
) -> list[Line]:
    labels = list(dict.fromkeys([*direct.ratios, *(label for s in steps for label in s.ratios)]))
    lines = []
    measured = [s for s in steps if s.error is None and s.skipped is None]
    for label in labels:
        by_step = {s.step: s.ratios.get(label, Ratio(text="not measured")) for s in measured}
        own = in_own_unit(label)  # statements, buffers, blocks: no product, no check against it
        total = Ratio(text=NOT_MULTIPLIED) if own else product(list(by_step.values()))
        found = direct.ratios.get(label, Ratio(text="not measured"))
        lines.append(
            Line(
                scenario=scenario_of.get(label, ""),
                label=label,
                steps=by_step,
                product=total,
                direct=found,
                agrees=None if own else overlap(total, found),
            )
        )
    return lines


def _shown(ratio: Ratio, label: str) -> str:
    """A ratio [interval]; a figure in its own unit says its values (`SQL statements 1 → 101
    statements per request (+100)`), with its ratio when both sides are above 0."""
    if not in_own_unit(label) or not ratio.text:
        return ratio.shown()
    return ratio.text + (f"; {ratio.shown()}" if ratio.ratio is not None else "")


def _moved(step: StepOutcome) -> str:
    pairs = step.moved or {p: (None, None) for p in step.group}
    shown = [f"{p} {a or '—'}→{b or '—'}" if (a or b) else p for p, (a, b) in pairs.items()]
    return ", ".join(shown) or "nothing"


def _pair(pair: Interaction) -> str:
    if pair.error is not None:
        return f"{' × '.join(pair.pair)}: not measured: {pair.error}"
    verdict = {
        True: "**they interact**",
        False: "they do not interact",
        None: "no verdict (a ratio is missing)",
    }
    return f"{pair.sentence()}: {verdict[pair.interacts]}"


def _why(result: Attribution, label: str) -> list[str]:
    """Why a line's product and direct ratio disagree: the sides first, then the pairs."""
    facts = result.consistency.lines() if result.consistency else []
    pairs = [i for i in result.interactions if i.label == label]
    said = [f"- {fact}" for fact in facts] + [f"- {_pair(p)}" for p in pairs]
    if pairs and not facts and not any(p.interacts for p in pairs):
        said.append(
            "- no pair of the largest movers interacts and the direct compare moves what the steps move, on "
            "one interpreter: the difference is of a higher order (three or more packages together)"
        )
    if not said:
        return []
    return [
        "Why they disagree (the direct compare against the steps, then the largest movers two at a time, each "
        "pair measured against base as the steps are):",
        "",
        *said,
        "",
    ]


def markdown(result: Attribution) -> str:
    out = [f"## Attribution: {result.base} → {result.head}", ""]
    if result.method == "counts":
        out.append(
            f"Each step moves the packages listed from {result.base}'s version to {result.head}'s. Every stack "
            f"is counted (instructions and system calls per request, {result.repeats} phases each), "
            f"{result.base} once, and each step's counts are judged against {result.base}'s as `compare` "
            "judges them (floors, verdicts, the estimated cost); a step that moves only packages the servers "
            "never import is not counted. "
        )
    else:
        out.append(
            f"Each step moves the packages listed from {result.base}'s version to {result.head}'s and is "
            f"measured side by side against {result.base} (paired rounds, floors and verdicts as `compare`). "
        )
    out[-1] += (
        f"The product of the steps' ratios (interval: log half-widths added in quadrature, {CONFIDENCE:.0%}) "
        "sits next to the ratio measured directly; when their intervals do not overlap, the packages interact."
    )
    out.append("")
    for line in result.lines:
        out += [
            f"### {line.label}",
            "",
            "| step | packages moved | ratio [interval] | verdict |",
            "|---|---|---|---|",
        ]
        for step in result.steps:
            if step.error is not None:
                out.append(
                    f"| {step.step} | {', '.join(step.group)} | — | not measured: {step.error} |"
                )
                continue
            if step.skipped is not None:
                out.append(f"| {step.step} | {_moved(step)} | — | not counted: {step.skipped} |")
                continue
            ratio = line.steps.get(step.step, Ratio())
            note = f" ({step.note})" if step.note else ""
            out.append(
                f"| {step.step} | {_moved(step)}{note} | {_shown(ratio, line.label)} | {ratio.verdict} |"
            )
        out.append(f"| **product of the steps** | | {_shown(line.product, line.label)} | |")
        direct = (
            f"not measured: {result.direct.error}"
            if result.direct.error and line.direct.ratio is None
            else line.direct.verdict
        )
        out.append(
            f"| **{result.base} → {result.head} measured** | | {_shown(line.direct, line.label)} | {direct} |"
        )
        disagree = (
            "the product and the direct ratio disagree: an open loop offers each side half its own "
            "capacity, so a step that moves the capacity moves the offered rate too and open-loop ratios "
            "need not multiply (the closed loop's do)"
            if open_loop_label(line.label)
            else "the product and the direct ratio disagree: the steps interact"
        )
        agree = {
            True: "the product agrees with the direct ratio (intervals overlap)",
            False: disagree,
            None: NOT_MULTIPLIED
            if in_own_unit(line.label)
            else "no comparison (a ratio is missing)",
        }[line.agrees]
        out += ["", agree, ""]
        if line.agrees is False and not open_loop_label(line.label):
            out += _why(result, line.label)
    culprits = result.responsible()
    if culprits:
        out += [
            "**Responsible:** "
            + "; ".join(
                f"{s.step} ({', '.join(s.group)}) {r.text or r.shown()} on {label}"
                for s, label, r in culprits
            ),
            "",
        ]
    if result.seconds is not None:
        counted = sum(1 for s in result.steps if s.error is None and s.skipped is None)
        out.append(
            f"_{len(result.steps)} steps ({counted} measured) + the direct ratio in {result.seconds:.0f} s._"
        )
    return "\n".join(out) + "\n"
