"""`benchwatch compare` from end to end: sides, side-by-side rounds, verdicts, files."""

from __future__ import annotations

import sys
import time
from pathlib import Path

from benchwatch.compare.confirm import ConfirmOptions, measure_again
from benchwatch.compare.options import ON_REGRESSION, CompareOptions
from benchwatch.compare.outputs import side_info, write_outputs, write_side_run
from benchwatch.compare.sides import Side
from benchwatch.counts.breakdown import by_object, render
from benchwatch.counts.cost import with_database
from benchwatch.counts.weights import Weights
from benchwatch.errors import UserError
from benchwatch.judge import gate
from benchwatch.judge.calibrate import load_calibration
from benchwatch.judge.coverage import Coverage, add_left_out, coverage
from benchwatch.judge.dropped import short_rounds
from benchwatch.judge.judged import explain_dropped, judged_rows
from benchwatch.judge.moved import moved_packages
from benchwatch.judge.verdict import CompareExtra, Comparison, ConfirmationInfo, sort_rows
from benchwatch.measure import inject
from benchwatch.measure.rig import Rig
from benchwatch.measure.session import now, open_session
from benchwatch.profiling.speedscope import ProfileReport
from benchwatch.project.variants import Project
from benchwatch.results.schema import Figure, Problem

MICRO_PER_STACK = (
    "micro-benchmarks are per stack, not per variant: a compare of two variants "
    "measures the load tests only"
)


def compare(
    project: Project, base: str, head: str, options: CompareOptions
) -> tuple[Comparison, Path]:
    """Measure base and head on this machine (load side by side, micro timings in alternating batches) and judge
    every figure. The sides are resolved and matched before anything is created or built. What
    else is measured, and how, is in `options` (compare/options.py)."""
    from benchwatch.compare import shard as shard_module
    from benchwatch.compare import sides as sides_module
    from benchwatch.compare.rounds import (
        compare_plan,
        measure_base_and_head,
        measure_counts,
        measure_micro,
        where_instructions_went,
    )
    from benchwatch.measure import preflight
    from benchwatch.measure.rig import build_rig

    options.check()
    patterns, quick, load, counts = options.patterns, options.quick, options.load, options.counts
    micro, quiet, instructions = options.micro, options.quiet, options.instructions
    load, micro = load and options.timed_here, micro and options.timed_here
    started = now()
    plan = compare_plan(quick, options.rounds)
    with sides_module.resolve(project, base, head, patterns) as (base_side, head_side):
        matched, alone = sides_module.pairs(base_side, head_side)
        if not matched:
            raise UserError(
                f"nothing to compare: base has {[v.id for v in base_side.variants] or 'no variant'}, "
                f"head has {[v.id for v in head_side.variants] or 'no variant'}"
            )
        skipped: list[preflight.Skipped] = []
        if options.skip_unset:
            matched, skipped = preflight.pairs_without_unset(matched)
        base_side.variants = [b for b, _ in matched]
        head_side.variants = [h for _, h in matched]
        part = (
            shard_module.partition(options.shard, [(base_side.key(b), b, h) for b, h in matched])
            if options.shard is not None
            else None
        )
        preflight.check(base_side.variants + head_side.variants)
        session = open_session(
            project.root,
            options.out,
            name="compare",
            load_tests=load and bool(matched),
            within=options.session,
        )
        out, oha, environment = session.out, session.oha if load else None, session.environment
        calibration = load_calibration(project.root)
        extra = CompareExtra(variants_on_one_side_only=alone)
        if skipped:
            extra.notes.append(
                f"{_plural_endpoints(skipped)} left out (--skip-unset): they need a ${{NAME}} not set here, "
                "as in a pull request from a fork, which GitHub gives no secrets; listed under what was "
                "not measured"
            )
        if not matched:  # nothing measurable here: the comment says what was left out, exit 2
            extra.coverage = add_left_out(Coverage(), skipped)
            comparison = Comparison(
                base=side_info(base_side, environment),
                head=side_info(head_side, environment),
                rounds=plan.rounds,
                quick=quick,
                rows=[],
                problems=[],
                unpaired=[],
                calibration=None,
                extra=extra,
            )
            write_outputs(comparison, out)
            return comparison, out
        if load and calibration is not None and 0 < plan.rounds < calibration.compare_rounds:
            extra.notes.append(
                f"the load floors in calibration.json were measured for {calibration.compare_rounds}-round "
                f"compares; this one ran {plan.rounds}: its timing verdicts flag noise more often "
                "than the floors assume (run `benchwatch calibrate` again)"
            )
        if base_side.kind == "variant":
            micro = False
            extra.notes.append(MICRO_PER_STACK)
        extra.injected = inject.active().recorded()  # TESTING ONLY
        figures: dict[str, list[Figure]] = {"base": [], "head": []}
        side_problems: dict[str, list[Problem]] = {"base": [], "head": []}
        micro_problems: list[Problem] = []
        envs_of = {"base": environment, "head": environment}
        rig = None
        if oha is not None:
            rig, failed = build_rig(oha, plan, base_side.variants + head_side.variants)
            runs = measure_base_and_head(
                rig, base_side, head_side, out, environment, failed_stacks=failed, quiet=quiet
            )
            for side, run in zip((base_side, head_side), runs, strict=True):
                figures[side.role] += run.figures
                side_problems[side.role] = [
                    p.model_copy(update={"reason": f"{side.role}: {p.reason}"})
                    for p in run.problems
                ]
                envs_of[side.role] = run.environment
            base_run, head_run = runs
            extra.load.plan = base_run.extra.load.plan
            extra.load.dropped = (
                base_run.extra.load.loadgen.dropped_pairs if base_run.extra.load.loadgen else []
            )
            extra.load.short = short_rounds(extra.load.dropped, base_run.figures, plan.rounds)
            extra.load.bottlenecked_runs = {
                side.role: run.extra.load.loadgen.bottlenecked_runs if run.extra.load.loadgen else 0
                for side, run in zip((base_side, head_side), runs, strict=True)
            }
        environments = (
            rig.environments
            if rig is not None
            else (_environments(matched, extra) if counts else {})
        )
        if (
            rig is None
        ):  # no load run recorded them: the counts' environments, the servers' interpreters
            environment.record_environments(environments)
        extra.notes[:0] = interpreter_notes(matched, environments)
        counted = None
        if counts:
            counted = measure_counts(
                base_side, head_side, environments, out, keep=part.counts_here if part else None
            )
            figures["base"] += counted.base
            figures["head"] += counted.head
            micro_problems += counted.problems
            extra.counts.skipped = counted.unavailable
            extra.counts.seconds = counted.seconds if not counted.unavailable else None
        else:
            extra.counts.skipped = "--no-counts"
        if micro:
            found = measure_micro(
                base_side,
                head_side,
                quick,
                None,
                patterns,
                out,
                instructions=instructions,
            )
            figures["base"] += found.base
            figures["head"] += found.head
            micro_problems += found.problems
            extra.micro.skipped = (
                found.instructions_unavailable if instructions else "--no-instructions"
            )
            extra.notes += found.notes
        key = sides_module.pair_key(base_side, head_side)
        weights = _weigh_counts(extra) if counts and not extra.counts.skipped else None
        rows, unpaired = judged_rows(
            figures["base"], figures["head"], calibration, weights, key=key
        )
        if weights is not None:  # the µs per buffer access the costs were made with, when any
            extra.cost.weights = with_database(weights, figures["base"] + figures["head"])
        flagged = gate.to_confirm(rows)
        if flagged and not options.confirm:
            extra.confirmation = ConfirmationInfo(
                flagged=[r.label for r in flagged], skipped="--no-confirm"
            )
        elif flagged:
            began = time.monotonic()
            print(
                f"confirm: {len(flagged)} timing change(s) flagged; measuring them once more",
                file=sys.stderr,
            )
            again = measure_again(
                flagged,
                figures,
                base_side,
                head_side,
                ConfirmOptions(
                    rig=rig,
                    environment=environment,
                    calibration=calibration,
                    key=key,
                    quick=quick,
                    patterns=patterns,
                    out=out,
                    quiet=quiet,
                ),
            )
            gate.confirm(flagged, again.rows)
            micro_problems += again.problems
            extra.confirmation = ConfirmationInfo(
                flagged=[r.label for r in flagged],
                confirmed=[r.label for r in flagged if r.verdict != "unconfirmed"],
                seconds=round(time.monotonic() - began, 1),
            )
        explain_dropped(rows, extra.load.short, figures["base"])
        rows = sort_rows(rows)
        if counted is not None and not extra.counts.skipped:
            went = where_instructions_went(rows, figures, counted.dirs)
            extra.counts.went = {label: render(found) for label, found in went.items()}
            extra.counts.by_object = {label: by_object(found) for label, found in went.items()}
        if options.profile is True or (
            options.profile == ON_REGRESSION
            and any(r.gating and r.verdict == "regression" for r in rows)
        ):
            extra.profile = _profile(
                oha, rig, matched, base_side, head_side, out, quick, plan.duration
            )
        extra.coverage = add_left_out(
            coverage(
                matched,
                figures,
                side_problems["base"] + side_problems["head"] + micro_problems,
                quick=quick,
                load=load,
                counts=counts,
                counts_unavailable=extra.counts.skipped,
                timed_here=options.timed_here,
                counted_here=(
                    (lambda b, label: part.counts_here(base_side.key(b), label)) if part else None
                ),
            ),
            skipped,
        )
        infos = {side.role: side_info(side, envs_of[side.role]) for side in (base_side, head_side)}
        extra.moved = moved_packages(
            base_side.kind,
            matched,
            infos["base"].environment.stacks,
            infos["head"].environment.stacks,
        )
        for side in (base_side, head_side):
            write_side_run(
                out / side.role,
                side,
                infos[side.role],
                figures[side.role],
                side_problems[side.role],
                started,
            )
        comparison = Comparison(
            base=infos["base"],
            head=infos["head"],
            rounds=plan.rounds,
            quick=quick,
            rows=rows,
            problems=side_problems["base"] + side_problems["head"] + micro_problems,
            unpaired=unpaired,
            calibration=calibration.model_dump(exclude={"detail"}) if calibration else None,
            extra=extra,
        )
        if part is not None:
            shard_module.write_facts(out, part.facts(shard_module.coverage_order(matched)))
    write_outputs(comparison, out)
    return comparison, out


def _plural_endpoints(skipped: list) -> str:
    count = sum(len(s.endpoints) for s in skipped)
    return f"{count} declared endpoint{'s' if count != 1 else ''}"


def _weigh_counts(extra: CompareExtra) -> Weights | None:
    """One set of weights measured here and now (counts/weights.py; kept in compare.json so a reader
    sees them), which both sides' estimated costs are made with. Not in the sides' run files: a cost
    depends on the machine's weights, the counts' trend must not. None: they failed (said in extra)."""
    from benchwatch.counts import weights

    print("counts: weighing an instruction and each system call on this machine", file=sys.stderr)
    try:
        extra.cost.weights = weights.measure()
    except weights.WeightsFailed as exc:
        extra.cost.skipped = str(exc)
        return None
    return extra.cost.weights


def _environments(matched: list, extra: CompareExtra) -> dict:
    """The environments of both sides' variants when no load rounds built them (a counts-only compare)."""
    from benchwatch.environments import envs

    ready, failed = envs.prepare([v for pair in matched for v in pair])
    extra.notes += [f"environment {key} failed: {why}" for key, why in failed.items()]
    return ready


def interpreter_notes(matched: list, environments: dict) -> list[str]:
    """A pair whose servers run on two interpreters: said first. Unasked it cannot happen (one
    build per Python version for the whole command, `interpreters.choose`); asked, the sides'
    stacks declare two Pythons (a Python-version compare, or a change that moves the Python)."""
    notes = []
    for base, head in matched:
        pair = [environments.get(v.env_key) for v in (base, head)]
        if pair[0] is None or pair[1] is None:
            continue
        python_base, python_head = pair[0].interpreter, pair[1].interpreter
        if python_base.build == python_head.build:
            continue
        note = (
            f"base and head run on different interpreters: base {python_base.describe()}, head "
            f"{python_head.describe()} (the sides ask for Python {base.stack.python} and {head.stack.python}), "
            "so every ratio of this pair includes the interpreter's difference"
        )
        if note not in notes:
            notes.append(note)
    return notes


def _profile(
    oha: str | None,
    rig: Rig | None,
    matched: list,
    base: Side,
    head: Side,
    out: Path,
    quick: bool,
    duration: float,
) -> ProfileReport:
    from benchwatch.profiling.profile import profile_pairs

    if oha is None or rig is None:
        return ProfileReport(
            available=False, reason="--profile needs the load tests (not --no-load)"
        )
    return profile_pairs(
        oha,
        matched,
        rig.environments,
        out / "profile",
        quick=quick,
        duration=duration,
    )
