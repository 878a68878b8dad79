"""Hello world in Falcon's ASGI app (seed 004 compared Falcon with FastAPI)."""

import falcon
import falcon.asgi

from apps._inject import with_injected_cpu


class HelloResource:
    async def on_get(self, req: falcon.asgi.Request, resp: falcon.asgi.Response) -> None:
        resp.media = {"message": "Hello World"}


falcon_app = falcon.asgi.App()
falcon_app.add_route("/", HelloResource())
app = with_injected_cpu(falcon_app)
