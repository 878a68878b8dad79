"""The figure vocabulary: every metric once, and the setting a load figure was measured at.

Figure names are the published trend keys (github-action-benchmark's history): they are built
and read back only by benchwatch.figures.figure_key, from the metrics and settings defined here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

__all__ = [
    "COST",
    "COUNTS",
    "COUNT_KEYS",
    "CPU",
    "CPU_SYS",
    "CPU_USER",
    "DB_BUFFERS",
    "FALLBACK_FLOOR",
    "INSTRUCTIONS",
    "METRICS",
    "MICRO_INSTRUCTIONS",
    "MICRO_PEAKMEM",
    "MICRO_TIME",
    "P50",
    "P99",
    "RETAINED",
    "RPS",
    "RSS_IDLE",
    "RSS_PEAK",
    "RSS_WARM",
    "STATEMENTS",
    "SYSCALLS",
    "Closed",
    "Counted",
    "Metric",
    "Open",
    "Setting",
    "load_metrics",
    "metric",
    "metric_rank",
    "setting_from_params",
    "setting_sort_key",
]


@dataclass(frozen=True)
class Metric:
    key: str  # stored in Figure.metric (load) and used as calibration.json's floor key
    unit: str
    bigger_is_better: bool
    short: str  # the last word of a load figure's name ("cpu/req")
    title: str  # what a reader sees in tables
    gating: bool  # a significant regression fails a compare
    default_floor: float  # used when calibration.json has no entry for it
    memory: bool = False  # "larger/smaller" rather than "slower/faster"
    per_variant: bool = False  # one per server (RSS), not per endpoint and setting
    closed_only: bool = False  # requests/s only means a capacity in a closed loop


CPU = Metric("cpu_us_per_request", "us", False, "cpu/req", "server CPU µs/request", True, 0.05)
# CPU per request split: user space (the interpreter, pydantic-core, …) and the kernel (sockets,
# epoll): a change can live wholly in the system part, where instruction counts cannot see it
CPU_USER = Metric(
    "cpu_user_us_per_request", "us", False, "user/req", "server user CPU µs/request", False, 0.05
)
CPU_SYS = Metric(
    "cpu_sys_us_per_request", "us", False, "sys/req", "server system CPU µs/request", False, 0.05
)
RPS = Metric("rps", "req/s", True, "rps", "requests/s", False, 0.10, closed_only=True)
P50 = Metric("latency_p50_ms", "ms", False, "p50", "latency p50", False, 0.15)
P99 = Metric("latency_p99_ms", "ms", False, "p99", "latency p99", False, 0.40)
RSS_IDLE = Metric("rss_idle_mb", "MB", False, "rss idle", "RSS idle", False, 0.05, True, True)
RSS_WARM = Metric(
    "rss_warm_mb", "MB", False, "rss warm", "RSS after warm-up", False, 0.05, True, True
)
RSS_PEAK = Metric(
    "rss_peak_mb", "MB", False, "rss peak", "RSS peak under load", False, 0.10, True, True
)
# micro-benchmarks keep their operation (dump_json, …) in Figure.metric; these are their kinds
MICRO_TIME = Metric("micro_time", "us", False, "", "micro-benchmark CPU time", True, 0.10)
MICRO_PEAKMEM = Metric(
    "micro_peakmem", "MB", False, "", "micro-benchmark peak memory", False, 0.05, True
)
# counted under valgrind's cachegrind (benchwatch.micro.instructions): deterministic, so a small floor
MICRO_INSTRUCTIONS = Metric(
    "micro_instructions",
    "instructions",
    False,
    "instructions",
    "micro-benchmark instructions per call",
    True,
    0.005,
)

# counted per request of the real server over a fixed sequence of requests (benchwatch.counts):
# deterministic. Instructions under callgrind (user space only); system calls under strace: the
# request's own (every call of the server's process tree but the scheduling ones,
# benchwatch.counts.strace.SCHEDULING), every call by name in Figure.detail. They are the mechanism
# of the cost below, shown and judged but not gating one by one: a request's cost is their sum, and a
# change can trade one for the other (seed-v1 -> latest on services: 13x fewer instructions, one
# system call more)
INSTRUCTIONS = Metric(
    "instructions_per_request",
    "instructions",
    False,
    "instr/req",
    "server instructions/request",
    False,
    0.005,
)
SYSCALLS = Metric(
    "syscalls_per_request",
    "calls",
    False,
    "syscalls/req",
    "server system calls/request (its own, scheduling apart)",
    False,
    0.02,
)
# one estimated cost per request: the instructions and each system call by name weighed by what they
# cost on the machine that counted them (counts/weights.py, counts/cost.py). It gates; its floor
# comes from its parts' floors (judge/cost_floor.py)
COST = Metric(
    "cost_us_per_request",
    "us",
    False,
    "cost/req",
    "estimated CPU µs/request (counts weighed)",
    True,
    0.005,
)
# an app on PostgreSQL: the pages (8 kB shared buffers, hit or read) its statements touched per
# request, from pg_stat_statements (benchwatch.counts.database_work); by statement in Figure.detail,
# with each statement's plan and its rows per request (`rows <statement>`: shown, never judged).
# It gates on its own and is weighed into the server's cost (µs per buffer access: counts/buffer_weight.py)
DB_BUFFERS = Metric(
    "db_buffers_per_request",
    "buffers",
    False,
    "db buffers/req",
    "database buffers/request (PostgreSQL, hit + read)",
    True,
    0.10,
)
# memory the server keeps per request: the Python allocator's blocks still allocated after a full
# collection, their growth over segments of requests in the strace boot (after its counted windows)
# divided by their requests (counts/retained.py). A leak is not CPU: it gates on its own, not in the cost, and its floor is
# a difference in blocks per request, not a ratio (a no-op is 0, judge/retained.py). Its detail holds
# allocations per request (counts/allocations.py): shown as the mechanism, never judged
RETAINED = Metric(
    "retained_blocks_per_request",
    "blocks",
    False,
    "retained/req",
    "retained memory: allocator blocks/request kept after a full collection",
    True,
    0.5,
    memory=True,
)
# SQL statements the server sends per request (counted under strace through the harness:
# benchwatch.counts.statements), by normalized statement in Figure.detail. Deterministic; not part of
# the cost (the database's work is another process's), gating on its own: its floor is a number of
# statements per request, not a fraction (judge/statements.py)
STATEMENTS = Metric(
    "statements_per_request",
    "statements",
    False,
    "statements/req",
    "SQL statements/request",
    True,
    0.5,
)
# the deterministic counts per request, and the cost made of them: never confirmed (judge/gate.py)
COUNTS: tuple[Metric, ...] = (INSTRUCTIONS, SYSCALLS)
COUNT_KEYS = frozenset(m.key for m in (*COUNTS, COST, DB_BUFFERS, STATEMENTS))

# in the order tables and names list them
METRICS: tuple[Metric, ...] = (
    COST,
    INSTRUCTIONS,
    SYSCALLS,
    RETAINED,
    DB_BUFFERS,
    STATEMENTS,
    CPU,
    CPU_USER,
    CPU_SYS,
    RPS,
    P50,
    P99,
    RSS_IDLE,
    RSS_WARM,
    RSS_PEAK,
    MICRO_TIME,
    MICRO_PEAKMEM,
    MICRO_INSTRUCTIONS,
)
_BY_KEY = {m.key: m for m in METRICS}
FALLBACK_FLOOR = 0.10


def load_metrics(setting: Setting) -> tuple[Metric, ...]:
    """The per-request metrics one oha run yields at this setting, in name order."""
    if isinstance(setting, Counted):
        return (
            INSTRUCTIONS,
            SYSCALLS,
            RETAINED,
            DB_BUFFERS,
        )  # the database's: an app on PostgreSQL
    return tuple(
        m
        for m in (CPU, CPU_USER, CPU_SYS, RPS, P50, P99)
        if not (m.closed_only and isinstance(setting, Open))
    )


def metric(kind: str, key: str, unit: str | None = None) -> Metric | None:
    """The Metric of a figure (kind "load" or "micro", key its Figure.metric, its unit); None
    for a metric this benchwatch does not know (an old run.json)."""
    if kind == "micro":
        if unit == MICRO_INSTRUCTIONS.unit:
            return MICRO_INSTRUCTIONS
        return MICRO_PEAKMEM if key.startswith("peakmem") else MICRO_TIME
    return _BY_KEY.get(key)


def metric_rank(key: str) -> int:
    found = _BY_KEY.get(key)
    return METRICS.index(found) if found else len(METRICS)


@dataclass(frozen=True)
class Closed:
    """Closed loop: C connections, each sending its next request when the last one answered."""

    concurrency: int
    mode: Literal["closed"] = "closed"

    @property
    def tag(self) -> str:  # in figure names; never change
        return f"c={self.concurrency}"

    @property
    def label(self) -> str:
        return self.tag

    def sort_key(self) -> tuple[int, float]:
        return (0, float(self.concurrency))

    def params(self) -> dict[str, Any]:
        return {"mode": "closed", "concurrency": self.concurrency}

    def pair_params(self) -> dict[str, Any]:
        return self.params()


OPEN_TAG_PREFIX = "rate="  # an open-loop figure's name and label hold `rate=50%`


@dataclass(frozen=True)
class Open:
    """Open loop at a fixed rate: a fraction of the variant's own measured maximum."""

    fraction: float
    rate_rps: int | None = None  # the rate that fraction came to; differs between sides
    mode: Literal["open"] = "open"

    @property
    def tag(self) -> str:  # in figure names; never change
        return f"{OPEN_TAG_PREFIX}{self.fraction:.0%}"

    @property
    def label(self) -> str:
        rate = f" ({self.rate_rps} r/s)" if self.rate_rps is not None else ""
        return f"{self.fraction:.0%} of max{rate}"

    def sort_key(self) -> tuple[int, float]:
        return (1, self.fraction)

    def params(self) -> dict[str, Any]:
        found: dict[str, Any] = {"mode": "open", "rate_fraction": self.fraction}
        if self.rate_rps is not None:
            found["rate_rps"] = self.rate_rps
        return found

    def pair_params(self) -> dict[str, Any]:
        """What two sides share: the fraction, not the rate each side's maximum gave."""
        return {"mode": "open", "rate_fraction": self.fraction}


@dataclass(frozen=True)
class Counted:
    """A fixed sequence of requests, one connection, one at a time, under a counter (cachegrind or
    strace): per request = (count of the longer sequence - count of the shorter) / extra requests,
    so boot, warm-up and shutdown cancel."""

    mode: Literal["count"] = "count"

    @property
    def tag(self) -> str:  # in figure names; never change
        return "seq"

    @property
    def label(self) -> str:
        return "counted"

    def sort_key(self) -> tuple[int, float]:
        return (-1, 0.0)

    def params(self) -> dict[str, Any]:
        return {"mode": "count"}

    def pair_params(self) -> dict[str, Any]:
        return self.params()


Setting = Closed | Open | Counted | None


def setting_from_params(params: Mapping[str, Any]) -> Setting:
    """The one reader of a load figure's stored params (run.json keeps them as a dict)."""
    mode = params.get("mode")
    if mode == "closed":
        return Closed(int(params["concurrency"]))
    if mode == "open":
        rate = params.get("rate_rps")
        return Open(float(params["rate_fraction"]), int(rate) if rate is not None else None)
    if mode == "count":
        return Counted()
    return None


def setting_sort_key(setting: Setting) -> tuple[int, float]:
    return setting.sort_key() if setting is not None else (2, 0.0)
