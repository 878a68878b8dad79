"""Seed 004: hello world in FastAPI (`uvicorn apps.hello.app:app`)."""

from typing import Any

from fastapi import FastAPI

from apps._inject import with_injected_cpu

api = FastAPI()


@api.get("/")
async def hello() -> dict[str, Any]:
    return {"message": "Hello World"}


app = with_injected_cpu(api)
