"""What a compare was asked to do: one frozen set of options, built once by `benchwatch compare`
(or by attribute and bisect for each compare of theirs) and handed to compare() whole."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from benchwatch.compare.shard import Shard
from benchwatch.errors import UserError
from benchwatch.measure import inject
from benchwatch.measure.session import Session

ON_REGRESSION = "on-regression"


@dataclass(frozen=True)
class CompareOptions:
    """Every choice of a compare beyond its sides (the defaults are `benchwatch compare`'s)."""

    patterns: str | None = None  # -k: which variants (None: every variant of both sides)
    quick: bool = False
    rounds: int | None = None  # the load rounds (None: the plan's default)
    out: Path | None = None  # the compare's folder (None: compare-<time>)
    load: bool = True  # the load tests, base and head side by side
    micro: bool = True  # the asv micro-benchmarks in alternating batches
    quiet: bool = False
    instructions: bool = True  # the micro-benchmarks' instruction counts
    # True, or ON_REGRESSION (only when a gating figure regressed): one more round under py-spy
    # after the verdicts are in (it never feeds them)
    profile: bool | str = False
    # measure every flagged timing regression once more before it counts (judge/gate.py)
    confirm: bool = True
    # instructions and system calls per request of every selected endpoint (benchwatch.counts),
    # which gate first
    counts: bool = True
    # the session of the command this compare is a part of (attribute, bisect); `out` is then
    # this compare's folder in it
    session: Session | None = None
    # leave out what needs a `${NAME}` not set here (a fork's pull request gets no secrets;
    # measure/preflight.py), listed as not measured
    skip_unset: bool = False
    # --shard K/N: count only shard K's endpoints; shard 1 also times the quick set (compare/shard.py)
    shard: Shard | None = None

    @property
    def timed_here(self) -> bool:
        """Whether this compare runs the load rounds and micro-benchmarks (a shard but the first: no)."""
        return self.shard is None or self.shard.timed

    def check(self) -> None:
        """Bad input said before anything is resolved, created or built."""
        if not self.load and not self.micro and not self.counts:
            raise UserError(
                "--no-load, --no-micro and --no-counts together leave nothing to compare"
            )
        if self.shard is not None and not self.counts:
            raise UserError("--shard splits the counts over runners: give it without --no-counts")
        if self.rounds is not None and self.rounds < 1:
            raise UserError("--rounds: give a positive number of rounds")
        inject.active().check()  # TESTING ONLY: the --inject-head-* flags (measure/inject.py)
