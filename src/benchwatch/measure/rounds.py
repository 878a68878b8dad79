"""The round driver: servers booted, verified, warmed and measured, one alone or several side by side.

The load stage measures one server at a time. `benchwatch compare` and `calibrate` measure base
and head as two lanes *side by side*: both servers pinned to the same core(s), both driven at
once by identical oha runs. The host's speed on this kind of machine wanders by ±25 % over
fractions of a second (a vCPU shares its core with other tenants, and the time stolen is
booked as the guest's own CPU time); measured one after the other, base and head see
different hosts, measured together they see the same one. A/A CPU-per-request ratios of
hello@latest, 10 rounds (a throwaway prototype of this module): log-ratio sd 0.133 one after
the other, 0.016 side by side.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack

from benchwatch.measure.boot import Boot
from benchwatch.measure.collect import Slot
from benchwatch.measure.one_round import Lane, measure_lanes
from benchwatch.measure.rig import Rig, Track
from benchwatch.progress import Progress

# side by side: a shot whose pair was dropped in some rounds is measured again, after the planned
# rounds, in make-up rounds of its own (a fresh boot each, only the short shots), at most this share
# of the planned rounds: 3 for a quick compare's 6, 4 for a full one's 8. A busy host drops a pair
# now and then (one pair in ten no-op compares, docs/verdict.md); a host that drops every make-up
# too is not letting two runs stay in step, and the load stage grows by half at most before the
# figure says so instead.
MAKE_UP_SHARE = 0.5


def run_rounds(
    rig: Rig,
    tracks: Sequence[Track],
    *,
    progress: Progress,
    after_step: Callable[[], None] = lambda: None,
) -> None:
    """Every round over every slot. One track: each slot alone. Several: slot i of every track
    side by side, who boots first alternating by boot. Servers are booted for every round, or
    once for `rig.rounds_per_boot` rounds. Answers are cross-checked after the first boot."""
    together = list(zip(*(track.slots for track in tracks), strict=True))
    per_boot = max(1, rig.rounds_per_boot)
    for first in range(0, rig.plan.rounds, per_boot):
        block = list(range(first, min(first + per_boot, rig.plan.rounds)))
        for slots in together:
            entries = [
                (t, s) for t, s in zip(tracks, slots, strict=True) if s.label not in t.data.failed
            ]
            if (first // per_boot) % 2:  # who boots first and whose oha starts first, alternately
                entries.reverse()

            def announce(round_index: int, slots: tuple = slots) -> None:
                progress.step(
                    " | ".join(s.label for s in slots),
                    f"round {round_index + 1}/{rig.plan.rounds}"
                    + (", side by side" if len(slots) > 1 else ""),
                )

            def done(round_index: int) -> None:
                progress.advance()
                after_step()

            if entries:
                boot_and_measure(rig, entries, block, announce=announce, done=done)
            else:
                for round_index in block:
                    announce(round_index)
                    done(round_index)
        if first == 0:
            for track in tracks:
                track.data.cross_check(track.slots)
    if len(tracks) > 1:
        make_up(rig, tracks, together, progress=progress, after_step=after_step)


def make_up_limit(rounds: int) -> int:
    """Make-up rounds at most for one group of slots measured side by side."""
    return max(1, math.ceil(rounds * MAKE_UP_SHARE))


def make_up(
    rig: Rig,
    tracks: Sequence[Track],
    together: Sequence[tuple[Slot, ...]],
    *,
    progress: Progress,
    after_step: Callable[[], None] = lambda: None,
) -> None:
    """Rounds whose pair of samples was dropped (not side by side), measured again: for each group
    of slots, while a shot of theirs has fewer samples than the plan's rounds, one more round of
    only those shots on freshly booted servers (round index `rounds`, `rounds + 1`, …), up to
    make_up_limit. What stays short is said by the figure's samples and the drops recorded."""
    planned = rig.plan.rounds
    for slots in together:
        for extra in range(make_up_limit(planned)):
            entries = [
                (t, s) for t, s in zip(tracks, slots, strict=True) if s.label not in t.data.failed
            ]
            wanted: dict[str, set[str]] = {}
            for track, slot in entries:
                for endpoint, tag in track.data.short(slot, planned):
                    wanted.setdefault(track.steps.get(endpoint, endpoint), set()).add(tag)
            if not wanted or len(entries) < len(slots):  # a lane alone is not side by side
                break
            round_index = planned + extra
            progress.total += 1
            progress.step(
                " | ".join(s.label for s in slots),
                f"make-up round {extra + 1}/{make_up_limit(planned)} (round {round_index + 1}), "
                f"{sum(map(len, wanted.values()))} dropped pair(s) measured again",
            )
            if extra % 2:  # who boots first alternates here too
                entries.reverse()
            boot_and_measure(rig, entries, [round_index], only=wanted)
            progress.advance()
            after_step()


def boot_and_measure(
    rig: Rig,
    entries: Sequence[tuple[Track, Slot]],
    rounds: Sequence[int],
    *,
    announce: Callable[[int], None] = lambda r: None,
    done: Callable[[int], None] = lambda r: None,
    only: dict[str, set[str]] | None = None,
) -> None:
    """Boot the server of every (track, slot), in the order given (all at once when the rig
    says so), then measure them together in each of `rounds` (one, unless servers are reused).
    `only`: step -> setting tags (a make-up round): those shots alone."""
    with ExitStack() as stack:
        announce(rounds[0])
        booting = [Boot(rig, track, slot, rounds[0], len(entries)) for track, slot in entries]
        errors: list[BaseException | None] = []
        try:
            if rig.boot_together and len(booting) > 1:
                with ThreadPoolExecutor(max_workers=len(booting)) as pool:
                    errors = list(pool.map(Boot.enter, booting))
            else:
                for boot in booting:
                    errors.append(boot.enter())
                    if errors[-1] is not None:
                        break
        finally:  # every started server is stopped at the end, even after a failure or Ctrl-C
            for boot in booting:
                if boot.srv is not None:
                    stack.push(boot.context)
        for error in errors:
            if error is not None:
                raise error
        lanes = [
            Lane(boot.track, boot.slot, boot.srv, boot.timing, rig.plan.quick)
            for boot in booting
            if boot.srv is not None
        ]
        for position, round_index in enumerate(rounds):
            if position:
                announce(round_index)
            lanes = [lane for lane in lanes if lane.slot.label not in lane.data.failed]
            started = time.monotonic()
            measure_lanes(rig, lanes, round_index, fresh=position == 0, only=only)
            for lane in lanes:
                lane.timing["measure_s"] = round(
                    lane.timing.get("measure_s", 0) + time.monotonic() - started, 3
                )
            done(round_index)
