"""Where one counted boot's wall time went, by stage (boot, probe, warm-up, settle, idle pause,
collections, counted phases, dumps, stop), told in one log line per boot: what a count costs is
then read from the log, not guessed."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager


class StageClock:
    """Wall time summed by stage: `switch(stage)` charges the time since the last switch to the
    stage that was running and starts `stage`; `during(stage)` runs a block as `stage`, then goes
    back to the stage before it (a dump inside a phase's stage)."""

    def __init__(self, first: str, now: Callable[[], float] = time.monotonic) -> None:
        self._now = now
        self._stage = first
        self._since = now()
        self._started = self._since
        self.seconds: dict[str, float] = {}

    def switch(self, stage: str) -> str:
        """Start `stage`; the stage that was running."""
        now = self._now()
        before = self._stage
        self.seconds[before] = self.seconds.get(before, 0.0) + now - self._since
        self._stage, self._since = stage, now
        return before

    @contextmanager
    def during(self, stage: str) -> Iterator[None]:
        before = self.switch(stage)
        try:
            yield
        finally:
            self.switch(before)

    def line(self) -> str:
        """`total 30.1 s: boot 7.2, probe 1.0, …` in the order the stages first ran (the running
        stage charged up to now)."""
        self.switch(self._stage)
        total = self._now() - self._started
        parts = ", ".join(f"{stage} {s:.1f}" for stage, s in self.seconds.items() if s >= 0.05)
        return f"{total:.1f} s: {parts}"
