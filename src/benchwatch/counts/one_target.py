"""One target's counts: its server booted once under callgrind and once under strace, side by
side where cores allow (strace waits for the plan callgrind measures), each served the same fixed sequence (probe,
warm-up, settle, an idle pause, then `repeats` phases of N requests per endpoint, every repeat of
the reads before the writes': plan.counted_order) on one connection; what each phase cost, per
request.

Every counted phase begins with a full garbage collection in the server, asked for over the
counting harness (counts/harness/sitecustomize.py) and left out of the count: the collector then
starts each phase in the same state, so its periodic full passes land alike in every phase.
Measured on posts' read endpoint (2 requests per phase): a range of 1.66 % over 10 phases
without, 0.21 % with (docs/counts.md)."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from benchwatch.counts import callgrind, memory_boot, strace
from benchwatch.counts import request_budget as plan
from benchwatch.counts.allocations import allocations
from benchwatch.counts.counted_server import serve_under_counter
from benchwatch.counts.database_work import DatabaseWork
from benchwatch.counts.stage_clock import StageClock
from benchwatch.counts.statements import PhaseTally
from benchwatch.counts.target_counts import (
    MANIFEST,
    TRACE,
    CountFailed,
    CountTarget,
    Phase,
    TargetCounts,
)
from benchwatch.results.files import write_json_atomic

IDLE_S = 2.0  # the pause whose cost (uvicorn's 0.1 s tick: 20 wake-ups) is taken off every phase, by the tick
# the idle pause of a server whose timer is held: no tick comes, so its count (the harness's hold
# and release) does not depend on its length (attribute's since it began; a compare's was IDLE_S)
QUIET_IDLE_S = 0.5
PAUSE_S = 0.2  # between strace phases: the server idles, so the cut between them is clean
# between requests: the server finishes its work after an answer (a few more turns of its event
# loop) before the next request comes, so each request takes the same turns and polls; without
# it, whether the next request is already there at the loop's next poll is a race
THINK_S = {"callgrind": 0.005, "strace": 0.002}
STAGES = "stages.txt"  # where each boot's wall time went, by stage (counts/stage_clock.py)
# the strace boot beside the callgrind one only where cores are free for it: a compare counts base
# and head at once, two callgrind servers, which fill 2 cores (measured here, 2 cores, load 7-12:
# beside, callgrind's settle and collections ran 2.5x slower than without, docs/counts.md)
SIDE_BY_SIDE = (os.cpu_count() or 1) > 2
STRACE_TIMES = 2  # strace runs near native speed: 2x callgrind's requests per phase (up to the cap)


def count_target(
    target: CountTarget,
    out_dir: Path,
    *,
    cap: int,
    repeats: int,
    say: Callable[[str], None],
    quiet_idle_s: float = QUIET_IDLE_S,
    strace_times: int = STRACE_TIMES,
) -> TargetCounts:
    """Both boots of one target; raises CountFailed (server stopped) at the first failure.
    `quiet_idle_s`: the idle pause of a server whose timer is held (nothing in it depends on its
    length: no tick comes); `strace_times`: strace's requests per phase, in callgrind's."""
    out_dir.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    say(f"counts: {target.variant.id}: instructions under callgrind, system calls under strace")
    # strace serves the sequence callgrind planned (the warm-up and phase sizes it measured); where
    # cores are free (SIDE_BY_SIDE) it boots meanwhile and waits for the plan
    planned: Future[tuple[list[int], list[int]]] = Future()

    def plan_made(warmups: list[int], requests: list[int]) -> None:
        planned.set_result((warmups, [min(cap, strace_times * n) for n in requests]))

    if not SIDE_BY_SIDE:
        cg = _callgrind(target, out_dir / "callgrind.out", cap, repeats, quiet_idle_s, plan_made)
        st = _strace(target, out_dir / TRACE, planned.result, repeats, quiet_idle_s)
    else:
        cg, st = _beside(target, out_dir, cap, repeats, quiet_idle_s, planned, plan_made)
    memory, memory_stages = memory_boot.measure(target, st.phases, st.warmups, st.requests, repeats)
    stages = [f"callgrind {cg.stages}", f"strace {st.stages}", f"memory {memory_stages}"]
    for line in stages:
        say(f"counts: {target.variant.id}: {line}")
    (out_dir / STAGES).write_text("\n".join(stages) + "\n")  # a compare keeps no count log
    counted = TargetCounts(
        target, cg.phases, cg.idle_per_s, st.phases, st.idle_calls, cg.idle_per_tick, cg.idle
    )
    counted.database_plans = st.database_plans
    counted.memory_phases = memory
    counted.idle_allocations = cg.idle_allocations
    write_json_atomic(out_dir / MANIFEST, counted.manifest())
    say(
        f"counts: {target.variant.id}: {len(target.endpoints)} endpoint(s) counted in {time.monotonic() - started:.0f} s"
    )
    return counted


def _beside(
    target: CountTarget,
    out_dir: Path,
    cap: int,
    repeats: int,
    quiet_idle_s: float,
    planned: Future[tuple[list[int], list[int]]],
    plan_made: Callable[[list[int], list[int]], None],
) -> tuple[_Run, _Run]:
    """Both boots at once: strace boots while callgrind does, then waits for callgrind's plan."""
    with ThreadPoolExecutor(max_workers=1) as beside:
        traced = beside.submit(
            _strace, target, out_dir / TRACE, planned.result, repeats, quiet_idle_s
        )
        try:
            cg = _callgrind(
                target, out_dir / "callgrind.out", cap, repeats, quiet_idle_s, plan_made
            )
        except BaseException:
            if not planned.done():  # the strace boot stops too
                planned.set_exception(CountFailed("the callgrind boot failed first"))
            raise
        st = traced.result()
    return cg, st


@dataclass
class _Run:
    phases: list[Phase]
    warmups: list[int]
    requests: list[int]
    idle_per_s: float = 0.0  # callgrind: instructions per idle second
    idle_calls: dict[str, float] = field(default_factory=dict)  # strace: calls per timer wake-up
    idle_per_tick: float | None = None  # callgrind: instructions per timer tick while idle
    idle: float = 0.0  # callgrind: the idle pause's count
    idle_allocations: int | None = None  # callgrind: the idle pause's (counts/allocations.py)
    # strace: the database's plans by statement, when its work was read (counts/database_work.py)
    database_plans: dict[str, str] | None = None
    stages: str = ""  # where the boot's wall time went (StageClock.line)


def _callgrind(
    target: CountTarget,
    out_file: Path,
    cap: int,
    repeats: int,
    quiet_idle_s: float,
    plan_made: Callable[[list[int], list[int]], None],
) -> _Run:
    """Boot (uninstrumented), probe, warm-up, settle (uninstrumented), an idle pause, then the
    counted phases, each after a full collection; a dump after each stage, its label checked
    against its file. `plan_made(warm-up and settle, phase)`: requests per endpoint, once known."""
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
        with clock.during("dumps"):
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
    clock = StageClock("boot")
    try:
        with serve_under_counter(target, callgrind.wrap(out_file), "callgrind") as s:
            requests = s.requests
            clock.switch("probe")
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
            clock.switch("warm-up")
            for i, request in enumerate(requests):
                s.send(i, request, warmups[i])
                dump(f"warm-{i}")
            clock.switch("settle")
            counts = [
                plan.requests_for(total(f"warm-{i}") / warmups[i], cap)
                for i in range(len(requests))
            ]
            settles = [plan.settle_for(n) for n in counts]
            plan_made([w + n for w, n in zip(warmups, settles, strict=True)], counts)
            control(
                lambda: callgrind.instrument(s.srv.pid, False)
            )  # the settle counts nothing: faster
            for i, request in enumerate(requests):
                s.send(i, request, settles[i])
            control(lambda: callgrind.instrument(s.srv.pid, True))
            dump("settle")  # so the idle pause's dump holds the pause alone
            warmups = [w + n for w, n in zip(warmups, settles, strict=True)]  # strace sends as many
            clock.switch("idle")
            time.sleep(quiet_idle_s if s.quiet else IDLE_S)
            idle_seconds = dump("idle")
            for r, i in plan.counted_order([e.method for e in endpoints], repeats):
                clock.switch("collections")
                s.collect()
                dump(f"gc-r{r}-{i}")
                clock.switch("phases")
                s.send(i, requests[i], counts[i], THINK_S["callgrind"])
                phases.append(Phase(endpoints[i], r, counts[i], dump(f"r{r}-{i}")))
                phases[-1].ticks = ticks_between(f"gc-r{r}-{i}", f"r{r}-{i}")
            clock.switch("stop")
            # nothing after the last dump is read: the shutdown (the interpreter's teardown
            # included) runs uninstrumented, several times faster
            control(lambda: callgrind.instrument(s.srv.pid, False))
        tail = s.tail
        clock.switch("read")
    except callgrind.CallgrindError as exc:
        raise CountFailed(str(exc)) from None
    try:
        idle = total("idle")
        idle_allocations = allocations(callgrind.dump_file(out_file, _number(dumps, "idle")))
        for phase in phases:
            label = f"r{phase.repeat}-{endpoints.index(phase.endpoint)}"
            phase.file = callgrind.dump_file(out_file, _number(dumps, label))
            read = callgrind.read(phase.file, functions=False)
            if read.trigger.split()[-1] != label:
                raise CountFailed(f"{phase.file.name} holds dump {read.trigger!r}, want {label!r}")
            phase.instructions = read.total
            phase.allocations = allocations(phase.file)
    except callgrind.CallgrindError as exc:
        raise CountFailed(str(exc), stderr_tail=tail[0]) from None
    idle_ticks = ticks_between("settle", "idle")
    per_tick = idle / idle_ticks if idle_ticks else None
    return _Run(
        phases,
        warmups,
        counts,
        idle / idle_seconds,
        idle_per_tick=per_tick,
        idle=idle,
        idle_allocations=idle_allocations,
        stages=clock.line(),
    )


def _number(dumps: list[tuple[str, float]], label: str) -> int:
    """The file number of a dump (callgrind numbers them from 1, in order)."""
    return 1 + [name for name, _ in dumps].index(label)


def _strace(
    target: CountTarget,
    trace: Path,
    planned: Callable[[], tuple[list[int], list[int]]],
    repeats: int,
    quiet_idle_s: float,
) -> _Run:
    """`planned()`: the warm-up (settle included) and phase requests per endpoint, waited for
    once the server is up."""
    trace.unlink(missing_ok=True)
    endpoints = target.endpoints
    phases: list[Phase] = []
    windows: list[tuple[float, float]] = []
    tally = PhaseTally()  # SQL statements, read between the windows (counts/statements.py)
    clock = StageClock("boot")
    with serve_under_counter(target, strace.wrap(trace), "strace") as s:
        requests = s.requests
        database = DatabaseWork.of(s.srv)  # PostgreSQL's own work per phase, read from outside
        clock.switch("waiting for the plan")
        warmups, counts = planned()
        clock.switch("warm-up")
        for i, request in enumerate(requests):
            s.send(i, request, plan.PROBE + warmups[i])
        clock.switch("idle")
        time.sleep(PAUSE_S)
        idle_start = time.time()
        time.sleep(quiet_idle_s if s.quiet else IDLE_S)
        windows.append((idle_start, time.time()))
        for r, i in plan.counted_order([e.method for e in endpoints], repeats):
            clock.switch("collections")
            time.sleep(PAUSE_S)  # the last window ends mid-pause: its tail stays clear
            s.collect()  # between windows: the collection's calls (and the harness's) fall outside
            tally.take(s)  # the last phase's statements (before the first: the warm-up's, left out)
            if database is not None:
                database.start()
            time.sleep(PAUSE_S / 2)
            clock.switch("phases")
            start = time.time()
            s.send(i, requests[i], counts[i], THINK_S["strace"])
            # the server's last calls of a phase (after its answer was sent) come
            # just after the client has read it: the window ends mid-pause
            end = time.time() + PAUSE_S / 2
            windows.append((start, end))
            phases.append(Phase(endpoints[i], r, counts[i], end - start))
            if database is not None:
                time.sleep(max(0.0, end - time.time()))
                database.stop()
                phases[-1].database = database.phases[-1]
        time.sleep(PAUSE_S)
        tally.take(s)
        clock.switch("database plans")
        plans = database.plans() if database is not None else None
        clock.switch("stop")
    tally.assign(phases)
    clock.switch("read")
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
    return _Run(
        phases,
        list(warmups),
        list(counts),
        idle_calls=idle_calls,
        database_plans=plans,
        stages=clock.line(),
    )
