"""Seed 001's GitHub-user models: `UserResponse` (plain) and `UserResponseB` (orjson config).

`BaseModelB` is the seed's "pattern 2". Under Pydantic v2, `json_serializer` is not a
config key: it is accepted silently and never used (`model_dump_json` always serializes in
pydantic-core), and FastAPI never calls it either. Under v1 the real option was
`Config.json_dumps`, which `.json()` uses — but FastAPI's response path does not call
`.json()`, so there too it changes nothing in an HTTP response. The app's
`/pydantic_then_orjson` endpoint is the one that really serializes with orjson.
"""

from typing import Any

import orjson
from pydantic import BaseModel

from apps._pydantic import PYDANTIC_V2


def _orjson_dumps_text(value: Any, *, default: Any) -> str:
    return orjson.dumps(value, default=default).decode()


class BaseModelA(BaseModel):
    pass


if PYDANTIC_V2:
    from pydantic import ConfigDict

    class BaseModelB(BaseModel):
        model_config = ConfigDict(json_serializer=orjson.dumps)  # type: ignore[typeddict-unknown-key]

else:

    class BaseModelB(BaseModel):  # type: ignore[no-redef]
        class Config:
            json_loads = orjson.loads
            json_dumps = _orjson_dumps_text


class Repository(BaseModelA):
    id: int
    name: str
    full_name: str
    private: bool
    html_url: str
    description: str


class Organization(BaseModelA):
    login: str
    id: int
    url: str
    repos_url: str


class UserResponse(BaseModelA):
    login: str
    id: int
    node_id: str
    avatar_url: str
    gravatar_id: str
    url: str
    html_url: str
    followers_url: str
    following_url: str
    gists_url: str
    starred_url: str
    subscriptions_url: str
    organizations_url: str
    repos_url: str
    events_url: str
    received_events_url: str
    type: str
    site_admin: bool
    name: str
    company: str
    blog: str
    location: str
    email: str
    hireable: bool
    bio: str
    twitter_username: str
    public_repos: int
    public_gists: int
    followers: int
    following: int
    created_at: str
    updated_at: str
    repositories: list[Repository]
    organizations: list[Organization]
    metadata: dict[str, str]


# The seed repeated every field for the B models; subclassing gives the same fields and the
# orjson config (configs of both bases are merged), with the nested types swapped.
class RepositoryB(BaseModelB, Repository):
    pass


class OrganizationB(BaseModelB, Organization):
    pass


class UserResponseB(BaseModelB, UserResponse):
    repositories: list[RepositoryB]  # type: ignore[assignment]
    organizations: list[OrganizationB]  # type: ignore[assignment]
