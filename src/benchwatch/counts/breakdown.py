"""Where the instructions went: base's and head's callgrind files of one endpoint, per request,
by shared object (libpython, pydantic_core, uvloop/libuv, httptools, …) and by function.

Callgrind names each function's object (`ob=`), so nothing is guessed from symbol names. What
it cannot name: Python code. The apps' and libraries' .py code runs inside the interpreter, so
its instructions are libpython's (`_PyEval_EvalFrameDefault` and the C functions it calls);
py-spy (`compare --profile`) says which Python functions those were."""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from pydantic import BaseModel

from benchwatch.counts.callgrind import read

INTERPRETER = "libpython"
_RECURSION = re.compile(r"'\d+$")
# callgrind's name for a function it found no symbol of (a stripped object: Debian's python3.11)
_ADDRESS = re.compile(r"^0x[0-9a-fA-F]+$")
UNNAMED_SHARE = 0.01  # a part whose unnamed functions hold this share of its instructions is said
# the top folder under site-packages → the name a reader knows
PACKAGES = {"uvloop": "uvloop/libuv", "pydantic_core": "pydantic_core", "httptools": "httptools"}


def object_group(path: str) -> str:
    """The part a shared object belongs to: a package under site-packages by its folder, the
    interpreter (executable and libpython), CPython's own extension modules, or the file name."""
    parts = PurePosixPath(path).parts
    name = parts[-1] if parts else path
    if "site-packages" in parts:
        below = parts[parts.index("site-packages") + 1 :]
        if len(below) > 1:
            return PACKAGES.get(below[0], below[0])
    if name.startswith(("libpython", "python3", "python")):
        return INTERPRETER
    if "lib-dynload" in parts:
        return "CPython extension modules"
    if name.startswith("vgpreload"):
        return "valgrind"
    if name.startswith("ld-linux"):
        return "ld.so"
    for library in ("libc", "libm", "libz", "libssl", "libcrypto", "libffi", "libsqlite3"):
        if name.startswith(library + "."):
            return library
    return name


@dataclass(frozen=True)
class Part:
    name: str
    base: float  # instructions per request
    head: float

    @property
    def change(self) -> float:
        return self.head - self.base


@dataclass(frozen=True)
class Breakdown:
    base: float  # all instructions per request
    head: float
    objects: list[Part]  # by the size of their change, largest first
    functions: list[Part]  # the `top` named functions by the size of their change
    # parts whose functions are partly without a name (no symbol table): part -> share of its
    # instructions in unnamed functions, per side. Addresses differ between two builds, so an
    # unnamed function is never paired across sides (it would seem to go to 0 and another to appear)
    unnamed: dict[str, tuple[float, float]] = field(default_factory=dict)

    @property
    def change(self) -> float:
        return self.head - self.base


def _per_request(files: Sequence, requests: int) -> tuple[float, dict[tuple[str, str], float]]:
    if not files or requests < 1:
        raise ValueError("a breakdown needs at least one callgrind file of at least one request")
    total = 0
    functions: dict[tuple[str, str], int] = defaultdict(int)
    for path in files:
        profile = read(path)
        total += profile.total
        for (obj, function), cost in profile.by_function.items():
            # callgrind keeps recursion levels apart (`f'2`): one function for a reader
            functions[(object_group(obj), _RECURSION.sub("", function))] += cost
    scale = 1.0 / (requests * len(files))
    return total * scale, {key: cost * scale for key, cost in functions.items()}


def breakdown(
    base_files: Sequence, head_files: Sequence, requests: int | tuple[int, int], top: int = 10
) -> Breakdown:
    """`requests`: the requests each file counted (one number, or base's and head's)."""
    base_n, head_n = requests if isinstance(requests, tuple) else (requests, requests)
    base_total, base = _per_request(base_files, base_n)
    head_total, head = _per_request(head_files, head_n)
    keys = set(base) | set(head)
    objects: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0])
    for group, function in keys:
        objects[group][0] += base.get((group, function), 0.0)
        objects[group][1] += head.get((group, function), 0.0)
    by_change = sorted(
        (Part(g, b, h) for g, (b, h) in objects.items()), key=lambda p: (-abs(p.change), p.name)
    )
    unnamed = _unnamed(base, head, objects)
    # in a part with unnamed functions, a function named on one side only may be unnamed on the other
    named = [
        key
        for key in keys
        if not _ADDRESS.match(key[1]) and (key[0] not in unnamed or (key in base and key in head))
    ]
    functions = sorted(
        (
            Part(
                f"{function} ({group})",
                base.get((group, function), 0.0),
                head.get((group, function), 0.0),
            )
            for group, function in named
        ),
        key=lambda p: (-abs(p.change), p.name),
    )
    return Breakdown(base_total, head_total, by_change, functions[:top], unnamed)


def _unnamed(
    base: dict, head: dict, objects: dict[str, list[float]]
) -> dict[str, tuple[float, float]]:
    shares: dict[str, tuple[float, float]] = {}
    for group, totals in objects.items():
        side_shares = []
        for side, total in zip((base, head), totals, strict=True):
            unnamed = sum(
                cost
                for (g, function), cost in side.items()
                if g == group and _ADDRESS.match(function)
            )
            side_shares.append(unnamed / total if total else 0.0)
        if max(side_shares) >= UNNAMED_SHARE:
            shares[group] = (side_shares[0], side_shares[1])
    return shares


class ObjectCount(BaseModel):
    """One part's instructions per request, base and head (a shared object, or the interpreter)."""

    name: str
    base: float
    head: float


class ByObject(BaseModel):
    """Where the instructions went, as data (compare.json, attribution.json): all instructions per
    request on each side, and the parts `render` gives a row, largest change first."""

    base: float
    head: float
    objects: list[ObjectCount] = []
    # the named functions whose own (self) instructions per request moved most, `function (part)`
    functions: list[ObjectCount] = []


def by_object(found: Breakdown, *, objects: int = 8, functions: int = 5) -> ByObject:
    parts = [p for p in found.objects if _worth_a_row(p, found.base)][:objects]
    moved = [p for p in found.functions if round(p.change) != 0][:functions]
    count = lambda p: ObjectCount(name=p.name, base=round(p.base, 1), head=round(p.head, 1))  # noqa: E731
    return ByObject(
        base=round(found.base, 1),
        head=round(found.head, 1),
        objects=[count(p) for p in parts],
        functions=[count(p) for p in moved],
    )


def render(found: Breakdown, *, objects: int = 8) -> str:
    """Two short markdown tables: by shared object, then the functions that changed most."""
    lines = [
        "| where | base instr/req | head instr/req | change |",
        "|---|---:|---:|---:|",
        *(
            _row(p, found.base)
            for p in [p for p in found.objects if _worth_a_row(p, found.base)][:objects]
        ),
        _row(Part("**all**", found.base, found.head), found.base),
        "",
        "| function (object) | base | head | change |",
        "|---|---:|---:|---:|",
        *(_row(p, found.base) for p in found.functions),
    ]
    for group, (base, head) in sorted(found.unnamed.items()):
        lines += [
            "",
            f"{group}: {base:.0%} of base's and {head:.0%} of head's instructions are in functions "
            "without a name (its build has no symbol table), left out of the function table",
        ]
    return "\n".join(lines) + "\n"


def _worth_a_row(part: Part, reference: float) -> bool:
    """A part that changed, or that holds at least 1 % of the instructions."""
    return round(part.change) != 0 or max(part.base, part.head) >= 0.01 * reference


def _row(part: Part, reference: float) -> str:
    share = f" ({part.change / reference:+.2%})" if reference else ""
    return f"| {part.name} | {part.base:,.0f} | {part.head:,.0f} | {part.change:+,.0f}{share} |"
