"""Seeded inputs for every micro-benchmark, built once per process at import (never in setup()).

The models and raw data come from the apps themselves (apps/<scenario>/models.py, data.py):
one definition of each. This file must not be changed — only appended — so that figures
stay comparable over years.
"""

from __future__ import annotations

import copy
import datetime as dt
import json
from dataclasses import dataclass
from typing import Any

from . import compat

SERVICES = "services"
GITHUB_USER = "github_user"
POSTS = "posts"
PAYLOAD_SIZES = {"1kB": "1kb", "10kB": "10kb", "100kB": "100kb", "1MB": "1mb"}
PAYLOADS = [f"payloads-{label}" for label in PAYLOAD_SIZES]
LARGE_PAYLOADS = ["payloads-100kB", "payloads-1MB"]
CASES = [SERVICES, GITHUB_USER, POSTS, *PAYLOADS]
POSTS_PER_PAGE = 100


@dataclass(frozen=True)
class Case:
    model: type  # the response model of the scenario
    item: type  # the element model, for list validation
    data: dict[str, Any]  # valid input, Python values
    raw: bytes  # the same input as JSON bytes (datetimes as ISO strings)
    items: list[dict[str, Any]]
    items_raw: bytes
    invalid: dict[str, Any]  # fails validation in every stack
    instance: Any  # `data` validated once, the starting point of serialization


def _json_default(value: Any) -> str:
    if isinstance(value, dt.datetime):
        return value.isoformat()
    raise TypeError(f"not JSON serializable: {type(value).__name__}")


def _to_json(value: Any) -> bytes:
    return json.dumps(value, default=_json_default, separators=(",", ":")).encode()


def _case(model: type, item: type, data: dict, items: list, invalid: dict) -> Case:
    return Case(
        model=model,
        item=item,
        data=data,
        raw=_to_json(data),
        items=items,
        items_raw=_to_json(items),
        invalid=invalid,
        instance=compat.validate(model, data),
    )


def _services() -> Case:
    from apps.services.data import raw_services
    from apps.services.models import Service, ServiceList

    services = raw_services()
    data = {"offset": 0, "count": len(services), "total": len(services), "services": services}
    invalid = copy.deepcopy(data)
    invalid["services"][-1]["version_number"] = 0  # conint(ge=1)
    return _case(ServiceList, Service, data, services, invalid)


def _github_user() -> Case:
    from apps.github_user.data import raw_user
    from apps.github_user.models import Repository, UserResponse

    data = raw_user()
    invalid = copy.deepcopy(data)
    invalid["repositories"][-1]["id"] = "not a number"
    return _case(UserResponse, Repository, data, data["repositories"], invalid)


def _posts() -> Case:
    from apps.posts.data import post_rows
    from apps.posts.models import PostOut, PostsOut

    rows = [
        {k: row[k] for k in ("id", "published_at", "updated_at", "title", "content")}
        for row in post_rows(POSTS_PER_PAGE)
    ]
    data = {"posts": rows}
    invalid = copy.deepcopy(data)
    invalid["posts"][-1]["published_at"] = "not a date"
    return _case(PostsOut, PostOut, data, rows, invalid)


def _payloads(label: str) -> Case:
    from apps.payloads.data import PayloadSize, payload
    from apps.payloads.models import Booking, BusinessModel

    data = payload(PayloadSize(PAYLOAD_SIZES[label]))
    invalid = copy.deepcopy(data)
    invalid["bookings"][-1]["status"] = None  # a required str
    return _case(BusinessModel, Booking, data, data["bookings"], invalid)


def _build(name: str) -> Case:
    if name == SERVICES:
        return _services()
    if name == GITHUB_USER:
        return _github_user()
    if name == POSTS:
        return _posts()
    return _payloads(name.removeprefix("payloads-"))


def _build_all() -> tuple[dict[str, Case], dict[str, str]]:
    built: dict[str, Case] = {}
    unavailable: dict[str, str] = {}
    for name in CASES:
        try:
            built[name] = _build(name)
        except Exception as exc:  # reported per benchmark as a failure, see case()
            unavailable[name] = f"{type(exc).__name__}: {exc}"
    return built, unavailable


_CASES, _UNAVAILABLE = _build_all()


def case(name: str) -> Case:
    """The inputs of one case. A case that cannot be built is a failure, not a skip: the
    scenarios are meant to run on every stack."""
    if name in _UNAVAILABLE:
        raise RuntimeError(f"cannot build the inputs of {name}: {_UNAVAILABLE[name]}")
    return _CASES[name]


# Services without constraints: the same fields with plain types, to price conint and
# datetime parsing. A benchmark-local model, not an app model.
def _plain_service_model() -> type:
    import pydantic

    class PlainService(pydantic.BaseModel):
        service_id: int
        name: str
        version_number: int
        version_name: str
        created_on: str
        updated_on: str

    return PlainService


PlainService = _plain_service_model()
