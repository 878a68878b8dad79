"""What a measuring command sets up once: its output folder, oha and its version (when it
load-tests), the environment fingerprint, the servers' cleanup at exit (when benchwatch is killed,
the guard's: measure/guard.py, which every server's launch registers with), and the runs it records.

A command opens one session (`open_session`) at the point where it is about to write or measure,
after its input has been checked, so bad input leaves nothing behind. A command made of other
commands' work (attribute's steps, bisect's probes: compares) hands its session down with
`within=`: one fingerprint, one oha, one cleanup; each part only gets its own folder."""

from __future__ import annotations

import dataclasses
import datetime as dt
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from benchwatch.results.files import ensure_writable
from benchwatch.results.schema import Environment, Run

RESULTS_DIR = "results"


@dataclass(frozen=True)
class Session:
    out: Path  # created and writable
    environment: Environment  # the fingerprint; runs get a copy
    oha: str | None = None  # found (or installed) when the command load-tests
    command: tuple[str, ...] = ()

    def start_run(self, command: Sequence[str] | None = None) -> Run:
        """A run record started now, with a copy of the fingerprint (its `stacks` are the run's own)."""
        return start_run(command or self.command, self.environment)


def open_session(
    root: Path,
    out: Path | None = None,
    *,
    name: str = "",
    load_tests: bool = False,
    within: Session | None = None,
    command: Sequence[str] | None = None,
) -> Session:
    """The session of a command in the project at `root`: `out`, or `results/<name>-<time>` there
    (`results/<time>` without a name), created; oha when `load_tests`. `within`: the session of
    the command this is a part of; only the folder is new."""
    folder = out or default_out(root, name)
    ensure_writable(folder, chosen=out is not None)
    if within is not None and (within.oha is not None or not load_tests):
        return dataclasses.replace(within, out=folder)
    from benchwatch.measure import loadgen
    from benchwatch.measure.stopping import install_cleanup
    from benchwatch.results import fingerprint

    oha = loadgen.ensure_oha() if load_tests else None
    install_cleanup()
    environment = fingerprint.collect(root, loadgen.oha_version(oha) if oha else None)
    argv = tuple(command) if command is not None else ("benchwatch", *sys.argv[1:])
    return Session(out=folder, environment=environment, oha=oha, command=argv)


def default_out(root: Path, name: str = "") -> Path:
    stamp = dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    return root / RESULTS_DIR / (f"{name}-{stamp}" if name else stamp)


def start_run(command: Sequence[str], environment: Environment) -> Run:
    return Run(
        started_at=now(), command=list(command), environment=environment.model_copy(deep=True)
    )


def now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
