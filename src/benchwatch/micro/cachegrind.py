"""valgrind's cachegrind as an instruction counter: the command line and its output file."""

from __future__ import annotations

import shutil
from pathlib import Path

from benchwatch.measure.valgrind import INSTALL_HINT, no_randomization


class CachegrindError(Exception):
    """A cachegrind output file that cannot be read as an instruction total."""


def unavailable_reason() -> str | None:
    """None when valgrind can count instructions here, else one line saying what to install."""
    if shutil.which("valgrind") is None:
        return f"valgrind not found on PATH: no instruction counts; {INSTALL_HINT}"
    return None


def command(argv: list[str], out_file: Path) -> list[str]:
    """`argv` under cachegrind counting instructions only (no cache or branch simulation)."""
    valgrind = shutil.which("valgrind") or "valgrind"
    return [
        *no_randomization(),
        valgrind,
        "--tool=cachegrind",
        "--cache-sim=no",
        "--branch-sim=no",
        f"--cachegrind-out-file={out_file}",
        *argv,
    ]


def read_total(path: Path) -> int:
    """The total of the `Ir` event (instructions executed) from a cachegrind output file:
    the `events:` line names the columns, the `summary:` line holds the program totals."""
    try:
        text = path.read_text()
    except OSError as exc:
        raise CachegrindError(
            f"{path}: cannot read the cachegrind output ({exc.strerror})"
        ) from None
    events: list[str] | None = None
    summary: list[str] | None = None
    for line in text.splitlines():
        if line.startswith("events:"):
            events = line.split(":", 1)[1].split()
        elif line.startswith("summary:"):
            summary = line.split(":", 1)[1].split()
    if events is None or summary is None:
        raise CachegrindError(f"{path}: no `events:`/`summary:` line; not a cachegrind output file")
    if "Ir" not in events or len(summary) != len(events):
        raise CachegrindError(f"{path}: the summary holds no Ir (instructions) total")
    value = summary[events.index("Ir")]
    if not value.isdigit():
        raise CachegrindError(f"{path}: Ir total {value!r} is not a whole number")
    return int(value)
