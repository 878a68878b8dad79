"""One round on running servers (lanes): fresh from boot each is verified, its idle memory taken
and every step warmed up; then each step's closed loops, and open loops at fractions of the best
rate, fired at every lane at once with one oha each. Side by side, a pair of shots whose oha
windows differ is fired again, then dropped (rounds.py drives the rounds and boots)."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from dataclasses import dataclass, field

from benchwatch.declarations.requests import Endpoint
from benchwatch.figures.metrics import Closed, Open
from benchwatch.measure import loadgen
from benchwatch.measure.collect import Collector, Shot, Slot
from benchwatch.measure.load_plan import LoadPlan
from benchwatch.measure.request import prepare
from benchwatch.measure.rig import Rig, Track
from benchwatch.measure.server import Server
from benchwatch.measure.verify import check_server
from benchwatch.results.schema import Problem

MIN_OPEN_REQUESTS = 10
MISMATCH_RETRIES = 2  # side by side: a pair of shots out of step is fired again this often
# a closed loop uses -n when draining its in-flight requests would take longer
SLOW_DRAIN_SHARE = 0.25


@dataclass
class Lane:
    """One server of a round: where its results go (track, slot) and the running server."""

    track: Track
    slot: Slot
    srv: Server
    timing: dict
    quick: bool
    idle_rss: int = 0
    seconds_per_request: dict[str, float] = field(default_factory=dict)
    best_rps: float = 0.0

    @property
    def data(self) -> Collector:
        return self.track.data

    def endpoint(self, step: str) -> Endpoint | None:
        """This lane's endpoint at `step` (see Track.steps)."""
        return next((e for e in self.endpoints() if self.track.step(e) == step), None)

    def endpoints(self) -> tuple[Endpoint, ...]:
        return self.slot.variant.timed_endpoints(self.quick)

    def fail(self, problem: Problem) -> None:
        self.data.fail(self.slot, problem)

    def alive(self, during: str) -> bool:
        if self.srv.alive():
            return True
        reason = f"server died during {during} (exit code {self.srv.process.returncode})"
        self.fail(
            Problem(
                variant=self.slot.variant.id,
                phase="load",
                reason=reason,
                detail=self.srv.stderr_tail(),
            )
        )
        return False


@dataclass
class Aimed:
    """A shot at one lane's server."""

    lane: Lane
    shot: Shot


def measure_lanes(
    rig: Rig,
    lanes: list[Lane],
    round_index: int,
    fresh: bool = True,
    only: dict[str, set[str]] | None = None,
) -> None:
    """One round on running servers. Fresh from boot: verified, idle memory, warm-up first, and
    memory recorded; a reused server (a later round of the same boot) goes straight to the load.
    `only` (a make-up round): step -> setting tags, the shots measured; memory is not recorded
    (its planned rounds all have their samples)."""
    lanes = (
        [lane for lane in lanes if _checked(lane)]
        if fresh
        else [lane for lane in lanes if lane.alive("rounds")]
    )
    steps = list(dict.fromkeys(lane.track.step(e) for lane in lanes for e in lane.endpoints()))
    if only is not None:
        steps = [step for step in steps if step in only]
    for step in steps if fresh else []:
        # step by step, as the step is measured: a small endpoint warmed up beside a 1 MB one on
        # the same server took its seconds per request and was then run as a "slow" one
        warm_ups = [
            Aimed(lane, Shot(e, None, rig.plan.warmup, 1))
            for lane in lanes
            if (e := lane.endpoint(step))
        ]
        for aimed, run in zip(warm_ups, _together(rig, warm_ups), strict=True):
            if run.outcome.successes:
                aimed.lane.seconds_per_request[aimed.shot.endpoint.label] = (
                    run.outcome.elapsed / run.outcome.successes
                )
    lanes = [lane for lane in lanes if lane.alive("warm-up")]
    warm = {id(lane): lane.srv.rss_bytes() for lane in lanes}
    with ExitStack() as stack:
        peaks = {id(lane): stack.enter_context(lane.srv.rss_peak()) for lane in lanes}
        for step in steps:
            lanes = _measure_step(
                rig, lanes, step, round_index, tags=None if only is None else only[step]
            )
    for lane in (
        lanes if fresh and only is None else []
    ):  # idle and after warm-up only mean something after a boot
        lane.data.record_memory(lane.slot, lane.idle_rss, warm[id(lane)], peaks[id(lane)][0])


def _checked(lane: Lane) -> bool:
    """Idle memory taken, then every answer verified; a wrong answer fails the slot."""
    variant = lane.slot.variant
    lane.idle_rss = lane.srv.rss_bytes()
    checked = check_server(lane.srv, variant.endpoints if not lane.quick else lane.endpoints())
    if lane.slot.label not in lane.data.checks and not lane.slot.is_copy:
        lane.data.checks[lane.slot.label] = checked
    for problem in checked.problems:
        lane.fail(problem)
    return checked.ok


def _measure_step(
    rig: Rig,
    lanes: list[Lane],
    step: str,
    round_index: int,
    tags: set[str] | None = None,
) -> list[Lane]:
    """Closed loops at each concurrency, then open loops at fractions of each lane's best rate,
    each lane on its endpoint of this step; returns the lanes still alive. `tags`: only the
    settings with these tags (a make-up round; the open loops' rates are the first round's)."""
    plan = rig.plan
    here = [lane for lane in lanes if lane.endpoint(step)]
    if not here:
        return lanes
    for lane in here:
        lane.best_rps = 0.0
    for concurrency in plan.concurrencies:
        if tags is not None and Closed(concurrency).tag not in tags:
            continue
        shots = [Aimed(lane, _closed_shot(lane, step, concurrency, plan)) for lane in here]
        for aimed, outcome in zip(shots, _measure(rig, shots, round_index), strict=True):
            if outcome is not None:
                aimed.lane.best_rps = max(aimed.lane.best_rps, outcome.rps)
        here = [lane for lane in here if lane.srv.alive()]
    for lane in here:
        key = (lane.slot.label, _label(lane, step))
        if key not in lane.data.rates and lane.best_rps > 0:
            lane.data.rates[key] = {
                f: max(1, round(f * lane.best_rps)) for f in plan.rate_fractions
            }
    open_duration = plan.open_duration or plan.duration
    for fraction in plan.rate_fractions:
        if tags is not None and Open(fraction).tag not in tags:
            continue
        shots = []
        for lane in here:
            endpoint = lane.endpoint(step)
            rate = lane.data.rates.get((lane.slot.label, _label(lane, step)), {}).get(fraction)
            if rate is None or endpoint is None:
                continue
            setting = Open(fraction, rate)
            if rate * open_duration < MIN_OPEN_REQUESTS:
                lane.data.skip(
                    lane.slot,
                    endpoint,
                    setting,
                    f"under {MIN_OPEN_REQUESTS} requests in {open_duration:g}s at {rate} req/s",
                )
                continue
            shots.append(
                Aimed(lane, Shot(endpoint, setting, open_duration, plan.open_concurrency, rate))
            )
        _measure(rig, shots, round_index)
        here = [lane for lane in here if lane.srv.alive()]
    return [
        lane
        for lane in lanes
        if lane.endpoint(step) is None or lane.alive(f"load on {_label(lane, step)}")
    ]


def _label(lane: Lane, step: str) -> str:
    endpoint = lane.endpoint(step)
    return endpoint.label if endpoint is not None else step


def _closed_shot(lane: Lane, step: str, concurrency: int, plan: LoadPlan) -> Shot:
    """A closed loop for the plan's duration; a fixed request count instead when draining the
    requests in flight at the deadline would take a large part of it (a slow endpoint)."""
    endpoint = lane.endpoint(step)
    assert endpoint is not None
    per_request = lane.seconds_per_request.get(endpoint.label, 0.0)
    requests, connections = None, concurrency
    if per_request * concurrency > SLOW_DRAIN_SHARE * plan.duration:
        requests = max(2, round(plan.duration / per_request))
        connections = min(concurrency, requests)
    return Shot(endpoint, Closed(concurrency), plan.duration, connections, None, requests)


def _measure(rig: Rig, shots: list[Aimed], round_index: int) -> list[loadgen.Outcome | None]:
    """The shots at once; each lane's server CPU over the whole window, divided by its answers.
    Side by side, shots whose oha windows differ are fired again (MISMATCH_RETRIES times at
    most) before the round's pair is dropped: a quick compare has no round to spare (6 rounds, and
    5 give no 95 % interval), and a busy host puts one window of a few hundred out of step."""
    runs: list = []
    before: list = []
    after: list = []
    for attempt in range(MISMATCH_RETRIES + 1):
        before = [aimed.lane.srv.cpu_times() for aimed in shots]
        runs = _together(rig, shots)
        after = [aimed.lane.srv.cpu_times() for aimed in shots]
        if not _out_of_step(rig, runs):
            break
        if attempt == MISMATCH_RETRIES or not all(aimed.lane.srv.alive() for aimed in shots):
            windows = [run.wall_seconds for run in runs]
            apart = max(windows) / min(windows) - 1
            reason = (
                f"not side by side: oha windows {apart:.0%} apart ({' and '.join(f'{w:.2f} s' for w in windows)}"
                f"{f', in {attempt + 1} tries' if attempt else ''}); this round's pair of samples is dropped"
            )
            for aimed in shots:
                aimed.lane.data.drop(
                    aimed.lane.slot, aimed.shot, round_index, reason, windows_apart=apart
                )
            return [run.outcome for run in runs]
    return [
        aimed.lane.data.record(
            aimed.lane.slot,
            aimed.shot,
            round_index,
            run,
            cpu_after - cpu_before,
            aimed.lane.srv.alive(),
            server_error=_server_error(aimed.lane, run),
        )
        for aimed, run, cpu_before, cpu_after in zip(shots, runs, before, after, strict=True)
    ]


def _server_error(lane: Lane, run: loadgen.OhaRun) -> str:
    """The server's own last error (its traceback) when it answered 5xx or died: what the
    problem shows beside the counts of statuses."""
    failed = any(code.startswith("5") for code in run.outcome.non_2xx) or not lane.srv.alive()
    return lane.srv.last_error() if failed else ""


def _out_of_step(rig: Rig, runs: list[loadgen.OhaRun]) -> bool:
    """Side by side, valid runs whose oha windows differ by more than the rig allows."""
    windows = [run.wall_seconds for run in runs]
    return (
        len(runs) > 1
        and rig.window_mismatch is not None
        and all(run.outcome.valid for run in runs)
        and max(windows) > (1 + rig.window_mismatch) * min(windows)
    )


def _together(rig: Rig, shots: list[Aimed]) -> list[loadgen.OhaRun]:
    """One oha per shot, all started at once (threads only wait on the processes)."""
    if not shots:
        return []

    def fire(aimed: Aimed) -> loadgen.OhaRun:
        lane, shot = aimed.lane, aimed.shot
        sent = prepare(lane.slot.variant.app, shot.endpoint, lane.srv.context)
        spec = loadgen.LoadSpec(
            url=lane.srv.base_url + sent.target,
            duration=shot.duration,
            concurrency=shot.connections,
            rate=shot.rate,
            requests=shot.requests,
            method=sent.method,
            body=sent.body,
            content_type=sent.content_type,
            headers=sent.headers,
        )
        return loadgen.run_oha(rig.oha, spec, rig.oha_cores)

    if len(shots) == 1:
        return [fire(shots[0])]
    with ThreadPoolExecutor(max_workers=len(shots)) as pool:
        return list(pool.map(fire, shots))
