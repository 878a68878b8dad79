"""A running server: its process tree, the cores it runs on, its CPU time, memory and log; and the
error of one that could not be started."""

from __future__ import annotations

import os
import subprocess
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import psutil

from benchwatch.declarations.placeholders import Context
from benchwatch.declarations.redaction import redact
from benchwatch.measure.ports import HOST
from benchwatch.project.variants import Variant

# where the last failure's lines begin in uvicorn's log ("ERROR:    Exception in ASGI application",
# then the traceback), or a plain Python traceback
TRACEBACK_STARTS = ("ERROR:", "Traceback (most recent call last)")


class BootError(Exception):
    """The server could not be started, did not become ready, or its set-up failed (`phase`)."""

    def __init__(
        self,
        variant_id: str,
        reason: str,
        stderr_tail: str = "",
        phase: Literal["boot", "setup"] = "boot",
    ) -> None:
        super().__init__(f"{variant_id}: {reason}")
        self.variant_id = variant_id
        self.reason = redact(reason)
        self.stderr_tail = redact(stderr_tail)
        self.phase = phase


@dataclass
class Server:
    variant: Variant
    port: int
    process: subprocess.Popen
    log_path: Path
    # what this boot's placeholders resolve to: {tmp}, {database_*}, then the set-up's values
    context: Context = field(default_factory=Context)
    _ps: psutil.Process = field(init=False)

    def __post_init__(self) -> None:
        self._ps = psutil.Process(self.process.pid)

    @property
    def pid(self) -> int:
        return self.process.pid

    @property
    def base_url(self) -> str:
        return f"http://{HOST}:{self.port}"

    def alive(self) -> bool:
        return self.process.poll() is None

    def process_tree(self) -> list[psutil.Process]:
        """The server's process and every process under it (a wrapper's child, a worker)."""
        try:
            return [self._ps, *self._ps.children(recursive=True)]
        except psutil.NoSuchProcess:
            return []

    def cpu_seconds(self) -> float:
        return self.cpu_times().total

    def cpu_times(self) -> CpuTimes:
        """CPU time of the server and its child processes. The total takes the server's own from
        its process CPU clock (nanoseconds, exited threads included) where Linux offers it:
        /proc's user and system times tick at 10 ms, 1 % of a one-second measurement, so they
        only say how the total splits."""
        total = user = system = 0.0
        for proc in self.process_tree():
            try:
                times = proc.cpu_times()
            except psutil.NoSuchProcess:
                continue
            user += times.user
            system += times.system
            if proc is self._ps:
                user += times.children_user
                system += times.children_system
                total += times.children_user + times.children_system
                total += process_cpu_clock(proc.pid, fallback=times.user + times.system)
            else:
                total += times.user + times.system
        return CpuTimes(total, user, system)

    def rss_bytes(self) -> int:
        total = 0
        for proc in self.process_tree():
            try:
                total += proc.memory_info().rss
            except psutil.NoSuchProcess:
                continue
        return total

    def stderr_tail(self, lines: int = 12) -> str:
        try:
            text = self.log_path.read_text(errors="replace")
        except OSError:
            return ""
        return redact("\n".join(text.strip().splitlines()[-lines:]))

    def last_error(self, lines: int = 30) -> str:
        """The server's last traceback (uvicorn logs one per failed request), at most its last
        `lines` lines; else its last lines."""
        try:
            text = self.log_path.read_text(errors="replace")
        except OSError:
            return ""
        found = text.strip().splitlines()
        starts = [i for i, line in enumerate(found) if line.startswith(TRACEBACK_STARTS)]
        if starts:
            found = found[starts[-1] :]
        return redact("\n".join(found[-lines:]))

    @contextmanager
    def rss_peak(self, interval: float = 0.05) -> Iterator[list[int]]:
        """Sample the tree's RSS in a thread; the yielded list holds [peak] once the block ends."""
        result = [self.rss_bytes()]
        stop = threading.Event()

        def sample() -> None:
            while not stop.wait(interval):
                result[0] = max(result[0], self.rss_bytes())

        thread = threading.Thread(target=sample, daemon=True)
        thread.start()
        try:
            yield result
        finally:
            stop.set()
            thread.join()
            result[0] = max(result[0], self.rss_bytes())


@dataclass(frozen=True)
class CpuTimes:
    """Seconds of CPU: `total` precise, `user` and `system` in /proc's 10 ms ticks."""

    total: float
    user: float
    system: float

    def __sub__(self, earlier: CpuTimes) -> CpuTimes:
        return CpuTimes(
            self.total - earlier.total, self.user - earlier.user, self.system - earlier.system
        )

    def split(self) -> tuple[float, float]:
        """(user, system) seconds: the precise total split as the ticks split, each part counted
        half a tick more, so a short window with no system tick still gives a positive figure
        (and every round a sample on both sides, which keeps the pairs of a compare aligned)."""
        user, system = max(self.user, 0.0) + 0.005, max(self.system, 0.0) + 0.005
        return self.total * user / (user + system), self.total * system / (user + system)


def process_cpu_clock(pid: int, fallback: float) -> float:
    """Seconds of CPU another process has used, from its POSIX CPU clock (Linux encodes the
    process-wide scheduler clock of `pid` as the clock id ~pid << 3 | 2)."""
    try:
        return time.clock_gettime((~pid << 3) | 2)
    except (OSError, AttributeError, OverflowError):
        return fallback


def cpu_plan() -> tuple[list[int] | None, list[int] | None]:
    """(server cores, load generator cores): the last core for the server, the rest for oha."""
    try:
        cores = sorted(os.sched_getaffinity(0))
    except AttributeError:
        return None, None
    if len(cores) < 2:
        return None, None
    return [cores[-1]], cores[:-1]


def pin(server: Server, cores: list[int]) -> None:
    try:
        psutil.Process(server.pid).cpu_affinity(cores)
    except (psutil.Error, AttributeError, OSError):
        pass  # pinning is an improvement, not a requirement
