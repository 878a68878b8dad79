"""What a benchwatch.toml, a stacks.toml and a benchwatch-app.toml may say: the validated models."""

from __future__ import annotations

import datetime as dt
import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from benchwatch.metrics import CPU, P50, P99, RPS, RSS_IDLE, RSS_PEAK, RSS_WARM

_NAME = r"^[a-z0-9][a-z0-9_]*$"
_STACK_NAME = r"^[a-z0-9][a-z0-9._+-]*$"  # "+": attribute's intermediate stacks (v2-pre-rust+fastapi)


def normalize_package(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Stack(_Strict):
    name: str = Field(pattern=_STACK_NAME)
    description: str = ""
    python: str = Field(default="3.11", pattern=r"^3\.\d+$")
    exclude_newer: dt.date | None = None
    pins: dict[str, str] = {}
    resolved_at_run_time: bool = False
    requires: list[str] = []

    @field_validator("pins")
    @classmethod
    def _exact_pins(cls, pins: dict[str, str]) -> dict[str, str]:
        for package, version in pins.items():
            if not re.fullmatch(r"[0-9][0-9A-Za-z.+!-]*", version):
                raise ValueError(f"pin {package} = {version!r} is not an exact version")
        return pins

    @model_validator(mode="after")
    def _pins_or_requires(self) -> Stack:
        if self.resolved_at_run_time and not self.requires:
            raise ValueError("a stack resolved at run time needs `requires`")
        if not self.resolved_at_run_time and not self.pins:
            raise ValueError("a pinned stack needs `pins`")
        return self

    def requirements(self) -> list[str]:
        if self.resolved_at_run_time:
            return list(self.requires)
        return [f"{package}=={version}" for package, version in self.pins.items()]

    def pinned_versions(self) -> dict[str, str]:
        """Exact pins, and a run-time stack's exact requirements (`fastapi==0.166.0b1`)."""
        exact = [re.fullmatch(r"([A-Za-z0-9._-]+)(?:\[[^\]]*\])?==([0-9][0-9A-Za-z.+!-]*)", r) for r in self.requires]
        pinned = {normalize_package(m.group(1)): m.group(2) for m in exact if m}
        return {**pinned, **{normalize_package(p): v for p, v in self.pins.items()}}


class Expect(_Strict):
    status: int = Field(default=200, ge=100, le=599)
    content_type: str = "application/json"
    json_file: str | None = Field(default=None, alias="json")
    volatile: list[str] = []
    min_bytes: int | None = Field(default=None, ge=0)
    max_bytes: int | None = Field(default=None, ge=0)


class Endpoint(_Strict):
    name: str = Field(pattern=_NAME)
    method: Literal["GET", "POST", "PUT", "PATCH", "DELETE"] = "GET"
    path: str = Field(pattern=r"^/")
    query: str = ""
    body: str | None = None
    body_file: str | None = None
    content_type: str | None = None
    # the benchmarks/ case whose response_model micro-benchmark isolates this endpoint's work
    micro_case: str | None = None
    expect: Expect = Expect()

    @model_validator(mode="after")
    def _one_body(self) -> Endpoint:
        if self.body is not None and self.body_file is not None:
            raise ValueError("give `body` or `body_file`, not both")
        return self

    @property
    def url_path(self) -> str:
        return f"{self.path}?{self.query}" if self.query else self.path

    @property
    def label(self) -> str:
        return f"{self.method} {self.url_path}"


class Flavor(_Strict):
    description: str = ""
    app: str | None = None
    stacks: list[str] | None = None
    endpoints: list[str] | None = None
    env: dict[str, str] = {}
    quick: list[str] | None = None


class AppDeclaration(_Strict):
    name: str = Field(pattern=_NAME)
    description: str = ""
    seed: str | None = None
    root: str = "."
    app: str = Field(pattern=r"^[A-Za-z_][\w.]*:[A-Za-z_]\w*$")
    stacks: list[str] | None = None
    requirements: str | None = None
    # the Python the app's environment uses (uv finds or installs it); default: the stack's
    python: str | None = Field(default=None, pattern=r"^3\.\d+$")
    env: dict[str, str] = {}
    pre_start: list[str] | None = None
    ready_path: str | None = None
    ready_timeout: float = Field(default=30.0, gt=0, le=600)
    quick: list[str] | None = None
    endpoints: list[Endpoint] = Field(min_length=1)
    flavors: dict[str, Flavor] = {}

    @model_validator(mode="after")
    def _consistent(self) -> AppDeclaration:
        if self.stacks is not None and self.requirements is not None:
            raise ValueError("give `stacks` or `requirements`, not both")
        names = [e.name for e in self.endpoints]
        duplicates = sorted({n for n in names if names.count(n) > 1})
        if duplicates:
            raise ValueError(f"endpoint names must be unique: {', '.join(duplicates)}")
        for flavor_name, flavor in self.flavors.items():
            if not re.fullmatch(_NAME, flavor_name):
                raise ValueError(f"flavor name {flavor_name!r} must match {_NAME}")
            for listed in (flavor.endpoints or []) + (flavor.quick or []):
                if listed not in names:
                    raise ValueError(f"flavors.{flavor_name} names unknown endpoint {listed!r}")
        for listed in self.quick or []:
            if listed not in names:
                raise ValueError(f"quick names unknown endpoint {listed!r}")
        return self


class ProjectSettings(_Strict):
    apps: list[str] = Field(min_length=1)
    default_stacks: list[str] | None = None
    reference_stack: str | None = Field(
        default=None, description="the stack report ratios are taken against; none: no ratios (docs/questions.md)")


# what a question may compare: the figures its side-by-side rounds measure (closed loops per
# endpoint; memory per server, which needs a fresh boot every round)
QUESTION_METRICS = tuple(m.key for m in (CPU, RPS, P50, P99, RSS_IDLE, RSS_WARM, RSS_PEAK))


def _question_metric(key: str) -> str:
    if key not in QUESTION_METRICS:
        raise ValueError(f"metric {key!r} is not one a question measures; choose from {', '.join(QUESTION_METRICS)}")
    return key


class QuestionLane(_Strict):
    """One server of a question: a variant (`scenario@stack`), at one endpoint per step."""

    variant: str = Field(pattern=r"^[a-z0-9][a-z0-9_-]*@[a-z0-9][a-z0-9._+-]*$",
                         description="the variant this server runs, `scenario@stack` as `benchwatch list` prints it")
    endpoints: list[str] | None = Field(
        default=None, description="one endpoint name per step; default: endpoints named like the steps")
    name: str | None = Field(default=None, description="what the report calls the lane; default: the variant")

    @property
    def label(self) -> str:
        return self.name or self.variant


class Published(_Strict):
    """A figure someone published, set beside the question's answer (the report's study section)."""

    who: str = Field(min_length=1, description="who published it")
    what: str = Field(min_length=1, description="what they measured")
    figure: str = Field(min_length=1, description="their number, as published")
    source: str = Field(default="", description="a link, or a file in the repository")
    setup: str = Field(default="", description="how they measured it")
    note: str = ""
    metrics: list[str] = Field(default=[CPU.key], min_length=1, description="the question's metrics that answer it")
    heads: list[str] = Field(default=[], description="the pairs whose head lane is one of these answer it; [] every pair")
    steps: list[str] = Field(default=[], description="the steps that answer it; [] every step")


class Question(_Strict):
    """Lanes loaded side by side in every round of `run`; answered as head/base ratios per pair."""

    name: str = Field(pattern=_NAME, description="unique; names the question's answers in the report")
    title: str = ""
    steps: list[str] | None = Field(
        default=None, description="loaded one after the other, every lane at once; default: the first lane's endpoints")
    lanes: list[QuestionLane] = Field(min_length=2, description="the servers loaded at the same moment")
    metrics: list[str] = Field(default=[CPU.key], min_length=1,
                               description=f"what each pair compares, of {', '.join(QUESTION_METRICS)}")
    pairs: list[tuple[str, str]] | None = Field(
        default=None, description="(base, head) lane names; default: every lane against the first")
    published: list[Published] = Field(default=[], description="figures others published, set beside the answers")

    @field_validator("metrics")
    @classmethod
    def _known_metrics(cls, metrics: list[str]) -> list[str]:
        return [_question_metric(key) for key in metrics]

    @model_validator(mode="after")
    def _consistent(self) -> Question:
        labels = [lane.label for lane in self.lanes]
        twice = sorted({n for n in labels if labels.count(n) > 1})
        if twice:
            raise ValueError(f"two lanes are called {twice[0]!r}: give each a distinct `name`")
        if self.steps is None and self.lanes[0].endpoints is None:
            raise ValueError("give `steps` (endpoint names) or the lanes' `endpoints`")
        steps = self.step_names
        if len(set(steps)) != len(steps) or not steps:
            raise ValueError(f"steps must be distinct and at least one: {steps}")
        for lane in self.lanes:
            if lane.endpoints is not None and len(lane.endpoints) != len(steps):
                raise ValueError(f"lane {lane.label!r} names {len(lane.endpoints)} endpoints for {len(steps)} steps {steps}")
        for base, head in self.pairs or []:
            if base == head:
                raise ValueError(f"pairs: [{base!r}, {head!r}] pairs a lane with itself")
            for name in (base, head):
                if name not in labels:
                    raise ValueError(f"pairs: no lane called {name!r}; lanes: {', '.join(labels)}")
        heads = {head for _, head in self.lane_pairs}
        for i, figure in enumerate(self.published):
            where = f"published[{i}]"
            for key in figure.metrics:
                if key not in self.metrics:
                    raise ValueError(f"{where}: metric {key!r} is not one of the question's metrics {self.metrics}")
            for head in figure.heads:
                if head not in heads:
                    raise ValueError(f"{where}: heads: {head!r} is the head of no pair; heads: {', '.join(sorted(heads))}")
            for step in figure.steps:
                if step not in steps:
                    raise ValueError(f"{where}: steps: {step!r} is not a step; steps: {', '.join(steps)}")
        return self

    @property
    def step_names(self) -> list[str]:
        return list(self.steps) if self.steps is not None else list(self.lanes[0].endpoints or [])

    def lane_endpoints(self, lane: QuestionLane) -> list[str]:
        return list(lane.endpoints) if lane.endpoints is not None else self.step_names

    @property
    def lane_pairs(self) -> list[tuple[str, str]]:
        """(base, head) lane names: the declared pairs, or every lane against the first."""
        if self.pairs is not None:
            return [tuple(p) for p in self.pairs]  # type: ignore[misc]
        first = self.lanes[0].label
        return [(first, lane.label) for lane in self.lanes[1:]]
