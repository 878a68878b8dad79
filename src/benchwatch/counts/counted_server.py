"""One target's counts: its server booted once under callgrind and once under strace, each
served the same fixed sequence (probe, warm-up, settle, an idle pause, then `repeats` phases of N
requests per endpoint, every repeat of the reads before the writes': plan.counted_order) on one
connection; what each phase cost, per request.

Every counted phase begins with a full garbage collection in the server, asked for over the
counting harness (counts/harness/sitecustomize.py) and left out of the count: the collector then
starts each phase in the same state, so its periodic full passes land alike in every phase.
Measured on posts' read endpoint (2 requests per phase): a range of 1.66 % over 10 phases
without, 0.21 % with (docs/counts.md)."""

from __future__ import annotations

import contextlib
import json
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from benchwatch.counts import callgrind, strace
from benchwatch.counts import request_budget as plan
from benchwatch.counts.client import Client, Request, RequestFailed
from benchwatch.counts.harness_control import Harness, HarnessError
from benchwatch.environments.envs import Env
from benchwatch.measure import server
from benchwatch.measure.inject import NO_INJECTION, Injection
from benchwatch.project.config import Endpoint, Variant
from benchwatch.results.files import write_json_atomic

MANIFEST = "phases.json"
TRACE = "strace.trace"  # a target's strace file in its folder
HASH_SEED = {
    "PYTHONHASHSEED": "0"
}  # str/bytes hashes, and so dict and set layouts, the same every boot
READY_S = 300.0  # a server's boot under valgrind (imports at ~1/50 speed)
PROBE_TIMEOUT_S = 120.0  # its first answer under valgrind
REQUEST_TIMEOUT_S = 300.0
STOP_WAIT_S = 120.0  # SIGINT to exit: valgrind writes its last file
KEEP_ALIVE_S = 3600.0  # the one connection idles while the counter dumps: uvicorn must not close it (its default: 5 s)
IDLE_S = 2.0  # the pause whose cost (uvicorn's 0.1 s tick: 20 wake-ups) is taken off every phase, by the tick
PAUSE_S = 0.2  # between strace phases: the server idles, so the cut between them is clean
# between requests: the server finishes its work after an answer (a few more turns of its event
# loop) before the next request comes, so each request takes the same turns and polls; without
# it, whether the next request is already there at the loop's next poll is a race
THINK_S = {"callgrind": 0.005, "strace": 0.002}
STRACE_TIMES = 2  # strace runs near native speed: 2x callgrind's requests per phase (up to the cap)


class CountFailed(Exception):
    def __init__(
        self, reason: str, endpoint: Endpoint | None = None, stderr_tail: str = ""
    ) -> None:
        super().__init__(reason)
        self.reason = reason
        self.endpoint = endpoint
        self.stderr_tail = stderr_tail


@dataclass(frozen=True)
class CountTarget:
    """A variant's server and the endpoints to count on it (`inject`: TESTING ONLY)."""

    variant: Variant
    env: Env
    endpoints: tuple[Endpoint, ...]
    inject: Injection = NO_INJECTION


def targets_for(
    variants: Sequence[Variant],
    environments: dict[str, Env],
    quick: bool,
    inject: Injection = NO_INJECTION,
) -> list[CountTarget]:
    """A target per variant whose environment was built: its quick endpoints, or all of them."""
    return [
        CountTarget(v, environments[v.env_key], v.selected_endpoints(quick), inject)
        for v in variants
        if v.env_key in environments
    ]


@dataclass
class Phase:
    endpoint: Endpoint
    repeat: int
    requests: int
    seconds: float  # wall time the phase covered
    instructions: int = 0  # callgrind's count, idle cost included
    file: Path | None = None
    calls: Counter[str] = field(default_factory=Counter)  # strace's, the idle timer's included
    wakeups: int = 0  # strace: polls that timed out (the idle timer's wake-ups) in the phase
    ticks: int | None = (
        None  # callgrind: uvicorn's timer ticks in the phase (None: not a uvicorn server)
    )


@dataclass
class TargetCounts:
    """Everything one target's two boots gave."""

    target: CountTarget
    instruction_phases: list[Phase]
    idle_instructions_per_s: float
    syscall_phases: list[Phase]
    idle_calls_per_wakeup: dict[str, float]
    idle_instructions_per_tick: float | None = None
    idle_window_instructions: float = (
        0.0  # the idle pause's whole count: with the timer quiet, a window's own cost
    )

    def instructions(self, endpoint: Endpoint) -> list[float]:
        """Per request, one value per repeat: the phase's count less the idle cost in it. With
        uvicorn's timer quiet (no tick in the phase) that is the cost of a window with no request
        (the idle pause's count: the harness's hold and release around its dumps); with ticks, their
        number times what one costs idle; for a server whose ticks cannot be counted, the idle cost
        of the phase's wall time."""
        return [
            (p.instructions - self._idle_in(p)) / p.requests
            for p in self.instruction_phases
            if p.endpoint == endpoint
        ]

    def _idle_in(self, phase: Phase) -> float:
        if phase.ticks == 0:  # uvicorn's timer quiet (counts/harness): the window's own cost alone
            return self.idle_window_instructions
        if phase.ticks is not None and self.idle_instructions_per_tick is not None:
            return self.idle_instructions_per_tick * phase.ticks
        return self.idle_instructions_per_s * phase.seconds

    def syscalls(self, endpoint: Endpoint) -> list[dict[str, float]]:
        """Per request by name, one mapping per repeat, less the idle timer's calls: uvicorn
        wakes every 0.1 s, so their number follows the wall time, not the requests. Each wake-up
        shows as a poll that timed out; what one costs comes from the idle pause."""
        found = []
        for p in (p for p in self.syscall_phases if p.endpoint == endpoint):
            idle = self.idle_calls_per_wakeup
            names = set(p.calls) | set(idle)
            per = {
                n: (p.calls.get(n, 0) - idle.get(n, 0.0) * p.wakeups) / p.requests for n in names
            }
            found.append({n: v for n, v in per.items() if round(v, 4) != 0})
        return found

    def manifest(self) -> dict:
        """Per endpoint label: its callgrind files and the requests each counted (what
        benchwatch.counts.breakdown needs), and strace's requests per phase."""
        found: dict[str, dict] = {}
        for endpoint in self.target.endpoints:
            mine = [p for p in self.instruction_phases if p.endpoint == endpoint]
            traced = [p for p in self.syscall_phases if p.endpoint == endpoint]
            found[endpoint.label] = {
                "requests": mine[0].requests if mine else 0,
                "files": [p.file.name for p in mine if p.file is not None],
                "strace_requests": traced[0].requests if traced else 0,
                # how the idle cost was taken off each phase, for a reader checking a figure
                "ticks": [p.ticks for p in mine],
                "seconds": [round(p.seconds, 3) for p in mine],
                "idle_instructions_per_tick": self.idle_instructions_per_tick,
                "idle_window_instructions": self.idle_window_instructions,
                "idle_instructions_per_s": self.idle_instructions_per_s,
            }
        return found


def count_target(
    target: CountTarget,
    out_dir: Path,
    *,
    cap: int,
    repeats: int,
    say: Callable[[str], None],
    quiet_idle_s: float = IDLE_S,
    strace_times: int = STRACE_TIMES,
) -> TargetCounts:
    """Both boots of one target; raises CountFailed (server stopped) at the first failure.
    `quiet_idle_s`: the idle pause of a server whose timer is held (nothing in it depends on its
    length: no tick comes); `strace_times`: strace's requests per phase, in callgrind's."""
    out_dir.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    say(f"counts: {target.variant.id}: instructions under callgrind")
    cg = _callgrind(target, out_dir / "callgrind.out", cap, repeats, quiet_idle_s)
    say(f"counts: {target.variant.id}: system calls under strace")
    traced = [min(cap, strace_times * n) for n in cg.requests]
    st = _strace(target, out_dir / TRACE, cg.warmups, traced, repeats, quiet_idle_s)
    counted = TargetCounts(
        target, cg.phases, cg.idle_per_s, st.phases, st.idle_calls, cg.idle_per_tick, cg.idle
    )
    write_json_atomic(out_dir / MANIFEST, counted.manifest())
    say(
        f"counts: {target.variant.id}: {len(target.endpoints)} endpoint(s) counted in {time.monotonic() - started:.0f} s"
    )
    return counted


def phase_files(target_dir: Path, endpoint_label: str) -> tuple[list[Path], int]:
    """An endpoint's callgrind files in a target's directory and the requests each counted."""
    try:
        entry = json.loads((target_dir / MANIFEST).read_text())[endpoint_label]
    except (OSError, ValueError, KeyError):
        raise FileNotFoundError(
            f"{target_dir / MANIFEST}: no counts of {endpoint_label!r} there"
        ) from None
    return [target_dir / name for name in entry["files"]], int(entry["requests"])


@dataclass
class _Run:
    phases: list[Phase]
    warmups: list[int]
    requests: list[int]
    idle_per_s: float = 0.0  # callgrind: instructions per idle second
    idle_calls: dict[str, float] = field(default_factory=dict)  # strace: calls per timer wake-up
    idle_per_tick: float | None = None  # callgrind: instructions per timer tick while idle
    idle: float = 0.0  # callgrind: the idle pause's count


@dataclass
class _Serving:
    """A server booted under a counter, one client connection to it, and its harness; the
    endpoints' requests as this boot sends them (its set-up's values filled in)."""

    target: CountTarget
    srv: server.Server
    client: Client
    gc: Harness
    tail: list[str] = field(default_factory=list)  # its stderr tail once stopped, for later errors
    quiet: bool = False  # uvicorn's timer held for the count (counts/harness)

    @property
    def requests(self) -> list[Request]:
        return [Request.of(self.srv, e) for e in self.target.endpoints]

    def send(self, index: int, request: Request, times: int, think: float = 0.0) -> float:
        try:
            return self.client.send(request, times, think)
        except RequestFailed as exc:
            raise CountFailed(
                str(exc), self.target.endpoints[index], self.srv.stderr_tail()
            ) from None

    def hold(self) -> int | None:
        """The server's loop held still (counts/harness); its timer's ticks so far, or None."""
        try:
            return self.gc.hold()
        except HarnessError as exc:
            raise CountFailed(str(exc), stderr_tail=self.srv.stderr_tail()) from None

    def release(self, held: int | None) -> None:
        if held is None:
            return
        try:
            self.gc.release()
        except HarnessError as exc:
            raise CountFailed(str(exc), stderr_tail=self.srv.stderr_tail()) from None

    def collect(self) -> None:
        """A full garbage collection in the server (counts/harness): every phase begins with the
        collector in the same state."""
        try:
            self.gc.collect()
        except HarnessError as exc:
            raise CountFailed(str(exc), stderr_tail=self.srv.stderr_tail()) from None


@contextmanager
def _serving(target: CountTarget, wrap: list[str], counter: str) -> Iterator[_Serving]:
    """The server booted under a counter with the counting harness loaded, and one client
    connection to it; after the block, the server must still be alive."""
    gc = Harness()
    try:
        with server.running(
            target.variant,
            target.env,
            inject=target.inject,
            wrap=wrap,
            wrap_environ={**HASH_SEED, **gc.environ()},
            ready_timeout=READY_S,
            probe_timeout=PROBE_TIMEOUT_S,
            interrupt_wait=STOP_WAIT_S,
            keep_alive=KEEP_ALIVE_S,
        ) as srv:
            client = Client(server.HOST, srv.port, REQUEST_TIMEOUT_S)
            serving = _Serving(target, srv, client, gc)
            try:
                gc.connect()
                # a first collection: the harness thread then sleeps in `recv` (holding no lock)
                # before anything is counted, as it does between every two collections
                gc.collect()
                serving.quiet = gc.quiet()  # uvicorn's timer held: no tick in any phase
                yield serving
            except HarnessError as exc:
                raise CountFailed(str(exc), stderr_tail=srv.stderr_tail()) from None
            finally:
                client.close()
                if serving.quiet:  # before the server is stopped: it reads its exit flag at a tick
                    with contextlib.suppress(HarnessError):
                        gc.wake()
            if not srv.alive():
                raise CountFailed("server exited during the count", stderr_tail=srv.stderr_tail())
            serving.tail.append(srv.stderr_tail())
    except server.BootError as exc:
        raise CountFailed(
            f"boot under {counter}: {exc.reason}", stderr_tail=exc.stderr_tail
        ) from None
    finally:
        gc.close()


def _callgrind(
    target: CountTarget, out_file: Path, cap: int, repeats: int, quiet_idle_s: float
) -> _Run:
    """Boot (uninstrumented), probe, warm-up, settle (uninstrumented), an idle pause, then the
    counted phases, each after a full collection; a dump after each stage, its label checked
    against its file."""
    for old in out_file.parent.glob(out_file.name + "*"):
        old.unlink()
    dumps: list[tuple[str, float]] = []  # (label, wall-clock midpoint of the dump); file `.k+1`
    ticks: dict[str, int | None] = {}  # label: the server's timer ticks when that dump was taken

    def control(call: Callable[[], None]) -> None:
        try:
            call()
        except callgrind.CallgrindError as exc:
            raise CountFailed(str(exc), stderr_tail=s.srv.stderr_tail()) from None

    def dump(label: str) -> float:
        """Write and zero the counts, the server's loop held still meanwhile (its ticks so far
        noted); the seconds since the last dump."""
        started = time.monotonic()
        ticks[label] = s.hold()
        try:
            control(lambda: callgrind.dump(s.srv.pid, label))
        finally:
            s.release(ticks[label])
        dumps.append((label, (started + time.monotonic()) / 2))
        return dumps[-1][1] - dumps[-2][1] if len(dumps) > 1 else 0.0

    def ticks_between(first: str, last: str) -> int | None:
        before, after = ticks[first], ticks[last]
        return after - before if before is not None and after is not None else None

    def total(label: str) -> int:
        return callgrind.read_total(callgrind.dump_file(out_file, _number(dumps, label)))

    endpoints = target.endpoints
    phases: list[Phase] = []
    try:
        with _serving(target, callgrind.wrap(out_file), "callgrind") as s:
            requests = s.requests
            control(
                lambda: callgrind.instrument(s.srv.pid, True)
            )  # booted uninstrumented (callgrind.wrap)
            dump("boot")
            for i, request in enumerate(requests):
                s.send(i, request, plan.PROBE)
                dump(f"probe-{i}")
            warmups = [
                plan.warmup_for(total(f"probe-{i}") / plan.PROBE, cap) for i in range(len(requests))
            ]
            for i, request in enumerate(requests):
                s.send(i, request, warmups[i])
                dump(f"warm-{i}")
            counts = [
                plan.requests_for(total(f"warm-{i}") / warmups[i], cap)
                for i in range(len(requests))
            ]
            settles = [plan.settle_for(n) for n in counts]
            control(
                lambda: callgrind.instrument(s.srv.pid, False)
            )  # the settle counts nothing: faster
            for i, request in enumerate(requests):
                s.send(i, request, settles[i])
            control(lambda: callgrind.instrument(s.srv.pid, True))
            dump("settle")  # so the idle pause's dump holds the pause alone
            warmups = [w + n for w, n in zip(warmups, settles, strict=True)]  # strace sends as many
            time.sleep(quiet_idle_s if s.quiet else IDLE_S)
            idle_seconds = dump("idle")
            for r, i in plan.counted_order([e.method for e in endpoints], repeats):
                s.collect()
                dump(f"gc-r{r}-{i}")
                s.send(i, requests[i], counts[i], THINK_S["callgrind"])
                phases.append(Phase(endpoints[i], r, counts[i], dump(f"r{r}-{i}")))
                phases[-1].ticks = ticks_between(f"gc-r{r}-{i}", f"r{r}-{i}")
        tail = s.tail
    except callgrind.CallgrindError as exc:
        raise CountFailed(str(exc)) from None
    try:
        idle = total("idle")
        for phase in phases:
            label = f"r{phase.repeat}-{endpoints.index(phase.endpoint)}"
            phase.file = callgrind.dump_file(out_file, _number(dumps, label))
            read = callgrind.read(phase.file, functions=False)
            if read.trigger.split()[-1] != label:
                raise CountFailed(f"{phase.file.name} holds dump {read.trigger!r}, want {label!r}")
            phase.instructions = read.total
    except callgrind.CallgrindError as exc:
        raise CountFailed(str(exc), stderr_tail=tail[0]) from None
    idle_ticks = ticks_between("settle", "idle")
    per_tick = idle / idle_ticks if idle_ticks else None
    return _Run(phases, warmups, counts, idle / idle_seconds, idle_per_tick=per_tick, idle=idle)


def _number(dumps: list[tuple[str, float]], label: str) -> int:
    """The file number of a dump (callgrind numbers them from 1, in order)."""
    return 1 + [name for name, _ in dumps].index(label)


def _strace(
    target: CountTarget,
    trace: Path,
    warmups: Sequence[int],
    counts: Sequence[int],
    repeats: int,
    quiet_idle_s: float,
) -> _Run:
    trace.unlink(missing_ok=True)
    endpoints = target.endpoints
    phases: list[Phase] = []
    windows: list[tuple[float, float]] = []
    with _serving(target, strace.wrap(trace), "strace") as s:
        requests = s.requests
        for i, request in enumerate(requests):
            s.send(i, request, plan.PROBE + warmups[i])
        time.sleep(PAUSE_S)
        idle_start = time.time()
        time.sleep(quiet_idle_s if s.quiet else IDLE_S)
        windows.append((idle_start, time.time()))
        for r, i in plan.counted_order([e.method for e in endpoints], repeats):
            time.sleep(PAUSE_S)  # the last window ends mid-pause: its tail stays clear
            s.collect()  # between windows: the collection's calls (and the harness's) fall outside
            time.sleep(PAUSE_S / 2)
            start = time.time()
            s.send(i, requests[i], counts[i], THINK_S["strace"])
            # the server's last calls of a phase (after its answer was sent) come
            # just after the client has read it: the window ends mid-pause
            end = time.time() + PAUSE_S / 2
            windows.append((start, end))
            phases.append(Phase(endpoints[i], r, counts[i], end - start))
        time.sleep(PAUSE_S)
    try:
        counted = strace.count_windows(strace.calls(trace), windows)
    except strace.StraceError as exc:
        raise CountFailed(str(exc), stderr_tail=s.tail[0]) from None
    idle = counted[0]
    for phase, window in zip(phases, counted[1:], strict=True):
        phase.calls, phase.wakeups = window.calls, window.wakeups
    # a server with no idle timer has nothing to take off
    idle_calls = (
        {name: calls / idle.wakeups for name, calls in idle.calls.items()} if idle.wakeups else {}
    )
    return _Run(phases, list(warmups), list(counts), idle_calls=idle_calls)
