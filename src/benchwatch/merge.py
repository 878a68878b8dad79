"""Shard runs -> one run with the same files a single run would have written."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from benchwatch.errors import UserError
from benchwatch.results import SCHEMA_VERSION, Run


def merge_runs(runs: list[tuple[Path, Run]]) -> Run:
    if not runs:
        raise UserError("merge: give at least one run directory")
    for directory, run in runs:
        if run.schema_version != SCHEMA_VERSION:
            raise UserError(f"merge: {directory}: schema version {run.schema_version}, "
                            f"this benchwatch writes {SCHEMA_VERSION}; re-run it with this version")  # fmt: skip
    plans = {str(r.extra.get("load_plan")) for _, r in runs if r.extra.get("load_plan")}
    if len(plans) > 1:
        raise UserError("merge: the shards used different load plans (quick and full?); "
                        "merge runs made with the same options")  # fmt: skip
    seen: dict[str, Path] = {}
    for directory, run in runs:
        for figure in run.figures:
            if figure.name in seen:
                raise UserError(f"merge: figure {figure.name!r} is in both {seen[figure.name]} and "
                                f"{directory}; shards must not overlap")  # fmt: skip
            seen[figure.name] = directory
    first = runs[0][1]
    environment = dict(first.environment)
    environment["stacks"] = {}
    for _, run in runs:
        environment["stacks"].update(run.environment.get("stacks", {}))
    return Run(
        started_at=min(r.started_at for _, r in runs),
        finished_at=max((r.finished_at for _, r in runs if r.finished_at), default=None),
        complete=all(r.complete for _, r in runs),
        command=["benchwatch", "merge", *(str(d) for d, _ in runs)],
        environment=environment,
        figures=[f for _, r in runs for f in r.figures],
        problems=[p for _, r in runs for p in r.problems],
        extra=_merge_extra(runs),
    )


def _merge_extra(runs: list[tuple[Path, Run]]) -> dict[str, Any]:
    extra: dict[str, Any] = {}
    loadgen = [r.extra["loadgen"] for _, r in runs if "loadgen" in r.extra]
    if loadgen:
        extra["loadgen"] = {
            **loadgen[0],
            "bottlenecked_runs": sum(g.get("bottlenecked_runs", 0) for g in loadgen),
            "runs": [run for g in loadgen for run in g.get("runs", [])],
        }
    for key in ("load_plan", "aa_noise", "micro", "reference_stack", "stack_order"):
        found = next((r.extra[key] for _, r in runs if key in r.extra), None)
        if found is not None:
            extra[key] = found
    extra["shards"] = [
        {"dir": str(d), "shard": r.extra.get("shard"), "hostname": r.environment.get("hostname"),
         "cpu_model": r.environment.get("cpu_model"), "complete": r.complete,
         "timings": r.extra.get("timings")}
        for d, r in runs
    ]  # fmt: skip
    return extra
