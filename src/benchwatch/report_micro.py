"""The report's micro-benchmark section: per benchmark, the stacks side by side, with the
speed-up of each stack over the reference stack (seed-v1 by default: the v1 -> v2 story)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from benchwatch.results import Figure

_SECONDS = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}


def micro_section(
    figures: Sequence[Figure], reference_stack: str = "seed-v1", stacks: Sequence[str] | None = None
) -> tuple[str, dict[str, Any]]:
    """(markdown, data). data = {"reference_stack", "stacks", "rows": [{benchmark, case,
    operation, unit, values{stack: value}, spread{stack: value}, speedup{stack: ref/value}}],
    "versions": {stack: {package: version}}}."""
    micro = [f for f in figures if f.kind == "micro" and f.valid]
    timed = [f for f in micro if f.unit in _SECONDS or f.unit == "MB"]
    order = list(stacks) if stacks else _stack_order(timed, reference_stack)
    by_benchmark: dict[str, dict[str, Figure]] = {}
    for figure in timed:
        by_benchmark.setdefault(figure.name.rsplit("@", 1)[0], {})[figure.stack] = figure
    rows = [_row(label, found, reference_stack) for label, found in by_benchmark.items()]
    data = {
        "reference_stack": reference_stack,
        "stacks": order,
        "rows": rows,
        "versions": _versions(micro),
    }
    return _markdown(data), data


def _stack_order(figures: Sequence[Figure], reference: str) -> list[str]:
    seen = list(dict.fromkeys(f.stack for f in figures))
    return sorted(seen, key=lambda s: (s != reference, seen.index(s)))


def _row(label: str, found: dict[str, Figure], reference: str) -> dict[str, Any]:
    any_figure = next(iter(found.values()))
    if any_figure.unit in _SECONDS:
        smallest = min(f.value * _SECONDS[f.unit] for f in found.values())
        unit = next((u for u, s in _SECONDS.items() if smallest < s * 1000), "s")
        scale = {s: _SECONDS[f.unit] / _SECONDS[unit] for s, f in found.items()}
    else:
        unit = any_figure.unit
        scale = dict.fromkeys(found, 1.0)
    values = {s: f.value * scale[s] for s, f in found.items()}
    spread = {s: f.spread * scale[s] for s, f in found.items()}
    base = values.get(reference)
    speedup = {s: base / v for s, v in values.items() if base is not None and v > 0}
    return {
        "benchmark": label.removeprefix("micro "),
        "case": any_figure.params.get("case", ""),
        "operation": any_figure.metric,
        "unit": unit,
        "values": values,
        "spread": spread,
        "speedup": speedup,
    }


def _versions(figures: Sequence[Figure]) -> dict[str, dict[str, str]]:
    versions: dict[str, dict[str, str]] = {}
    for figure in figures:
        if figure.unit == "version" and figure.metric.startswith("track_"):
            package = figure.metric.removeprefix("track_").removesuffix("_version")
            number = int(figure.value)
            versions.setdefault(figure.stack, {})[package] = (
                f"{number // 1_000_000}.{number // 1000 % 1000}.{number % 1000}"
            )
    return versions


def _markdown(data: dict[str, Any]) -> str:
    stacks, reference = data["stacks"], data["reference_stack"]
    if not data["rows"]:
        return "### Micro-benchmarks\n\nNo micro-benchmark figures in this run.\n"
    lines = [
        "### Micro-benchmarks",
        "",
        f"CPU time per call (median); in brackets the speed-up over `{reference}` "
        "(above 1 = faster).",
        "",
        "| benchmark | " + " | ".join(f"`{s}`" for s in stacks) + " |",
        "|---|" + "---:|" * len(stacks),
    ]
    for row in data["rows"]:
        cells = []
        for stack in stacks:
            value = row["values"].get(stack)
            if value is None:
                cells.append("–")
                continue
            cell = _human(value, row["unit"])
            ratio = row["speedup"].get(stack)
            if ratio is not None and stack != reference:
                cell += f" ({ratio:.2f}x)"
            cells.append(cell)
        lines.append(f"| {row['benchmark']} | " + " | ".join(cells) + " |")
    if data["versions"]:
        lines.append("")
        described = "; ".join(
            f"`{stack}`: " + ", ".join(f"{p} {v}" for p, v in sorted(found.items()))
            for stack, found in data["versions"].items()
        )
        lines.append(f"Installed versions (asv track_): {described}.")
    return "\n".join(lines) + "\n"


def _human(value: float, unit: str) -> str:
    """3 significant digits in the largest time unit that keeps the number at or above 1."""
    if unit in _SECONDS:
        seconds = value * _SECONDS[unit]
        unit = next((u for u, s in reversed(_SECONDS.items()) if seconds >= s), "ns")
        value = seconds / _SECONDS[unit]
    return f"{value:.3g} {unit}" if value < 1000 else f"{value:.0f} {unit}"
