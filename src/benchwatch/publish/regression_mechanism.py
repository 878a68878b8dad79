"""Through what a compare's regressions moved, in a few lines for the nightly-regression issue
(reusable-nightly.yml writes it with `benchwatch mechanism`): for each endpoint whose gating
figure regressed, its estimated cost per request on both sides, the system calls per request by
name that changed, and the functions whose own (self) instructions per request moved most, as
callgrind named them in compare.json (`instructions_by_object`: C functions and their shared
object; Python code runs inside the interpreter, so it shows as libpython's functions).

A compare recorded before the functions were kept says so instead of a table."""

from __future__ import annotations

import re

from benchwatch.attribute.mechanism import Mechanism, mechanisms
from benchwatch.counts.strace import SCHEDULING
from benchwatch.figures.figure_key import label_without_metric, setting_apart
from benchwatch.figures.metrics import INSTRUCTIONS
from benchwatch.judge.verdict import Comparison

SHOWN_CALLS = 6  # the system calls that moved most, by how much per request


def regressed_endpoints(comparison: Comparison) -> list[str]:
    """The endpoint keys (`scenario METHOD /path setting`) of every gating regression, in order."""
    keys: list[str] = []
    for row in comparison.gating_regressions():
        if row.endpoint is not None and label_without_metric(row.label) not in keys:
            keys.append(label_without_metric(row.label))
    return keys


def _counted(found: dict[str, Mechanism], key: str) -> tuple[str, Mechanism] | None:
    """The endpoint's counts' mechanism: the key itself, else the counted setting of its endpoint
    (a timing that regressed shows what its endpoint's counts saw)."""
    if key in found:
        return key, found[key]
    return next(((k, m) for k, m in found.items() if setting_apart(k) == setting_apart(key)), None)


def _calls(mechanism: Mechanism) -> str:
    if mechanism.calls is None:
        return "not counted"
    moves = sorted(
        ((name, b or 0.0, h or 0.0) for name, (b, h) in mechanism.calls.items()),
        key=lambda m: (-abs(m[2] - m[1]), m[0]),
    )
    own = [m for m in moves if m[0] not in SCHEDULING][:SHOWN_CALLS]
    shown = ", ".join(f"`{name}` {b:.2f} → {h:.2f}" for name, b, h in own)
    return shown or "none of the request's own changed by 0.01"


def _functions(mechanism: Mechanism, broken_down: bool, base: str, head: str) -> list[str]:
    went = mechanism.instructions
    if went is None:
        why = (
            "their callgrind files were not kept"
            if broken_down
            else "the instructions per request did not change significantly"
        )
        return [f"- functions: not broken down ({why})"]
    if not went.functions:
        return ["- functions: not recorded by this compare (only the shared objects)"]
    return [
        f"- functions whose own instructions per request moved most ({base} → {head}, callgrind):",
        "",
        f"| function (part) | {base} | {head} | change |",
        "|---|---:|---:|---:|",
        *(
            f"| `{f.name}` | {f.base:,.0f} | {f.head:,.0f} | {f.head - f.base:+,.0f} |"
            for f in went.functions
        ),
    ]


def _side(spec: str) -> str:
    return spec[:12] if re.fullmatch(r"[0-9a-f]{40}", spec) else spec


def render(comparison: Comparison) -> str:
    """The markdown section; '' when no gating figure regressed."""
    keys = regressed_endpoints(comparison)
    if not keys:
        return ""
    base, head = _side(comparison.base.spec), _side(comparison.head.spec)
    found = mechanisms(comparison)
    instructions_moved = {
        label_without_metric(r.label)
        for r in comparison.rows
        if r.metric == INSTRUCTIONS.key and r.significant
    }
    lines = [f"### Mechanism: what moved per request, {base} → {head}", ""]
    said: set[str] = set()
    for key in keys:
        counted = _counted(found, key)
        shown = counted[0] if counted is not None else key
        if shown in said:
            continue  # a timing and the counts of one endpoint: its mechanism once
        said.add(shown)
        if counted is None:
            lines += [f"**`{key}`**: its counts did not change significantly", ""]
            continue
        mechanism = counted[1]
        cost = mechanism.cost_us
        weighed = (
            f": estimated cost {cost[0]:.1f} → {cost[1]:.1f} µs"
            if cost is not None and None not in cost
            else ""
        )
        went = mechanism.instructions
        total = f"; instructions {went.base:,.0f} → {went.head:,.0f}" if went is not None else ""
        lines += [
            f"**`{shown}`**{weighed}{total}",
            "",
            f"- system calls: {_calls(mechanism)}",
            *_functions(mechanism, shown in instructions_moved, base, head),
            "",
        ]
    return "\n".join(lines).rstrip() + "\n"
