"""The load stage from end to end, as `benchwatch load` and `benchwatch run` run it: the stacks'
environments, the interleaved rounds (benchwatch.measure.load), then the counts per request of every
variant's endpoints (benchwatch.counts), each written to the session's folder."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from benchwatch import counts
from benchwatch.measure.load import load_plan, load_track, measure_load_stage, say
from benchwatch.measure.rig import build_rig
from benchwatch.measure.session import Session
from benchwatch.project.variants import Project, Variant
from benchwatch.results.files import write_run
from benchwatch.results.schema import Run
from benchwatch.results.stage_facts import StageFacts


def load(
    project: Project,
    variants: Sequence[Variant],
    session: Session,
    *,
    quick: bool = False,
    rounds: int | None = None,
    aa_variant: str | None = None,
    shard: str | None = None,
    quiet: bool = False,
    counts: bool = False,
) -> Run:
    """The load stage from end to end: environments, rounds, then (`counts`) the counts per
    request of every variant's endpoints, written to the session's folder."""
    if session.oha is None:
        raise ValueError("the load stage needs a session opened with load_tests=True")
    out = session.out
    plan = load_plan(quick, rounds)
    record = session.start_run()
    record.extra.reference_stack = project.reference_stack
    record.extra.stack_order = list(project.stacks)
    record.extra.shard = shard
    track = load_track(variants, aa_variant)
    say(
        f"load: {len(track.slots)} variant slots x {plan.rounds} round(s), "
        f"about {plan.estimate([s.variant for s in track.slots]) / 60:.1f} min; results in {out}",
        quiet,
    )
    rig, failed = build_rig(session.oha, plan, variants)
    record = measure_load_stage(rig, track, record, out, failed_stacks=failed, quiet=quiet)
    if counts:
        count_variants(record, variants, rig.environments, quick, out, quiet)
    return record


def count_variants(
    record: Run,
    variants: Sequence[Variant],
    environments: dict,
    quick: bool,
    out: Path,
    quiet: bool,
) -> None:
    """Instructions and system calls per request (benchwatch.counts) of every variant whose
    environment was built, added to the run (gab-counts.json); a counter that is missing is
    said once, as a note, and the timings stand alone."""
    missing = counts.unavailable_reason()
    if missing:
        record.extra.counts = StageFacts(skipped=missing)
        write_run(out, record)
        return
    targets = counts.targets_for(variants, environments, quick)
    say(
        f"counts: instructions and system calls per request of {sum(len(t.endpoints) for t in targets)} "
        f"endpoints",
        quiet,
    )
    found, trouble = counts.count_requests(
        targets, out_dir=out / "counts", log=(lambda line: None) if quiet else None
    )
    record.figures += found
    record.problems += trouble
    write_run(out, record)
