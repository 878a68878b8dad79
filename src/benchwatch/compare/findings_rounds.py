"""The project's questions measured side by side inside `run` (see compare/questions.py).

The load stage measures every variant alone, one after the other: two of its figures differ by
the host's mood as much as by the variants (an A/A copy read 9 % apart). Here the lanes of one
question are booted together in every round and loaded at the same moment, short closed loops
only, and each answer is a ratio with the paired 95 % interval compare uses.
"""

from __future__ import annotations

import dataclasses
import os
import time
from collections.abc import Sequence

from benchwatch.compare.questions import Group, Lane, chosen_lanes, group_of
from benchwatch.declarations.project_file import Question
from benchwatch.errors import UserError
from benchwatch.figures.metrics import Closed, Metric
from benchwatch.judge.stats import TooFewSamples, paired_ratio_interval
from benchwatch.measure.collect import Collector, Slot
from benchwatch.measure.load_plan import LoadPlan
from benchwatch.measure.rig import Track, build_rig
from benchwatch.measure.rounds import run_rounds
from benchwatch.progress import Progress
from benchwatch.project.variants import Variant
from benchwatch.results.schema import Figure, PairedRatio, SideBySideInfo

# 6 rounds: the fewest whose Wilcoxon signed-rank test can give a 95 % interval
QUICK = LoadPlan(
    rounds=6,
    warmup=0.2,
    duration=0.5,
    concurrencies=(4,),
    rate_fractions=(),
    quick=True,
    boot_overhead=2.0,
)
FULL = LoadPlan(rounds=10, warmup=1.0, duration=2.0, concurrencies=(10,), rate_fractions=())
TAG = " (findings, side by side)"


def plan_for(quick: bool, rounds: int | None = None) -> LoadPlan:
    plan = QUICK if quick else FULL
    return dataclasses.replace(plan, rounds=rounds) if rounds else plan


def lane_track(variant: Variant, lane: Lane, steps: Sequence[str]) -> Track:
    """One lane: its variant narrowed to the lane's endpoints, each mapped to its step."""
    by_name = {e.name: e for e in variant.endpoints}
    missing = [name for name in lane.endpoints if name not in by_name]
    if missing:
        raise UserError(
            f"questions: {variant.id} has no endpoint {missing[0]!r} (benchwatch.toml's [[questions]])"
        )
    endpoints = tuple(by_name[name] for name in lane.endpoints)
    narrowed = dataclasses.replace(variant, endpoints=endpoints, quick_endpoints=endpoints)
    return Track(
        [Slot(narrowed, narrowed.id)],
        Collector(name_tag=TAG),
        steps={e.label: step for e, step in zip(endpoints, steps, strict=True)},
    )


def measure_questions(
    questions: Sequence[Question],
    selected: Sequence[Variant],
    *,
    oha: str,
    quick: bool,
    rounds: int | None = None,
    quiet: bool = False,
) -> SideBySideInfo:
    """Every question whose variants were selected, its lanes side by side; the rest named as not run."""
    started = time.monotonic()
    plan = plan_for(quick, rounds)
    by_id = {v.id: v for v in selected}
    info = SideBySideInfo(plan=plan.info(), questions=list(questions))
    runnable: list[tuple[Group, tuple[Lane, ...]]] = []
    for group in map(group_of, questions):
        lanes = chosen_lanes(group, list(by_id))
        if isinstance(lanes, str):
            info.not_run[group.key] = lanes
        else:
            runnable.append((group, lanes))
    if not runnable:
        return info
    needed = list(
        {lane.variant: by_id[lane.variant] for _, lanes in runnable for lane in lanes}.values()
    )
    rig, failed = build_rig(oha, plan, needed)
    # with DATABASE_URL set the servers share one database: boot them in turn, as compare does
    rig = dataclasses.replace(
        rig, boot_together=not os.environ.get("DATABASE_URL"), window_mismatch=None
    )
    progress = Progress(plan.rounds * len(runnable), quiet=quiet)
    for group, lanes in runnable:
        group_started = time.monotonic()
        tracks = [lane_track(by_id[lane.variant], lane, group.steps) for lane in lanes]
        for track in tracks:
            track.fail_stacks(failed)
        per_boot = 1 if group.boot_every_round else plan.rounds
        run_rounds(dataclasses.replace(rig, rounds_per_boot=per_boot), tracks, progress=progress)
        info.ratios += group_ratios(group, lanes, tracks)
        info.problems += [problem for track in tracks for problem in track.data.problems]
        info.group_seconds[group.key] = round(time.monotonic() - group_started, 1)
    info.seconds = round(time.monotonic() - started, 1)
    return info


def group_ratios(group: Group, lanes: Sequence[Lane], tracks: Sequence[Track]) -> list[PairedRatio]:
    """Each of the group's pairs whose lanes ran (head over base), per step and metric (memory: per server)."""
    track_of = dict(zip(lanes, tracks, strict=True))
    figures = {lane: track.data.figures() for lane, track in track_of.items()}
    found = []
    for base_lane, head_lane in group.ratios():
        if base_lane not in track_of or head_lane not in track_of:
            continue
        base_track, head_track = track_of[base_lane], track_of[head_lane]
        for what in group.metrics:
            for step in [""] if what.per_variant else list(group.steps):
                base = _find(figures[base_lane], what, _endpoint(base_track, group, step))
                head = _find(figures[head_lane], what, _endpoint(head_track, group, step))
                failed = {**base_track.data.failed, **head_track.data.failed}
                found.append(
                    paired(group.key, base_lane, head_lane, step, what, base, head, failed)
                )
    return found


def _endpoint(track: Track, group: Group, step: str) -> str | None:
    """The label of the track's endpoint at this step (None: a per-server figure)."""
    return track.slots[0].variant.endpoints[group.steps.index(step)].label if step else None


def _find(figures: list[Figure], what: Metric, endpoint: str | None) -> Figure | None:
    """The lane's figure of this metric at its endpoint of the step (its closed loop)."""
    return next(
        (
            f
            for f in figures
            if f.metric == what.key
            and (what.per_variant or (f.endpoint == endpoint and isinstance(f.setting, Closed)))
        ),
        None,
    )


def paired(
    group: str,
    base_lane: Lane,
    head_lane: Lane,
    step: str,
    what: Metric,
    base: Figure | None,
    head: Figure | None,
    failed: dict[str, str],
) -> PairedRatio:
    answer = PairedRatio(
        group=group,
        base=base_lane.name,
        head=head_lane.name,
        step=step,
        metric=what.key,
        base_endpoint=base.endpoint if base else None,
        head_endpoint=head.endpoint if head else None,
        base_value=base.value if base else None,
        head_value=head.value if head else None,
    )
    if base is None or head is None or not base.valid or not head.valid:
        why = next(iter(failed.values()), "") or next(
            (f.note for f in (base, head) if f and f.note), "not measured"
        )
        answer.reason = f"failed: {why}"
        return answer
    try:
        interval = paired_ratio_interval(base.samples, head.samples)
    except (TooFewSamples, ValueError) as exc:
        answer.reason = str(exc)
        return answer
    answer.ratio, answer.low, answer.high = interval.ratio, interval.low, interval.high
    answer.pairs = interval.n_base
    return answer
