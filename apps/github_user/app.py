"""Seed 001: a deep GitHub-user model, with and without orjson.

`app` uses FastAPI's default response class; `app_orjson_response` is the seed's
"pattern 1" (app-wide `default_response_class=ORJSONResponse`, deprecated since FastAPI
0.131 but still served). Every endpoint validates twice per request, like the seed:
build the model from the raw dict, dump it, validate the dump into the response model.
"""

from typing import Any

import orjson
from fastapi import FastAPI, Response
from fastapi.responses import JSONResponse, ORJSONResponse

from apps._inject import with_injected_cpu
from apps._pydantic import to_dict, validate
from apps.github_user.data import raw_user
from apps.github_user.models import UserResponse, UserResponseB


def generate_deep_response() -> dict[str, Any]:
    return to_dict(validate(UserResponse, raw_user()))


def create_app(default_response_class: type[Response] = JSONResponse) -> FastAPI:
    api = FastAPI(default_response_class=default_response_class)

    @api.get("/pydantic_only", response_model=UserResponse)
    async def pydantic_only() -> Any:
        return UserResponse(**generate_deep_response())

    @api.get("/pydantic_with_orjson", response_model=UserResponseB)
    async def pydantic_with_orjson() -> Any:
        return UserResponseB(**generate_deep_response())

    @api.get("/pydantic_then_orjson", response_model=UserResponse)
    async def pydantic_then_orjson() -> Response:
        user = UserResponse(**generate_deep_response())
        return Response(orjson.dumps(to_dict(user)), media_type="application/json")

    return api


app = with_injected_cpu(create_app())
app_orjson_response = with_injected_cpu(create_app(ORJSONResponse))
