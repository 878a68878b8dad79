"""One vocabulary for Pydantic v1 and v2 (and the FastAPI versions paired with them)."""

from __future__ import annotations

import importlib.metadata
import inspect
from collections.abc import Callable
from typing import Any

import pydantic

PYDANTIC_V2 = pydantic.VERSION.startswith("2.")
ValidationError = pydantic.ValidationError


def version_number(distribution: str) -> int:
    """major*1_000_000 + minor*1000 + patch (FastAPI minors pass 100), so a silent downgrade
    shows as a step in a track_ plot."""
    version = importlib.metadata.version(distribution)
    parts = [
        int("".join(ch for ch in part if ch.isdigit()) or 0) for part in version.split(".")[:3]
    ]
    major, minor, patch = (parts + [0, 0, 0])[:3]
    return major * 1_000_000 + minor * 1000 + patch


def validate(model: type, data: Any) -> Any:
    return model.model_validate(data) if PYDANTIC_V2 else model.parse_obj(data)


def validate_json(model: type, raw: bytes) -> Any:
    return model.model_validate_json(raw) if PYDANTIC_V2 else model.parse_raw(raw)


def list_validator(model: type) -> Callable[[Any], list]:
    """Validates a list of `model` from Python data: TypeAdapter (v2) or parse_obj_as (v1)."""
    if PYDANTIC_V2:
        return pydantic.TypeAdapter(list[model]).validate_python
    return lambda data: pydantic.parse_obj_as(list[model], data)


def list_json_validator(model: type) -> Callable[[bytes], list]:
    if PYDANTIC_V2:
        return pydantic.TypeAdapter(list[model]).validate_json
    return lambda raw: pydantic.parse_raw_as(list[model], raw)


def dump(instance: Any) -> dict:
    return instance.model_dump() if PYDANTIC_V2 else instance.dict()


def dump_json(instance: Any) -> str | bytes:
    return instance.model_dump_json() if PYDANTIC_V2 else instance.json()


def run_sync(coroutine: Any) -> Any:
    """Drives a coroutine that never suspends, without the cost of an event loop."""
    try:
        coroutine.send(None)
    except StopIteration as done:
        return done.value
    coroutine.close()
    raise RuntimeError("the coroutine suspended; it needs an event loop")


def fastapi_response_path(model: type) -> Callable[[Any], bytes]:
    """What FastAPI does with an endpoint's return value for `response_model=model` and the
    default response class: `serialize_response` on the route's own response field, then the
    body as sent (JSONResponse rendering, or the JSON bytes directly where FastAPI dumps JSON
    in pydantic-core)."""
    from fastapi.responses import JSONResponse, Response
    from fastapi.routing import APIRoute, serialize_response

    def endpoint() -> None:
        return None

    route = APIRoute("/benchmark", endpoint, response_model=model)
    # the field FastAPI's request handler passes on: the secure clone where the version has one
    if hasattr(route, "secure_cloned_response_field"):
        field = route.secure_cloned_response_field
    else:
        field = route.response_field
    if field is None:
        raise NotImplementedError("this FastAPI builds no response field for the model")
    dumps_json = "dump_json" in inspect.signature(serialize_response).parameters

    def respond(content: Any) -> bytes:
        if dumps_json:
            body = run_sync(
                serialize_response(field=field, response_content=content, dump_json=True)
            )
            return Response(content=body, media_type="application/json").body
        body = run_sync(serialize_response(field=field, response_content=content))
        return JSONResponse(body).body

    return respond
