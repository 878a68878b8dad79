"""Base and head measured round by round: load tests side by side (both servers at once, see
measure/rounds.py), micro-benchmark timings in alternating batches (micro/pairs.py)."""

from __future__ import annotations

import dataclasses
import re
import statistics
import sys
import time
from collections.abc import Callable, Collection, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from benchwatch.compare.sides import Side
from benchwatch.figures.figure_key import SIDE_BY_SIDE as SIDE_BY_SIDE_TAG
from benchwatch.figures.figure_key import app_of, decode, variant_id
from benchwatch.measure import inject
from benchwatch.measure.collect import Collector, half_iqr, slots_for
from benchwatch.measure.load import fill_run
from benchwatch.measure.load_plan import FULL, QUICK, LoadPlan
from benchwatch.measure.rig import Rig, Track
from benchwatch.measure.rounds import run_rounds
from benchwatch.measure.session import start_run
from benchwatch.micro.asv import has_benchmarks
from benchwatch.micro.figures import TIME_UNIT
from benchwatch.micro.pairs import QUICK_ROUNDS
from benchwatch.progress import Progress
from benchwatch.project.apps import is_own_stack
from benchwatch.project.variants import select_figures
from benchwatch.results.files import write_run
from benchwatch.results.schema import Environment, Figure, Problem, Run

# the fewest paired rounds whose signed-rank interval can exclude 1 at 95 % (all six the same
# way: p = 2/64); a PR's counts gate first, so its timings need not be sharper than that. A full
# compare keeps 8. calibration.json's load floors are measured for COMPARE_QUICK_ROUNDS.
COMPARE_QUICK_ROUNDS = 6
COMPARE_FULL_ROUNDS = 8
QUICK_DURATION = (
    1.5  # closed-loop seconds per endpoint and round (calibration.json measured with it)
)


def compare_plan(quick: bool, rounds: int | None) -> LoadPlan:
    if quick:
        return dataclasses.replace(
            QUICK, rounds=rounds or COMPARE_QUICK_ROUNDS, duration=QUICK_DURATION
        )
    return dataclasses.replace(FULL, rounds=rounds or COMPARE_FULL_ROUNDS)


def side_track(side: Side) -> Track:
    """One side's stream of results. Its figures are named '(side by side)': they must not meet
    a trend of figures measured alone under the same name (two servers share the core)."""
    return Track(
        slots_for(side.variants, None),
        Collector(name_tag=SIDE_BY_SIDE_TAG),
        role=side.role,
        steps=side.steps(),
    )


def measure_base_and_head(
    rig: Rig,
    base: Side,
    head: Side,
    out_dir: Path,
    environment: Environment,
    *,
    failed_stacks: dict[str, str],
    quiet: bool = False,
) -> tuple[Run, Run]:
    """A compare's load rounds: base and head side by side in every round; each side's run.json
    (`<role>-load/`) rewritten after every step."""
    sides = (base, head)
    tracks = [side_track(side) for side in sides]
    runs = [start_run(["compare", side.role], environment) for side in sides]
    for track, run in zip(tracks, runs, strict=True):
        track.fail_stacks(failed_stacks)
        run.environment.record_environments(rig.environments)

    def checkpoint(complete: bool) -> None:
        for side, track, run in zip(sides, tracks, runs, strict=True):
            fill_run(run, rig, track, complete=complete)
            write_run(out_dir / f"{side.role}-load", run)

    progress = Progress(rig.plan.rounds * len(tracks[0].slots), quiet=quiet)
    run_rounds(rig, tracks, progress=progress, after_step=lambda: checkpoint(False))
    checkpoint(True)
    return runs[0], runs[1]


# paired rounds of a compare's micro timings (micro/pairs.py: 20 with --quick, 30 without):
# room for the signed-rank interval to exclude a 2 % change
MICRO_ROUNDS = QUICK_ROUNDS
# --quick counts the instructions of cases faster than this per call only: under valgrind a
# payloads-1MB case takes minutes (a full compare counts them all)
QUICK_INSTRUCTIONS_MAX_US = 1000.0
# peak-memory benchmarks (full compares only) stay with asv, one process per side and round,
# alternating: memory does not drift with the host's speed
MEMORY_ROUNDS = 6
_MEMORY_BENCH = r"\.peakmem_"


@dataclass
class MicroResult:
    base: list[Figure] = field(default_factory=list)
    head: list[Figure] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    instructions_unavailable: str | None = None  # why there are no instruction counts
    notes: list[str] = field(default_factory=list)  # what was left out, and why


def measure_micro(
    base: Side,
    head: Side,
    quick: bool,
    rounds: int | None,
    patterns: str | None,
    out_dir: Path,
    *,
    instructions: bool = True,
    cases: Sequence[str] = (),
) -> MicroResult:
    """Micro timings of the selected scenarios' asv cases, base and head timed in alternating batches
    (micro/pairs.py), then (full compares) asv's peak-memory benchmarks in alternating rounds,
    then instruction counts of the timed cases under cachegrind. `rounds`: paired rounds (default
    MICRO_ROUNDS quick, micro_pairs.FULL_ROUNDS otherwise); head's benchmarks repeat a fraction of
    their calls when measure/inject.py says so (TESTING ONLY). `cases`: only these asv cases
    (their full names), timed only (a confirmation round: compare/confirm.py)."""
    from benchwatch.environments.envs import EnvError, ensure
    from benchwatch.micro.instructions import quick_patterns
    from benchwatch.micro.pairs import Player, time_cases

    if not all(_micro_stacks(side) and has_benchmarks(side.project.root) for side in (base, head)):
        print(
            "micro: skipped (no asv benchmarks/ folder in the project, or only apps with their own "
            "requirements)",
            file=sys.stderr,
        )
        return MicroResult()
    envs_of = inject.active().micro_environ()  # TESTING ONLY
    within = _scenario_filter(base, head)
    result = MicroResult()
    for base_stack, head_stack in _stack_pairs(base, head):
        players = []
        for side, stack in ((base, base_stack), (head, head_stack)):
            try:
                python = ensure(stack).python
            except EnvError as exc:
                result.problems.append(
                    Problem(variant=variant_id("micro", stack.name), phase="env", reason=str(exc))
                )
                continue
            players.append(
                Player(
                    side.role, stack, python, side.project.root / "benchmarks", envs_of[side.role]
                )
            )
        if len(players) < 2:
            continue
        chosen = [f"^{re.escape(name)}$" for name in cases] or (
            quick_patterns(base.project.root) if quick else ()
        )
        found_base, found_head, trouble = time_cases(
            *players,
            patterns=chosen,
            within=within,
            quick=quick,
            rounds=rounds,
            log=lambda line: print(line, file=sys.stderr, flush=True),
        )
        result.base += select_figures(found_base, patterns)
        result.head += select_figures(found_head, patterns)
        result.problems += trouble
    if cases:
        return result
    if not quick:
        _asv_memory(base, head, patterns, out_dir, envs_of, result)
    if instructions:
        slow = _slow_cases(result.base + result.head) if quick else []
        if slow:
            result.notes.append(
                f"instruction counts left out in --quick for the cases slower than "
                f"{QUICK_INSTRUCTIONS_MAX_US / 1000:g} ms per call ({', '.join(slow)}); "
                "a full compare counts them"
            )
        _count_instructions(
            base, head, quick, patterns, within, envs_of, result, leave_out=set(slow)
        )
    return result


def _slow_cases(timed: list[Figure]) -> list[str]:
    """The short names (`payloads-1MB validate_json`) of timed cases slower than
    QUICK_INSTRUCTIONS_MAX_US per call on either side."""
    keys = [
        decode(f.name) for f in timed if f.unit == TIME_UNIT and f.value > QUICK_INSTRUCTIONS_MAX_US
    ]
    return sorted({key.figure for key in keys if key is not None})


def _scenario_filter(base: Side, head: Side) -> list[str]:
    """asv case regexes for the scenarios of the sides' variants (a case's first parameter is its
    scenario, `payloads-1MB` included)."""
    apps = sorted({app_of(v.scenario) for side in (base, head) for v in side.variants})
    return [rf"\('({'|'.join(apps)})(-[^']*)?'\)"] if apps else []


def _stack_pairs(base: Side, head: Side) -> list[tuple]:
    """Which stack of base is timed against which of head: a stack side's one stack against the
    other's; ref sides, each stack their variants use against the same stack on the other ref."""
    if base.kind == "stack" or head.kind == "stack":
        return [(_micro_stacks(base)[0], _micro_stacks(head)[0])]
    heads = {stack.name: stack for stack in _micro_stacks(head)}
    return [(stack, heads[stack.name]) for stack in _micro_stacks(base) if stack.name in heads]


def _asv_memory(
    base: Side, head: Side, patterns: str | None, out_dir: Path, envs_of: dict, result: MicroResult
) -> None:
    """asv's peakmem_ benchmarks, one asv process per side and round, alternating (A B A B …)."""
    from benchwatch.micro.asv import run_micro

    samples: dict[str, dict[str, Figure]] = {"base": {}, "head": {}}
    for round_index in range(MEMORY_ROUNDS):
        for side in (base, head):
            found, trouble = run_micro(
                _micro_stacks(side),
                _MEMORY_BENCH,
                False,
                out_dir / f"micro-{side.role}-{round_index}",
                root=side.project.root,
                rounds=1,
                publish=False,
                extra_env=envs_of[side.role],
            )
            result.problems += trouble if round_index == 0 else []
            for figure in found:
                one = statistics.median(figure.samples)
                earlier = samples[side.role].get(figure.name)
                kept = (earlier.samples if earlier else []) + [one]
                samples[side.role][figure.name] = figure.model_copy(
                    update={
                        "samples": kept,
                        "value": statistics.median(kept),
                        "spread": half_iqr(kept),
                    }
                )
    result.base += select_figures(list(samples["base"].values()), patterns)
    result.head += select_figures(list(samples["head"].values()), patterns)


def _count_instructions(
    base: Side,
    head: Side,
    quick: bool,
    patterns: str | None,
    within: list[str],
    envs_of: dict,
    result: MicroResult,
    leave_out: Collection[str] = frozenset(),
) -> None:
    """Instructions per call of the cases of the selected scenarios, one side after the other
    (a count does not depend on what else the machine does)."""
    from benchwatch.micro.cachegrind import unavailable_reason
    from benchwatch.micro.instructions import (
        DEFAULT_REPEATS,
        QUICK_REPEATS,
        count_instructions,
        quick_patterns,
    )

    result.instructions_unavailable = unavailable_reason()
    if result.instructions_unavailable:
        return
    for side in (base, head):
        found, trouble = count_instructions(
            _micro_stacks(side),
            benchmark_dir=side.project.root / "benchmarks",
            patterns=quick_patterns(side.project.root) if quick else (),
            within=within,
            repeats=QUICK_REPEATS if quick else DEFAULT_REPEATS,
            extra_env=envs_of[side.role],
            leave_out=leave_out,
            log=lambda line: None,
        )
        getattr(result, side.role).extend(select_figures(found, patterns))
        result.problems += trouble


def _micro_stacks(side: Side) -> list:
    """The stack a stack side names, or the stacks a ref side's variants use."""
    if side.kind == "stack":  # own, own-next: an app's own pins, which asv's stacks are not
        return [] if is_own_stack(side.spec) else [side.project.stack(side.spec)]
    names = sorted({v.stack.name for v in side.variants if not is_own_stack(v.stack.name)})
    return [side.project.stack(name) for name in names]


COUNT_JOBS = 3  # servers counted at once per side: six at once in all, which keep both cores busy


@dataclass
class CountResult:
    base: list[Figure] = field(default_factory=list)
    head: list[Figure] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    unavailable: str | None = None  # why there are no counts per request
    seconds: float = 0.0
    dirs: dict[str, dict[str, Path]] = field(
        default_factory=dict
    )  # role -> variant id -> its files


def measure_counts(
    base: Side,
    head: Side,
    environments: dict,
    out_dir: Path,
    keep: Callable[[str, str], bool] | None = None,
) -> CountResult:
    """Instructions and system calls per request of every declared endpoint of the sides' variants
    (a --quick compare too: counts are cheap and deterministic, so a PR watches every endpoint while
    timing the quick ones), both sides at once (a count does not depend on what else the machine
    does): benchwatch.counts. Their names carry no side-by-side mark: they are the absolute counts."""
    from benchwatch import counts

    result = CountResult(unavailable=counts.unavailable_reason())
    if result.unavailable:
        return result
    began = time.monotonic()

    def count(side: Side) -> tuple[list[Figure], list[Problem]]:
        targets = counts.targets_for(side.variants, environments, False, side.role)
        if keep is not None:  # a shard (compare/shard.py): only its endpoints (pair key, label)
            targets = [
                dataclasses.replace(t, endpoints=mine)
                for t in targets
                if (mine := tuple(e for e in t.endpoints if keep(side.key(t.variant), e.label)))
            ]
        where = out_dir / f"{side.role}-counts"
        result.dirs[side.role] = {
            t.variant.id: d
            for t, d in zip(targets, counts.target_dirs(where, targets), strict=True)
        }
        return counts.count_requests(targets, out_dir=where, jobs=COUNT_JOBS, log=lambda line: None)

    # both sides at once, two servers each: much of a count is waiting (think times, idle pauses,
    # dumps), and a count does not depend on what else the machine runs
    with ThreadPoolExecutor(max_workers=2) as pool:
        done = list(pool.map(count, (base, head)))
    for side, (found, trouble) in zip((base, head), done, strict=True):
        getattr(result, side.role).extend(found)
        result.problems += [
            p.model_copy(update={"reason": f"{side.role}: {p.reason}"}) for p in trouble
        ]
    result.seconds = round(time.monotonic() - began, 1)
    return result


def where_instructions_went(
    rows: list, figures: dict[str, list[Figure]], dirs: dict[str, dict[str, Path]]
) -> dict:
    """{row label: counts.Breakdown} for every instructions-per-request row that changed
    significantly: both sides' callgrind files of that endpoint, by shared object and function."""
    from benchwatch import counts
    from benchwatch.figures.metrics import INSTRUCTIONS

    named = {role: {f.name: f for f in figures[role]} for role in ("base", "head")}
    found: dict[str, counts.Breakdown] = {}
    for row in rows:
        if row.metric != INSTRUCTIONS.key or not row.significant:
            continue
        files = []
        for role, name in (("base", row.base_figure), ("head", row.head_figure)):
            figure = named[role].get(name or "")
            directory = dirs.get(role, {}).get(figure.variant) if figure else None
            if figure is None or directory is None or figure.endpoint is None:
                break
            try:
                files.append(counts.phase_files(directory, figure.endpoint))
            except FileNotFoundError:
                break
        if len(files) == 2:
            (base_files, base_n), (head_files, head_n) = files
            found[row.label] = counts.breakdown(base_files, head_files, (base_n, head_n))
    return found
