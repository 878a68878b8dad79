"""The load stage: interleaved rounds over the variants, each boot verified, warmed, measured;
run.json written after every step."""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Sequence
from pathlib import Path

from benchwatch.config import Project, Variant
from benchwatch.measure import loadgen
from benchwatch.measure.collect import Collector, slots_for
from benchwatch.measure.plan import FULL, QUICK, LoadPlan
from benchwatch.measure.rig import Rig, Track
from benchwatch.measure.rounds import run_rounds
from benchwatch.progress import Progress
from benchwatch.results import Run, write_run
from benchwatch.session import Session, now


def measure_load(
    rig: Rig, track: Track, run: Run, out_dir: Path, *, failed_stacks: dict[str, str], quiet: bool = False
) -> Run:
    """Every round over every slot of `track`, run.json rewritten after each step; on Ctrl-C
    what was measured is written, marked incomplete."""
    earlier = (list(run.figures), list(run.problems))
    track.fail_stacks(failed_stacks)
    run.environment.record_environments(rig.environments)

    def checkpoint(complete: bool) -> Run:
        fill_run(run, rig, track, complete=complete, earlier=earlier)
        write_run(out_dir, run)
        return run

    progress = Progress(rig.plan.rounds * len(track.slots), quiet=quiet)
    try:
        run_rounds(rig, [track], progress=progress, after_step=lambda: checkpoint(False))
    except KeyboardInterrupt:
        checkpoint(False)
        raise
    return checkpoint(True)


def load(
    project: Project, variants: Sequence[Variant], session: Session, *, quick: bool = False,
    rounds: int | None = None, aa_variant: str | None = None, shard: str | None = None, quiet: bool = False,
    counts: bool = False,
) -> Run:  # fmt: skip
    """The load stage from end to end: environments, rounds, then (`counts`) the counts per
    request of every variant's endpoints, written to the session's folder."""
    from benchwatch.measure.rig import build_rig

    if session.oha is None:
        raise ValueError("the load stage needs a session opened with load_tests=True")
    out = session.out
    plan = load_plan(quick, rounds)
    record = session.start_run()
    record.extra.reference_stack = project.reference_stack
    record.extra.stack_order = list(project.stacks)
    record.extra.shard = shard
    track = load_track(variants, aa_variant)
    say(f"load: {len(track.slots)} variant slots x {plan.rounds} round(s), "
        f"about {plan.estimate([s.variant for s in track.slots]) / 60:.1f} min; results in {out}", quiet)  # fmt: skip
    rig, failed = build_rig(session.oha, plan, variants)
    record = measure_load(rig, track, record, out, failed_stacks=failed, quiet=quiet)
    if counts:
        count_variants(record, variants, rig.environments, quick, out, quiet)
    return record


def load_plan(quick: bool, rounds: int | None = None) -> LoadPlan:
    """The quick or the full plan, with `rounds` rounds when asked."""
    plan = QUICK if quick else FULL
    return dataclasses.replace(plan, rounds=rounds) if rounds else plan


def count_variants(record: Run, variants: Sequence[Variant], environments: dict, quick: bool, out: Path,
                   quiet: bool) -> None:  # fmt: skip
    """Instructions and system calls per request (benchwatch.counts) of every variant whose
    environment was built, added to the run (gab-counts.json); a counter that is missing is
    said once, as a note, and the timings stand alone."""
    from benchwatch import counts

    missing = counts.unavailable_reason()
    if missing:
        record.extra.counts = {"skipped": missing}
        write_run(out, record)
        return
    targets = counts.targets_for(variants, environments, quick)
    say(f"counts: instructions and system calls per request of {sum(len(t.endpoints) for t in targets)} "
        f"endpoints", quiet)  # fmt: skip
    found, trouble = counts.count_requests(targets, out_dir=out / "counts", log=(lambda line: None) if quiet else None)
    record.figures += found
    record.problems += trouble
    write_run(out, record)


def load_track(variants: Sequence[Variant], aa_variant: str | None = None, name_tag: str = "") -> Track:
    return Track(slots_for(variants, aa_variant), Collector(name_tag=name_tag))


def fill_run(run: Run, rig: Rig, track: Track, *, complete: bool, earlier: tuple[list, list] = ([], [])) -> None:
    """The run as its track stands now: figures, problems, what oha did, the plan, A/A noise."""
    data = track.data
    run.figures = earlier[0] + data.figures()
    run.problems = earlier[1] + data.problems
    run.complete = complete
    run.finished_at = now()
    run.extra.loadgen = data.loadgen_info(rig.oha_cores, rig.server_cores, loadgen.BOTTLENECK_SHARE)
    run.extra.timings["load"] = data.timings
    run.extra.load_plan = rig.plan.info()
    copies = [s for s in track.slots if s.is_copy]
    if copies:
        run.extra.aa_noise = data.aa_noise(copies[0])


def say(line: str, quiet: bool = False) -> None:
    if not quiet:
        print(line, file=sys.stderr, flush=True)
