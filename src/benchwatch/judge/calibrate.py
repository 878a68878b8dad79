"""Noise floors: measured by A/A runs, stored in calibration.json, read by compare."""

from __future__ import annotations

import datetime as dt
import json
import math
import platform
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from benchwatch.errors import UserError
from benchwatch.figures.figure_key import open_loop_label
from benchwatch.figures.metrics import (
    COST,
    COUNT_KEYS,
    CPU,
    DB_BUFFERS,
    FALLBACK_FLOOR,
    INSTRUCTIONS,
    METRICS,
    MICRO_INSTRUCTIONS,
    RETAINED,
    RPS,
    STATEMENTS,
    SYSCALLS,
)
from benchwatch.judge.stats import aa_floor
from benchwatch.judge.stats import strayed as statements_strayed
from benchwatch.results.files import write_json_atomic
from benchwatch.results.schema import Environment, Figure, figure_label

CALIBRATION_FILE = "calibration.json"
FLOOR_QUANTILE = 0.99
MIN_FLOOR = 0.01
# instruction counts repeat to ~0.1 %; the same work counted in another context moves ~0.25 %
MIN_FLOORS = {
    MICRO_INSTRUCTIONS.key: 0.005,
    INSTRUCTIONS.key: INSTRUCTIONS.default_floor,
    SYSCALLS.key: SYSCALLS.default_floor,
    COST.key: COST.default_floor,
    DB_BUFFERS.key: DB_BUFFERS.default_floor,
    STATEMENTS.key: STATEMENTS.default_floor,  # statements per request, not a fraction
}
# a count's floor: this many times the farthest an A/A compare's range strayed from 1 (two boots
# of one server count a little differently: payloads 1 kB read 0.9952 [0.9944, 0.9965] A/A)
COUNT_FLOOR_FACTOR = 2.0


def min_floor(key: str) -> float:
    return MIN_FLOORS.get(key, MIN_FLOOR)


# used when calibration.json has no entry for a metric; deliberately generous
DEFAULT_FLOORS: dict[str, float] = {m.key: m.default_floor for m in METRICS}
# the trend pages compare one run with the previous one, on another runner: wider than A/B
THRESHOLD_FACTOR = 3.0
THRESHOLD_METRICS = (RPS.key, CPU.key)


class Calibration(BaseModel):
    floors: dict[str, float]
    method: str
    rounds: int
    compare_rounds: int
    date: str
    machine: dict[str, Any] = {}
    variants: list[str] = []
    detail: dict[str, dict[str, float]] = {}
    # the same A/A samples taken as two separate runs (unpaired): the trend pages' noise
    between_runs: dict[str, float] = {}
    # how the micro floors (micro_time, micro_instructions) were measured, when they were
    micro: dict[str, Any] = {}
    # how the floors of the counts per request were measured (calibrate --counts-from)
    counts: dict[str, Any] = {}


def floor_key(figure: Figure) -> str:
    """calibration.json's key for the figure's metric (micro figures: their kind)."""
    about = figure.about
    return about.key if about is not None else figure.metric


def load_calibration(root: Path) -> Calibration | None:
    path = root / CALIBRATION_FILE
    if not path.is_file():
        return None
    try:
        return Calibration.model_validate_json(path.read_text())
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "top level"
        raise UserError(
            f"{path}: {where}: {first['msg']} (fix it or re-run `benchwatch calibrate`)"
        ) from None


def floor_for(
    key: str, calibration: Calibration | None, label: str | None = None
) -> tuple[float, str]:
    """(floor, where it comes from): the figure's own A/A floor when it was calibrated
    ('figure'), else the largest calibrated floor of its metric in the same loop (closed or
    open; 'metric'), else 'default'. One noisy app (posts on SQLite) must not blind the detector
    for every other figure, nor one noisy open loop every closed one (measured: posts' open-loop
    CPU floors 12.7 % and 19.6 % beside closed-loop ones of 1.1-2.4 %; README)."""
    if calibration is not None:
        measured = calibration.detail.get(key, {})
        own = measured.get(label or "")
        if own is not None:
            return max(min_floor(key), own), "figure"
        if key in COUNT_KEYS or key == RETAINED.key:  # never another endpoint's floor
            return DEFAULT_FLOORS[key], "default"
        if label is not None:
            alike = [
                floor
                for other, floor in measured.items()
                if open_loop_label(other) == open_loop_label(label)
            ]
            if alike:
                return max(min_floor(key), *alike), "metric"
        if key in calibration.floors:
            return calibration.floors[key], "metric"
    return DEFAULT_FLOORS.get(key, FALLBACK_FLOOR), "default"


def floors_from_aa(
    pairs: Sequence[tuple[Figure, Figure]], compare_rounds: int, paired: bool = True
) -> tuple[dict[str, float], dict[str, dict[str, float]]]:
    """Per metric kind: the largest per-figure A/A floor (see stats.aa_floor), the fallback
    for figures never calibrated; and each figure's own floor, keyed by its stack-free label."""
    detail: dict[str, dict[str, float]] = defaultdict(dict)
    for a, b in pairs:
        if not (a.valid and b.valid) or min(len(a.samples), len(b.samples)) < 2:
            continue
        if min(a.samples + b.samples) <= 0:
            continue
        floor = aa_floor(
            a.samples, b.samples, compare_rounds, quantile=FLOOR_QUANTILE, paired=paired
        )
        detail[floor_key(a)][figure_label(a)] = round(floor, 4)
    floors = {
        key: round(max(min_floor(key), *values.values()), 4) for key, values in detail.items()
    }
    return floors, dict(detail)


def alert_threshold(calibration: Calibration | None) -> int:
    """github-action-benchmark's alert-threshold in percent, rounded up to 5 %. The trend
    compares two separate runs, so it takes the unpaired noise (between_runs), not the
    side-by-side floors compare uses."""
    between = calibration.between_runs if calibration else {}
    worst = max(between.get(m) or floor_for(m, calibration)[0] for m in THRESHOLD_METRICS)
    percent = 100.0 * (1.0 + THRESHOLD_FACTOR * worst)
    return max(110, int(math.ceil(percent / 5.0) * 5))


def machine_facts(environment: Environment) -> dict[str, Any]:
    return {
        "cpu_model": environment.cpu_model or platform.processor() or platform.machine(),
        "cores": environment.cores,
        "os": environment.os or platform.platform(),
        "hostname": environment.hostname or platform.node(),
    }


def write_calibration(
    root: Path,
    floors: dict[str, float],
    detail: dict[str, dict[str, float]],
    *,
    rounds: int,
    compare_rounds: int,
    variants: list[str],
    environment: Environment,
    between_runs: dict[str, float] | None = None,
    micro: dict[str, Any] | None = None,
    counts: dict[str, Any] | None = None,
) -> Calibration:
    calibration = Calibration(
        floors=dict(sorted(floors.items())),
        method=(
            f"A/A: each variant against a second server of itself, side by side as compare runs "
            f"them, {rounds} rounds; per figure, the {FLOOR_QUANTILE:.0%} quantile of |ratio - 1| "
            f"(compare's paired Hodges-Lehmann ratio) over 2000 resamples of {compare_rounds} "
            f"rounds (with replacement). compare uses a "
            f"figure's own floor (detail, at least {MIN_FLOOR}); figures not calibrated use the largest "
            f"of their metric in the same loop, closed or open (floors: each metric's largest)"
        ),
        rounds=rounds,
        compare_rounds=compare_rounds,
        date=dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        machine=machine_facts(environment),
        variants=variants,
        detail=detail,
        between_runs=dict(sorted((between_runs or {}).items())),
        micro=micro or {},
        counts=counts or {},
    )
    write_json_atomic(root / CALIBRATION_FILE, json.loads(calibration.model_dump_json()))
    return calibration


def count_floors(rows: Sequence[Any]) -> dict[str, dict[str, float]]:
    """Per count metric, each figure's floor from an A/A compare's rows (verdict.Row): the
    farthest its range strayed from 1, times COUNT_FLOOR_FACTOR, at least the metric's minimum."""
    found: dict[str, dict[str, float]] = defaultdict(dict)
    for row in rows:
        if row.metric == STATEMENTS.key:  # a number of statements per request (judge/statements.py)
            apart = statements_strayed(row.base_samples, row.head_samples)
            found[row.metric][row.label] = round(
                max(min_floor(row.metric), COUNT_FLOOR_FACTOR * apart), 4
            )
            continue
        if row.metric not in COUNT_KEYS or row.low is None or row.high is None:
            continue
        strayed = max(abs(row.low - 1.0), abs(row.high - 1.0))
        found[row.metric][row.label] = round(
            max(min_floor(row.metric), COUNT_FLOOR_FACTOR * strayed), 4
        )
    return dict(found)


def merge_count_floors(root: Path, floors: dict[str, dict[str, float]], source: str) -> Calibration:
    """calibration.json with these count floors in (its other floors kept; created if absent)."""
    calibration = load_calibration(root) or Calibration(
        floors={},
        method="only count floors measured (calibrate --counts-from)",
        rounds=0,
        compare_rounds=0,
        date=dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
    )
    for key, per_figure in floors.items():
        calibration.detail[key] = dict(sorted(per_figure.items()))
        calibration.floors[key] = max(per_figure.values())
    calibration.counts = {
        "method": f"counts A/A (each side one boot, counted alone): per figure {COUNT_FLOOR_FACTOR:g} x the farthest "
        f"its range of base and head phases strayed from 1, at least {min_floor(INSTRUCTIONS.key):.1%} "
        f"(instructions) / {min_floor(SYSCALLS.key):.0%} (system calls) / {min_floor(COST.key):.1%} (the estimated "
        "cost, whose floor in a compare is at least the one its parts' floors give); a count without a floor "
        "of its own takes that minimum",
        "from": source,
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
    }
    write_json_atomic(root / CALIBRATION_FILE, json.loads(calibration.model_dump_json()))
    return calibration
