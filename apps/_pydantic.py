"""The whole difference between Pydantic v1 and v2 as the apps use it, in one place."""

from __future__ import annotations

from typing import Any, TypeVar

import pydantic

PYDANTIC_V2 = int(pydantic.VERSION.split(".")[0]) >= 2

Model = TypeVar("Model", bound=pydantic.BaseModel)


def validate(model: type[Model], data: Any) -> Model:
    """`parse_obj` (v1) / `model_validate` (v2)."""
    if PYDANTIC_V2:
        return model.model_validate(data)
    return model.parse_obj(data)


def to_dict(instance: pydantic.BaseModel) -> dict[str, Any]:
    """`.dict()` (v1) / `.model_dump()` (v2), by alias (Python values, as the seeds did)."""
    if PYDANTIC_V2:
        return instance.model_dump(by_alias=True)
    return instance.dict(by_alias=True)


def to_json(instance: pydantic.BaseModel) -> str:
    """`.json()` (v1) / `.model_dump_json()` (v2), by alias."""
    if PYDANTIC_V2:
        return instance.model_dump_json(by_alias=True)
    return instance.json(by_alias=True)
