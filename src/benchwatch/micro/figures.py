"""asv results (read with asv's own results API) -> benchwatch Figures and Problems."""

from __future__ import annotations

import ast
import itertools
import json
import math
import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from asv.environment import get_env_name
from asv.results import Results, get_filename

from benchwatch.declarations.stacks import Stack
from benchwatch.figures.figure_key import app_of, micro_key, variant_id
from benchwatch.results.schema import Figure, Problem

# one unit for every time figure: a trend or a comparison must never see 999 us become 1.001 ms
TIME_UNIT, TIME_SCALE = "us", 1e-6
_HEADER = re.compile(r"\] ·{3} (\S+)")
_ERROR_LINE = re.compile(r"^\s*([A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt)\b.*)$")


def results_path(results_dir: Path, machine: str, commit: str, python: Path) -> Path:
    env_name = get_env_name("existing", str(python).replace(os.path.sep, "_"), {}, {})
    return results_dir / get_filename(machine, commit, env_name)


def figures_from_results(
    *, results_dir: Path, machine: str, commit: str, python: Path, stack: Stack, output: str
) -> tuple[list[Figure], list[Problem]]:
    """Figures for one stack's results file; marks the file with the stack's pins (so asv
    publish draws one line per stack) and drops benchmarks that produced nothing valid."""
    path = results_path(results_dir, machine, commit, python)
    variant = variant_id("micro", stack.name)
    if not path.is_file():
        tail = " | ".join(output.strip().splitlines()[-3:])
        return [], [
            Problem(variant=variant, phase="micro", reason="asv wrote no results", detail=tail)
        ]
    results = Results.load(str(path))
    described = _benchmark_descriptions(results_dir)
    figures: list[Figure] = []
    problems: list[Problem] = []
    for key in sorted(results.get_all_result_keys()):
        params = results.get_result_params(key) or []
        values = results.get_result_value(key, params)
        stats = results.get_result_stats(key, params)
        samples = results.get_result_samples(key, params)
        combos = list(itertools.product(*params)) if params else [()]
        any_valid = False
        for index, combo in enumerate(combos):
            labels = [_unquote(v) for v in combo]
            value = values[index]
            if value is None:
                reason = _failure_reason(output, key)
                problems.append(
                    Problem(
                        variant=variant, phase="micro", reason=reason, endpoint=_label(key, labels)
                    )
                )
                continue
            if isinstance(value, float) and math.isnan(value):
                continue  # skipped on this stack: NotImplementedError in setup
            any_valid = True
            if _is_track(key, described.get(key, {})):
                problems += _check_tracked_version(stack, key, value)
                continue  # an environment fact, checked against the pins, never a figure
            figures.append(
                _figure(
                    stack, key, labels, described.get(key, {}), value, stats[index], samples[index]
                )
            )
        if not any_valid:
            results.remove_result(key)
    # graphs keyed by the stack, not by the env's path (which changes with its cache hash)
    results.params.update(python=stack.python, stack=stack.name, **_headline_pins(stack))
    results.save(str(results_dir))
    return figures, problems


def _figure(
    stack: Stack,
    key: str,
    labels: list[str],
    described: dict[str, Any],
    value: float,
    stats: dict | None,
    samples: list[float | None] | None,  # asv's, None where a sample failed
) -> Figure:
    kind = described.get("type") or key.rsplit(".", 1)[-1].split("_", 1)[0]  # asv: "peakmemory"
    raw = [s for s in (samples or [value]) if s is not None and math.isfinite(s)] or [value]
    if kind == "time":
        unit, scale = TIME_UNIT, TIME_SCALE
    elif kind in ("peakmemory", "peakmem"):
        unit, scale = "MB", 1e6
    else:
        unit, scale = str(described.get("unit") or "unit"), 1.0
    scenario, params = case_identity(labels, default_scenario="versions")
    return Figure(
        name=micro_key(labels, _operation(key), stack.name, scenario=scenario).name,
        kind="micro",
        variant=variant_id(scenario, stack.name),
        scenario=scenario,
        stack=stack.name,
        metric=_operation(key),
        unit=unit,
        bigger_is_better=False,
        samples=[s / scale for s in raw],
        value=value / scale,
        spread=_spread(stats) / scale,
        params=params,
        note=f"asv {key}",
    )


def case_identity(labels: Sequence[str], default_scenario: str) -> tuple[str, dict[str, str]]:
    """(scenario, params) of an asv case from its parameter labels: `payloads-1MB` is scenario
    `payloads`, params {"case": "payloads-1MB", "size": "1MB"}; further parameters `param1`…"""
    scenario = app_of(labels[0]) if labels else default_scenario
    params = {"case": labels[0]} if labels else {}
    if labels and "-" in labels[0]:
        params["size"] = labels[0].split("-", 1)[1]
    params.update({f"param{i}": extra for i, extra in enumerate(labels[1:], start=1)})
    return scenario, params


def _is_track(key: str, described: dict[str, Any]) -> bool:
    return described.get("type") == "track" or key.rsplit(".", 1)[-1].startswith("track_")


_TRACKED_VERSION = re.compile(r"track_(?P<package>\w+)_version$")


def version_number(version: str) -> int:
    """The number benchmarks/compat.py tracks: major*1_000_000 + minor*1000 + patch."""
    parts = [
        int("".join(ch for ch in part if ch.isdigit()) or 0) for part in version.split(".")[:3]
    ]
    major, minor, patch = (parts + [0, 0, 0])[:3]
    return major * 1_000_000 + minor * 1000 + patch


def _check_tracked_version(stack: Stack, key: str, value: float) -> list[Problem]:
    """A track_<package>_version result must equal the stack's pin: a resolver that installed
    something else would make every other figure of this stack a lie."""
    match = _TRACKED_VERSION.search(key.rsplit(".", 1)[-1])
    pinned = stack.pinned_versions().get(match.group("package")) if match else None
    if pinned is None or int(value) == version_number(pinned):
        return []
    return [
        Problem(
            variant=variant_id("micro", stack.name),
            phase="micro",
            endpoint=_operation(key),
            reason=f"asv ran version number {int(value)}, the stack pins {pinned} "
            f"({version_number(pinned)})",
        )
    ]


def _label(key: str, labels: list[str]) -> str:
    return " ".join([*labels, _operation(key)])


def _operation(key: str) -> str:
    return key.rsplit(".", 1)[-1].removeprefix("time_")


def _spread(stats: dict | None) -> float:
    if not stats:
        return 0.0
    low, high = stats.get("ci_99_a"), stats.get("ci_99_b")
    if low is not None and high is not None and math.isfinite(low) and math.isfinite(high):
        return (high - low) / 2
    low, high = stats.get("q_25"), stats.get("q_75")
    if low is not None and high is not None and math.isfinite(low) and math.isfinite(high):
        return (high - low) / 2
    return 0.0


def _unquote(value: str) -> str:
    try:
        return str(ast.literal_eval(value))
    except (ValueError, SyntaxError):
        return value


def _headline_pins(stack: Stack) -> dict[str, str]:
    pins = stack.pinned_versions()
    return {p: pins[p] for p in ("fastapi", "pydantic") if p in pins}


def _benchmark_descriptions(results_dir: Path) -> dict[str, dict[str, Any]]:
    path = results_dir / "benchmarks.json"
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return {k: v for k, v in data.items() if isinstance(v, dict)}


def _failure_reason(output: str, key: str) -> str:
    """The exception line asv printed for this benchmark (asv shortens long names to
    `...tail`), or a pointer to the asv results."""
    inside = False
    for line in output.splitlines():
        header = _HEADER.search(line)
        if header:
            name = header.group(1).lstrip(".")
            if "." in name:
                inside = key.endswith(name)
                continue
        match = _ERROR_LINE.match(line) if inside else None
        if match:
            return f"benchmark failed: {match.group(1).strip()}"
    return "benchmark failed (no exception line in asv's output)"
