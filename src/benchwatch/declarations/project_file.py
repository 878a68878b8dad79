"""What a benchwatch.toml may say: the `[benchwatch]` table and the `[[questions]]` run side by side."""

from __future__ import annotations

from pydantic import Field, field_validator, model_validator

from benchwatch.declarations.strict import NAME, Strict
from benchwatch.figures.metrics import CPU, P50, P99, RPS, RSS_IDLE, RSS_PEAK, RSS_WARM

# what the stack `own-next` moves on an app's own lock unless benchwatch.toml's `watch` says otherwise
WATCHED_PACKAGES = ("fastapi", "pydantic", "pydantic-core", "starlette", "uvicorn")


class ProjectSettings(Strict):
    """The `[benchwatch]` table of the project file; the repository root is the folder holding it."""

    apps: list[str] = Field(
        min_length=1,
        description=(
            "the app directories, relative to this file; each holds a `benchwatch-app.toml`"
        ),
    )
    default_stacks: list[str] | None = Field(
        default=None,
        description=(
            "the stacks a command uses when `--stacks` names none (default: every stack but `next` and the stacks "
            "that `extend` another, which are asked for by name)"
        ),
    )
    reference_stack: str | None = Field(
        default=None,
        description="the stack report ratios are taken against; none: no ratios (docs/questions.md)",
    )
    watch: list[str] = Field(
        default=list(WATCHED_PACKAGES),
        description=(
            "the packages the stack `own-next` moves to their newest releases on an app's own lock "
            "(everything else as locked; docs/github.md)"
        ),
    )
    watch_pre: bool = Field(
        default=False, description="`own-next` takes the watched packages' pre-releases too"
    )
    micro_quick: list[str] = Field(
        default=[],
        description=(
            "regexes over asv benchmark names (`module.Class.time_x('param')`): the micro-benchmarks `--quick` "
            "runs; default: every one"
        ),
    )


# what a question may compare: the figures its side-by-side rounds measure (closed loops per
# endpoint; memory per server, which needs a fresh boot every round)
QUESTION_METRICS = tuple(m.key for m in (CPU, RPS, P50, P99, RSS_IDLE, RSS_WARM, RSS_PEAK))


def _question_metric(key: str) -> str:
    if key not in QUESTION_METRICS:
        raise ValueError(
            f"metric {key!r} is not one a question measures; choose from {', '.join(QUESTION_METRICS)}"
        )
    return key


class QuestionLane(Strict):
    """One server of a question: a variant (`scenario@stack`), at one endpoint per step."""

    variant: str = Field(
        pattern=r"^[a-z0-9][a-z0-9_-]*@[a-z0-9][a-z0-9._+-]*$",
        description="the variant this server runs, `scenario@stack` as `benchwatch list` prints it",
    )
    endpoints: list[str] | None = Field(
        default=None,
        description="one endpoint name per step; default: endpoints named like the steps",
    )
    name: str | None = Field(
        default=None, description="what the report calls the lane; default: the variant"
    )

    @property
    def label(self) -> str:
        return self.name or self.variant


class Published(Strict):
    """A figure someone published, set beside the question's answer (the report's study section)."""

    who: str = Field(min_length=1, description="who published it")
    what: str = Field(min_length=1, description="what they measured")
    figure: str = Field(min_length=1, description="their number, as published")
    source: str = Field(default="", description="a link, or a file in the repository")
    setup: str = Field(default="", description="how they measured it")
    note: str = Field(
        default="", description="what a reader should know beside it (shown under the study table)"
    )
    metrics: list[str] = Field(
        default=[CPU.key], min_length=1, description="the question's metrics that answer it"
    )
    heads: list[str] = Field(
        default=[], description="the pairs whose head lane is one of these answer it; [] every pair"
    )
    steps: list[str] = Field(default=[], description="the steps that answer it; [] every step")


class Question(Strict):
    """Lanes loaded side by side in every round of `run`; answered as head/base ratios per pair."""

    name: str = Field(
        pattern=NAME, description="unique; names the question's answers in the report"
    )
    title: str = Field(
        default="",
        description="what the question asks, shown after its name where the report lists its answers",
    )
    steps: list[str] | None = Field(
        default=None,
        description="loaded one after the other, every lane at once; default: the first lane's endpoints",
    )
    lanes: list[QuestionLane] = Field(
        min_length=2, description="the servers loaded at the same moment"
    )
    metrics: list[str] = Field(
        default=[CPU.key],
        min_length=1,
        description=f"what each pair compares, of {', '.join(QUESTION_METRICS)}",
    )
    pairs: list[tuple[str, str]] | None = Field(
        default=None, description="(base, head) lane names; default: every lane against the first"
    )
    published: list[Published] = Field(
        default=[], description="figures others published, set beside the answers"
    )

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
                raise ValueError(
                    f"lane {lane.label!r} names {len(lane.endpoints)} endpoints for {len(steps)} steps {steps}"
                )
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
                    raise ValueError(
                        f"{where}: metric {key!r} is not one of the question's metrics {self.metrics}"
                    )
            for head in figure.heads:
                if head not in heads:
                    raise ValueError(
                        f"{where}: heads: {head!r} is the head of no pair; heads: {', '.join(sorted(heads))}"
                    )
            for step in figure.steps:
                if step not in steps:
                    raise ValueError(
                        f"{where}: steps: {step!r} is not a step; steps: {', '.join(steps)}"
                    )
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
