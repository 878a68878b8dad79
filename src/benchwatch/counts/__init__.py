"""Deterministic counts per request of the real server: instructions (callgrind) and system
calls by name (strace), over a fixed sequence of requests on one connection."""

from benchwatch.counts.breakdown import Breakdown, breakdown, render
from benchwatch.counts.run import DEFAULT_REPEATS, DEFAULT_REQUESTS, count_requests, target_dirs
from benchwatch.counts.session import CountTarget, phase_files

__all__ = [
    "DEFAULT_REPEATS", "DEFAULT_REQUESTS", "Breakdown", "CountTarget", "breakdown", "count_requests", "phase_files",
    "render", "target_dirs",
]  # fmt: skip
