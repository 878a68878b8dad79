"""Count every target (two at a time by default) and turn the counts into figures."""

from __future__ import annotations

import re
import statistics
import sys
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from benchwatch.counts import callgrind, retained, statements, strace
from benchwatch.counts.allocations import ALLOCATIONS
from benchwatch.counts.database_work import median_detail
from benchwatch.counts.one_target import QUIET_IDLE_S, STRACE_TIMES, count_target
from benchwatch.counts.target_counts import CountFailed, CountTarget, Phase, TargetCounts
from benchwatch.declarations.requests import Endpoint
from benchwatch.figures.figure_key import load_key
from benchwatch.figures.metrics import (
    DB_BUFFERS,
    INSTRUCTIONS,
    RETAINED,
    STATEMENTS,
    SYSCALLS,
    Counted,
    Metric,
)
from benchwatch.measure import inject
from benchwatch.results.schema import Figure, Problem

DEFAULT_REQUESTS = 1000  # the most requests of one endpoint per phase (heavier ones get fewer)
DEFAULT_REPEATS = 3
JOBS = 2


def count_requests(
    targets: Sequence[CountTarget],
    *,
    out_dir: Path,
    requests: int = DEFAULT_REQUESTS,
    repeats: int = DEFAULT_REPEATS,
    jobs: int = JOBS,
    name_tag: str = "",
    log: Callable[[str], None] | None = None,
    dirs: Sequence[Path] | None = None,
    quiet_idle_s: float = QUIET_IDLE_S,
    strace_times: int = STRACE_TIMES,
) -> tuple[list[Figure], list[Problem]]:
    """Instructions and system calls per request of every target's endpoints, and every problem
    (a counter missing, a boot, a non-2xx answer, a count that does not grow). A target that
    fails gives a Problem and no figures; the others go on. Each target's callgrind files and
    strace trace stay under `out_dir/<variant>/` (benchwatch.counts.breakdown reads them), or in
    `dirs`, one per target, when given (attribute: a folder per stack counted in one call)."""
    say = log or (lambda line: print(line, file=sys.stderr, flush=True))
    missing = callgrind.unavailable_reason() or strace.unavailable_reason()
    if missing:
        return [], [Problem(variant=t.variant.id, phase="load", reason=missing) for t in targets]

    def one(target: CountTarget, directory: Path) -> TargetCounts | Problem:
        try:
            return count_target(
                target,
                directory,
                cap=requests,
                repeats=repeats,
                say=say,
                quiet_idle_s=quiet_idle_s,
                strace_times=strace_times,
            )
        except CountFailed as exc:
            return Problem(
                variant=target.variant.id,
                phase="load",
                reason=f"count failed: {exc.reason}",
                endpoint=exc.endpoint.label if exc.endpoint else None,
                detail=exc.stderr_tail,
            )

    # the targets with the most endpoints first, so the last one does not count alone
    order = sorted(range(len(targets)), key=lambda i: -len(targets[i].endpoints))
    if dirs is not None and len(dirs) != len(targets):
        raise ValueError(f"count_requests: {len(dirs)} directories for {len(targets)} targets")
    dirs = list(dirs) if dirs is not None else target_dirs(out_dir, targets)
    with ThreadPoolExecutor(max_workers=max(1, min(jobs, len(targets)))) as pool:
        done = dict(
            zip(
                order,
                pool.map(one, [targets[i] for i in order], [dirs[i] for i in order]),
                strict=True,
            )
        )
    results = [done[i] for i in range(len(targets))]
    figures: list[Figure] = []
    problems: list[Problem] = []
    for result in results:
        if isinstance(result, Problem):
            problems.append(result)
            continue
        for endpoint in result.target.endpoints:
            made, trouble = endpoint_figures(result, endpoint, name_tag)
            figures += made
            problems += trouble
    return figures, problems


def target_dirs(out_dir: Path, targets: Sequence[CountTarget]) -> list[Path]:
    """Where each target's files go: `out_dir/<variant id>`, `<variant id>-2` for the second
    target of the same variant in one call (an injected copy)."""
    found: list[Path] = []
    for target in targets:
        slug = re.sub(r"[^A-Za-z0-9_.@-]+", "_", target.variant.id)
        taken = sum(1 for path in found if path.name == slug or path.name.startswith(slug + "-"))
        found.append(out_dir / (slug if not taken else f"{slug}-{taken + 1}"))
    return found


def endpoint_figures(
    counted: TargetCounts, endpoint: Endpoint, name_tag: str = ""
) -> tuple[list[Figure], list[Problem]]:
    """Both figures of one endpoint, or a Problem when a count did not grow with the requests."""
    variant = counted.target.variant
    instructions = counted.instructions(endpoint)
    by_name = counted.syscalls(endpoint)
    syscalls = [strace.own_calls(found) for found in by_name]
    if not instructions or min(instructions) <= 0 or not syscalls or min(syscalls) <= 0:
        return [], [
            Problem(
                variant=variant.id,
                phase="load",
                endpoint=endpoint.label,
                reason=f"count did not grow with the requests (instructions/request {instructions}, "
                f"system calls/request {syscalls}); not published",
            )
        ]

    def phases(tool: str, found: list[Phase]) -> str:
        sizes = sorted({p.requests for p in found if p.endpoint == endpoint})
        return f"{tool}: {len(instructions)} phases of {'/'.join(map(str, sizes))} requests on one connection"

    detail = {
        name: round(statistics.median(found.get(name, 0.0) for found in by_name), 3)
        for name in sorted({name for found in by_name for name in found})
    }
    sent = statements.per_request(counted.syscall_phases, endpoint)
    sql = (
        []
        if sent is None
        else [
            _figure(
                counted.target,
                endpoint,
                STATEMENTS,
                sent.samples,
                name_tag,
                phases("strace", counted.syscall_phases),
                sent.detail,
            )
        ]
    )
    kept = retained.per_request(counted.memory_phases, endpoint)
    note = retained.note(counted.memory_phases, endpoint)
    made = counted.allocations(
        endpoint
    )  # the mechanism, shown in its detail (counts/allocations.py)
    shown = {ALLOCATIONS: round(statistics.median(made), 2)} if made else None
    memory = (
        [_figure(counted.target, endpoint, RETAINED, kept, name_tag, note, shown)] if kept else []
    )
    return [
        _figure(
            counted.target,
            endpoint,
            INSTRUCTIONS,
            instructions,
            name_tag,
            phases("callgrind", counted.instruction_phases),
        ),
        _figure(
            counted.target,
            endpoint,
            SYSCALLS,
            syscalls,
            name_tag,
            phases("strace", counted.syscall_phases),
            {k: v for k, v in detail.items() if v != 0},
        ),
        *sql,
        *_database_figure(counted, endpoint, name_tag),
        *memory,
    ], []


def _database_figure(counted: TargetCounts, endpoint: Endpoint, name_tag: str) -> list[Figure]:
    """The database's buffers per request (an app on PostgreSQL with pg_stat_statements), or none.
    As for statements: a figure for every endpoint of a server whose counted phases ran a statement,
    0 included (an endpoint that starts to query shows as 0 → n); none for a server that ran none."""
    work = counted.database_work(endpoint)
    if not work or not any(p.database for p in counted.syscall_phases):
        return []
    sizes = sorted({p.requests for p in counted.syscall_phases if p.endpoint == endpoint})
    note = f"pg_stat_statements: {len(work)} phases of {'/'.join(map(str, sizes))} requests"
    return [
        _figure(
            counted.target,
            endpoint,
            DB_BUFFERS,
            [buffers for buffers, _ in work],
            name_tag,
            note,
            median_detail(detail for _, detail in work),
        )
    ]


def _figure(
    target: CountTarget,
    endpoint: Endpoint,
    what: Metric,
    samples: list[float],
    name_tag: str,
    note: str,
    detail: dict[str, float] | None = None,
) -> Figure:
    variant = target.variant
    setting = Counted()
    injection = inject.for_side(target.role)
    if injection:
        note += f"; TESTING ONLY: {injection.describe()}"
    return Figure(
        name=load_key(variant.id, endpoint.label, setting, what, name_tag).name,
        kind="load",
        variant=variant.id,
        scenario=variant.scenario,
        stack=variant.stack.name,
        metric=what.key,
        unit=what.unit,
        bigger_is_better=what.bigger_is_better,
        samples=samples,
        value=statistics.median(samples),
        spread=(max(samples) - min(samples)) / 2,
        endpoint=endpoint.label,
        params=setting.params(),
        micro_case=endpoint.micro_case,
        note=note,
        detail=detail or {},
    )
