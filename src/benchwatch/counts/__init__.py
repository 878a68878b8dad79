"""Deterministic counts per request of the real server: instructions (callgrind) and system
calls by name (strace), over a fixed sequence of requests on one connection."""

from benchwatch.counts.run import DEFAULT_REPEATS, DEFAULT_REQUESTS, count_requests, target_dir
from benchwatch.counts.session import CountTarget

__all__ = ["DEFAULT_REPEATS", "DEFAULT_REQUESTS", "CountTarget", "count_requests", "target_dir"]
