"""The load stage: interleaved rounds over the variants, each boot verified, warmed, measured;
run.json written after every step."""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Sequence
from pathlib import Path

from benchwatch.measure import loadgen
from benchwatch.measure.collect import Collector, slots_for
from benchwatch.measure.load_plan import FULL, QUICK, LoadPlan
from benchwatch.measure.rig import Rig, Track
from benchwatch.measure.rounds import run_rounds
from benchwatch.measure.session import now
from benchwatch.progress import Progress
from benchwatch.project.variants import Variant
from benchwatch.results.files import write_run
from benchwatch.results.schema import Run


def measure_load_stage(
    rig: Rig,
    track: Track,
    run: Run,
    out_dir: Path,
    *,
    failed_stacks: dict[str, str],
    quiet: bool = False,
) -> Run:
    """The load stage's rounds (`benchwatch load`): every round over every slot of `track`, one
    server at a time, run.json rewritten after each step; on Ctrl-C what was measured is written,
    marked incomplete."""
    earlier = (list(run.figures), list(run.problems))
    track.fail_stacks(failed_stacks)
    run.environment.record_environments(rig.environments)

    def checkpoint(complete: bool = False) -> None:
        fill_run(run, rig, track, complete=complete, earlier=earlier)
        write_run(out_dir, run)

    progress = Progress(rig.plan.rounds * len(track.slots), quiet=quiet)
    try:
        run_rounds(rig, [track], progress=progress, after_step=checkpoint)
    except KeyboardInterrupt:
        checkpoint()
        raise
    checkpoint(complete=True)
    return run


def load_plan(quick: bool, rounds: int | None = None) -> LoadPlan:
    """The quick or the full plan, with `rounds` rounds when asked."""
    plan = QUICK if quick else FULL
    return dataclasses.replace(plan, rounds=rounds) if rounds else plan


def load_track(
    variants: Sequence[Variant], aa_variant: str | None = None, name_tag: str = ""
) -> Track:
    return Track(slots_for(variants, aa_variant), Collector(name_tag=name_tag))


def fill_run(
    run: Run, rig: Rig, track: Track, *, complete: bool, earlier: tuple[list, list] = ([], [])
) -> None:
    """The run as its track stands now: figures, problems, what oha did, the plan, A/A noise."""
    data = track.data
    run.figures = earlier[0] + data.figures()
    run.problems = earlier[1] + data.problems
    run.complete = complete
    run.finished_at = now()
    run.extra.load.loadgen = data.loadgen_info(
        rig.oha_cores, rig.server_cores, loadgen.BOTTLENECK_SHARE
    )
    run.extra.timings["load"] = data.timings
    run.extra.load.plan = rig.plan.info()
    copies = [s for s in track.slots if s.is_copy]
    if copies:
        run.extra.load.aa_noise = data.aa_noise(copies[0])


def say(line: str, quiet: bool = False) -> None:
    if not quiet:
        print(line, file=sys.stderr, flush=True)
