"""Base vs head: pair the figures of both sides, judge each pair, sum up the verdicts."""

from __future__ import annotations

import statistics
from collections.abc import Callable, Iterable
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

from benchwatch.counts.breakdown import ByObject
from benchwatch.counts.weights import Weights
from benchwatch.errors import EXIT_OK, EXIT_REGRESSION, EXIT_UNMEASURED
from benchwatch.figures.metrics import (
    COST,
    DB_BUFFERS,
    FALLBACK_FLOOR,
    INSTRUCTIONS,
    MICRO_INSTRUCTIONS,
    RETAINED,
    STATEMENTS,
    SYSCALLS,
    Metric,
)
from benchwatch.judge.calibrate import Calibration, floor_for, floor_key
from benchwatch.judge.coverage import Coverage
from benchwatch.judge.dropped import ShortRounds
from benchwatch.judge.moved import MovedPackages
from benchwatch.judge.retained import describe as describe_retained
from benchwatch.judge.retained import difference, shown_parts
from benchwatch.judge.retained import judge as judge_retained
from benchwatch.judge.statements import BUFFERS_FROM_ZERO, amount, statements_verdict
from benchwatch.judge.stats import (
    RatioInterval,
    TooFewSamples,
    describe,
    paired_ratio_interval,
    range_ratio,
    ratio_interval,
    verdict,
)
from benchwatch.profiling.speedscope import ProfileReport
from benchwatch.results.load_facts import LoadPlanInfo, SkippedRun
from benchwatch.results.schema import Environment, Figure, Problem
from benchwatch.results.schema import figure_label as label
from benchwatch.results.stage_facts import FlatExtra, SkippedOrEmpty, StageFacts

COMPARE_FILE = "compare.json"
COMMENT_FILE = "comment.md"
# load figures are measured side by side, sample i of base with sample i of head (measure/rounds.py);
# micro-benchmark timings in paired rounds, base's and head's batches of the same case alternating
# on one core (micro/pairs.py): round i of base pairs with round i of head. Instruction counts are
# deterministic and judged by their range (stats.range_ratio).
PAIRED_KINDS = ("load", "micro")

# a metric this benchwatch does not know (an old run): judged, never gating
FALLBACK = Metric("unknown", "", False, "", "", False, FALLBACK_FLOOR)

# "unconfirmed": a timing regression or improvement its confirmation rounds did not see again (judge/gate.py)
RowVerdict = Literal["improvement", "regression", "unchanged", "no verdict", "unconfirmed"]


class Confirmation(BaseModel):
    """A flagged timing figure measured once more, in fresh side-by-side rounds of its own."""

    verdict: Literal["improvement", "regression", "unchanged", "no verdict"]
    ratio: float | None = None
    low: float | None = None
    high: float | None = None
    text: str = ""


class Row(BaseModel):
    label: str
    kind: str
    scenario: str
    endpoint: str | None
    metric: str
    floor_key: str
    unit: str
    bigger_is_better: bool
    base_figure: str | None
    head_figure: str | None
    base_value: float | None = None
    head_value: float | None = None
    base_samples: list[float] = []
    head_samples: list[float] = []
    ratio: float | None = None
    low: float | None = None
    high: float | None = None
    verdict: RowVerdict
    text: str
    floor: float
    floor_source: str
    gating: bool
    reason: str = ""
    confirmation: Confirmation | None = None
    detail: dict[str, list[float | None]] = {}  # a count's parts: name -> [base, head] per request
    # a timing row without a verdict only because its load rounds were dropped (base and head not
    # side by side) and could not be made up: the label of its endpoint's judged count row, which
    # measured that endpoint instead (judge/dropped.py); such a row does not make the compare exit 2
    judged_by: str = ""

    @property
    def significant(self) -> bool:
        return self.verdict in ("improvement", "regression")


class SideInfo(BaseModel):
    role: Literal["base", "head"]
    spec: str
    kind: Literal["stack", "ref", "variant"]
    commit: str | None = None
    variants: list[str] = []
    endpoint: str | None = None  # a variant side narrowed to one endpoint: its label
    environment: Environment = Environment()
    inject_cpu_us: float = 0.0
    inject_slowdown: float = 0.0
    declarations_from: str | None = None  # this side had no benchwatch.toml and used that ref's


class ConfirmationInfo(BaseModel):
    """judge/gate.py: the flagged timing figures measured once more (`skipped`: --no-confirm;
    a stage's `skipped` as StageFacts has it, declared last: its place in compare.json)."""

    flagged: list[
        str
    ] = []  # labels of the gating timing regressions and improvements of the first rounds
    confirmed: list[str] = []  # those the confirmation rounds judged the same again
    seconds: float = 0.0
    skipped: SkippedOrEmpty = None  # why no confirmation rounds ran (--no-confirm); on disk ""


class CompareLoadFacts(BaseModel):
    """The side-by-side load rounds: their plan, the pairs dropped and what was made up."""

    plan: LoadPlanInfo | None = None
    dropped: list[SkippedRun] = []  # side-by-side pairs whose oha windows differed (base's lanes)
    short: list[ShortRounds] = []  # per shot that lost pairs: made up in extra rounds, or not
    bottlenecked_runs: dict[str, int] = {}  # side -> oha runs that were oha's bottleneck


class CompareCountsFacts(StageFacts):
    """The per-request counts of the servers (`skipped`: why none were measured)."""

    seconds: float | None = None
    # a changed instructions-per-request row's label -> where the instructions went (markdown table)
    went: dict[str, str] = Field(default_factory=dict)
    # the same, as data: all instructions and the shared objects' per request, base and head (attribute keeps it)
    by_object: dict[str, ByObject] = Field(default_factory=dict)


class CostFacts(StageFacts):
    """What an instruction and each system call cost on this machine: the estimated cost's
    weights (`skipped`: why the counts were not weighed into a cost)."""

    weights: Weights | None = None


class CompareExtra(FlatExtra):
    """What a compare adds beside its rows, by stage (results/stage_facts.py: nested here, flat
    in compare.json)."""

    model_config = ConfigDict(extra="forbid")

    DISK_KEYS: ClassVar = (
        "variants_on_one_side_only",
        "injected",
        ("load_plan", "load", "plan"),
        "notes",
        ("rounds_dropped", "load", "dropped"),
        ("rounds_short", "load", "short"),
        ("loadgen_bottlenecked_runs", "load", "bottlenecked_runs"),
        ("instructions_unavailable", "micro", "skipped"),
        ("counts_unavailable", "counts", "skipped"),
        ("counts_seconds", "counts", "seconds"),
        ("instructions_went", "counts", "went"),
        ("instructions_by_object", "counts", "by_object"),
        "profile",
        "confirmation",
        ("cost_weights", "cost", "weights"),
        ("cost_unavailable", "cost", "skipped"),
        "coverage",
        "moved",
    )

    variants_on_one_side_only: list[str] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)  # what the compare left out, and why
    load: CompareLoadFacts = Field(default_factory=CompareLoadFacts)
    # the micro-benchmarks' instruction counts (`skipped`: why a compare with micro-benchmarks has none)
    micro: StageFacts = Field(default_factory=StageFacts)
    counts: CompareCountsFacts = Field(default_factory=CompareCountsFacts)
    cost: CostFacts = Field(default_factory=CostFacts)
    profile: ProfileReport | None = None  # compare --profile: an extra round, never judged
    # judge/gate.py: the flagged timing figures measured once more (None: nothing was flagged)
    confirmation: ConfirmationInfo | None = None
    coverage: Coverage | None = (
        None  # every declared endpoint compared, and what was not measured (judge/coverage.py)
    )
    moved: list[MovedPackages] = Field(
        default_factory=list
    )  # installed versions that differ between base's and head's environments (judge/moved.py)
    injected: dict[str, float] | None = None  # TEST ONLY: what head's servers were made to burn


class Comparison(BaseModel):
    base: SideInfo
    head: SideInfo
    rounds: int
    quick: bool
    rows: list[Row]
    problems: list[Problem] = []
    unpaired: list[str] = []
    calibration: dict[str, Any] | None = None
    extra: CompareExtra = CompareExtra()

    def counts(self) -> dict[str, int]:
        found = {
            "regression": 0,
            "improvement": 0,
            "unchanged": 0,
            "no verdict": 0,
            "unconfirmed": 0,
        }
        for row in self.rows:
            found[row.verdict] += 1
        return found

    def gating_regressions(self) -> list[Row]:
        return [r for r in self.rows if r.verdict == "regression" and r.gating]

    def exit_code(self) -> int:
        if self.gating_regressions():
            return EXIT_REGRESSION
        if (
            self.problems
            or not self.rows
            or any(r.verdict == "no verdict" and not r.judged_by for r in self.rows)
        ):
            return EXIT_UNMEASURED
        return EXIT_OK


def judge_pair(base: Figure | None, head: Figure | None, calibration: Calibration | None) -> Row:
    some = base or head
    assert some is not None
    about = some.about or FALLBACK
    key = floor_key(some)
    labels = list(dict.fromkeys(label(f) for f in (base, head) if f is not None))
    # two variants or endpoints: the larger of their floors
    floor, source = max(floor_for(key, calibration, one) for one in labels)
    row = Row(
        label=pair_label(base, head),
        kind=some.kind,
        scenario=some.scenario,
        endpoint=some.endpoint,
        metric=some.metric,
        floor_key=key,
        unit=some.unit,
        bigger_is_better=some.bigger_is_better,
        base_figure=base.name if base else None,
        head_figure=head.name if head else None,
        base_value=base.value if base else None,
        head_value=head.value if head else None,
        base_samples=list(base.samples) if base else [],
        head_samples=list(head.samples) if head else [],
        verdict="no verdict",
        text="",
        floor=floor,
        floor_source=source,
        gating=about.gating,
    )
    invalid = [side for side, f in (("base", base), ("head", head)) if f is None or not f.valid]
    if invalid:
        notes = [f.note for f in (base, head) if f is not None and not f.valid and f.note]
        row.reason = f"invalid measurement on {' and '.join(invalid)}" + (
            f" ({notes[0]})" if notes else ""
        )
        row.text = "no verdict: " + row.reason
        return row
    assert base is not None and head is not None
    if base.unit != head.unit:
        row.reason = (
            f"units differ ({base.unit} vs {head.unit}); re-run both sides with one benchwatch"
        )
        row.text = "no verdict: " + row.reason
        return row
    if about is STATEMENTS:  # counted in whole statements, judged by their number (0 included)
        judge_statements(row, base, head)
        return row
    if about is RETAINED:  # a difference in blocks per request: a no-op keeps 0 (judge/retained.py)
        found = difference(base.samples, head.samples)
        row.verdict = judge_retained(found, floor)
        row.text = describe_retained(found, row.verdict)
        row.detail = shown_parts(base.detail, head.detail)  # allocations per request
        return row
    if about is DB_BUFFERS and min([*base.samples, *head.samples], default=0) <= 0:
        judge_statements(row, base, head, BUFFERS_FROM_ZERO)  # no ratio from 0: a difference
        return row
    try:
        if about in (MICRO_INSTRUCTIONS, INSTRUCTIONS, SYSCALLS, COST, DB_BUFFERS):
            interval = range_ratio(base.samples, head.samples)
        elif some.kind in PAIRED_KINDS:
            interval = paired_ratio_interval(base.samples, head.samples)
        else:
            interval = ratio_interval(base.samples, head.samples)
    except TooFewSamples as exc:
        row.reason = f"too few samples for an interval: {exc}"
        row.text = "no verdict: " + row.reason
        return row
    except ValueError as exc:
        row.reason = str(exc)
        row.text = "no verdict: " + row.reason
        return row
    if base.detail or head.detail:
        names = sorted(set(base.detail) | set(head.detail))
        row.detail = {n: [base.detail.get(n), head.detail.get(n)] for n in names}
    row.ratio, row.low, row.high = interval.ratio, interval.low, interval.high
    row.verdict = verdict(interval, some.bigger_is_better, floor)
    row.text = describe(interval, some.bigger_is_better, memory=about.memory)
    return row


def judge_again(row: Row, floor: float, source: str) -> None:
    """The row's verdict against another floor (its interval unchanged); a row without an interval
    keeps its 'no verdict'."""
    row.floor, row.floor_source = round(floor, 5), source
    if row.ratio is None or row.low is None or row.high is None:
        return
    interval = RatioInterval(
        row.ratio, row.low, row.high, 1.0, len(row.base_samples), len(row.head_samples)
    )
    row.verdict = verdict(interval, row.bigger_is_better, row.floor)


def pair_label(base: Figure | None, head: Figure | None) -> str:
    """The figure's label; for two variants or endpoints, what differs as 'base vs head'."""
    if base is None or head is None or label(base) == label(head):
        return label(base or head)  # type: ignore[arg-type]
    scenario = (
        base.scenario if base.scenario == head.scenario else f"{base.scenario} vs {head.scenario}"
    )
    endpoint = (
        base.endpoint if base.endpoint == head.endpoint else f"{base.endpoint} vs {head.endpoint}"
    )
    return label(base.model_copy(update={"scenario": scenario, "endpoint": endpoint}))


def compare_figures(
    base: Iterable[Figure],
    head: Iterable[Figure],
    calibration: Calibration | None,
    key: Callable[[Figure], tuple] = Figure.pair_key,
) -> tuple[list[Row], list[str]]:
    """(rows for every figure measured on both sides, labels measured on one side only);
    `key` says what pairs (the default: what a figure measures, without stack or checkout)."""
    base_by_key = {key(f): f for f in base}
    head_by_key = {key(f): f for f in head}
    rows = [
        judge_pair(b, head_by_key[k], calibration)
        for k, b in base_by_key.items()
        if k in head_by_key
    ]
    unpaired = [f"{label(f)} (base only)" for k, f in base_by_key.items() if k not in head_by_key]
    unpaired += [f"{label(f)} (head only)" for k, f in head_by_key.items() if k not in base_by_key]
    return sort_rows(rows), unpaired


def sort_rows(rows: list[Row]) -> list[Row]:
    """Regressions first, then improvements, unconfirmed, no verdict, unchanged; gating first in each."""
    order = {"regression": 0, "improvement": 1, "unconfirmed": 2, "no verdict": 3, "unchanged": 4}
    return sorted(rows, key=lambda r: (order[r.verdict], not r.gating, r.label))


def judge_statements(row: Row, base: Figure, head: Figure, floor: float | None = None) -> None:
    """The row's values, parts (statement → [base, head] per request), verdict and text; judged
    by the difference of the medians against `floor` (default: the row's)."""
    names = sorted(set(base.detail) | set(head.detail))
    row.detail = {n: [base.detail.get(n), head.detail.get(n)] for n in names}
    if not base.samples or not head.samples:
        row.reason = "no counted phase on one side"
        row.text = "no verdict: " + row.reason
        return
    before, after = statistics.median(base.samples), statistics.median(head.samples)
    row.base_value, row.head_value = before, after
    if before > 0 and after > 0:
        row.ratio = after / before
        row.low, row.high = (
            min(head.samples) / max(base.samples),
            max(head.samples) / min(base.samples),
        )
    change = after - before
    row.verdict = statements_verdict(
        base.samples, head.samples, row.floor if floor is None else floor
    )
    sign = "+" if change > 0 else "−"
    row.text = f"{amount(before)} → {amount(after)} per request" + (
        f" ({sign}{amount(abs(change))})" if change else ""
    )
