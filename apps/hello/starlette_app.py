"""Hello world in bare Starlette: FastAPI without its routing, validation and encoding."""

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from apps._inject import with_injected_cpu


async def hello(request: Request) -> JSONResponse:
    return JSONResponse({"message": "Hello World"})


app = with_injected_cpu(Starlette(routes=[Route("/", hello)]))
