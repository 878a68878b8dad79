"""Seed 003's response and request schemas; `is_published` is computed when serialized.

v1: a `validator(..., always=True)` fills the field; v2: a `computed_field`. The seed
compared with `datetime.utcnow()`; we use the naive UTC time the same way.
"""

from datetime import UTC, datetime
from enum import StrEnum

from pydantic import BaseModel

from apps._pydantic import PYDANTIC_V2


def utc_now() -> datetime:
    return datetime.now(UTC).replace(tzinfo=None)


if PYDANTIC_V2:
    from pydantic import ConfigDict, computed_field

    class PostOut(BaseModel):
        model_config = ConfigDict(from_attributes=True)

        id: int
        published_at: datetime
        updated_at: datetime
        title: str
        content: str

        @computed_field  # type: ignore[prop-decorator]
        @property
        def is_published(self) -> bool:
            return utc_now() >= self.published_at

else:
    from pydantic import validator

    class PostOut(BaseModel):  # type: ignore[no-redef]
        id: int
        published_at: datetime
        updated_at: datetime
        title: str
        content: str
        is_published: bool | None = None

        @validator("is_published", always=True)
        def compute_is_published(cls, v, values, **kwargs):  # type: ignore[no-untyped-def]
            return utc_now() >= values["published_at"]

        class Config:
            orm_mode = True


class PostsOut(BaseModel):
    posts: list[PostOut]


class PostIn(BaseModel):
    title: str
    content: str
    published_at: datetime


class Order(StrEnum):
    ASC = "asc"
    DESC = "desc"
