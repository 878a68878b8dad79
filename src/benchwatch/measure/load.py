"""The load stage: interleaved rounds over the variants, each boot verified, warmed, measured."""

from __future__ import annotations

import datetime as dt
import statistics
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchwatch import envs
from benchwatch.config import Endpoint, Project, Variant
from benchwatch.errors import UserError
from benchwatch.measure import loadgen, server
from benchwatch.measure.rounds import boot_and_measure
from benchwatch.measure.verify import Checked, cross_check
from benchwatch.progress import Progress
from benchwatch.results import Figure, Problem, Run, write_run

AA_SUFFIX = "'"
_METRIC_ORDER = {"cpu_us_per_request": 0, "rps": 1, "latency_p50_ms": 2, "latency_p99_ms": 3}
_SHORT = {
    "cpu_us_per_request": "cpu/req",
    "rps": "rps",
    "latency_p50_ms": "p50",
    "latency_p99_ms": "p99",
}
_UNITS = {
    "cpu_us_per_request": "us",
    "rps": "req/s",
    "latency_p50_ms": "ms",
    "latency_p99_ms": "ms",
}


@dataclass(frozen=True)
class LoadPlan:
    rounds: int
    warmup: float
    duration: float
    concurrencies: tuple[int, ...]
    rate_fractions: tuple[float, ...]
    open_duration: float | None = None
    open_concurrency: int = 64
    quick: bool = False
    boot_overhead: float = 2.5  # seconds per boot + verify, for the estimate only

    def seconds_per_round(self, variant: Variant) -> float:
        endpoints = len(variant.selected_endpoints(self.quick))
        closed = len(self.concurrencies) * (self.duration + 0.05)
        opened = len(self.rate_fractions) * ((self.open_duration or self.duration) + 0.05)
        return self.boot_overhead + endpoints * (self.warmup + closed + opened)

    def estimate(self, variants: Sequence[Variant]) -> float:
        return self.rounds * sum(self.seconds_per_round(v) for v in variants)


FULL = LoadPlan(rounds=3, warmup=2.0, duration=5.0, concurrencies=(10, 64),
                rate_fractions=(0.25, 0.5, 0.75))  # fmt: skip
QUICK = LoadPlan(rounds=1, warmup=0.2, duration=0.8, open_duration=0.5, concurrencies=(10,),
                 rate_fractions=(0.5,), quick=True, boot_overhead=1.5)  # fmt: skip


@dataclass(frozen=True)
class Slot:
    """One place in a round: a variant, or the same variant again as the A/A copy."""

    variant: Variant
    label: str

    @property
    def is_copy(self) -> bool:
        return self.label != self.variant.id


@dataclass
class _Series:
    figure: dict[str, Any]
    samples: list[float] = field(default_factory=list)


@dataclass
class Collector:
    """Samples per figure name, invalid figures and failed slots, turned into a Run at any time."""

    series: dict[str, _Series] = field(default_factory=dict)
    invalid: dict[str, str] = field(default_factory=dict)
    failed: dict[str, str] = field(default_factory=dict)
    problems: list[Problem] = field(default_factory=list)
    loadgen: list[dict[str, Any]] = field(default_factory=list)
    rates: dict[tuple[str, str], dict[float, int]] = field(default_factory=dict)
    checks: dict[str, Checked] = field(default_factory=dict)
    timings: list[dict[str, Any]] = field(default_factory=list)
    skipped: list[dict[str, Any]] = field(default_factory=list)
    dropped: list[dict[str, Any]] = field(default_factory=list)  # side-by-side pairs not kept

    def add(self, name: str, value: float, **figure: Any) -> None:
        self.series.setdefault(name, _Series(figure={"name": name, **figure})).samples.append(value)

    def fail(self, slot: Slot, problem: Problem) -> None:
        self.failed.setdefault(slot.label, problem.reason)
        self.report(slot, problem)

    def report(self, slot: Slot, problem: Problem) -> None:
        if slot.is_copy:
            problem = problem.model_copy(update={"reason": f"{problem.reason} (A/A copy)"})
        self.problems.append(problem)

    def figures(self, labels: dict[str, str]) -> list[Figure]:
        """Figures of the real variants (not the A/A copies), cpu/req first within each group."""
        figures = []
        for name, series in self.series.items():
            data = series.figure
            label = labels.get(data["variant"], data["variant"])
            if label != data["variant"]:
                continue
            reason = self.invalid.get(name) or self.failed.get(label)
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


def half_iqr(samples: Sequence[float]) -> float:
    if len(samples) < 2:
        return 0.0
    q1, _, q3 = statistics.quantiles(samples, n=4, method="inclusive")
    return (q3 - q1) / 2


def slots_for(variants: Sequence[Variant], aa_variant: str | None) -> list[Slot]:
    slots = [Slot(v, v.id) for v in variants]
    if aa_variant:
        chosen = next((v for v in variants if v.id == aa_variant), None)
        if chosen is not None:
            position = variants.index(chosen) + 1
            slots.insert(position, Slot(chosen, chosen.id + AA_SUFFIX))
    return slots


class LoadStage:
    def __init__(
        self,
        project: Project,
        variants: Sequence[Variant],
        plan: LoadPlan,
        out_dir: Path,
        *,
        run: Run,
        aa_variant: str | None = None,
        quiet: bool = False,
        inject: server.Injection = server.NO_INJECTION,
        name_tag: str = "",
    ) -> None:
        self.project = project
        self.inject = inject
        # appended to figure names: compare's side-by-side figures must not meet a trend of
        # figures measured alone under the same name (two servers share the core)
        self.name_tag = name_tag
        self.plan = plan
        self.out_dir = out_dir
        self.run = run
        self.slots = slots_for(variants, aa_variant)
        self.variants = list(variants)
        self.quiet = quiet
        self.data = Collector()
        self.oha = loadgen.ensure_oha()
        self.server_cores, self.oha_cores = server.cpu_plan()
        self.environments: dict[str, envs.Env] = {}
        self._earlier_figures = list(run.figures)
        self._earlier_problems = list(run.problems)

    def execute(self) -> Run:
        """Every round over every slot; results written after each step and at the end."""
        try:
            return self._execute()
        except KeyboardInterrupt:
            self.checkpoint(complete=False)
            raise

    def _execute(self) -> Run:
        self.prepare()
        progress = Progress(self.plan.rounds * len(self.slots), "load", quiet=self.quiet)
        for round_index in range(self.plan.rounds):
            self.measure_round(round_index, progress)
        return self.checkpoint(complete=True)

    def prepare(self) -> None:
        """Build every environment once; a stack that fails marks its variants failed."""
        ready, failed = envs.prepare(self.variants)
        self.environments = ready
        stacks = self.run.environment.setdefault("stacks", {})
        stacks.update({name: env.versions for name, env in ready.items()})
        for slot in self.slots:
            if slot.variant.stack.name in failed:
                reason = failed[slot.variant.stack.name]
                self.data.fail(slot, Problem(variant=slot.variant.id, phase="env", reason=reason))

    def measure_round(self, round_index: int, progress: Progress, prefix: str = "") -> None:
        """One round over every slot, results written after each slot."""
        for slot in self.slots:
            progress.step(f"{prefix}{slot.label}", f"load round {round_index + 1}/{self.plan.rounds}")
            if slot.label not in self.data.failed:
                self._measure_slot(slot, round_index)
            progress.advance()
            self.checkpoint(complete=False)
        if round_index == 0:
            self.cross_check_answers()

    def checkpoint(self, complete: bool) -> Run:
        labels = {s.label: s.variant.id for s in self.slots}
        run = self.run
        run.figures = self._earlier_figures + self.data.figures(labels)
        run.problems = self._earlier_problems + self.data.problems
        run.complete = complete
        run.finished_at = now()
        run.extra["loadgen"] = {
            "oha_cores": self.oha_cores,
            "server_cores": self.server_cores,
            "bottleneck_share": loadgen.BOTTLENECK_SHARE,
            "bottlenecked_runs": sum(1 for r in self.data.loadgen if r["oha_bottleneck"]),
            "runs": self.data.loadgen,
            "skipped": self.data.skipped,
            "dropped_pairs": self.data.dropped,
        }
        run.extra.setdefault("timings", {})["load"] = self.data.timings
        run.extra["load_plan"] = {
            "rounds": self.plan.rounds, "warmup_s": self.plan.warmup, "duration_s": self.plan.duration,
            "open_duration_s": self.plan.open_duration or self.plan.duration,
            "concurrencies": list(self.plan.concurrencies),
            "rate_fractions": list(self.plan.rate_fractions), "quick": self.plan.quick,
        }  # fmt: skip
        aa = [s for s in self.slots if s.is_copy]
        if aa:
            run.extra["aa_noise"] = aa_noise(self.data, aa[0])
        write_run(self.out_dir, run)
        return run

    def cross_check_answers(self) -> None:
        checked = [v for v in self.variants if v.id in self.data.checks]
        for problem in cross_check(checked, self.data.checks):
            slot = next(s for s in self.slots if s.label == problem.variant)
            self.data.fail(slot, problem)

    def _measure_slot(self, slot: Slot, round_index: int) -> None:
        boot_and_measure([(self, slot)], round_index)

    def rss_name(self, slot_label: str, kind: str) -> str:
        return f"{slot_label} rss {kind}{self.name_tag}"

    def record(
        self, slot: Slot, srv: server.Server, endpoint: Endpoint, tag: str, params: dict,
        round_index: int, result: loadgen.OhaRun, server_cpu: float, requests: int | None, connections: int,
    ) -> loadgen.Outcome | None:  # fmt: skip
        """One oha run's figures (or why they are invalid); the outcome when valid."""
        variant = slot.variant
        outcome = result.outcome
        prefix = f"{slot.label} {endpoint.label} {tag}"
        self.data.loadgen.append({
            "variant": slot.label, "endpoint": endpoint.label, "params": params, "round": round_index,
            "oha_cpu_share": round(result.cpu_share, 4), "oha_bottleneck": result.bottleneck,
            "server_cpu_share": round(server_cpu / result.wall_seconds, 4) if result.wall_seconds else None,
            "successes": outcome.successes, "deadline_aborts": outcome.deadline_aborts,
            "elapsed_s": round(outcome.elapsed, 4), "valid": outcome.valid, "requests": requests,
            "connections": connections,
        })  # fmt: skip
        metrics = [m for m in _METRIC_ORDER if m != "rps" or params["mode"] == "closed"]
        names = {m: f"{prefix} {_SHORT[m]}{self.name_tag}" for m in metrics}
        if not outcome.valid or not srv.alive():
            reason = "; ".join(outcome.problems) or "server died during the measurement"
            rss = [self.rss_name(slot.label, kind) for kind in ("idle", "warm", "peak")]
            for name in [*names.values(), *rss]:
                self.data.invalid.setdefault(
                    name, f"round {round_index + 1}: {endpoint.label} {tag}: {reason}"
                )
            self.data.report(slot, Problem(variant=variant.id, phase="load", endpoint=endpoint.label,
                                           reason=f"{tag}: {reason}"))  # fmt: skip
            return None
        values = {
            "cpu_us_per_request": server_cpu / outcome.successes * 1e6,
            "rps": outcome.rps,
            "latency_p50_ms": outcome.p50_ms,
            "latency_p99_ms": outcome.p99_ms,
        }
        for metric in metrics:
            self.data.add(
                names[metric], float(values[metric] or 0.0),
                kind="load", variant=slot.label, scenario=variant.scenario, stack=variant.stack.name,
                metric=metric, unit=_UNITS[metric], bigger_is_better=metric == "rps",
                endpoint=endpoint.label, params=params, micro_case=endpoint.micro_case,
            )  # fmt: skip
        return outcome


def aa_noise(data: Collector, copy: Slot) -> dict[str, Any]:
    """Per figure of the A/A variant: coefficient of variation of A and A' pooled, and A'/A."""
    original = copy.variant.id
    figures: dict[str, Any] = {}
    for name, series in data.series.items():
        if series.figure["variant"] != original:
            continue
        twin = data.series.get(copy.label + name[len(original) :])
        if (
            twin is None
            or name in data.invalid
            or (copy.label + name[len(original) :]) in data.invalid
        ):
            continue
        pooled = series.samples + twin.samples
        mean = statistics.fmean(pooled)
        if len(pooled) < 2 or mean == 0:
            continue
        figures[name] = {
            "cv": statistics.stdev(pooled) / mean,
            "ratio": statistics.median(twin.samples) / statistics.median(series.samples),
            "a": series.samples,
            "a_prime": twin.samples,
            "metric": series.figure["metric"],
        }
    return {"variant": original, "figures": figures}


def now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds")


def shard(variants: Sequence[Variant], spec: str | None) -> list[Variant]:
    """`i/N`: the i-th of N stable parts of about equal work. Longest first onto the least
    loaded part, work being the full plan's estimate (ties by variant id), so the parts do
    not depend on the order the variants come in and every machine finishes at about once."""
    if not spec:
        return list(variants)
    index, total = parse_shard(spec)
    work = {v.id: FULL.seconds_per_round(v) for v in variants}
    loads = [0.0] * total
    chosen: set[str] = set()
    for variant in sorted(variants, key=lambda v: (-work[v.id], v.id)):
        lightest = min(range(total), key=lambda part: (loads[part], part))
        loads[lightest] += work[variant.id]
        if lightest == index - 1:
            chosen.add(variant.id)
    return [v for v in variants if v.id in chosen]


def parse_shard(spec: str) -> tuple[int, int]:
    try:
        index_text, total_text = spec.split("/")
        index, total = int(index_text), int(total_text)
    except ValueError:
        raise UserError(f"--shard {spec!r}: give i/N, e.g. 1/3") from None
    if total < 1 or not 1 <= index <= total:
        raise UserError(f"--shard {spec!r}: i must be between 1 and N")
    return index, total


def default_out_dir(project: Project) -> Path:
    return project.root / "results" / dt.datetime.now().strftime("%Y%m%d-%H%M%S")


def start_run(command: Sequence[str], environment: dict[str, Any]) -> Run:
    return Run(started_at=now(), command=list(command), environment=environment)


def say(line: str, quiet: bool = False) -> None:
    if not quiet:
        print(line, file=sys.stderr, flush=True)
