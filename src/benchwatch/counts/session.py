"""One target's counts: its server booted once under callgrind and once under strace, each
served the same fixed sequence (probe, warm-up, settle, an idle pause, then `repeats` phases of N
requests per endpoint) on one connection; what each phase cost, per request."""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from benchwatch.config import Endpoint, Variant
from benchwatch.counts import callgrind, plan, strace
from benchwatch.counts.client import Client, Request, RequestFailed
from benchwatch.envs import Env
from benchwatch.measure import server
from benchwatch.measure.inject import NO_INJECTION, Injection
from benchwatch.results import write_json_atomic

MANIFEST = "phases.json"
HASH_SEED = {"PYTHONHASHSEED": "0"}  # str/bytes hashes, and so dict and set layouts, the same every boot
READY_S = 300.0  # a server's boot under valgrind (imports at ~1/50 speed)
PROBE_TIMEOUT_S = 120.0  # its first answer under valgrind
REQUEST_TIMEOUT_S = 300.0
STOP_WAIT_S = 120.0  # SIGINT to exit: valgrind writes its last file
IDLE_S = 2.0  # the pause whose cost (uvicorn's 0.1 s tick) is taken off every phase
PAUSE_S = 0.3  # between strace phases: the server idles, so the cut between them is clean
# between requests: the server finishes its work after an answer (a few more turns of its event
# loop) before the next request comes, so each request takes the same turns and polls; without
# it, whether the next request is already there at the loop's next poll is a race
THINK_S = {"callgrind": 0.005, "strace": 0.002}
STRACE_TIMES = 5  # strace runs near native speed: 5x callgrind's requests per phase (up to the cap)


class CountFailed(Exception):
    def __init__(self, reason: str, endpoint: Endpoint | None = None, stderr_tail: str = "") -> None:
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


def targets_for(variants: Sequence[Variant], environments: dict[str, Env], quick: bool,
                inject: Injection = NO_INJECTION) -> list[CountTarget]:  # fmt: skip
    """A target per variant whose environment was built: its quick endpoints, or all of them."""
    return [CountTarget(v, environments[v.env_key], v.selected_endpoints(quick), inject)
            for v in variants if v.env_key in environments]  # fmt: skip


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


@dataclass
class TargetCounts:
    """Everything one target's two boots gave."""

    target: CountTarget
    instruction_phases: list[Phase]
    idle_instructions_per_s: float
    syscall_phases: list[Phase]
    idle_calls_per_wakeup: dict[str, float]

    def instructions(self, endpoint: Endpoint) -> list[float]:
        """Per request, one value per repeat: the phase's count less the idle cost of its time."""
        return [(p.instructions - self.idle_instructions_per_s * p.seconds) / p.requests
                for p in self.instruction_phases if p.endpoint == endpoint]  # fmt: skip

    def syscalls(self, endpoint: Endpoint) -> list[dict[str, float]]:
        """Per request by name, one mapping per repeat, less the idle timer's calls: uvicorn
        wakes every 0.1 s, so their number follows the wall time, not the requests. Each wake-up
        shows as a poll that timed out; what one costs comes from the idle pause."""
        found = []
        for p in (p for p in self.syscall_phases if p.endpoint == endpoint):
            idle = self.idle_calls_per_wakeup
            names = set(p.calls) | set(idle)
            per = {n: (p.calls.get(n, 0) - idle.get(n, 0.0) * p.wakeups) / p.requests for n in names}
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
            }
        return found


def count_target(
    target: CountTarget, out_dir: Path, *, cap: int, repeats: int, say: Callable[[str], None]
) -> TargetCounts:
    """Both boots of one target; raises CountFailed (server stopped) at the first failure."""
    out_dir.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    requests = [Request.of(target.variant, e) for e in target.endpoints]
    say(f"counts: {target.variant.id}: instructions under callgrind")
    cg = _callgrind(target, out_dir / "callgrind.out", requests, cap, repeats)
    say(f"counts: {target.variant.id}: system calls under strace")
    traced = [min(cap, STRACE_TIMES * n) for n in cg.requests]
    st = _strace(target, out_dir / "strace.trace", requests, cg.warmups, traced, repeats)
    counted = TargetCounts(target, cg.phases, cg.idle_per_s, st.phases, st.idle_calls)
    write_json_atomic(out_dir / MANIFEST, counted.manifest())
    say(f"counts: {target.variant.id}: {len(target.endpoints)} endpoint(s) counted in {time.monotonic() - started:.0f} s")
    return counted


def phase_files(target_dir: Path, endpoint_label: str) -> tuple[list[Path], int]:
    """An endpoint's callgrind files in a target's directory and the requests each counted."""
    try:
        entry = json.loads((target_dir / MANIFEST).read_text())[endpoint_label]
    except (OSError, ValueError, KeyError):
        raise FileNotFoundError(f"{target_dir / MANIFEST}: no counts of {endpoint_label!r} there") from None
    return [target_dir / name for name in entry["files"]], int(entry["requests"])


@dataclass
class _Run:
    phases: list[Phase]
    warmups: list[int]
    requests: list[int]
    idle_per_s: float = 0.0  # callgrind: instructions per idle second
    idle_calls: dict[str, float] = field(default_factory=dict)  # strace: calls per timer wake-up


def _boot(target: CountTarget, wrap: list[str]):
    return server.running(
        target.variant, target.env, inject=target.inject, wrap=wrap, wrap_environ=HASH_SEED,
        ready_timeout=READY_S, probe_timeout=PROBE_TIMEOUT_S, interrupt_wait=STOP_WAIT_S,
    )  # fmt: skip


@contextmanager
def _serving(target: CountTarget, wrap: list[str], counter: str) -> Iterator[tuple[server.Server, Client, list[str]]]:
    """The server booted under a counter and one client connection to it; after the block, the
    server must still be alive, and its stderr tail is put in the yielded list (for later errors)."""
    tail: list[str] = []
    try:
        with _boot(target, wrap) as srv:
            client = Client(server.HOST, srv.port, REQUEST_TIMEOUT_S)
            try:
                yield srv, client, tail
            finally:
                client.close()
            if not srv.alive():
                raise CountFailed("server exited during the count", stderr_tail=srv.stderr_tail())
            tail.append(srv.stderr_tail())
    except server.BootError as exc:
        raise CountFailed(f"boot under {counter}: {exc.reason}", stderr_tail=exc.stderr_tail) from None


def _send(srv: server.Server, client: Client, target: CountTarget, index: int, request: Request, times: int,
          think: float = 0.0) -> float:  # fmt: skip
    try:
        return client.send(request, times, think)
    except RequestFailed as exc:
        raise CountFailed(str(exc), target.endpoints[index], srv.stderr_tail()) from None


def _callgrind(target: CountTarget, out_file: Path, requests: Sequence[Request], cap: int, repeats: int) -> _Run:
    for old in out_file.parent.glob(out_file.name + "*"):
        old.unlink()
    dumps: list[tuple[str, float]] = []  # (label, wall-clock midpoint of the dump)

    def dump(label: str) -> None:
        started = time.monotonic()
        try:
            callgrind.dump(srv.pid, label)
        except callgrind.CallgrindError as exc:
            raise CountFailed(str(exc), stderr_tail=srv.stderr_tail()) from None
        dumps.append((label, (started + time.monotonic()) / 2))

    endpoints = target.endpoints
    try:
        with _serving(target, callgrind.wrap(out_file), "callgrind") as (srv, client, tail):
            dump("boot")
            for i, request in enumerate(requests):
                _send(srv, client, target, i, request, plan.PROBE)
                dump(f"probe-{i}")
            probes = [callgrind.read_total(callgrind.dump_file(out_file, 2 + i)) / plan.PROBE
                      for i in range(len(requests))]  # fmt: skip
            warmups = [plan.warmup_for(p, cap) for p in probes]
            for i, request in enumerate(requests):
                _send(srv, client, target, i, request, warmups[i])
                dump(f"warm-{i}")
            first_warm = 2 + len(requests)
            warm = [callgrind.read_total(callgrind.dump_file(out_file, first_warm + i)) / warmups[i]
                    for i in range(len(requests))]  # fmt: skip
            counts = [plan.requests_for(w, cap) for w in warm]
            settles = [plan.settle_for(n) for n in counts]
            for i, request in enumerate(requests):
                _send(srv, client, target, i, request, settles[i])
            dump("settle")  # so the idle pause's dump holds the pause alone
            warmups = [w + s for w, s in zip(warmups, settles, strict=True)]  # strace sends as many
            time.sleep(IDLE_S)
            dump("idle")
            phases = []
            for r in range(repeats):
                for i, request in enumerate(requests):
                    _send(srv, client, target, i, request, counts[i], THINK_S["callgrind"])
                    dump(f"r{r}-{i}")
                    phases.append(Phase(endpoints[i], r, counts[i], dumps[-1][1] - dumps[-2][1]))
    except callgrind.CallgrindError as exc:
        raise CountFailed(str(exc)) from None
    first_phase = 1 + len(dumps) - len(phases)  # dump files are numbered from 1
    try:
        idle = callgrind.read_total(callgrind.dump_file(out_file, first_phase - 1))
        for k, phase in enumerate(phases):
            phase.file = callgrind.dump_file(out_file, first_phase + k)
            read = callgrind.read(phase.file, functions=False)
            if read.trigger.split()[-1] != dumps[first_phase - 1 + k][0]:
                raise CountFailed(f"{phase.file.name} holds dump {read.trigger!r}, want {dumps[first_phase - 1 + k][0]!r}")
            phase.instructions = read.total
    except callgrind.CallgrindError as exc:
        raise CountFailed(str(exc), stderr_tail=tail[0]) from None
    idle_seconds = dumps[first_phase - 2][1] - dumps[first_phase - 3][1]
    return _Run(phases, warmups, counts, idle / idle_seconds)


def _strace(target: CountTarget, trace: Path, requests: Sequence[Request], warmups: Sequence[int],
            counts: Sequence[int], repeats: int) -> _Run:  # fmt: skip
    trace.unlink(missing_ok=True)
    endpoints = target.endpoints
    phases: list[Phase] = []
    windows: list[tuple[float, float]] = []
    with _serving(target, strace.wrap(trace), "strace") as (srv, client, tail):
        for i, request in enumerate(requests):
            _send(srv, client, target, i, request, plan.PROBE + warmups[i])
        time.sleep(PAUSE_S)
        idle_start = time.time()
        time.sleep(IDLE_S)
        windows.append((idle_start, time.time()))
        for r in range(repeats):
            for i, request in enumerate(requests):
                time.sleep(PAUSE_S)
                start = time.time()
                _send(srv, client, target, i, request, counts[i], THINK_S["strace"])
                # the server's last calls of a phase (after its answer was sent) come
                # just after the client has read it: the window ends mid-pause
                end = time.time() + PAUSE_S / 2
                windows.append((start, end))
                phases.append(Phase(endpoints[i], r, counts[i], end - start))
        time.sleep(PAUSE_S)
    try:
        counted = strace.count_windows(strace.calls(trace), windows)
    except strace.StraceError as exc:
        raise CountFailed(str(exc), stderr_tail=tail[0]) from None
    idle = counted[0]
    for phase, window in zip(phases, counted[1:], strict=True):
        phase.calls, phase.wakeups = window.calls, window.wakeups
    # a server with no idle timer has nothing to take off
    idle_calls = {name: calls / idle.wakeups for name, calls in idle.calls.items()} if idle.wakeups else {}
    return _Run(phases, list(warmups), list(counts), idle_calls=idle_calls)
