"""The round driver: servers booted, verified, warmed and measured, one alone or several side by side.

The load stage measures one server at a time. `benchwatch compare` and `calibrate` measure base
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
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from dataclasses import dataclass, field

from benchwatch import envs
from benchwatch.config import Endpoint, Variant
from benchwatch.measure import loadgen, server
from benchwatch.measure.collect import Collector, Shot, Slot
from benchwatch.measure.inject import NO_INJECTION, Injection
from benchwatch.measure.plan import LoadPlan
from benchwatch.measure.verify import check_server, request_body
from benchwatch.metrics import Closed, Open
from benchwatch.progress import Progress
from benchwatch.results import Problem

# side by side means the same window: when one lane's oha ran this much longer than the other's
# (a stall of the host mid-run: oha waits for the requests in flight), neither sample is kept
WINDOW_MISMATCH = 0.10
MIN_OPEN_REQUESTS = 10
SLOW_DRAIN_SHARE = 0.25  # a closed loop uses -n when draining its in-flight requests would take longer


@dataclass(frozen=True)
class Rig:
    """What every measurement of a command shares: oha, the cores, the plan, the environments."""

    oha: str
    plan: LoadPlan
    environments: dict[str, envs.Env]
    server_cores: list[int] | None = None
    oha_cores: list[int] | None = None


def build_rig(oha: str, plan: LoadPlan, variants: Sequence[Variant]) -> tuple[Rig, dict[str, str]]:
    """Build every environment the variants need (once); ({stack: why}) for those that failed."""
    ready, failed = envs.prepare(variants)
    server_cores, oha_cores = server.cpu_plan()
    return Rig(oha, plan, ready, server_cores, oha_cores), failed


@dataclass
class Track:
    """One stream of results: its slots, where their samples go, and what its servers carry."""

    slots: list[Slot]
    data: Collector = field(default_factory=Collector)
    inject: Injection = NO_INJECTION

    def fail_stacks(self, failed: dict[str, str]) -> None:
        for slot in self.slots:
            reason = failed.get(slot.variant.env_key)
            if reason is not None:
                self.data.fail(slot, Problem(variant=slot.variant.id, phase="env", reason=reason))


def run_rounds(
    rig: Rig, tracks: Sequence[Track], *, progress: Progress, after_step: Callable[[], None] = lambda: None,
) -> None:  # fmt: skip
    """Every round over every slot. One track: each slot alone. Several: slot i of every track
    side by side, who boots first alternating by round. Answers are cross-checked after round 1."""
    together = list(zip(*(track.slots for track in tracks), strict=True))
    for round_index in range(rig.plan.rounds):
        for slots in together:
            progress.step(" | ".join(s.label for s in slots), f"round {round_index + 1}/{rig.plan.rounds}"
                          + (", side by side" if len(slots) > 1 else ""))  # fmt: skip
            entries = [(t, s) for t, s in zip(tracks, slots, strict=True) if s.label not in t.data.failed]
            if round_index % 2:  # who boots first and whose oha starts first, alternately
                entries.reverse()
            if entries:
                boot_and_measure(rig, entries, round_index)
            progress.advance()
            after_step()
        if round_index == 0:
            for track in tracks:
                track.data.cross_check(track.slots)


@dataclass
class Lane:
    """One server of a round: where its results go (track, slot) and the running server."""

    track: Track
    slot: Slot
    srv: server.Server
    timing: dict
    quick: bool
    idle_rss: int = 0
    seconds_per_request: dict[str, float] = field(default_factory=dict)
    best_rps: float = 0.0

    @property
    def data(self) -> Collector:
        return self.track.data

    def endpoint(self, label: str) -> Endpoint | None:
        return next((e for e in self.endpoints() if e.label == label), None)

    def endpoints(self) -> tuple[Endpoint, ...]:
        return self.slot.variant.selected_endpoints(self.quick)

    def fail(self, problem: Problem) -> None:
        self.data.fail(self.slot, problem)

    def alive(self, during: str) -> bool:
        if self.srv.alive():
            return True
        reason = f"server died during {during} (exit code {self.srv.process.returncode})"
        self.fail(Problem(variant=self.slot.variant.id, phase="load", reason=reason, detail=self.srv.stderr_tail()))
        return False


@dataclass
class Aimed:
    """A shot at one lane's server."""

    lane: Lane
    shot: Shot


def boot_and_measure(rig: Rig, entries: Sequence[tuple[Track, Slot]], round_index: int) -> None:
    """Boot the server of every (track, slot), in the order given, then measure them together."""
    with ExitStack() as stack:
        lanes: list[Lane] = []
        for track, slot in entries:
            started = time.monotonic()
            timing: dict = {"slot": slot.label, "round": round_index, "together": len(entries)}
            track.data.timings.append(timing)
            variant = slot.variant
            try:
                srv = stack.enter_context(server.running(
                    variant, rig.environments[variant.env_key], cpu=rig.server_cores, inject=track.inject,
                ))  # fmt: skip
            except server.BootError as exc:
                track.data.fail(slot, Problem(variant=variant.id, phase="boot", reason=exc.reason,
                                              detail=exc.stderr_tail))  # fmt: skip
                continue
            timing["boot_s"] = round(time.monotonic() - started, 3)
            lanes.append(Lane(track, slot, srv, timing, rig.plan.quick))
        started = time.monotonic()
        measure_lanes(rig, lanes, round_index)
        for lane in lanes:
            lane.timing["measure_s"] = round(time.monotonic() - started, 3)


def measure_lanes(rig: Rig, lanes: list[Lane], round_index: int) -> None:
    lanes = [lane for lane in lanes if _checked(lane)]
    labels = list(dict.fromkeys(e.label for lane in lanes for e in lane.endpoints()))
    warm_ups = [Aimed(lane, Shot(e, None, rig.plan.warmup, 1)) for label in labels
                for lane in lanes if (e := lane.endpoint(label))]  # fmt: skip
    for aimed, run in zip(warm_ups, _together(rig, warm_ups), strict=True):
        if run.outcome.successes:
            aimed.lane.seconds_per_request[aimed.shot.endpoint.label] = run.outcome.elapsed / run.outcome.successes
    lanes = [lane for lane in lanes if lane.alive("warm-up")]
    warm = {id(lane): lane.srv.rss_bytes() for lane in lanes}
    with ExitStack() as stack:
        peaks = {id(lane): stack.enter_context(lane.srv.rss_peak()) for lane in lanes}
        for label in labels:
            lanes = _measure_endpoint(rig, lanes, label, round_index)
    for lane in lanes:
        lane.data.record_memory(lane.slot, lane.idle_rss, warm[id(lane)], peaks[id(lane)][0])


def _checked(lane: Lane) -> bool:
    """Idle memory taken, then every answer verified; a wrong answer fails the slot."""
    variant = lane.slot.variant
    lane.idle_rss = lane.srv.rss_bytes()
    checked = check_server(lane.srv.base_url, variant, variant.endpoints if not lane.quick else lane.endpoints())
    if lane.slot.label not in lane.data.checks and not lane.slot.is_copy:
        lane.data.checks[lane.slot.label] = checked
    for problem in checked.problems:
        lane.fail(problem)
    return checked.ok


def _measure_endpoint(rig: Rig, lanes: list[Lane], label: str, round_index: int) -> list[Lane]:
    """Closed loops at each concurrency, then open loops at fractions of each lane's best rate;
    returns the lanes still alive."""
    plan = rig.plan
    here = [lane for lane in lanes if lane.endpoint(label)]
    if not here:
        return lanes
    for lane in here:
        lane.best_rps = 0.0
    for concurrency in plan.concurrencies:
        shots = [Aimed(lane, _closed_shot(lane, label, concurrency, plan)) for lane in here]
        for aimed, outcome in zip(shots, _measure(rig, shots, round_index), strict=True):
            if outcome is not None:
                aimed.lane.best_rps = max(aimed.lane.best_rps, outcome.rps)
        here = [lane for lane in here if lane.srv.alive()]
    for lane in here:
        key = (lane.slot.label, label)
        if key not in lane.data.rates and lane.best_rps > 0:
            lane.data.rates[key] = {f: max(1, round(f * lane.best_rps)) for f in plan.rate_fractions}
    open_duration = plan.open_duration or plan.duration
    for fraction in plan.rate_fractions:
        shots = []
        for lane in here:
            rate = lane.data.rates.get((lane.slot.label, label), {}).get(fraction)
            endpoint = lane.endpoint(label)
            if rate is None or endpoint is None:
                continue
            setting = Open(fraction, rate)
            if rate * open_duration < MIN_OPEN_REQUESTS:
                lane.data.skip(lane.slot, endpoint, setting,
                               f"under {MIN_OPEN_REQUESTS} requests in {open_duration:g}s at {rate} req/s")  # fmt: skip
                continue
            shots.append(Aimed(lane, Shot(endpoint, setting, open_duration, plan.open_concurrency, rate)))
        _measure(rig, shots, round_index)
        here = [lane for lane in here if lane.srv.alive()]
    return [lane for lane in lanes if lane.endpoint(label) is None or lane.alive(f"load on {label}")]


def _closed_shot(lane: Lane, label: str, concurrency: int, plan: LoadPlan) -> Shot:
    """A closed loop for the plan's duration; a fixed request count instead when draining the
    requests in flight at the deadline would take a large part of it (a slow endpoint)."""
    endpoint = lane.endpoint(label)
    assert endpoint is not None
    per_request = lane.seconds_per_request.get(label, 0.0)
    requests, connections = None, concurrency
    if per_request * concurrency > SLOW_DRAIN_SHARE * plan.duration:
        requests = max(2, round(plan.duration / per_request))
        connections = min(concurrency, requests)
    return Shot(endpoint, Closed(concurrency), plan.duration, connections, None, requests)


def _measure(rig: Rig, shots: list[Aimed], round_index: int) -> list[loadgen.Outcome | None]:
    """The shots at once; each lane's server CPU over the whole window, divided by its answers."""
    before = [aimed.lane.srv.cpu_seconds() for aimed in shots]
    runs = _together(rig, shots)
    after = [aimed.lane.srv.cpu_seconds() for aimed in shots]
    windows = [run.wall_seconds for run in runs]
    if len(shots) > 1 and all(run.outcome.valid for run in runs) and max(windows) > (1 + WINDOW_MISMATCH) * min(windows):
        reason = ("not side by side: oha ran " + " and ".join(f"{w:.2f} s" for w in windows)
                  + "; this round's pair of samples is dropped")  # fmt: skip
        for aimed in shots:
            aimed.lane.data.drop(aimed.lane.slot, aimed.shot, round_index, reason)
        return [run.outcome for run in runs]
    return [
        aimed.lane.data.record(aimed.lane.slot, aimed.shot, round_index, run, cpu_after - cpu_before,
                               aimed.lane.srv.alive())
        for aimed, run, cpu_before, cpu_after in zip(shots, runs, before, after, strict=True)
    ]  # fmt: skip


def _together(rig: Rig, shots: list[Aimed]) -> list[loadgen.OhaRun]:
    """One oha per shot, all started at once (threads only wait on the processes)."""
    if not shots:
        return []

    def fire(aimed: Aimed) -> loadgen.OhaRun:
        lane, shot = aimed.lane, aimed.shot
        spec = loadgen.LoadSpec(
            url=lane.srv.base_url + shot.endpoint.url_path, duration=shot.duration,
            concurrency=shot.connections, rate=shot.rate, requests=shot.requests,
            method=shot.endpoint.method, body=request_body(lane.slot.variant, shot.endpoint),
            content_type=shot.endpoint.content_type,
        )  # fmt: skip
        return loadgen.run_oha(rig.oha, spec, rig.oha_cores)

    if len(shots) == 1:
        return [fire(shots[0])]
    with ThreadPoolExecutor(max_workers=len(shots)) as pool:
        return list(pool.map(fire, shots))
