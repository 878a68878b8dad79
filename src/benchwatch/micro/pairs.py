"""Micro-benchmark timings of two sides as pairs. In every round a fresh pair of runner
processes (micro/runner.py `serve`: asv's `time_` cases built as asv builds them), one per
side, both pinned to one core, time the same case for the same number of calls in short batches
that alternate between the sides (A B, B A, A B, …). A case's batches are spread over the whole
round (one batch of every case, then the next), and a round's sample per side is its fastest
batch: this host runs a process 1.6x slower for tens of milliseconds to seconds at a time, and
a side whose batches were bunched into one 100 ms stretch could spend all of them there while the
other side did not (README, "Micro timings"; scripts/slow_stretches.py). Round i of base and
round i of head saw the same second of the host and neither side always goes first; and each
round is a new pair of processes, so the few per cent by which two processes of the same code
can differ for their whole life (memory layout) is sampled by the rounds, not carried through
all of them. Duet benchmarking (Bulej et al., ICPE 2020) runs the sides at the same moment on
two cores instead; on this 2-vCPU VM that was measured and was worse (README: "Micro timings"):
another process on one vCPU, or steal time, slows one side and not the other."""

from __future__ import annotations

import json
import os
import random
import signal
import statistics
import subprocess
import tempfile
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from benchwatch.declarations.stacks import Stack
from benchwatch.figures.figure_key import micro_key, variant_id
from benchwatch.measure.collect import half_iqr
from benchwatch.micro.cases import RUNNER, Case, RunnerError, discover, runner_env, select
from benchwatch.micro.figures import TIME_UNIT, case_identity
from benchwatch.results.schema import Figure, Problem

# with 12 quick rounds, real 2-3 % changes were flagged one way and not the other (README)
QUICK_ROUNDS, FULL_ROUNDS = 20, 30
QUICK_SAMPLE_S, FULL_SAMPLE_S = 0.05, 0.1  # one side's timing of one case in one round
# a round's sample is the fastest of this many batches (together SAMPLE_S): a batch that shared
# its core with another process, or a hyperthread with a busy sibling, is slower, never faster.
# 6 batches of a case back to back: A/A rounds read up to 1.56x apart; 6 spread over the
# round: at most 1.12x; 10 spread: at most 1.09x (README, "Micro timings")
BATCHES = 10
MAX_CALLS = 100_000
REPLY_TIMEOUT_S = 120  # one batch; a case slower than this is not a micro-benchmark
SETUP_TIMEOUT_S = 600  # building every case (asv's setup) and checking it


@dataclass(frozen=True)
class Player:
    """One side: a stack's interpreter and the benchmark package it times."""

    role: str
    stack: Stack
    python: Path
    benchmark_dir: Path
    extra_env: Mapping[str, str] | None = None


class PairsError(Exception):
    """A runner that did not start, answer or parse: the timing of that stack pair stops."""


class Runner:
    """One `runner.py serve` process of a side: started, pinned, asked, answered (a silent one is
    killed after a timeout, said), closed. Also used by scripts/slow_stretches.py."""

    def __init__(self, player: Player, cases: Sequence[Case]) -> None:
        spec = json.dumps({"cases": [[c.key, c.combo] for c in cases]})
        argv = [str(player.python), str(RUNNER), "serve", str(player.benchmark_dir), spec]
        self.player = player
        self.errors = tempfile.TemporaryFile()  # a file, not a pipe: nobody reads it until the end
        self.process = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.errors,
            text=True,
            env=runner_env(player.extra_env),
            cwd=player.benchmark_dir.parent,
            bufsize=1,
        )

    def pin(self, core: int | None) -> None:
        if core is not None:
            try:
                os.sched_setaffinity(self.process.pid, {core})
            except ProcessLookupError:
                pass  # already gone: its next answer says why

    def send(self, line: str) -> None:
        assert self.process.stdin is not None
        try:
            self.process.stdin.write(line + "\n")
            self.process.stdin.flush()
        except BrokenPipeError:
            raise PairsError(self._died(0)) from None

    def receive(self, timeout: float | None = None) -> str:
        """The runner's next line; a runner silent for `timeout` seconds (default
        REPLY_TIMEOUT_S) is killed (said)."""
        assert self.process.stdout is not None
        timeout = timeout or REPLY_TIMEOUT_S
        watchdog = threading.Timer(timeout, self.process.kill)
        watchdog.start()
        try:
            line = self.process.stdout.readline()
        finally:
            watchdog.cancel()
        if not line:
            raise PairsError(self._died(timeout))
        return line.strip()

    def _died(self, timeout: float) -> str:
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        if self.process.returncode == -signal.SIGKILL:
            return f"{self.player.role} runner ({self.player.stack.name}) gave no answer in {timeout:g} s"
        self.errors.seek(0)
        tail = " | ".join(self.errors.read().decode(errors="replace").strip().splitlines()[-3:])
        return f"{self.player.role} runner ({self.player.stack.name}) exited {self.process.returncode}: {tail}"

    def close(self) -> None:
        if self.process.poll() is None:
            try:
                self.send("quit")
                self.process.wait(timeout=10)
            except (PairsError, subprocess.TimeoutExpired, OSError):
                self.process.kill()
                self.process.wait()
        for stream in (self.process.stdin, self.process.stdout, self.errors):
            if stream is not None:
                stream.close()


def timing_core() -> int | None:
    """The core both runners of a round share: the last this process may use (the server core
    of a load run), or None where affinity cannot be set."""
    if not hasattr(os, "sched_getaffinity"):
        return None
    return sorted(os.sched_getaffinity(0))[-1]


def time_cases(
    base: Player,
    head: Player,
    *,
    patterns: Sequence[str] = (),
    within: Sequence[str] = (),
    quick: bool = True,
    rounds: int | None = None,
    sample_seconds: float | None = None,
    log: Callable[[str], None] | None = None,
) -> tuple[list[Figure], list[Figure], list[Problem]]:
    """Base's and head's figures (one sample per round, paired by index) for every case both
    sides have, and every problem: discovery, a case failing on one side, a runner that dies."""
    say = log or (lambda line: None)
    rounds = rounds or (QUICK_ROUNDS if quick else FULL_ROUNDS)
    sample_seconds = sample_seconds or (QUICK_SAMPLE_S if quick else FULL_SAMPLE_S)
    problems: list[Problem] = []
    found: dict[str, list[Case]] = {}
    for player in (base, head):
        try:
            found[player.role] = select(
                discover(player.python, player.benchmark_dir, runner_env(player.extra_env)),
                patterns,
                within,
            )
        except RunnerError as exc:
            problems.append(
                Problem(
                    variant=variant_id("micro", player.stack.name), phase="micro", reason=str(exc)
                )
            )
    if problems:
        return [], [], problems
    head_names = {c.name for c in found[head.role]}
    cases = [c for c in found[base.role] if c.name in head_names]  # one side only: nothing to pair
    if not cases:
        return [], [], []
    pairs = _Pairs(base, head, cases)
    try:
        return _play(pairs, cases, rounds, sample_seconds, say, problems)
    except PairsError as exc:
        problems.append(
            Problem(
                variant=variant_id("micro", base.stack.name),
                phase="micro",
                reason=f"micro timing stopped: {exc}",
            )
        )
        return [], [], problems
    finally:
        pairs.close()


class _Pairs:
    """A fresh pair of runners for every round: two processes of one interpreter differ by a few
    per cent for as long as they live (their memory layout; measured: one A/A pair read 0.937 in
    all 12 rounds), so the rounds sample that difference instead of carrying one. The next pair
    starts on the other cores while this one is timed on the timing core."""

    def __init__(self, base: Player, head: Player, cases: Sequence[Case]) -> None:
        self.players, self.cases = (base, head), cases
        self.core = timing_core()
        others = sorted(os.sched_getaffinity(0) - {self.core}) if self.core is not None else []
        self.park = others[0] if others else None
        self.current: list[Runner] = []
        self.pending = self._start()

    def _start(self) -> list[Runner]:
        runners = [Runner(player, self.cases) for player in self.players]
        for runner in runners:
            runner.pin(self.park)
        return runners

    def next(self, more: bool) -> tuple[list[Runner], list[dict]]:
        """The pending pair, ready and on the timing core, with its reports; starts the one
        after it when `more`."""
        self.close_current()
        self.current, self.pending = self.pending, []
        reports = []
        for runner in self.current:
            try:
                reports.append(json.loads(runner.receive(SETUP_TIMEOUT_S)))
            except ValueError as exc:
                raise PairsError(
                    f"{runner.player.role} runner: unreadable report ({exc})"
                ) from None
        for runner in self.current:
            runner.pin(self.core)
        if more:
            self.pending = self._start()
        return self.current, reports

    def close_current(self) -> None:
        for runner in self.current:
            runner.close()
        self.current = []

    def close(self) -> None:
        self.close_current()
        for runner in self.pending:
            runner.close()
        self.pending = []


def _play(
    pairs: _Pairs,
    cases: list[Case],
    rounds: int,
    sample_seconds: float,
    say: Callable[[str], None],
    problems: list[Problem],
) -> tuple[list[Figure], list[Figure], list[Problem]]:
    working: list[tuple[int, Case, int]] = []
    samples: dict[int, list[list[float]]] = {}
    for round_index in range(rounds):
        runners, reports = pairs.next(more=round_index + 1 < rounds)
        if round_index == 0:
            working = _working(runners, reports, cases, sample_seconds, problems)
            samples = {index: [[], []] for index, _, _ in working}
            say(
                f"micro: {len(working)} cases, {rounds} rounds (a fresh pair of processes each) of "
                f"{BATCHES} alternating batches per side"
            )
        else:
            lost = [
                case.name
                for _, case, _ in working
                if not all(case.ident in rep["seconds"] for rep in reports)
            ]
            if lost:
                raise PairsError(
                    f"round {round_index + 1}: {', '.join(lost)} failed where it had worked"
                )
        order = list(working)
        random.Random(round_index).shuffle(order)
        fastest = {index: [float("inf"), float("inf")] for index, _, _ in working}
        for b in range(BATCHES):  # a case's batches spread over the whole round, not bunched
            for index, _case, calls in order:
                timed = _alternate(runners, f"{index} {calls} 1", first=(round_index + b) % 2)
                for side, seconds in enumerate(timed):
                    fastest[index][side] = min(fastest[index][side], seconds)
        for index, _case, calls in working:
            for side in (0, 1):
                samples[index][side].append(fastest[index][side] / calls / 1e-6)  # µs per call
    base_figures: list[Figure] = []
    head_figures: list[Figure] = []
    for index, case, calls in working:
        how = (
            f"{rounds} rounds, each a fresh pair of processes, a sample the fastest of {BATCHES} "
            f"batches of {calls} calls spread over the round, alternating with the other side's "
            "on one core"
        )
        for side, into in enumerate((base_figures, head_figures)):
            into.append(_figure(pairs.players[side].stack, case, samples[index][side], how))
    return base_figures, head_figures, problems


def _working(
    runners: list[Runner],
    reports: list[dict],
    cases: list[Case],
    sample_seconds: float,
    problems: list[Problem],
) -> list[tuple[int, Case, int]]:
    """(index, case, calls per batch) of the cases that work on both sides; the others' failures
    become problems."""
    working = []
    for index, case in enumerate(cases):
        ident = case.ident
        broken = [
            (r.player, rep["failed"][ident])
            for r, rep in zip(runners, reports, strict=True)
            if ident in rep["failed"]
        ]
        problems += [
            Problem(
                variant=variant_id("micro", p.stack.name),
                phase="micro",
                endpoint=case.name,
                reason=f"fails natively: {why}",
            )
            for p, why in broken
        ]
        if not broken and all(ident in rep["seconds"] for rep in reports):
            slowest = max(rep["seconds"][ident] for rep in reports)
            calls = round(sample_seconds / BATCHES / max(slowest, 1e-9))
            working.append((index, case, max(1, min(MAX_CALLS, calls))))
    return working


def _alternate(runners: list[Runner], request: str, first: int) -> list[float]:
    """Seconds each runner took for `request`, one after the other, `first` going first."""
    replies = ["", ""]
    for side in (first, 1 - first):
        runners[side].send(request)
        replies[side] = runners[side].receive()
    values = []
    for runner, reply in zip(runners, replies, strict=True):
        if reply.startswith("error"):
            raise PairsError(f"{runner.player.role} ({runner.player.stack.name}): {reply[6:]}")
        try:
            values.append(float(reply))
        except ValueError:
            raise PairsError(f"{runner.player.role} runner answered {reply[:80]!r}") from None
        if values[-1] <= 0:
            raise PairsError(
                f"{runner.player.role} runner timed 0 s; its timer is too coarse for {request}"
            )
    return values


def _figure(stack: Stack, case: Case, samples: list[float], how: str) -> Figure:
    """The name asv's figure of the same case has (`micro services validate_json@latest`), so
    floors and labels are shared."""
    scenario, params = case_identity(list(case.labels), default_scenario="micro")
    return Figure(
        name=micro_key(case.labels, case.operation, stack.name, scenario=scenario).name,
        kind="micro",
        variant=variant_id(scenario, stack.name),
        scenario=scenario,
        stack=stack.name,
        metric=case.operation,
        unit=TIME_UNIT,
        bigger_is_better=False,
        samples=samples,
        value=statistics.median(samples),
        spread=half_iqr(samples),
        params=params,
        note=f"{how}; {case.name}",
        micro_case=case.name,
    )
