"""What a PostgreSQL buffer access costs: the weight that puts an app's database buffers per
request (counts/database_work.py) into its estimated cost beside the server's CPU (counts/cost.py).

Measured by `scripts/buffer_weight.py` on real PostgreSQL (benchwatch's throwaway cluster,
measure/database.py, or BENCHWATCH_POSTGRES_URL's) and stored in buffer_weight.json beside this
module with the date, the command and the machine: unlike the CPU weights (counts/weights.py,
measured at the start of every compare in seconds), it needs a cluster and seeded tables, so it is
measured once per machine and read here.

How: tables of 2,000 to 50,000 rows are seeded; statements that touch known numbers of shared
buffers run under `EXPLAIN (ANALYZE, BUFFERS, TIMING OFF, FORMAT JSON)`, each REPEATS times after
a warm round, and the fastest execution time of each (as the CPU weights take the fastest of their
runs) is regressed on its buffers (hit + read), per family of statements:

- **lookup**: primary-key lookups of 1 to 1,000 ids in one statement (an index's pages and the
  rows' heap pages): its slope is **the weight**, µs per buffer access;
- **scan**: sequential scans whose filter keeps no row (what a dropped index makes of a lookup),
  one over each table: a page read whole, each of its ~150 rows tested, costs an order of
  magnitude more per buffer. Kept beside the weight (`scan_us_per_buffer`), not used: a cost made
  with it would call every scan's page as dear as that, and the buffers' own gate
  (db_buffers_per_request) judges a scan that appears.

The intercept (what a statement costs whatever it touches) is not in the weight: the statements
per request count those."""

from __future__ import annotations

import json
import os
import platform
import statistics
import subprocess
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from pydantic import BaseModel

from benchwatch.measure.database import Cluster

STORED_FILE = Path(__file__).with_name("buffer_weight.json")
REPEATS = 15
SEQ_TABLES = (2_000, 10_000, 50_000)  # rows of each table a sequential scan reads whole
LOOKUP_IDS = (1, 10, 100, 1_000)  # ids looked up by primary key in one statement
_TIMEOUT_S = 600


class Shape(BaseModel):
    """One query measured: its shared buffers and the fastest of its execution times."""

    family: str  # "lookup" or "scan"
    query: str
    buffers: int
    fastest_us: float


class BufferWeight(BaseModel):
    """µs per shared-buffer access on the machine that measured it, and how it was measured."""

    us_per_buffer: float  # the lookups' slope: the weight
    intercept_us: float  # a lookup statement's time whatever it touches (the fit's intercept)
    r_squared: float
    scan_us_per_buffer: float  # the sequential scans' slope: shown, not used
    scan_r_squared: float
    measured: str  # ISO date and time (UTC)
    command: str
    machine: str
    postgres: str  # the server's version
    method: str
    shapes: list[Shape]


@dataclass(frozen=True)
class Fit:
    slope: float
    intercept: float
    r_squared: float


def least_squares(points: list[tuple[float, float]]) -> Fit:
    """y = slope x + intercept by ordinary least squares, and its r²."""
    if len({x for x, _ in points}) < 2:
        raise ValueError("a fit needs at least two different buffer counts")
    xs, ys = [x for x, _ in points], [y for _, y in points]
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    sxx = sum((x - mx) ** 2 for x in xs)
    sxy = sum((x - mx) * (y - my) for x, y in points)
    slope = sxy / sxx
    intercept = my - slope * mx
    total = sum((y - my) ** 2 for y in ys)
    residual = sum((y - slope * x - intercept) ** 2 for x, y in points)
    return Fit(slope, intercept, 1.0 - residual / total if total > 0 else 1.0)


def stored(path: Path = STORED_FILE) -> BufferWeight:
    """The weight measured on this project's machine (buffer_weight.json)."""
    return BufferWeight.model_validate_json(path.read_text())


def seed_sql() -> str:
    """Tables without an index for the scans (a dropped primary key), one with it for the lookups."""
    parts = []
    for rows in SEQ_TABLES:
        parts.append(
            f"CREATE TABLE scan_{rows} (id integer NOT NULL, owner_id integer NOT NULL, title text NOT NULL);"
            f"INSERT INTO scan_{rows} SELECT i, i % 100, 'item ' || i FROM generate_series(1, {rows}) i;"
        )
    parts.append(
        "CREATE TABLE lookup (id integer PRIMARY KEY, owner_id integer NOT NULL, title text NOT NULL);"
        f"INSERT INTO lookup SELECT i, i % 100, 'item ' || i FROM generate_series(1, {max(SEQ_TABLES)}) i;"
        "VACUUM ANALYZE;"
    )
    return "".join(parts)


def queries() -> list[tuple[str, str]]:
    """(family, statement) measured: each sequential scan, then each lookup (ids spread over the table)."""
    found = [("scan", f"SELECT * FROM scan_{rows} WHERE id = -1") for rows in SEQ_TABLES]
    for count in LOOKUP_IDS:
        step = max(SEQ_TABLES) // count
        ids = ",".join(str(1 + i * step) for i in range(count))
        found.append(("lookup", f"SELECT * FROM lookup WHERE id = ANY('{{{ids}}}'::integer[])"))
    return found


def explain_script(statements: list[str], repeats: int) -> str:
    """Every statement once untimed (its pages into shared buffers), then `repeats` rounds of all."""
    explain = "EXPLAIN (ANALYZE, BUFFERS, TIMING OFF, FORMAT JSON) "
    warm = [f"{explain}{s};" for s in statements]
    rounds = [f"{explain}{s};" for _ in range(repeats) for s in statements]
    return "\n".join(warm + rounds) + "\n"


def parse_plans(text: str) -> list[tuple[int, float]]:
    """(shared buffers hit + read, execution time in µs) of each EXPLAIN's JSON in psql's output."""
    decoder = json.JSONDecoder()
    found: list[tuple[int, float]] = []
    at = 0
    while True:
        start = text.find("[", at)
        if start < 0:
            return found
        document, at = decoder.raw_decode(text, start)
        top = document[0]
        plan = top["Plan"]
        buffers = int(plan["Shared Hit Blocks"]) + int(plan["Shared Read Blocks"])
        found.append((buffers, float(top["Execution Time"]) * 1000.0))


def shapes_of(statements: list[tuple[str, str]], plans: list[tuple[int, float]]) -> list[Shape]:
    """Per statement, its buffers (the same in every timed round) and its fastest time; the warm
    round (the first len(statements) plans) left out."""
    n = len(statements)
    if len(plans) < 2 * n or len(plans) % n:
        raise ValueError(f"expected a multiple of {n} plans, got {len(plans)}")
    timed = plans[n:]
    shapes = []
    for index, (family, statement) in enumerate(statements):
        mine = timed[index::n]
        buffers = {b for b, _ in mine}
        if len(buffers) != 1:
            raise ValueError(f"{statement}: its buffers moved between rounds ({sorted(buffers)})")
        shapes.append(
            Shape(
                family=family,
                query=statement,
                buffers=mine[0][0],
                fastest_us=min(t for _, t in mine),
            )
        )
    return shapes


def weight_from(
    shapes: list[Shape], command: str, postgres: str, now: datetime | None = None
) -> BufferWeight:
    fit, scan = (
        least_squares([(float(s.buffers), s.fastest_us) for s in shapes if s.family == family])
        for family in ("lookup", "scan")
    )
    return BufferWeight(
        us_per_buffer=round(fit.slope, 5),
        intercept_us=round(fit.intercept, 2),
        r_squared=round(fit.r_squared, 4),
        scan_us_per_buffer=round(scan.slope, 5),
        scan_r_squared=round(scan.r_squared, 4),
        measured=(now or datetime.now(UTC)).strftime("%Y-%m-%dT%H:%M:%SZ"),
        command=command,
        machine=f"{platform.machine()} {_cpu_model()} ({os.cpu_count()} cores)",
        postgres=postgres,
        method=(
            f"sequential scans that keep no row over tables of {', '.join(map(str, SEQ_TABLES))} rows, and "
            f"primary-key lookups of {', '.join(map(str, LOOKUP_IDS))} ids in one statement, each under "
            f"EXPLAIN (ANALYZE, BUFFERS, TIMING OFF) {REPEATS} times after a warm round: the fastest "
            "execution time of each regressed on its shared buffers (hit + read), per family; the "
            "lookups' slope"
        ),
        shapes=shapes,
    )


def measure(cluster: Cluster, database: str, command: str) -> BufferWeight:
    """Seed, explain and fit in `database` (an empty one) of `cluster`."""
    argv, environ = cluster.psql_command("", database, ("-A", "-t"))
    psql = argv[: argv.index("-c")]  # the connection and options, without a statement
    run = lambda *extra, stdin="": subprocess.run(  # noqa: E731
        [*psql, *extra],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=_TIMEOUT_S,
        env={**os.environ, **environ},
        check=True,
    )
    run("-f", "-", stdin=seed_sql())
    version = run("-c", "SHOW server_version").stdout.strip()
    statements = queries()
    script = explain_script([s for _, s in statements], REPEATS)
    plans = parse_plans(run("-f", "-", stdin=script).stdout)
    return weight_from(shapes_of(statements, plans), command, version)


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"
