"""`benchwatch compare` from end to end: sides, interleaved measurements, verdicts, files."""

from __future__ import annotations

import argparse
import datetime as dt
from pathlib import Path
from typing import Any

from benchwatch.compare.calibrate import load_calibration
from benchwatch.compare.sides import Side
from benchwatch.compare.verdict import (
    COMMENT_FILE,
    COMPARE_FILE,
    Comparison,
    SideInfo,
    compare_figures,
)
from benchwatch.errors import UserError
from benchwatch.measure.server import Injection
from benchwatch.results import (
    Figure,
    Problem,
    ensure_writable,
    write_json_atomic,
    write_text_atomic,
)


def _side_problems(side: Side, problems: list[Problem]) -> list[Problem]:
    return [p.model_copy(update={"reason": f"{side.role}: {p.reason}"}) for p in problems]


def _side_info(side: Side, environment: dict[str, Any]) -> SideInfo:
    env = dict(environment)
    if side.commit:
        env["git_commit"] = side.commit
        env["git_dirty"] = False
    return SideInfo(role=side.role, spec=side.spec, kind=side.kind, commit=side.commit,
                    variants=[v.id for v in side.variants], environment=env,
                    inject_cpu_us=side.inject.cpu_us, inject_slowdown=side.inject.slowdown)  # fmt: skip


def execute(args: argparse.Namespace) -> tuple[Comparison, Path]:
    from benchwatch import fingerprint
    from benchwatch.compare import sides
    from benchwatch.compare.rounds import compare_plan, measure_load, measure_micro
    from benchwatch.config import load_project
    from benchwatch.measure import loadgen
    from benchwatch.measure.server import install_cleanup

    if args.no_load and args.no_micro:
        raise UserError("--no-load and --no-micro together leave nothing to compare")
    if args.inject_head_cpu_us < 0 or not 0 <= args.inject_head_slowdown < 10:
        raise UserError("--inject-head-*: give a non-negative amount (slowdown as a fraction, e.g. 0.10)")
    project = load_project()
    started = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
    stamp = dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    out = Path(args.out) if args.out else project.root / "results" / f"compare-{stamp}"
    ensure_writable(out)
    oha_version = None if args.no_load else loadgen.oha_version(loadgen.ensure_oha())
    environment = fingerprint.collect(project.root, oha_version)
    calibration = load_calibration(project.root)
    install_cleanup()
    plan = compare_plan(args.quick, args.rounds)
    inject_head = Injection(cpu_us=args.inject_head_cpu_us, slowdown=args.inject_head_slowdown)
    with sides.resolve(project, args.base, args.head, args.patterns, inject_head) as (base, head):
        matched, alone = sides.pairs(base, head)
        if not matched:
            raise UserError(
                f"nothing to compare: base has {[v.id for v in base.variants] or 'no variant'}, "
                f"head has {[v.id for v in head.variants] or 'no variant'}"
            )
        base.variants = [b for b, _ in matched]
        head.variants = [h for _, h in matched]
        extra: dict[str, Any] = {"variants_on_one_side_only": alone}
        if inject_head:
            extra["injected"] = {"slowdown": inject_head.slowdown, "cpu_us_per_request": inject_head.cpu_us}
        base_figures: list[Figure] = []
        head_figures: list[Figure] = []
        problems: list[Problem] = []  # micro problems, not tied to one side
        side_problems: dict[str, list[Problem]] = {"base": [], "head": []}
        envs_of = {"base": dict(environment), "head": dict(environment)}
        if not args.no_load:
            base_run, head_run = measure_load(base, head, plan, out, environment, args.quiet)
            base_figures += base_run.figures
            head_figures += head_run.figures
            side_problems = {"base": _side_problems(base, base_run.problems),
                             "head": _side_problems(head, head_run.problems)}  # fmt: skip
            envs_of = {"base": base_run.environment, "head": head_run.environment}
            extra["load_plan"] = base_run.extra.get("load_plan")
            extra["rounds_dropped"] = base_run.extra.get("loadgen", {}).get("dropped_pairs", [])
            extra["loadgen_bottlenecked_runs"] = {
                "base": base_run.extra.get("loadgen", {}).get("bottlenecked_runs"),
                "head": head_run.extra.get("loadgen", {}).get("bottlenecked_runs"),
            }
        if not args.no_micro:
            b, h, trouble = measure_micro(base, head, args.quick, None, args.patterns, out)
            base_figures += b
            head_figures += h
            problems += trouble
        rows, unpaired = compare_figures(base_figures, head_figures, calibration)
        for side, figures in ((base, base_figures), (head, head_figures)):
            write_side_run(out / side.role, side, figures, side_problems[side.role], envs_of[side.role], started)
        problems = side_problems["base"] + side_problems["head"] + problems
        comparison = Comparison(
            base=_side_info(base, envs_of["base"]),
            head=_side_info(head, envs_of["head"]),
            rounds=plan.rounds,
            quick=args.quick,
            rows=rows,
            problems=problems,
            unpaired=unpaired,
            calibration=calibration.model_dump(exclude={"detail"}) if calibration else None,
            extra=extra,
        )
    write_outputs(comparison, out)
    return comparison, out


def write_side_run(
    directory: Path, side: Side, figures: list[Figure], problems: list[Problem],
    environment: dict[str, Any], started: str,
) -> None:  # fmt: skip
    """One side as a run directory (run.json, gab-*.json): what the workflows hand to
    github-action-benchmark for the PR's compare-only check and the nightly trend."""
    from benchwatch.results import Run, write_run

    run = Run(started_at=started, finished_at=dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
              complete=True, command=["benchwatch", "compare", side.role, side.spec],
              environment=_side_info(side, environment).environment, figures=figures, problems=problems)  # fmt: skip
    write_run(directory, run)


def write_outputs(comparison: Comparison, out: Path) -> None:
    from benchwatch.compare.comment import render

    data = comparison.model_dump(mode="json")
    data["summary"] = {**comparison.counts(), "exit_code": comparison.exit_code()}
    write_json_atomic(out / COMPARE_FILE, data)
    write_text_atomic(out / COMMENT_FILE, render(comparison))
