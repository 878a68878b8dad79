"""Instructions per call of every selected asv `time_` case under cachegrind, per stack.

One valgrind process per group of cases (runner.py fork): the parent builds the cases and calls
each N times; forked children, one per case and repetition, call it N times more, and base
children call nothing. (child - base) / N is the case's instructions per call: interpreter
start-up, imports and fixtures cancel out, and are paid once per group rather than per count.
A group whose process fails is split and each case counted alone, so a case that crashes under
valgrind is reported and the others go on.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable, Collection, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from benchwatch.declarations.stacks import Stack
from benchwatch.figures.figure_key import micro_key, variant_id
from benchwatch.measure import inject
from benchwatch.micro import cachegrind
from benchwatch.micro.cases import Case, RunnerError, check, discover, plan_argv, runner_env, select
from benchwatch.micro.figures import case_identity
from benchwatch.results.schema import Figure, Problem

# N, the same for every case and run: the instructions per call drift a little with the number
# of calls made (0.25 % between N = 50 and 1000 for services validate_json), so an N picked by
# the host's speed would move the figures. A multiple of 50: a 2 % injection is whole calls.
DEFAULT_CALLS = 100
DEFAULT_REPEATS, QUICK_REPEATS = 3, 2
GROUP_SIZE = 8  # cases sharing one valgrind process
JOBS = 2  # valgrind processes (children) running at once
VALGRIND_TIMEOUT_S = 1800
UNIT = "instructions"
COUNTER_PARAM = ("counter", "instructions")  # keeps these apart from the timing figures


class CountFailed(Exception):
    """A valgrind process that did not finish, or a child without a readable total."""


def per_call(extra: int, calls: int) -> float | None:
    """Instructions per call from the extra instructions of N more calls; None when the count
    did not grow with N (not monotone: such a figure is invalid and never published)."""
    return extra / calls if extra > 0 else None


@dataclass(frozen=True)
class Target:
    stack: Stack
    python: Path
    cases: tuple[Case, ...]
    calls: tuple[int, ...]  # N per case


@dataclass
class _Counter:
    benchmark_dir: Path
    work: Path
    env: Mapping[str, str]
    repeats: int
    jobs: int
    slots: threading.BoundedSemaphore

    def group(self, target: Target, cases: Sequence[Case]) -> dict[Case, list[int]]:
        """Per case, per repetition: the instructions of N more calls."""
        calls = [target.calls[target.cases.index(c)] for c in cases]
        out = Path(tempfile.mkdtemp(prefix="group-", dir=self.work))
        argv = plan_argv(
            target.python,
            self.benchmark_dir,
            "fork",
            cases,
            calls=calls,
            repeats=self.repeats,
            jobs=self.jobs,
        )
        with self.slots:  # one group at a time per slot: its children take `jobs` cores
            try:
                done = subprocess.run(
                    cachegrind.command(argv, out / "cg.%p"),
                    capture_output=True,
                    text=True,
                    env=dict(self.env),
                    cwd=self.benchmark_dir.parent,
                    timeout=VALGRIND_TIMEOUT_S,
                )
            except subprocess.TimeoutExpired:
                raise CountFailed(f"valgrind took longer than {VALGRIND_TIMEOUT_S} s") from None
        tail = [ln for ln in done.stderr.strip().splitlines() if not ln.startswith(("==", "--"))]
        if done.returncode != 0:
            raise CountFailed(f"exit {done.returncode} under valgrind: {' | '.join(tail[-2:])}")
        children = json.loads(done.stdout.strip().splitlines()[-1])["children"]
        if any(child["exit"] != 0 for child in children):
            raise CountFailed(f"a counting child failed under valgrind: {' | '.join(tail[-2:])}")
        try:
            totals = [cachegrind.read_total(out / f"cg.{child['pid']}") for child in children]
        except cachegrind.CachegrindError as exc:
            raise CountFailed(str(exc)) from None
        per_fork = (totals[-1] - totals[0]) / (len(totals) - 1)  # base children first and last
        found: dict[Case, list[int]] = {case: [] for case in cases}
        for k, child in enumerate(children[1:-1], start=1):
            extra = round(totals[k] - totals[0] - k * per_fork)
            found[cases[child["case"]]].append(extra)
        return found


def _count_target(
    counter: _Counter, target: Target, say: Callable[[str], None]
) -> tuple[dict[Case, list[float]], list[Problem]]:
    variant = variant_id("micro", target.stack.name)
    groups = [target.cases[i : i + GROUP_SIZE] for i in range(0, len(target.cases), GROUP_SIZE)]
    counted: dict[Case, list[float]] = {}
    problems: list[Problem] = []
    for group in groups:
        try:
            extras = counter.group(target, group)
        except CountFailed as exc:
            if len(group) == 1:
                problems.append(
                    Problem(
                        variant=variant,
                        phase="micro",
                        endpoint=group[0].name,
                        reason=f"instruction count failed: {exc}",
                    )
                )
                continue
            say(
                f"instructions: {target.stack.name}: a group failed ({exc}); counting its cases one by one"
            )
            groups += [(case,) for case in group]  # the loop reaches them after the others
            continue
        for case in group:
            calls = target.calls[target.cases.index(case)]
            values = [per_call(extra, calls) for extra in extras[case]]
            if not values:
                problems.append(
                    Problem(
                        variant=variant,
                        phase="micro",
                        endpoint=case.name,
                        reason="not counted: setup skipped it under valgrind",
                    )
                )
                continue
            if any(v is None for v in values):
                problems.append(
                    Problem(
                        variant=variant,
                        phase="micro",
                        endpoint=case.name,
                        reason=f"instruction count not monotone in N ({extras[case]} more for "
                        f"{calls} more calls); not published",
                    )
                )
                continue
            counted[case] = [float(v) for v in values if v is not None]
    return counted, problems


def figure(stack: Stack, case: Case, samples: list[float], calls: int, note: str = "") -> Figure:
    """`micro services validate_json instructions@latest`: the timing figure's name and params
    (micro/figures.py) with the counter added."""
    scenario, params = case_identity(list(case.labels), default_scenario="micro")
    params[COUNTER_PARAM[0]] = COUNTER_PARAM[1]
    return Figure(
        name=micro_key(
            case.labels, case.operation, stack.name, instructions=True, scenario=scenario
        ).name,
        kind="micro",
        variant=variant_id(scenario, stack.name),
        scenario=scenario,
        stack=stack.name,
        metric=case.operation,
        unit=UNIT,
        bigger_is_better=False,
        samples=samples,
        value=statistics.median(samples),
        spread=(max(samples) - min(samples)) / 2,
        params=params,
        note=" ".join(p for p in (f"cachegrind {case.name}, N={calls}", note) if p),
    )


def count_instructions(
    stacks: Sequence[Stack],
    *,
    benchmark_dir: Path,
    patterns: Sequence[str] = (),
    within: Sequence[str] = (),
    repeats: int = DEFAULT_REPEATS,
    calls: int = DEFAULT_CALLS,
    extra_env: Mapping[str, str] | None = None,
    jobs: int = JOBS,
    log: Callable[[str], None] | None = None,
    python_for: Callable[[Stack], Path] | None = None,
    leave_out: Collection[str] = (),
) -> tuple[list[Figure], list[Problem]]:
    """Instruction figures for the cases matching `patterns` (and `within`) on every stack, and
    every problem: valgrind missing (one problem, no figures), env build, discovery, a case that
    fails natively or under valgrind, counts not monotone in N. NotImplementedError in setup is
    asv's skip: no figure, no problem. `calls` is N (default DEFAULT_CALLS). `python_for` gives a
    stack's interpreter (default: its uv environment, built or reused). `leave_out`: cases not
    to count, by their short name (`payloads-1MB validate_json`)."""
    from benchwatch.environments.envs import EnvError, ensure

    say = log or (lambda line: print(line, file=sys.stderr, flush=True))
    missing = cachegrind.unavailable_reason()
    if missing:
        return [], [Problem(variant="micro", phase="micro", reason=missing)]
    env = runner_env(extra_env)
    targets: list[Target] = []
    problems: list[Problem] = []
    for stack in stacks:
        variant = variant_id("micro", stack.name)
        try:
            python = python_for(stack) if python_for else ensure(stack).python
            found = [
                c
                for c in select(discover(python, benchmark_dir, env), patterns, within)
                if c.short not in leave_out
            ]
            checked = check(python, benchmark_dir, found, env) if found else None
        except (EnvError, RunnerError) as exc:
            phase = "env" if isinstance(exc, EnvError) else "micro"
            problems.append(Problem(variant=variant, phase=phase, reason=str(exc)))
            continue
        if checked is None:
            continue
        problems += [
            Problem(
                variant=variant, phase="micro", endpoint=c.name, reason=f"fails natively: {why}"
            )
            for c, why in checked.failed.items()
        ]
        if checked.working:
            ns = tuple(calls for _ in checked.working)
            targets.append(Target(stack, python, tuple(checked.working), ns))
    with tempfile.TemporaryDirectory(prefix="benchwatch-cg-") as work:
        # `jobs` processes at once: groups side by side, or one group's children side by side
        groups = sum(-(-len(t.cases) // GROUP_SIZE) for t in targets)
        side_by_side = max(1, min(jobs, groups))
        counter = _Counter(
            benchmark_dir,
            Path(work),
            env,
            repeats,
            max(1, jobs // side_by_side),
            threading.BoundedSemaphore(side_by_side),
        )
        for target in targets:
            say(
                f"instructions: {len(target.cases)} cases on {target.stack.name}, {repeats} repetitions"
            )
        with ThreadPoolExecutor(max_workers=max(1, len(targets))) as pool:
            results = list(pool.map(lambda t: _count_target(counter, t, say), targets))
    note = inject.micro_note(extra_env)  # TESTING ONLY: measure/inject.py
    figures: list[Figure] = []
    for target, (counted, trouble) in zip(targets, results, strict=True):
        for case, samples in counted.items():
            n = target.calls[target.cases.index(case)]
            figures.append(figure(target.stack, case, samples, n, note))
        problems += trouble
    return figures, problems


def quick_patterns(root: Path) -> list[str]:
    """`benchwatch micro --quick`'s cases (its timed ones: track_ benchmarks count nothing)."""
    from benchwatch.micro import asv as micro

    return micro.quick_patterns(root, track=False)
