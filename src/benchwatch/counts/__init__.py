"""Deterministic counts per request of the real server: instructions (callgrind) and system
calls by name (strace), over a fixed sequence of requests on one connection."""

from benchwatch.counts import callgrind, strace
from benchwatch.counts.all_targets import (
    DEFAULT_REPEATS,
    DEFAULT_REQUESTS,
    count_requests,
    target_dirs,
)
from benchwatch.counts.breakdown import Breakdown, ByObject, breakdown, by_object, render
from benchwatch.counts.target_counts import TRACE, CountTarget, phase_files, targets_for

__all__ = [
    "DEFAULT_REPEATS",
    "DEFAULT_REQUESTS",
    "TRACE",
    "Breakdown",
    "ByObject",
    "CountTarget",
    "breakdown",
    "by_object",
    "count_requests",
    "phase_files",
    "render",
    "target_dirs",
    "targets_for",
    "unavailable_reason",
]


def unavailable_reason() -> str | None:
    """None when both counters work here, else one line saying what to install."""
    return callgrind.unavailable_reason() or strace.unavailable_reason()
