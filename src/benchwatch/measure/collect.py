"""Samples in, figures out: what one oha run (a shot) or one server's memory yields, which
measurements are invalid, and the A/A noise. No servers and no I/O here."""

from __future__ import annotations

import json
import re
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from benchwatch.declarations.redaction import redact
from benchwatch.declarations.requests import Endpoint
from benchwatch.figures.figure_key import load_key, server_key
from benchwatch.figures.metrics import (
    CPU,
    CPU_SYS,
    CPU_USER,
    P50,
    P99,
    RPS,
    RSS_IDLE,
    RSS_PEAK,
    RSS_WARM,
    Closed,
    Metric,
    Open,
    load_metrics,
)
from benchwatch.measure.loadgen import OhaRun, Outcome
from benchwatch.measure.server import CpuTimes
from benchwatch.measure.verify import Checked, cross_check
from benchwatch.project.variants import Variant
from benchwatch.results.load_facts import AAFigure, AANoise, LoadgenInfo, OhaRecord, SkippedRun
from benchwatch.results.schema import Figure, Problem

AA_SUFFIX = "'"
# the line of a traceback that names the exception (`sqlalchemy.exc.OperationalError: …`, also inside
# an exception group's `|` margin): what follows it ("Background on this error at …") says less
_EXCEPTION_LINE = re.compile(r"^[\s|]*((?:[A-Za-z_]\w*\.)*([A-Za-z_]\w*): .+)$")
_LOG_LEVELS = {
    "DEBUG",
    "INFO",
    "WARNING",
    "ERROR",
    "CRITICAL",
}  # uvicorn's `ERROR:    Exception in …`
MB = 1024 * 1024
MEMORY = (RSS_IDLE, RSS_WARM, RSS_PEAK)


@dataclass(frozen=True)
class Slot:
    """One place in a round: a variant, or the same variant again as the A/A copy."""

    variant: Variant
    label: str

    @property
    def is_copy(self) -> bool:
        return self.label != self.variant.id


def slots_for(variants: Sequence[Variant], aa_variant: str | None) -> list[Slot]:
    slots = [Slot(v, v.id) for v in variants]
    if aa_variant:
        chosen = next((v for v in variants if v.id == aa_variant), None)
        if chosen is not None:
            position = list(variants).index(chosen) + 1
            slots.insert(position, Slot(chosen, chosen.id + AA_SUFFIX))
    return slots


@dataclass(frozen=True)
class Shot:
    """One oha run against one server: what was asked of it."""

    endpoint: Endpoint
    setting: Closed | Open | None  # None: the warm-up
    duration: float
    connections: int
    rate: int | None = None
    requests: int | None = None  # a fixed count instead of a duration (a slow endpoint)

    @property
    def tag(self) -> str:
        return self.setting.tag if self.setting is not None else "warm-up"


@dataclass
class _Series:
    figure: dict
    samples: list[float] = field(default_factory=list)


def half_iqr(samples: Sequence[float]) -> float:
    if len(samples) < 2:
        return 0.0
    q1, _, q3 = statistics.quantiles(samples, n=4, method="inclusive")
    return (q3 - q1) / 2


@dataclass
class Collector:
    """Samples per figure name, invalid figures and failed slots of one stream of results
    (the load stage has one; a compare has base's and head's); figures at any time."""

    name_tag: str = ""  # appended to every name: compare's figures are " (side by side)"
    series: dict[str, _Series] = field(default_factory=dict)
    invalid: dict[str, str] = field(default_factory=dict)
    failed: dict[str, str] = field(default_factory=dict)
    problems: list[Problem] = field(default_factory=list)
    oha_runs: list[OhaRecord] = field(default_factory=list)
    rates: dict[tuple[str, str], dict[float, int]] = field(default_factory=dict)
    checks: dict[str, Checked] = field(default_factory=dict)
    timings: list[dict] = field(default_factory=list)
    skipped: list[SkippedRun] = field(default_factory=list)
    dropped: list[SkippedRun] = field(default_factory=list)  # side-by-side pairs not kept
    # the CPU figure's name of every shot that lost a pair -> (slot label, endpoint label, setting tag)
    dropped_shots: dict[str, tuple[str, str, str]] = field(default_factory=dict)

    def _add(self, name: str, value: float, **figure: Any) -> None:
        self.series.setdefault(name, _Series(figure={"name": name, **figure})).samples.append(value)

    def fail(self, slot: Slot, problem: Problem) -> None:
        self.failed.setdefault(slot.label, problem.reason)
        self.report(slot, problem)

    def report(self, slot: Slot, problem: Problem) -> None:
        if slot.is_copy:
            problem = problem.model_copy(update={"reason": f"{problem.reason} (A/A copy)"})
        self.problems.append(problem)

    def names(self, slot: Slot, endpoint: Endpoint, setting: Closed | Open) -> dict[Metric, str]:
        return {
            m: load_key(slot.label, endpoint.label, setting, m, self.name_tag).name
            for m in load_metrics(setting)
        }

    def rss_names(self, slot: Slot) -> dict[Metric, str]:
        return {m: server_key(slot.label, m, self.name_tag).name for m in MEMORY}

    def record(
        self,
        slot: Slot,
        shot: Shot,
        round_index: int,
        run: OhaRun,
        server_cpu: CpuTimes | float,
        server_alive: bool,
        server_error: str = "",
    ) -> Outcome | None:
        """One measured oha run's figures, or why they (and the slot's memory) are invalid;
        the outcome when valid. `server_cpu`: the server tree's CPU over the window (a bare total
        gives no user/system split). `server_error`: the server's own last error (a 5xx's
        traceback): its last line joins the reason, all of it the problem's detail."""
        split = server_cpu.split() if isinstance(server_cpu, CpuTimes) else None
        server_cpu = server_cpu.total if isinstance(server_cpu, CpuTimes) else server_cpu
        assert shot.setting is not None, "a warm-up is never recorded"
        outcome = run.outcome
        self.oha_runs.append(
            OhaRecord(
                variant=slot.label,
                endpoint=shot.endpoint.label,
                params=shot.setting.params(),
                round=round_index,
                oha_cpu_share=round(run.cpu_share, 4),
                oha_bottleneck=run.bottleneck,
                server_cpu_share=round(server_cpu / run.wall_seconds, 4)
                if run.wall_seconds
                else None,
                successes=outcome.successes,
                deadline_aborts=outcome.deadline_aborts,
                elapsed_s=round(outcome.elapsed, 4),
                valid=outcome.valid,
                requests=shot.requests,
                connections=shot.connections,
            )
        )
        names = self.names(slot, shot.endpoint, shot.setting)
        if not outcome.valid or not server_alive:
            reason = redact("; ".join(outcome.problems)) or "server died during the measurement"
            said = error_line(server_error)
            if said:
                reason += f"; the server said: {said[:200]}"
            for name in [*names.values(), *self.rss_names(slot).values()]:
                self.invalid.setdefault(
                    name, f"round {round_index + 1}: {shot.endpoint.label} {shot.tag}: {reason}"
                )
            self.report(
                slot,
                Problem(
                    variant=slot.variant.id,
                    phase="load",
                    endpoint=shot.endpoint.label,
                    reason=f"{shot.tag}: {reason}",
                    detail=server_error,
                ),
            )
            return None
        values = {
            CPU: server_cpu / outcome.successes * 1e6,
            RPS: outcome.rps,
            P50: outcome.p50_ms,
            P99: outcome.p99_ms,
        }
        if split is not None:
            values[CPU_USER], values[CPU_SYS] = (part / outcome.successes * 1e6 for part in split)
        else:  # a bare total: no split to report
            names = {m: n for m, n in names.items() if m not in (CPU_USER, CPU_SYS)}
        for what, name in names.items():
            self._add(
                name,
                float(values[what] or 0.0),
                **self._identity(slot, what),
                endpoint=shot.endpoint.label,
                params=shot.setting.params(),
                micro_case=shot.endpoint.micro_case,
            )
        return outcome

    def record_memory(self, slot: Slot, idle: int, warm: int, peak: int) -> None:
        """The server tree's RSS in bytes: after boot, after warm-up, highest under load."""
        for what, value in zip(MEMORY, (idle, warm, peak), strict=True):
            self._add(
                self.rss_names(slot)[what],
                value / MB,
                **self._identity(slot, what),
                endpoint=None,
                params={},
            )

    @staticmethod
    def _identity(slot: Slot, what: Metric) -> dict:
        variant = slot.variant
        return {
            "kind": "load",
            "variant": slot.label,
            "scenario": variant.scenario,
            "stack": variant.stack.name,
            "metric": what.key,
            "unit": what.unit,
            "bigger_is_better": what.bigger_is_better,
        }

    def drop(
        self,
        slot: Slot,
        shot: Shot,
        round_index: int,
        reason: str,
        windows_apart: float | None = None,
    ) -> None:
        assert shot.setting is not None
        self.dropped.append(
            SkippedRun(
                variant=slot.label,
                endpoint=shot.endpoint.label,
                params=shot.setting.params(),
                round=round_index,
                reason=reason,
                windows_apart=windows_apart,
            )
        )
        name = self.names(slot, shot.endpoint, shot.setting)[CPU]
        self.dropped_shots[name] = (slot.label, shot.endpoint.label, shot.setting.tag)

    def short(self, slot: Slot, rounds: int) -> list[tuple[str, str]]:
        """(endpoint label, setting tag) of this slot's shots that lost a pair and have fewer than
        `rounds` samples; a figure made invalid, or a failed slot, is not short but not measured."""
        found = []
        for name, (label, endpoint, tag) in self.dropped_shots.items():
            if label != slot.label or name in self.invalid or label in self.failed:
                continue
            series = self.series.get(name)
            if (len(series.samples) if series else 0) < rounds:
                found.append((endpoint, tag))
        return found

    def skip(self, slot: Slot, endpoint: Endpoint, setting: Open, reason: str) -> None:
        self.skipped.append(
            SkippedRun(
                variant=slot.label, endpoint=endpoint.label, params=setting.params(), reason=reason
            )
        )

    def cross_check(self, slots: Sequence[Slot]) -> None:
        """Every variant of an app must give the same answers; a mismatch fails the slot."""
        checked = [s.variant for s in slots if s.label in self.checks]
        for problem in cross_check(checked, self.checks):
            slot = next(s for s in slots if s.label == problem.variant)
            self.fail(slot, problem)

    def figures(self) -> list[Figure]:
        """Figures of the real variants (not the A/A copies), in the order first measured."""
        figures = []
        for name, series in self.series.items():
            data = series.figure
            if data["variant"].endswith(AA_SUFFIX):
                continue
            reason = self.invalid.get(name) or self.failed.get(data["variant"])
            figures.append(
                Figure(
                    **data,
                    samples=series.samples,
                    value=statistics.median(series.samples),
                    spread=half_iqr(series.samples),
                    valid=reason is None,
                    note=f"invalid: {reason}" if reason else "",
                )
            )
        return figures

    def loadgen_info(
        self, oha_cores: list[int] | None, server_cores: list[int] | None, share: float
    ) -> LoadgenInfo:
        return LoadgenInfo(
            oha_cores=oha_cores,
            server_cores=server_cores,
            bottleneck_share=share,
            bottlenecked_runs=sum(1 for r in self.oha_runs if r.oha_bottleneck),
            runs=self.oha_runs,
            skipped=self.skipped,
            dropped_pairs=self.dropped,
        )

    def aa_noise(self, copy: Slot) -> AANoise:
        """Per figure of the A/A variant: coefficient of variation of A and A' pooled, and A'/A.
        A figure invalid on either side is left out."""
        original = copy.variant.id

        def what(series: _Series) -> tuple:
            data = series.figure
            return (data["endpoint"], json.dumps(data["params"], sort_keys=True), data["metric"])

        twins = {
            what(s): (n, s) for n, s in self.series.items() if s.figure["variant"] == copy.label
        }
        figures: dict[str, AAFigure] = {}
        for name, series in self.series.items():
            if series.figure["variant"] != original or what(series) not in twins:
                continue
            twin_name, twin = twins[what(series)]
            if name in self.invalid or twin_name in self.invalid:
                continue
            pooled = series.samples + twin.samples
            mean = statistics.fmean(pooled)
            if len(pooled) < 2 or mean == 0:
                continue
            figures[name] = AAFigure(
                cv=statistics.stdev(pooled) / mean,
                ratio=statistics.median(twin.samples) / statistics.median(series.samples),
                a=series.samples,
                a_prime=twin.samples,
                metric=series.figure["metric"],
            )
        return AANoise(variant=original, figures=figures)


def error_line(traceback_text: str) -> str:
    """The server's last exception line in its traceback (`ValueError: …`), else its last line."""
    lines = [line for line in traceback_text.strip().splitlines() if line.strip()]
    for line in reversed(lines):
        found = _EXCEPTION_LINE.match(line)
        if found and found.group(2) not in _LOG_LEVELS:
            return found.group(1).strip()
    return lines[-1].strip() if lines else ""
