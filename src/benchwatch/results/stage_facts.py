"""What each stage adds to a file beside its figures: one small model per stage, and the
container (`run.json`'s and `compare.json`'s `extra`) that holds them nested in memory and flat
on disk.

The design, and why: a stage owns its facts (`LoadFacts`, `CountsFacts`, …, each defined next to
the container that holds it) and a stage's code reads and writes only its own
(`extra.counts.skipped`, `extra.load.plan`). The files keep the flat keys they had before the
split (`counts_unavailable`, `load_plan`, …), in the same order, so every file written before still
loads and every file written now has the same bytes: a `FlatExtra` names, in `DISK_KEYS`, each
on-disk key in its order and where it lives in memory (a field of its own, or a stage's field),
nests the flat keys when it is read (`_nest`, which also takes the flat names as keyword
arguments) and flattens them again when it is written (`_flatten`).

"This stage did not run, and why" has one form: a stage's `skipped` field (`None`: it ran). On disk
it stays where it was (`counts_unavailable`, `{"skipped": why}`, a confirmation's `"skipped": ""`).
"""

from __future__ import annotations

from typing import Annotated, Any, ClassVar

from pydantic import (
    BaseModel,
    BeforeValidator,
    PlainSerializer,
    SerializationInfo,
    SerializerFunctionWrapHandler,
    model_serializer,
    model_validator,
)


class StageFacts(BaseModel):
    """A stage's own facts in a run's or a compare's `extra`; `skipped`: why the stage did not
    run (`None`: it ran). A stage with nothing else to say is this model alone
    (run.json: `"counts": {"skipped": "why"}`)."""

    skipped: str | None = None

    @property
    def ran(self) -> bool:
        return self.skipped is None


# a `skipped` written as "" when the stage ran (a confirmation's, as it always was on disk)
SkippedOrEmpty = Annotated[
    str | None,
    BeforeValidator(lambda why: why or None),
    PlainSerializer(lambda why: why or "", return_type=str),
]


class FlatExtra(BaseModel):
    """A file's `extra`: fields of its own and stages' facts (fields that are `StageFacts`),
    written flat. `DISK_KEYS`: every key on disk, in the file's order, as `"key"` (a field of the
    container) or `("key", "stage", "field")` (that stage's field)."""

    DISK_KEYS: ClassVar[tuple[str | tuple[str, str, str], ...]] = ()

    @classmethod
    def _stage_keys(cls) -> dict[str, tuple[str, str]]:
        return {key[0]: key[1:] for key in cls.DISK_KEYS if isinstance(key, tuple)}

    @model_validator(mode="before")
    @classmethod
    def _nest(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        nested: dict[str, Any] = {}
        stages: dict[str, dict[str, Any]] = {}
        where = cls._stage_keys()
        for key, value in data.items():
            if key in where:
                stage, field = where[key]
                stages.setdefault(stage, {})[field] = value
            else:
                nested[key] = value
        for stage, fields in stages.items():
            given = nested.get(stage)
            if isinstance(given, BaseModel):
                given = given.model_dump()
            nested[stage] = {**(given or {}), **fields}
        return nested

    @model_serializer(mode="wrap")
    def _flatten(self, handler: SerializerFunctionWrapHandler, info: SerializationInfo) -> Any:
        data = handler(self)
        flat: dict[str, Any] = {}
        for key in self.DISK_KEYS:
            if isinstance(key, str):
                if key in data:
                    flat[key] = data[key]
                continue
            name, stage, field = key
            facts = data.get(stage)
            if isinstance(facts, dict) and field in facts:
                flat[name] = facts[field]
        return flat

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        """Every field reaches the disk, every stage field has its key: nothing is dropped."""
        super().__pydantic_init_subclass__(**kwargs)
        on_disk = {key for key in cls.DISK_KEYS if isinstance(key, str)}
        by_stage: dict[str, set[str]] = {}
        for _, stage, stage_field in (key for key in cls.DISK_KEYS if isinstance(key, tuple)):
            by_stage.setdefault(stage, set()).add(stage_field)
        for name, info in cls.model_fields.items():
            kind = info.annotation
            if name in by_stage:
                assert isinstance(kind, type) and issubclass(kind, BaseModel), name
                missing = set(kind.model_fields) - by_stage[name]
                assert not missing, f"{cls.__name__}.{name}: no key on disk for {missing}"
            else:
                assert name in on_disk, f"{cls.__name__}.{name}: no key on disk"
