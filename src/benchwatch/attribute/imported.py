"""Which installed distributions a server really ran code from, read from its strace trace.

Python opens the file of every module it imports (the `.pyc` in `__pycache__`, or the `.py`) and
the dynamic loader opens every extension module (`.so`); strace writes each `openat` with its path
(paths are written whole, even with `-s 0`). Each opened file under a `site-packages` folder is
looked up in that folder's `*.dist-info/RECORD` files, which list every file a distribution
installed. A distribution none of whose modules was opened, from boot through every counted
request, ran no code in the server: a step that moves only such distributions cannot move the
server's counts, and attribute leaves it out (said in its row). Reading a distribution's metadata
(`.dist-info/`, as `importlib.metadata` does at boot) is not running its code and is not counted."""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

from benchwatch.declarations.stacks import normalize_package

SITE = "site-packages"
CODE = (".py", ".pyc", ".so", ".pyd")
# `openat(AT_FDCWD, "/…/site-packages/pkg/x.py", O_RDONLY|O_CLOEXEC) = 3`, or the call's first half
# when another thread's call interrupted it in the trace (`<unfinished ...>`)
_OPENED = re.compile(
    r'\bopen(?:at2?)?\((?:[A-Z_]+|\d+)?,?\s*"([^"]*/site-packages/[^"]+)"[^=]*(?:= (-?\d+)|<unfinished)'
)
_PYC = re.compile(r"^(?P<folder>(?:.*/)?)__pycache__/(?P<module>[^/.]+)\.[^/]*\.pyc$")


class TraceUnreadable(Exception):
    """A trace that is missing or cannot be read."""


def opened_code(trace: Path) -> set[str]:
    """Every module file (by absolute path) the traced processes opened under a site-packages folder."""
    try:
        text = trace.read_text(errors="replace")
    except OSError as exc:
        raise TraceUnreadable(f"{trace}: {exc.strerror or exc}") from None
    found = set()
    for matched in _OPENED.finditer(text):
        path, result = matched.group(1), matched.group(2)
        if (result is None or not result.startswith("-")) and path.endswith(CODE):
            found.add(path)
    return found


def owners(site: Path) -> dict[str, str]:
    """{file path relative to `site`: the distribution that installed it}, from every RECORD there."""
    found: dict[str, str] = {}
    for record in sorted(site.glob("*.dist-info/RECORD")):
        name = normalize_package(record.parent.name.removesuffix(".dist-info").rsplit("-", 1)[0])
        try:
            lines = record.read_text(errors="replace").splitlines()
        except OSError:
            continue
        for line in lines:
            relative = line.split(",", 1)[0].strip()
            if relative and not relative.startswith(".."):
                found[relative] = name
    return found


def owner(relative: str, installed: dict[str, str]) -> str | None:
    """The distribution of an opened module file: the file itself, or the source of a cached `.pyc`."""
    if relative in installed:
        return installed[relative]
    cached = _PYC.match(relative)
    if cached:
        return installed.get(f"{cached['folder']}{cached['module']}.py")
    return None


def imported(traces: Iterable[Path]) -> set[str]:
    """The distributions (normalized names) whose modules the traced servers opened; raises
    TraceUnreadable when a trace cannot be read."""
    by_site: dict[Path, dict[str, str]] = {}
    found: set[str] = set()
    for trace in traces:
        for path in opened_code(trace):
            head, _, relative = path.partition(f"/{SITE}/")
            site = Path(f"{head}/{SITE}")
            if site not in by_site:
                by_site[site] = owners(site)
            name = owner(relative, by_site[site])
            if name is not None:
                found.add(name)
    return found


def unimported(moved: Iterable[str], ran: set[str]) -> list[str]:
    """The moved distributions the servers ran no code of: all of them means the step cannot move a count."""
    return sorted(p for p in moved if normalize_package(p) not in ran)
