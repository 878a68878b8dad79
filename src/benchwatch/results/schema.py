"""One run = one directory: run.json (everything) and the github-action-benchmark files."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from benchwatch.declarations.project_file import Question
from benchwatch.figures.metrics import Counted, Metric, Setting, metric, setting_from_params
from benchwatch.results.load_facts import LoadPlanInfo, RunLoadFacts
from benchwatch.results.stage_facts import FlatExtra, StageFacts

# 2: typed `environment` and `extra`; a version-1 run.json has the same keys and is read as is
SCHEMA_VERSION = 2
READABLE_SCHEMAS = (1, 2)
RUN_FILE = "run.json"
GAB_BIGGER = "gab-bigger.json"
GAB_SMALLER = "gab-smaller.json"
# counts per request (instructions, system calls): their own trend suite, stable across runners,
# so an alert threshold near 100 % instead of the timings' (benchwatch calibrate --print-threshold)
GAB_COUNTS = "gab-counts.json"

Phase = Literal["config", "env", "boot", "setup", "verify", "load", "micro", "compare"]


class Problem(BaseModel):
    """Something that went wrong for one variant; reported by name, never published as a figure."""

    variant: str
    phase: Phase
    reason: str
    endpoint: str | None = None
    detail: str = ""

    def line(self) -> str:
        where = f"{self.variant} {self.endpoint}" if self.endpoint else self.variant
        return f"{where} [{self.phase}]: {self.reason}"


class Figure(BaseModel):
    """A measured quantity with all its samples. `name` is stable and unique across runs."""

    name: str
    kind: Literal["load", "micro"]
    variant: str
    scenario: str
    stack: str
    metric: str
    unit: str
    bigger_is_better: bool
    samples: list[float]
    value: float
    spread: float = 0.0
    endpoint: str | None = None
    params: dict[str, Any] = {}
    valid: bool = True
    note: str = ""
    # the asv case: of a timed micro figure, its own; of a load figure, the one that explains it
    micro_case: str | None = None
    # a count's parts per request (system calls by name: {"epoll_wait": 2.0, …}); never a trend key
    detail: dict[str, float] = {}

    @field_validator("samples")
    @classmethod
    def _finite(cls, samples: list[float]) -> list[float]:
        if any(not math.isfinite(s) for s in samples):
            raise ValueError("samples must be finite numbers")
        return samples

    @property
    def setting(self) -> Setting:
        """Closed(c) or Open(fraction) for a load figure per endpoint; None otherwise."""
        return setting_from_params(self.params) if self.kind == "load" else None

    @property
    def about(self) -> Metric | None:
        return metric(self.kind, self.metric, self.unit)

    def pair_key(self, *, scenario: bool = True, endpoint: bool = True) -> tuple:
        """What the figure measures, without which stack, checkout or side it was measured on
        (and, for a compare of two variants or two endpoints, without the scenario or endpoint)."""
        setting = self.setting
        params = setting.pair_params() if setting is not None else self.params
        return (
            self.kind,
            self.scenario if scenario else None,
            self.endpoint if endpoint else None,
            self.metric,
            json.dumps(params, sort_keys=True, default=str),
        )


def figure_label(figure: Figure) -> str:
    """What a figure measures, without the stack or checkout: the same on both sides of a
    compare and in calibration.json ("services GET /services?offset=0 c=10 cpu_us_per_request")."""
    if figure.kind == "micro":
        parts = [str(v) for k, v in figure.params.items() if k not in ("size",)]
        return " ".join(["micro", *parts, figure.metric])
    setting = figure.setting
    tag = setting.tag if setting is not None else ""
    return " ".join(p for p in (figure.scenario, figure.endpoint or "", tag, figure.metric) if p)


class ServerPython(BaseModel):
    """The interpreter a stack's servers ran on (benchwatch.environments.interpreters): two builds of one
    version are two different servers."""

    model_config = ConfigDict(extra="forbid")

    python: str  # "CPython 3.11.7"
    build: str  # a digest of the executable and its libpython
    path: str
    symbols: bool  # the interpreter keeps its symbol table (its static functions have names)
    optimizations: str = ""  # "PGO+LTO", … when its ./configure asked for them; "": not said

    def line(self) -> str:
        facts = [
            self.build,
            *([self.optimizations] if self.optimizations else []),
            *([] if self.symbols else ["stripped"]),
        ]
        return f"{self.python} ({', '.join(facts)})"


class Environment(BaseModel):
    """The fingerprint of where a run was measured (benchwatch.results.fingerprint.collect)."""

    model_config = ConfigDict(extra="forbid")

    cpu_model: str | None = Field(None, title="CPU")
    cores: int | None = Field(None, title="cores")
    os: str | None = Field(None, title="OS")
    python: str | None = Field(None, title="benchwatch's Python")
    git_commit: str | None = Field(None, title="git commit")
    git_dirty: bool | None = Field(None, title="uncommitted changes")
    oha_version: str | None = Field(None, title="oha")
    asv_version: str | None = Field(None, title="asv")
    benchwatch_version: str | None = Field(None, title="benchwatch")
    stacks: dict[str, dict[str, str]] = {}  # stack -> package -> installed version
    hostname: str | None = Field(None, title="host")
    interpreters: dict[
        str, ServerPython
    ] = {}  # stack (env key) -> the interpreter its servers ran on

    def facts(self) -> list[tuple[str, str, object]]:
        """(key, title, value) of every fingerprint fact but the stacks and their interpreters, in a fixed order."""
        return [
            (key, field.title or key, getattr(self, key))
            for key, field in type(self).model_fields.items()
            if key not in PER_STACK_FACTS
        ]

    def record_environments(self, environments: Mapping[str, Any]) -> None:
        """The installed versions and the interpreter of every environment (`envs.Env`, by env key)."""
        for name, env in environments.items():
            self.stacks[name] = dict(env.versions)
            interpreter = getattr(env, "interpreter", None)
            if interpreter is not None:
                self.interpreters[name] = ServerPython(
                    python=interpreter.label,
                    build=interpreter.build,
                    path=str(interpreter.path),
                    symbols=interpreter.symbols,
                    optimizations=interpreter.optimizations,
                )


PER_STACK_FACTS = ("stacks", "interpreters")


class PairedRatio(BaseModel):
    """One answer measured side by side: lane `head` over lane `base` of a question,
    paired by round (Hodges–Lehmann ratio, 95 % Wilcoxon interval), or why there is none."""

    group: str  # the question's name
    base: str  # the lanes' names
    head: str
    step: str  # the step ("1mb"); "" for a per-server figure (memory)
    metric: str  # metrics key
    base_endpoint: str | None = None
    head_endpoint: str | None = None
    base_value: float | None = None  # medians of the samples
    head_value: float | None = None
    ratio: float | None = None
    low: float | None = None
    high: float | None = None
    pairs: int = 0
    reason: str = ""  # why no interval

    def holds_one(self) -> bool:
        return self.low is not None and self.high is not None and self.low <= 1.0 <= self.high


class SideBySideInfo(BaseModel):
    """The project's questions, each measured with its lanes side by side (`run` after the load stage)."""

    plan: LoadPlanInfo | None = None  # None: the rounds did not run (`run --no-questions`)
    questions: list[
        Question
    ] = []  # as declared when the run was made (the report's study reads them)
    ratios: list[PairedRatio] = []
    not_run: dict[str, str] = {}  # group -> why it was not measured (not selected, failed)
    problems: list[Problem] = []
    seconds: float = 0.0
    group_seconds: dict[str, float] = {}


class ShardInfo(BaseModel):
    dir: str
    shard: str | None = None
    hostname: str | None = None
    cpu_model: str | None = None
    complete: bool
    timings: dict[str, list[dict[str, Any]]] | None = None


class RunExtra(FlatExtra):
    """What each stage adds to a run beside figures and problems (results/stage_facts.py:
    nested here, flat in run.json)."""

    model_config = ConfigDict(extra="forbid")

    DISK_KEYS: ClassVar = (
        ("loadgen", "load", "loadgen"),
        ("load_plan", "load", "plan"),
        ("aa_noise", "load", "aa_noise"),
        "side_by_side",
        "micro",
        "reference_stack",
        "stack_order",
        "shard",
        "shards",
        "timings",
        "micro_inject",
        "counts",
    )

    load: RunLoadFacts = Field(default_factory=RunLoadFacts)
    side_by_side: SideBySideInfo | None = (
        None  # the questions measured side by side (optional: schema 2 still reads)
    )
    micro: StageFacts | None = None  # {"skipped": why}
    counts: StageFacts | None = None  # {"skipped": why} when no counts per request were measured
    reference_stack: str | None = None
    stack_order: list[str] = Field(default_factory=list)
    shard: str | None = None  # "i/N"
    shards: list[ShardInfo] = Field(default_factory=list)  # a merged run: where each part came from
    timings: dict[str, list[dict[str, Any]]] = Field(
        default_factory=dict
    )  # stage -> per boot: seconds to boot and measure
    micro_inject: str | None = (
        None  # TEST ONLY: BENCHWATCH_MICRO_INJECT when the run was made with it
    )


class Run(BaseModel):
    model_config = ConfigDict(extra="forbid")

    schema_version: int = SCHEMA_VERSION
    started_at: str
    finished_at: str | None = None
    complete: bool = False
    command: list[str] = []
    environment: Environment = Environment()
    figures: list[Figure] = []
    problems: list[Problem] = []
    extra: RunExtra = Field(default_factory=RunExtra)

    @field_validator("schema_version")
    @classmethod
    def _readable(cls, version: int) -> int:
        if version not in READABLE_SCHEMAS:
            raise ValueError(
                f"schema version {version} is not one this benchwatch reads ({READABLE_SCHEMAS})"
            )
        return SCHEMA_VERSION  # read as the current version: the keys are the same

    def valid_figures(self) -> list[Figure]:
        return [f for f in self.figures if f.valid]


class GabEntry(BaseModel):
    """github-action-benchmark's custom tool format; the action turns a null value into 0."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1)
    unit: str = Field(min_length=1)
    value: float
    range: str | None = None
    extra: str | None = None

    @field_validator("value")
    @classmethod
    def _finite(cls, value: float) -> float:
        if not math.isfinite(value):
            raise ValueError("value must be a finite number")
        return value


def is_counted(figure: Figure) -> bool:
    return isinstance(figure.setting, Counted)


def gab_entries(
    figures: list[Figure], bigger_is_better: bool, counts: bool = False
) -> list[dict[str, Any]]:
    """github-action-benchmark's entries of the valid figures: the timings (and memory) of one
    direction, or (`counts`) the counts per request."""
    chosen = [
        f
        for f in figures
        if f.valid and f.bigger_is_better == bigger_is_better and is_counted(f) == counts
    ]
    names = [f.name for f in chosen]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise ValueError(f"figure names must be unique: {duplicates[:3]}")
    entries = []
    for figure in chosen:
        extra = f"{len(figure.samples)} samples; {figure.note}".rstrip("; ")
        entry = GabEntry(
            name=figure.name,
            unit=figure.unit,
            value=round(figure.value, 6),
            range=f"± {figure.spread:.4g}",
            extra=extra,
        )
        entries.append(entry.model_dump(exclude_none=True))
    return entries
