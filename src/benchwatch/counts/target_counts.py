"""What is counted and what the counts are: a target (a variant's server and its endpoints), a
counted phase, one target's counts per request with the idle cost taken off, and the manifest of
its files (phases.json) that the breakdown reads."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from benchwatch.counts import database_work
from benchwatch.declarations.requests import Endpoint
from benchwatch.environments.envs import Env
from benchwatch.measure.database_work import Snapshot
from benchwatch.project.variants import Variant

MANIFEST = "phases.json"
TRACE = "strace.trace"  # a target's strace file in its folder


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
    """A variant's server and the endpoints to count on it (`role`: its compare side)."""

    variant: Variant
    env: Env
    endpoints: tuple[Endpoint, ...]
    role: str | None = None


def targets_for(
    variants: Sequence[Variant],
    environments: dict[str, Env],
    quick: bool,
    role: str | None = None,
) -> list[CountTarget]:
    """A target per variant whose environment was built: its quick endpoints, or all of them."""
    return [
        CountTarget(v, environments[v.env_key], v.selected_endpoints(quick), role)
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
    allocations: int | None = None  # callgrind: calls into the object allocator, idle included
    file: Path | None = None
    calls: Counter[str] = field(default_factory=Counter)  # strace's, the idle timer's included
    wakeups: int = 0  # strace: polls that timed out (the idle timer's wake-ups) in the phase
    # callgrind: uvicorn's timer ticks in the phase (None: not a uvicorn server)
    ticks: int | None = None
    # retained memory's boot: the allocator's blocks still allocated after a full collection, end less start
    retained_blocks: int | None = None
    # strace, an app on PostgreSQL: what the database did in the phase (counts/database_work.py)
    database: Snapshot = field(default_factory=dict)
    # strace: SQL statements by normalized text (None: none tallied; counts/statements.py)
    statements: dict[str, int] | None = None


@dataclass
class TargetCounts:
    """Everything one target's two boots gave."""

    target: CountTarget
    instruction_phases: list[Phase]
    idle_instructions_per_s: float
    syscall_phases: list[Phase]
    idle_calls_per_wakeup: dict[str, float]
    idle_instructions_per_tick: float | None = None
    # the idle pause's whole count: with the timer quiet, a window's own cost
    idle_window_instructions: float = 0.0
    # retained memory's boot (counts/memory_boot.py): segments of requests with their retained blocks
    memory_phases: list[Phase] = field(default_factory=list)
    # PostgreSQL's plans by statement when its work was read, else None (counts/database_work.py)
    database_plans: dict[str, str] | None = None
    # the idle pause's calls into the object allocator (None: not read; counts/allocations.py)
    idle_allocations: int | None = None

    def database_work(self, endpoint: Endpoint) -> list[tuple[float, dict[str, float]]]:
        """Per repeat: the database's shared buffers per request and their detail (by statement;
        by statement and plan); empty when the database's work was not read."""
        if self.database_plans is None:
            return []
        return [
            database_work.per_request(p.database, p.requests, self.database_plans)
            for p in self.syscall_phases
            if p.endpoint == endpoint
        ]

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

    def allocations(self, endpoint: Endpoint) -> list[float]:
        """Calls into the object allocator per request, one value per repeat, less the idle
        window's: its share of the idle pause's calls is the share of the idle pause's
        instructions `instructions` takes off (the same ticks or seconds); empty when not read."""
        mine = [p for p in self.instruction_phases if p.endpoint == endpoint]
        idle = self.idle_allocations
        if not mine or idle is None or any(p.allocations is None for p in mine):
            return []
        whole = self.idle_window_instructions
        return [
            ((p.allocations or 0) - (self._idle_in(p) * idle / whole if whole else 0.0))
            / p.requests
            for p in mine
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


def phase_files(target_dir: Path, endpoint_label: str) -> tuple[list[Path], int]:
    """An endpoint's callgrind files in a target's directory and the requests each counted."""
    try:
        entry = json.loads((target_dir / MANIFEST).read_text())[endpoint_label]
    except (OSError, ValueError, KeyError):
        raise FileNotFoundError(
            f"{target_dir / MANIFEST}: no counts of {endpoint_label!r} there"
        ) from None
    return [target_dir / name for name in entry["files"]], int(entry["requests"])
