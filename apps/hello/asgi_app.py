"""Hello world as a raw ASGI callable: the ceiling for any framework on this server."""

from typing import Any

from apps._inject import with_injected_cpu

BODY = b'{"message":"Hello World"}'
NOT_FOUND = b'{"detail":"Not Found"}'


async def hello(scope: dict[str, Any], receive: Any, send: Any) -> None:
    if scope["type"] == "lifespan":
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await send({"type": "lifespan.shutdown.complete"})
                return
    if scope["type"] != "http":
        return
    found = scope["path"] == "/" and scope["method"] in ("GET", "HEAD")
    body = BODY if found else NOT_FOUND
    await send(
        {
            "type": "http.response.start",
            "status": 200 if found else 404,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


app = with_injected_cpu(hello)
