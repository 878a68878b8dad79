"""One line per step, `[i/n] item — phase`, with elapsed and estimated time remaining."""

from __future__ import annotations

import sys
import time


class Progress:
    def __init__(self, total: int, quiet: bool = False) -> None:
        self.total = max(total, 1)
        self.quiet = quiet
        self.started = time.monotonic()
        self.done = 0

    def step(self, item: str, phase: str) -> None:
        if self.quiet:
            return
        elapsed = time.monotonic() - self.started
        eta = ""
        if self.done:
            remaining = elapsed / self.done * (self.total - self.done)
            eta = f", ~{_clock(remaining)} left"
        print(
            f"[{self.done + 1}/{self.total}] {item} — {phase} ({_clock(elapsed)}{eta})",
            file=sys.stderr,
            flush=True,
        )

    def advance(self) -> None:
        self.done += 1


def _clock(seconds: float) -> str:
    minutes, secs = divmod(int(seconds), 60)
    return f"{minutes}:{secs:02d}"
