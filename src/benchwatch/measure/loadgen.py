"""oha: find or install it, build its command line, run it bounded in time, judge its answer."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchwatch.declarations.redaction import redact
from benchwatch.errors import UserError

OHA_ENV = "BENCHWATCH_OHA"
DEADLINE_ABORT = "aborted due to deadline"
BOTTLENECK_SHARE = 0.9
_GRACE_SECONDS = 30.0


def find_oha() -> str | None:
    configured = os.environ.get(OHA_ENV)
    if configured:
        if not (Path(configured).is_file() and os.access(configured, os.X_OK)):
            raise UserError(f"{OHA_ENV}={configured}: not an executable file")
        return configured
    found = shutil.which("oha")
    if found:
        return found
    in_cargo = Path.home() / ".cargo" / "bin" / "oha"
    return str(in_cargo) if in_cargo.is_file() else None


def ensure_oha(install: bool = True) -> str:
    """The oha executable; installed with cargo for this user when it is missing and cargo is not."""
    found = find_oha()
    if found:
        return found
    cargo = shutil.which("cargo") or _cargo_in_home()
    if cargo is None or not install:
        raise UserError(
            "oha not found on PATH or in ~/.cargo/bin: install Rust (https://rustup.rs) and run "
            "`cargo install oha --locked`, or put a release binary from "
            f"https://github.com/hatoo/oha/releases on PATH (or set {OHA_ENV})"
        )
    print(
        "oha not found: installing it with `cargo install oha --locked` (a few minutes)...",
        file=sys.stderr,
        flush=True,
    )
    try:
        done = subprocess.run([cargo, "install", "oha", "--locked"], timeout=1800)
    except subprocess.TimeoutExpired:
        raise UserError(
            "`cargo install oha --locked` took over 30 minutes; install oha by hand"
        ) from None
    found = find_oha()
    if done.returncode != 0 or found is None:
        raise UserError("`cargo install oha --locked` failed (see above); install oha by hand")
    return found


def _cargo_in_home() -> str | None:
    cargo = Path.home() / ".cargo" / "bin" / "cargo"
    return str(cargo) if cargo.is_file() else None


def oha_version(oha: str) -> str:
    done = subprocess.run([oha, "--version"], capture_output=True, text=True, timeout=30)
    return done.stdout.strip().removeprefix("oha ").strip() or "unknown"


@dataclass(frozen=True)
class LoadSpec:
    """One oha run: closed loop when `rate` is None, open loop at `rate` req/s otherwise."""

    url: str
    duration: float
    concurrency: int
    rate: int | None = None
    requests: int | None = None  # a fixed number of requests instead of a duration (slow endpoints)
    method: str = "GET"
    body: bytes | None = None
    content_type: str | None = None
    headers: tuple[tuple[str, str], ...] = ()  # on oha's command line while it runs; never recorded


def build_argv(oha: str, spec: LoadSpec, body_path: Path | None = None) -> list[str]:
    amount = ["-n", str(spec.requests)] if spec.requests else ["-z", f"{spec.duration:g}s", "-w"]
    argv = [
        oha,
        *amount,
        "-c",
        str(spec.concurrency),
        "--no-tui",
        "--output-format",
        "json",
        "-m",
        spec.method,
    ]
    if spec.rate is not None:
        argv += ["-q", str(spec.rate), "--latency-correction"]
    if spec.body is not None:
        if body_path is None:
            raise ValueError("a request body needs a file to pass to oha -D")
        argv += ["-D", str(body_path)]
    if spec.content_type:
        argv += ["-T", spec.content_type]
    for name, value in spec.headers:
        argv += ["-H", f"{name}: {value}"]
    argv.append(spec.url)
    return argv


@dataclass
class Outcome:
    """What one oha run says, judged: valid only with 2xx answers and no real errors."""

    successes: int = 0
    elapsed: float = 0.0
    p50_ms: float | None = None
    p99_ms: float | None = None
    non_2xx: dict[str, int] = field(default_factory=dict)
    errors: dict[str, int] = field(default_factory=dict)
    deadline_aborts: int = 0
    problems: list[str] = field(default_factory=list)

    @property
    def valid(self) -> bool:
        return not self.problems

    @property
    def rps(self) -> float:
        return self.successes / self.elapsed if self.elapsed > 0 else 0.0


def judge(data: dict[str, Any]) -> Outcome:
    """Read oha's JSON; requestsPerSec and successRate are not trusted (they count failures)."""
    outcome = Outcome()
    try:
        outcome.elapsed = float(data["summary"]["total"])
        statuses = {str(k): int(v) for k, v in (data.get("statusCodeDistribution") or {}).items()}
        errors = {str(k): int(v) for k, v in (data.get("errorDistribution") or {}).items()}
    except (KeyError, TypeError, ValueError) as exc:
        outcome.problems.append(f"unreadable oha output ({type(exc).__name__}: {exc})")
        return outcome
    outcome.successes = sum(n for code, n in statuses.items() if code.startswith("2"))
    outcome.non_2xx = {code: n for code, n in statuses.items() if not code.startswith("2")}
    outcome.deadline_aborts = errors.pop(DEADLINE_ABORT, 0)
    outcome.errors = errors
    percentiles = data.get("latencyPercentiles") or {}
    for key, attribute in (("p50", "p50_ms"), ("p99", "p99_ms")):
        value = percentiles.get(key)
        if isinstance(value, int | float):
            setattr(outcome, attribute, value * 1000.0)
    if outcome.non_2xx:
        shown = ", ".join(f"{n}x {code}" for code, n in sorted(outcome.non_2xx.items()))
        outcome.problems.append(f"non-2xx responses: {shown} (and {outcome.successes} 2xx)")
    if outcome.errors:
        shown = "; ".join(f"{n}x {reason}" for reason, n in sorted(outcome.errors.items()))
        outcome.problems.append(f"request errors: {shown}")
    if outcome.successes == 0 and not outcome.problems:
        outcome.problems.append("no successful response")
    if outcome.successes and (outcome.p50_ms is None or outcome.p99_ms is None):
        outcome.problems.append("oha reported no latency percentiles")
    return outcome


@dataclass
class OhaRun:
    argv: list[str]
    outcome: Outcome
    wall_seconds: float
    cpu_seconds: float
    cores: int

    @property
    def cpu_share(self) -> float:
        """oha's CPU time over the wall time of the cores it could use (1.0 = all of them busy)."""
        return self.cpu_seconds / (self.wall_seconds * self.cores) if self.wall_seconds > 0 else 0.0

    @property
    def bottleneck(self) -> bool:
        return self.cpu_share > BOTTLENECK_SHARE


def run_oha(oha: str, spec: LoadSpec, cores: list[int] | None = None) -> OhaRun:
    """Run oha once (pinned to `cores` with taskset when possible); never longer than D + 30 s."""
    with tempfile.TemporaryDirectory(prefix="benchwatch-oha-") as scratch_name:
        scratch = Path(scratch_name)
        body_path = None
        if spec.body is not None:
            body_path = scratch / "body"
            body_path.write_bytes(spec.body)
        argv = build_argv(oha, spec, body_path)
        taskset = shutil.which("taskset") if cores else None
        command = [taskset, "-c", ",".join(map(str, cores or [])), *argv] if taskset else argv
        out_path, err_path = scratch / "out.json", scratch / "err.txt"
        with open(out_path, "wb") as out, open(err_path, "wb") as err:
            started = time.monotonic()
            process = subprocess.Popen(command, stdout=out, stderr=err, stdin=subprocess.DEVNULL)
            status, cpu = _wait_bounded(process, spec.duration * 3 + _GRACE_SECONDS)
            wall = time.monotonic() - started
        used_cores = len(cores) if taskset and cores else (os.cpu_count() or 1)
        if status != 0:
            tail = redact(err_path.read_text(errors="replace").strip()[-2000:])[-300:]
            reason = "killed after its time limit" if status is None else f"exited with {status}"
            return OhaRun(argv, Outcome(problems=[f"oha {reason}: {tail}"]), wall, cpu, used_cores)
        try:
            data = json.loads(out_path.read_text())
        except ValueError:
            outcome = Outcome(problems=["oha wrote no JSON"])
        else:
            outcome = judge(data)
    return OhaRun(argv, outcome, wall, cpu, used_cores)


def _wait_bounded(process: subprocess.Popen, limit: float) -> tuple[int | None, float]:
    """(exit code or None when killed at the limit, user+sys CPU seconds of the child)."""
    killed = threading.Event()

    def kill_at_limit() -> None:
        killed.set()
        process.kill()

    timer = threading.Timer(limit, kill_at_limit)
    timer.start()
    try:
        _pid, status, usage = os.wait4(process.pid, 0)
    except BaseException:
        process.kill()
        process.wait()
        raise
    finally:
        timer.cancel()
    process.returncode = os.waitstatus_to_exitcode(status)
    code = None if killed.is_set() else process.returncode
    return code, usage.ru_utime + usage.ru_stime
