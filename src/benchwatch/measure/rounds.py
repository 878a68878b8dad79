"""Servers measured at the same moment: one per lane, each with its own oha, results to its stage.

The load stage measures one lane at a time. `benchwatch compare` and `calibrate` measure base
and head as two lanes *side by side*: both servers pinned to the same core(s), both driven at
once by identical oha runs. The host's speed on this kind of machine wanders by ±25 % over
fractions of a second (a vCPU shares its core with other tenants, and the time stolen is
booked as the guest's own CPU time); measured one after the other, base and head see
different hosts, measured together they see the same one. A/A CPU-per-request ratios of
hello@latest, 10 rounds (a throwaway prototype of this module): log-ratio sd 0.133 one after
the other, 0.016 side by side.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from benchwatch.config import Endpoint
from benchwatch.measure import loadgen, server
from benchwatch.measure.verify import check_server, request_body
from benchwatch.results import Problem

if TYPE_CHECKING:
    from benchwatch.measure.load import LoadStage, Slot

MB = 1024 * 1024
# side by side means the same window: when one lane's oha ran this much longer than the other's
# (a stall of the host mid-run: oha waits for the requests in flight), neither sample is kept
WINDOW_MISMATCH = 0.10
MIN_OPEN_REQUESTS = 10
SLOW_DRAIN_SHARE = 0.25  # a closed loop uses -n when draining its in-flight requests would take longer


@dataclass
class Lane:
    """One server of a round: where its results go (stage, slot) and the running server."""

    stage: LoadStage
    slot: Slot
    srv: server.Server
    timing: dict[str, Any]
    idle_rss: int = 0
    seconds_per_request: dict[str, float] = field(default_factory=dict)
    best_rps: float = 0.0

    @property
    def plan(self):
        return self.stage.plan

    def endpoint(self, label: str) -> Endpoint | None:
        return next((e for e in self.endpoints() if e.label == label), None)

    def endpoints(self) -> tuple[Endpoint, ...]:
        return self.slot.variant.selected_endpoints(self.plan.quick)

    def fail(self, problem: Problem) -> None:
        self.stage.data.fail(self.slot, problem)

    def alive(self, during: str) -> bool:
        if self.srv.alive():
            return True
        reason = f"server died during {during} (exit code {self.srv.process.returncode})"
        self.fail(Problem(variant=self.slot.variant.id, phase="load", reason=reason, detail=self.srv.stderr_tail()))
        return False


@dataclass
class Shot:
    """One oha run of one lane within a simultaneous measurement."""

    lane: Lane
    endpoint: Endpoint
    tag: str
    params: dict[str, Any]
    duration: float
    concurrency: int
    rate: int | None = None
    requests: int | None = None


def boot_and_measure(entries: Sequence[tuple[LoadStage, Slot]], round_index: int) -> None:
    """Boot the server of every (stage, slot), in the order given, then measure them together."""
    with ExitStack() as stack:
        lanes: list[Lane] = []
        for stage, slot in entries:
            started = time.monotonic()
            timing: dict[str, Any] = {"slot": slot.label, "round": round_index, "together": len(entries)}
            stage.data.timings.append(timing)
            variant = slot.variant
            try:
                srv = stack.enter_context(server.running(
                    variant, stage.environments[variant.stack.name], cpu=stage.server_cores, inject=stage.inject,
                ))  # fmt: skip
            except server.BootError as exc:
                stage.data.fail(slot, Problem(variant=variant.id, phase="boot", reason=exc.reason,
                                              detail=exc.stderr_tail))  # fmt: skip
                continue
            timing["boot_s"] = round(time.monotonic() - started, 3)
            lanes.append(Lane(stage, slot, srv, timing))
        started = time.monotonic()
        measure_lanes(lanes, round_index)
        for lane in lanes:
            lane.timing["measure_s"] = round(time.monotonic() - started, 3)


def measure_lanes(lanes: list[Lane], round_index: int) -> None:
    lanes = [lane for lane in lanes if _checked(lane)]
    labels = list(dict.fromkeys(e.label for lane in lanes for e in lane.endpoints()))
    warm_ups = [Shot(lane, e, "warm-up", {}, lane.plan.warmup, 1) for label in labels
                for lane in lanes if (e := lane.endpoint(label))]  # fmt: skip
    for shot, run in zip(warm_ups, _together(warm_ups), strict=True):
        if run.outcome.successes:
            shot.lane.seconds_per_request[shot.endpoint.label] = run.outcome.elapsed / run.outcome.successes
    lanes = [lane for lane in lanes if lane.alive("warm-up")]
    warm = {id(lane): lane.srv.rss_bytes() for lane in lanes}
    with ExitStack() as stack:
        peaks = {id(lane): stack.enter_context(lane.srv.rss_peak()) for lane in lanes}
        for label in labels:
            lanes = _measure_endpoint(lanes, label, round_index)
    for lane in lanes:
        for metric, value in (("rss_idle_mb", lane.idle_rss), ("rss_warm_mb", warm[id(lane)]),
                              ("rss_peak_mb", peaks[id(lane)][0])):  # fmt: skip
            variant = lane.slot.variant
            lane.stage.data.add(
                lane.stage.rss_name(lane.slot.label, metric.split("_")[1]), value / MB,
                kind="load", variant=lane.slot.label, scenario=variant.scenario, stack=variant.stack.name,
                metric=metric, unit="MB", bigger_is_better=False, endpoint=None, params={},
            )  # fmt: skip


def _checked(lane: Lane) -> bool:
    """Idle memory taken, then every answer verified; a wrong answer fails the slot."""
    variant = lane.slot.variant
    lane.idle_rss = lane.srv.rss_bytes()
    checked = check_server(lane.srv.base_url, variant, variant.endpoints if not lane.plan.quick else lane.endpoints())
    data = lane.stage.data
    if lane.slot.label not in data.checks and not lane.slot.is_copy:
        data.checks[lane.slot.label] = checked
    for problem in checked.problems:
        lane.fail(problem)
    return checked.ok


def _measure_endpoint(lanes: list[Lane], label: str, round_index: int) -> list[Lane]:
    """Closed loops at each concurrency, then open loops at fractions of each lane's best rate;
    returns the lanes still alive."""
    here = [lane for lane in lanes if lane.endpoint(label)]
    if not here:
        return lanes
    plan = here[0].plan
    for lane in here:
        lane.best_rps = 0.0
    for concurrency in plan.concurrencies:
        shots = []
        for lane in here:
            endpoint = lane.endpoint(label)
            assert endpoint is not None
            per_request = lane.seconds_per_request.get(label, 0.0)
            requests, connections = None, concurrency
            if per_request * concurrency > SLOW_DRAIN_SHARE * plan.duration:
                requests = max(2, round(plan.duration / per_request))
                connections = min(concurrency, requests)
            params = {"mode": "closed", "concurrency": concurrency}
            shots.append(Shot(lane, endpoint, f"c={concurrency}", params, plan.duration, connections, None, requests))
        for shot, outcome in zip(shots, _measure(shots, round_index), strict=True):
            if outcome is not None:
                shot.lane.best_rps = max(shot.lane.best_rps, outcome.rps)
        here = [lane for lane in here if lane.srv.alive()]
    for lane in here:
        key = (lane.slot.label, label)
        if key not in lane.stage.data.rates and lane.best_rps > 0:
            lane.stage.data.rates[key] = {f: max(1, round(f * lane.best_rps)) for f in plan.rate_fractions}
    open_duration = plan.open_duration or plan.duration
    for fraction in plan.rate_fractions:
        shots = []
        for lane in here:
            rate = lane.stage.data.rates.get((lane.slot.label, label), {}).get(fraction)
            if rate is None:
                continue
            params = {"mode": "open", "rate_fraction": fraction, "rate_rps": rate}
            if rate * open_duration < MIN_OPEN_REQUESTS:
                lane.stage.data.skipped.append({
                    "variant": lane.slot.label, "endpoint": label, "params": params,
                    "reason": f"under {MIN_OPEN_REQUESTS} requests in {open_duration:g}s at {rate} req/s",
                })  # fmt: skip
                continue
            endpoint = lane.endpoint(label)
            assert endpoint is not None
            shots.append(Shot(lane, endpoint, f"rate={fraction:.0%}", params, open_duration,
                              plan.open_concurrency, rate))  # fmt: skip
        _measure(shots, round_index)
        here = [lane for lane in here if lane.srv.alive()]
    return [lane for lane in lanes if lane.endpoint(label) is None or lane.alive(f"load on {label}")]


def _measure(shots: list[Shot], round_index: int) -> list[loadgen.Outcome | None]:
    """The shots at once; each lane's server CPU over the whole window, divided by its answers."""
    before = [shot.lane.srv.cpu_seconds() for shot in shots]
    runs = _together(shots)
    after = [shot.lane.srv.cpu_seconds() for shot in shots]
    windows = [run.wall_seconds for run in runs]
    if len(shots) > 1 and all(run.outcome.valid for run in runs) and max(windows) > (1 + WINDOW_MISMATCH) * min(windows):
        reason = ("not side by side: oha ran " + " and ".join(f"{w:.2f} s" for w in windows)
                  + "; this round's pair of samples is dropped")  # fmt: skip
        for shot in shots:
            shot.lane.stage.data.dropped.append({"variant": shot.lane.slot.label, "endpoint": shot.endpoint.label,
                                                 "params": shot.params, "round": round_index, "reason": reason})  # fmt: skip
        return [run.outcome for run in runs]
    return [
        shot.lane.stage.record(shot.lane.slot, shot.lane.srv, shot.endpoint, shot.tag, shot.params,
                               round_index, run, cpu_after - cpu_before, shot.requests, shot.concurrency)
        for shot, run, cpu_before, cpu_after in zip(shots, runs, before, after, strict=True)
    ]  # fmt: skip


def _together(shots: list[Shot]) -> list[loadgen.OhaRun]:
    """One oha per shot, all started at once (threads only wait on the processes)."""
    if not shots:
        return []

    def fire(shot: Shot) -> loadgen.OhaRun:
        lane = shot.lane
        spec = loadgen.LoadSpec(
            url=lane.srv.base_url + shot.endpoint.url_path, duration=shot.duration,
            concurrency=shot.concurrency, rate=shot.rate, requests=shot.requests,
            method=shot.endpoint.method, body=request_body(lane.slot.variant, shot.endpoint),
            content_type=shot.endpoint.content_type,
        )  # fmt: skip
        return loadgen.run_oha(lane.stage.oha, spec, lane.stage.oha_cores)

    if len(shots) == 1:
        return [fire(shots[0])]
    with ThreadPoolExecutor(max_workers=len(shots)) as pool:
        return list(pool.map(fire, shots))
