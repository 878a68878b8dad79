"""The load stage's facts in a run (run.json's `loadgen`, `load_plan`, `aa_noise`): every oha
run, the measurements not made or not kept, the plan, and the A/A copy's noise."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel


class OhaRecord(BaseModel):
    """One oha run as it happened: who, where, how busy oha was, valid or not."""

    variant: str
    endpoint: str
    params: dict[str, Any]
    round: int
    oha_cpu_share: float
    oha_bottleneck: bool
    server_cpu_share: float | None = None
    successes: int
    deadline_aborts: int
    elapsed_s: float
    valid: bool
    requests: int | None = None
    connections: int


class SkippedRun(BaseModel):
    """A measurement not made (an open loop too short to mean anything), or a side-by-side
    pair not kept (the two oha windows differed: the host stalled one of them)."""

    variant: str
    endpoint: str
    params: dict[str, Any]
    reason: str
    round: int | None = (
        None  # a compare's make-up rounds come after its planned ones (measure/rounds.py)
    )
    windows_apart: float | None = (
        None  # a dropped pair: its longer oha window over the shorter, minus 1
    )


class LoadgenInfo(BaseModel):
    oha_cores: list[int] | None = None
    server_cores: list[int] | None = None
    bottleneck_share: float = 0.9
    bottlenecked_runs: int = 0
    runs: list[OhaRecord] = []
    skipped: list[SkippedRun] = []
    dropped_pairs: list[SkippedRun] = []


class LoadPlanInfo(BaseModel):
    rounds: int
    warmup_s: float
    duration_s: float
    open_duration_s: float
    concurrencies: list[int]
    rate_fractions: list[float]
    quick: bool


class AAFigure(BaseModel):
    cv: float
    ratio: float
    a: list[float]
    a_prime: list[float]
    metric: str


class AANoise(BaseModel):
    variant: str
    figures: dict[str, AAFigure] = {}


class RunLoadFacts(BaseModel):
    """The load stage's own facts: its plan, every oha run, and the A/A copy's noise."""

    loadgen: LoadgenInfo | None = None
    plan: LoadPlanInfo | None = None
    aa_noise: AANoise | None = None
