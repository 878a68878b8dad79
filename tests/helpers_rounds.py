"""Synthetic load rounds for the round driver's tests (test_make_up.py, test_side_by_side.py): a
server that is never started and an oha run that never ran."""

from __future__ import annotations

from contextlib import nullcontext

from benchwatch.measure.loadgen import OhaRun, Outcome
from benchwatch.measure.server import CpuTimes


class FakeServer:
    """Busy 0.05 s of CPU more at each look, all of it user time; alive; 1 MiB resident."""

    base_url = "http://127.0.0.1:1"

    def __init__(self) -> None:
        self.cpu = 0.0

    def cpu_times(self) -> CpuTimes:
        self.cpu += 0.05
        return CpuTimes(self.cpu, self.cpu, 0.0)

    def alive(self) -> bool:
        return True

    def rss_bytes(self) -> int:
        return 2**20

    def rss_peak(self):
        return nullcontext([2**20])


def oha_run(wall: float, successes: int = 100) -> OhaRun:
    """An oha run of `wall` seconds that answered `successes` requests (p50 1 ms, p99 2 ms)."""
    return OhaRun(
        [], Outcome(successes=successes, elapsed=wall, p50_ms=1.0, p99_ms=2.0), wall, 0.1, 1
    )
