"""The asv `time_` cases of a benchmark package, found and checked in a stack's environment by
runner.py (asv's discovery conventions, no second list of benchmarks)."""

from __future__ import annotations

import json
import os
import re
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

RUNNER = Path(__file__).resolve().parent / "runner.py"
NATIVE_TIMEOUT_S = 300


class RunnerError(Exception):
    """runner.py failed outside valgrind: the benchmark package does not import or run."""


@dataclass(frozen=True)
class Case:
    key: str  # asv's benchmark name: module.Class.time_method
    combo: int  # index into the product of its params
    name: str  # asv's name with parameters: module.Class.time_method('services')
    labels: tuple[str, ...]  # the parameter values as text

    @property
    def ident(self) -> str:
        """How runner.py names the case in its reports: `key#combo`."""
        return f"{self.key}#{self.combo}"

    @property
    def operation(self) -> str:
        return self.key.rsplit(".", 1)[-1].removeprefix("time_")

    @property
    def short(self) -> str:
        """`services validate_json`: the words of the timing figure's name."""
        return " ".join([*self.labels, self.operation])


def runner_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """A small, fixed environment: the child's memory layout (environment strings sit on its
    stack) is the same in every run, and string hashing is seeded."""
    env = {k: os.environ[k] for k in ("PATH", "HOME", "LANG", "TMPDIR") if k in os.environ}
    env["PYTHONHASHSEED"] = "0"
    env.update(extra or {})
    return env


def plan_argv(
    python: Path, benchmark_dir: Path, mode: str, cases: Sequence[Case], **plan: object
) -> list[str]:
    spec = {"cases": [[c.key, c.combo] for c in cases], **plan}
    return [str(python), str(RUNNER), mode, str(benchmark_dir), json.dumps(spec)]


def _native(argv: list[str], benchmark_dir: Path, env: Mapping[str, str]) -> str:
    try:
        done = subprocess.run(
            argv,
            capture_output=True,
            text=True,
            env=dict(env),
            cwd=benchmark_dir.parent,
            timeout=NATIVE_TIMEOUT_S,
        )
    except subprocess.TimeoutExpired:
        raise RunnerError(f"`runner.py {argv[2]}` took longer than {NATIVE_TIMEOUT_S} s") from None
    if done.returncode != 0:
        tail = " | ".join(done.stderr.strip().splitlines()[-3:])
        raise RunnerError(f"`runner.py {argv[2]}` failed: {tail}")
    return done.stdout.strip().splitlines()[-1]


def discover(python: Path, benchmark_dir: Path, env: Mapping[str, str]) -> list[Case]:
    out = _native([str(python), str(RUNNER), "discover", str(benchmark_dir)], benchmark_dir, env)
    return [Case(c["key"], c["combo"], c["name"], tuple(c["labels"])) for c in json.loads(out)]


def select(
    cases: Sequence[Case], patterns: Sequence[str], within: Sequence[str] = ()
) -> list[Case]:
    """Cases matching any of `patterns` and, if given, any of `within` (asv's --bench: a regex
    searched in the name, with or without its parameters)."""

    def hit(case: Case, regexes: Sequence[str]) -> bool:
        return any(re.search(r, case.key) or re.search(r, case.name) for r in regexes)

    return [
        c for c in cases if (not patterns or hit(c, patterns)) and (not within or hit(c, within))
    ]


@dataclass(frozen=True)
class Checked:
    working: dict[Case, float]  # CPU seconds per call, natively
    skipped: dict[Case, str]
    failed: dict[Case, str]


def check(
    python: Path, benchmark_dir: Path, cases: Sequence[Case], env: Mapping[str, str]
) -> Checked:
    """Builds and calls every case a few times, natively (a failure is that case's alone)."""
    report = json.loads(
        _native(plan_argv(python, benchmark_dir, "check", cases), benchmark_dir, env)
    )
    by_id = {c.ident: c for c in cases}
    return Checked(
        working={by_id[k]: v for k, v in report["seconds"].items()},
        skipped={by_id[k]: v for k, v in report["skipped"].items()},
        failed={by_id[k]: v for k, v in report["failed"].items()},
    )
