"""Shard runs -> one run with the same files a single run would have written."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TypeVar

from benchwatch.errors import UserError
from benchwatch.results.load_facts import LoadgenInfo
from benchwatch.results.schema import Run, RunExtra, ShardInfo

T = TypeVar("T")


def merge_runs(runs: list[tuple[Path, Run]]) -> Run:
    if not runs:
        raise UserError("merge: give at least one run directory")
    plans = {r.extra.load.plan.model_dump_json() for _, r in runs if r.extra.load.plan}
    if len(plans) > 1:
        raise UserError(
            "merge: the shards used different load plans (quick and full?); "
            "merge runs made with the same options"
        )
    seen: dict[str, Path] = {}
    for directory, run in runs:
        for figure in run.figures:
            if figure.name in seen:
                raise UserError(
                    f"merge: figure {figure.name!r} is in both {seen[figure.name]} and "
                    f"{directory}; shards must not overlap"
                )
            seen[figure.name] = directory
    environment = runs[0][1].environment.model_copy(deep=True)
    environment.stacks, environment.interpreters = {}, {}
    for _, run in runs:
        environment.stacks.update(run.environment.stacks)
        environment.interpreters.update(run.environment.interpreters)
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


def _merge_extra(runs: list[tuple[Path, Run]]) -> RunExtra:
    """Every shard's oha runs, skipped and dropped measurements; the first shard's plan,
    A/A noise and stack order (the same everywhere, or only in one shard)."""
    extra = RunExtra()
    loadgen = [r.extra.load.loadgen for _, r in runs if r.extra.load.loadgen is not None]
    if loadgen:
        extra.load.loadgen = LoadgenInfo(
            oha_cores=loadgen[0].oha_cores,
            server_cores=loadgen[0].server_cores,
            bottleneck_share=loadgen[0].bottleneck_share,
            bottlenecked_runs=sum(g.bottlenecked_runs for g in loadgen),
            runs=[run for g in loadgen for run in g.runs],
            skipped=[s for g in loadgen for s in g.skipped],
            dropped_pairs=[d for g in loadgen for d in g.dropped_pairs],
        )
    extra.load.plan = _first(r.extra.load.plan for _, r in runs)
    extra.load.aa_noise = _first(r.extra.load.aa_noise for _, r in runs)
    extra.side_by_side = _first(r.extra.side_by_side for _, r in runs)
    extra.micro = _first(r.extra.micro for _, r in runs)
    extra.reference_stack = _first(r.extra.reference_stack for _, r in runs)
    extra.stack_order = next((r.extra.stack_order for _, r in runs if r.extra.stack_order), [])
    extra.shards = [
        ShardInfo(
            dir=str(d),
            shard=r.extra.shard,
            hostname=r.environment.hostname,
            cpu_model=r.environment.cpu_model,
            complete=r.complete,
            timings=r.extra.timings,
        )
        for d, r in runs
    ]
    return extra


def _first(found: Iterable[T | None]) -> T | None:
    return next((one for one in found if one is not None), None)
