"""Allocations per request: the calls into CPython's object allocator in a counted phase's callgrind
file, the idle window's taken off as for instructions (counts/target_counts.py). Shown as the
mechanism beside retained memory (its figure's detail), never judged on their own.

CPython 3.11 routes `PyObject_Malloc`, `PyMem_Malloc` and the object constructors that call the
domain's function directly (`_PyLong_New`, …) through pymalloc's `_PyObject_Malloc` and
`_PyObject_Calloc`, called through the allocator table's function pointers, so they are never
inlined: the `calls=` lines whose callee is one of them are every allocation the object and
`PyMem_` domains made, a request for more than 512 bytes included (pymalloc hands those to
`PyMem_RawMalloc` inside the call). `_PyObject_Realloc` (a resize) is not an allocation here.
What they cannot see: `PyMem_RawMalloc` called directly, and `malloc` from C or Rust code
(pydantic-core's, uvloop's and libuv's buffers, SQLite's pages)."""

from __future__ import annotations

import re
from pathlib import Path

from benchwatch.counts.callgrind import CallgrindError, _name

ALLOCATORS = frozenset({"_PyObject_Malloc", "_PyObject_Calloc"})
ALLOCATIONS = "allocations"  # the detail key (retained memory's figure) of allocations per request
_RECURSION = re.compile(r"'\d+$")


def allocations(path: Path) -> int:
    """Calls into the object allocator (ALLOCATORS) that one callgrind file counted."""
    try:
        text = path.read_text(errors="replace")
    except OSError as exc:
        raise CallgrindError(f"{path}: cannot read the callgrind output ({exc.strerror})") from None
    functions: dict[str, str] = {}
    callee = ""
    found = 0
    for line in text.splitlines():
        if line.startswith("calls="):
            if callee in ALLOCATORS:
                found += int(line[6:].split()[0])
        elif line.startswith("cfn="):
            callee = _RECURSION.sub("", _name(functions, line[4:], path))
        elif line.startswith("fn="):  # a function named here may be called by that name later
            _name(functions, line[3:], path)
    return found
