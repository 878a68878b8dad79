"""valgrind's callgrind as the server's instruction counter: one server, dumped between phases.

Callgrind, not cachegrind: its `dump` command writes the counts since the last dump and zeroes
them while the server keeps running, so one boot yields every phase (cachegrind only writes at
exit: one boot per count). Its files also name each function's shared object (`ob=`), which says
where instructions went (benchwatch.counts.breakdown).

The commands go straight to `vgdb` (what the perl `callgrind_control` runs, after a `vgdb -l` of
its own), told to force its way in after 1 ms: a server held still for a dump sits in system
calls, runs no code that would poll for the command, so vgdb waits `--max-invoke-ms` (100 by
default) before it interrupts it over ptrace. Measured on hello at load 9-12: a dump 0.50 s
through callgrind_control, 0.29-0.33 s this way (docs/counts.md)."""

from __future__ import annotations

import re
import shutil
import subprocess
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from benchwatch.measure.valgrind import INSTALL_HINT, no_randomization

DUMP_TIMEOUT_S = 120.0
# vgdb forces a blocked server to take the command after this long (0 would never force it)
FORCE_AFTER_MS = 1
_NAMED = re.compile(r"^\((\d+)\)(?: (.*))?$")


class CallgrindError(Exception):
    """A dump that failed, or a callgrind file that cannot be read."""


def unavailable_reason() -> str | None:
    """None when valgrind and its vgdb are here, else one line saying what to install."""
    for program in ("valgrind", "vgdb"):
        if shutil.which(program) is None:
            return f"{program} not found on PATH: no instruction counts; {INSTALL_HINT}"
    return None


def wrap(out_file: Path) -> list[str]:
    """The command that runs a server under callgrind counting instructions (no cache simulation),
    address-space randomization off (`setarch -R`). `out_file` gets `.N` per dump.

    Instrumentation starts off: the boot (imports) runs about 4x faster uninstrumented
    (`import apps.services.app`: 2.5 s against 11.8 s here, 2.9 s under `--tool=none`);
    `instrument(pid, True)` turns counting on once the server answers."""
    valgrind = shutil.which("valgrind") or "valgrind"
    return [
        *no_randomization(),
        valgrind,
        "--tool=callgrind",
        "--instr-atstart=no",
        f"--callgrind-out-file={out_file}",
    ]


def dump(pid: int, label: str) -> None:
    """Ask the callgrind process `pid` to write and zero its counts (its next file, `.N`).
    Without ptrace rights vgdb cannot force its way in and waits for the server to run some code:
    a uvicorn server wakes every 0.1 s, so the dump still comes."""
    _control(pid, "dump", label)


def instrument(pid: int, on: bool) -> None:
    """Turn the counting of the callgrind process `pid` on or off. Off, the server runs several
    times faster and counts nothing; the program itself runs the same instructions either way."""
    _control(pid, "instrumentation", "on" if on else "off")


def _control(pid: int, *command: str) -> None:
    vgdb = shutil.which("vgdb") or "vgdb"
    what = command[0]
    try:
        done = subprocess.run(
            [vgdb, f"--max-invoke-ms={FORCE_AFTER_MS}", f"--pid={pid}", *command],
            capture_output=True,
            text=True,
            timeout=DUMP_TIMEOUT_S,
        )
    except subprocess.TimeoutExpired:
        raise CallgrindError(f"vgdb {what} took over {DUMP_TIMEOUT_S:g} s") from None
    # a monitor command callgrind does not know still exits 0, saying so on stdout
    if done.returncode != 0 or "not recognised" in done.stdout:
        said = (done.stdout + done.stderr).strip().splitlines()
        raise CallgrindError(f"vgdb {what} failed: {' | '.join(said[-2:])}")


def dump_file(out_file: Path, number: int) -> Path:
    return out_file.with_name(f"{out_file.name}.{number}")


@dataclass
class Profile:
    """One callgrind file: the total, and the self instructions per (shared object, function)."""

    total: int
    trigger: str
    by_function: dict[tuple[str, str], int]


def read_total(path: Path) -> int:
    return read(path, functions=False).total


def read(path: Path, *, functions: bool = True) -> Profile:
    """Parse a callgrind file (names compressed as `(id) name`, first use only). A cost line
    right after `calls=` is the inclusive cost of that call and belongs to the callee, so it is
    not counted as the caller's own."""
    try:
        text = path.read_text(errors="replace")
    except OSError as exc:
        raise CallgrindError(f"{path}: cannot read the callgrind output ({exc.strerror})") from None
    names: dict[str, dict[str, str]] = {"ob": {}, "fn": {}}
    by_function: dict[tuple[str, str], int] = defaultdict(int)
    total = None
    trigger = ""
    column = None
    obj = function = "???"
    skip_next = False
    for line in text.splitlines():
        if not line:
            continue
        head = line[0]
        if head.isdigit() or head in "+-*":
            if skip_next:
                skip_next = False
                continue
            if functions and column is not None:
                fields = line.split()
                if len(fields) > column:
                    by_function[(obj, function)] += int(fields[column])
            continue
        key, _, value = line.partition("=")
        if key in ("ob", "fn"):
            name = _name(names[key], value, path)
            if key == "ob":
                obj = name
            else:
                function = name
        elif key in ("cob", "cfn"):  # a callee: its name may be defined here for later lines
            _name(names["ob" if key == "cob" else "fn"], value, path)
        elif key == "calls":
            skip_next = True
        elif line.startswith("events:"):
            events = line.split(":", 1)[1].split()
            if "Ir" not in events:
                raise CallgrindError(f"{path}: no Ir (instructions) event")
            column = 1 + events.index("Ir")  # after the one position column (`positions: line`)
        elif line.startswith(("summary:", "totals:")) and total is None:
            totals = line.split(":", 1)[1].split()
            total = int(totals[0]) if totals and totals[0].isdigit() else None
        elif line.startswith("desc: Trigger:"):
            trigger = line.split(":", 2)[2].strip()
        elif line.startswith("positions:") and line.split(":", 1)[1].split() != ["line"]:
            raise CallgrindError(
                f"{path}: positions {line.split(':', 1)[1].strip()!r}, want `line`"
            )
    if total is None:
        raise CallgrindError(f"{path}: no `summary:` line; not a callgrind output file")
    return Profile(total=total, trigger=trigger, by_function=dict(by_function))


def _name(table: dict[str, str], value: str, path: Path) -> str:
    found = _NAMED.match(value)
    if found is None:
        return value
    number, name = found.groups()
    if name is not None:
        table[number] = name
        return name
    if number not in table:
        raise CallgrindError(f"{path}: name ({number}) used before it was defined")
    return table[number]
