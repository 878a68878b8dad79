"""One colour per stack, in every chart of the report and the site; flavors of one app are told
apart by pattern (bars), dash and marker (lines), never by another colour.

The colours are mid-tones that keep at least 3:1 contrast against both the light and the dark
background of the pages (white and #15171a), so one definition serves both themes."""

from __future__ import annotations

import zlib
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

from benchwatch.figures import figure_key
from benchwatch.figures.figure_key import app_of

STACK_COLORS = {
    "seed-v1": "#d97706",  # amber
    "seed-v2": "#9333ea",  # purple
    "v1-last": "#db2777",  # pink
    "v2-pre-rust": "#0d9488",  # teal
    "latest": "#2563eb",  # blue
    "next": "#65a30d",  # green
}
# stacks we do not know (a user's stacks.toml, `own`): picked by a stable hash of the name
FALLBACK_COLORS = (
    "#0891b2",
    "#dc2626",
    "#4f46e5",
    "#a16207",
    "#059669",
    "#c026d3",
    "#ea580c",
    "#475569",
)
DASHES = ("", "7 4", "2 3", "9 3 2 3", "4 4 1 4")
MARKERS = ("circle", "square", "triangle", "diamond", "cross")
HATCHES = ("", "diagonal", "dots", "cross-hatch", "horizontal")


def stack_color(stack: str) -> str:
    if stack in STACK_COLORS:
        return STACK_COLORS[stack]
    return FALLBACK_COLORS[zlib.crc32(stack.encode()) % len(FALLBACK_COLORS)]


def split_variant(variant: str) -> tuple[str, str]:
    """`hello-starlette@latest` -> ("hello-starlette", "latest"); no `@`: the whole text is the
    stack (a chart keyed by stack)."""
    return figure_key.split_variant(variant) or ("", variant)


@dataclass(frozen=True)
class Style:
    color: str
    stack: str
    flavor: int  # 0 = the plain app; 1, 2, … = its flavors, in name order
    dash: str
    marker: str
    hatch: str


# an app's flavors, numbered in the order charts first drew them, while shared_flavors() is open
_SHARED: ContextVar[dict[str, list[str]] | None] = ContextVar("shared_flavors", default=None)


@contextmanager
def shared_flavors() -> Iterator[None]:
    """Within it, every chart numbers an app's flavors alike: a flavor keeps the number (pattern,
    dash, marker) the first chart that drew it gave it, whichever flavors a later chart holds.
    The site and the report are drawn inside one; nested, the outer numbering holds."""
    token = _SHARED.set({}) if _SHARED.get() is None else None
    try:
        yield
    finally:
        if token is not None:
            _SHARED.reset(token)


def styles(series: Iterable[str]) -> dict[str, Style]:
    """Each series (a variant id, or a bare stack name) -> its stack's colour and its flavor's
    pattern. The plain app (no `-flavor`) is always 0; its flavors are 1, 2, … in name order
    within this chart, or, inside shared_flavors(), in the order charts first drew them."""
    names = list(dict.fromkeys(series))
    shared = _SHARED.get()
    flavors: dict[str, list[str]] = shared if shared is not None else {}
    for scenario in sorted({split_variant(name)[0] for name in names}):
        app = app_of(scenario)
        if scenario != app and scenario not in flavors.setdefault(app, []):
            flavors[app].append(scenario)
    out = {}
    for name in names:
        scenario, stack = split_variant(name)
        app = app_of(scenario)
        index = 0 if scenario == app else 1 + flavors[app].index(scenario)
        out[name] = Style(
            stack_color(stack),
            stack,
            index,
            DASHES[index % len(DASHES)],
            MARKERS[index % len(MARKERS)],
            HATCHES[index % len(HATCHES)],
        )
    return out
