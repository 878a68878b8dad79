"""Starting the servers of a round: in turn, or all at once and pinned once ready."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from benchwatch.measure import launch, server
from benchwatch.measure.collect import Slot
from benchwatch.results.schema import Problem

if TYPE_CHECKING:
    from benchwatch.measure.rig import Rig, Track


class Boot:
    """One server of a round being started: a boot failure is recorded as the slot's problem."""

    def __init__(self, rig: Rig, track: Track, slot: Slot, round_index: int, together: int) -> None:
        self.track, self.slot = track, slot
        self.timing: dict = {"slot": slot.label, "round": round_index, "together": together}
        track.data.timings.append(self.timing)
        env = rig.environments[slot.variant.env_key]
        # booting together, the servers start on every core and are pinned once ready
        self.pin_later = rig.server_cores if rig.boot_together else None
        cores = None if self.pin_later else rig.server_cores
        self.context = launch.running(
            slot.variant, env, launch.ServerOptions(cpu=cores, role=track.role)
        )
        self.srv: server.Server | None = None

    def enter(self) -> BaseException | None:
        """Start the server; an unexpected exception is returned (to raise once every started
        server is registered for stopping)."""
        started = time.monotonic()
        try:
            self.srv = self.context.__enter__()
        except server.BootError as exc:
            self.track.data.fail(
                self.slot,
                Problem(
                    variant=self.slot.variant.id,
                    phase=exc.phase,
                    reason=exc.reason,
                    detail=exc.stderr_tail,
                ),
            )
            return None
        except BaseException as exc:
            return exc
        if self.pin_later:
            server.pin(self.srv, self.pin_later)
        self.timing["boot_s"] = round(time.monotonic() - started, 3)
        return None
