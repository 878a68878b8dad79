"""The report's micro section: stacks side by side, speed-ups over the reference stack."""

from __future__ import annotations

import math

from benchwatch.report_micro import micro_section
from benchwatch.results import Figure


def _figure(label: str, stack: str, value: float, unit: str, metric: str) -> Figure:
    case = label.split()[0]
    return Figure(
        name=f"micro {label}@{stack}", kind="micro", variant=f"{case}@{stack}",
        scenario=case.split("-")[0], stack=stack, metric=metric, unit=unit,
        bigger_is_better=False, samples=[value], value=value, spread=value / 100,
        params={"case": case},
    )  # fmt: skip


def test_stacks_side_by_side_with_speedups_over_the_reference() -> None:
    figures = [
        _figure("payloads-1MB response_model", "seed-v1", 311.0, "ms", "response_model"),
        _figure("payloads-1MB response_model", "latest", 15.55, "ms", "response_model"),
        _figure("services dump_json", "seed-v1", 1.5, "ms", "dump_json"),
        _figure("services dump_json", "latest", 15.0, "us", "dump_json"),
        _figure("track_pydantic_version", "latest", 2_014_003, "version", "track_pydantic_version"),
        _figure("track_fastapi_version", "seed-v2", 100_000, "version", "track_fastapi_version"),
    ]
    markdown, data = micro_section(figures, reference_stack="seed-v1")
    rows = {row["benchmark"]: row for row in data["rows"]}
    assert set(rows) == {"payloads-1MB response_model", "services dump_json"}
    assert math.isclose(rows["payloads-1MB response_model"]["speedup"]["latest"], 20.0)
    dumped = rows["services dump_json"]
    assert dumped["unit"] == "us" and math.isclose(dumped["values"]["seed-v1"], 1500.0)
    assert math.isclose(dumped["speedup"]["latest"], 100.0)
    assert data["stacks"] == ["seed-v1", "latest"]
    assert data["versions"] == {"latest": {"pydantic": "2.14.3"}, "seed-v2": {"fastapi": "0.100.0"}}
    assert "| payloads-1MB response_model | 311 ms | 15.6 ms (20.00x) |" in markdown
    assert "pydantic 2.14.3" in markdown


def test_no_figures_says_so() -> None:
    markdown, data = micro_section([])
    assert data["rows"] == [] and "No micro-benchmark figures" in markdown
