"""A deterministic client: the same request bytes, one at a time, on one kept-alive connection.

oha would do (`-n N -c 1`), but it opens a new connection per run; this client keeps one
connection for the whole count, so the phases between two counter dumps hold requests and
nothing else: no connect, no accept, no close."""

from __future__ import annotations

import http.client
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from benchwatch.declarations.redaction import redact
from benchwatch.declarations.requests import Endpoint
from benchwatch.measure.ports import HOST
from benchwatch.measure.request import prepare
from benchwatch.measure.server import Server


class RequestFailed(Exception):
    """A request that got no answer, or an answer that is not 2xx."""


@dataclass(frozen=True)
class Request:
    method: str
    url_path: str  # as sent: path parameters and query filled in
    body: bytes | None
    headers: dict[str, str]
    label: str = ""  # the endpoint's label (the template), what errors name
    # an endpoint whose request holds `{unique}`: how to resolve it again, for every request sent
    again: Callable[[], Request] | None = field(default=None, compare=False, repr=False)

    @classmethod
    def of(cls, srv: Server, endpoint: Endpoint) -> Request:
        """The endpoint's request on this boot of its server (its set-up's values filled in)."""
        sent = prepare(srv.variant.app, endpoint, srv.context)
        # a fixed Host (http.client would send the port, which differs from boot to boot)
        headers = {"Host": HOST, **sent.header_dict()}
        again = (lambda: cls.of(srv, endpoint)) if endpoint.per_request else None
        return cls(sent.method, sent.target, sent.body, headers, endpoint.label, again)

    def fresh(self) -> Request:
        """The request to send next: itself, or resolved again when it holds `{unique}` (a value
        of constant length, so every request sent has the same size)."""
        return self.again() if self.again is not None else self


class Client:
    """One HTTP/1.1 connection to the server; `send(request, n)` sends n requests in sequence,
    each after the last answer was read whole."""

    def __init__(self, host: str, port: int, timeout: float) -> None:
        self._connection = http.client.HTTPConnection(host, port, timeout=timeout)

    def send(self, request: Request, times: int, think: float = 0.0) -> float:
        """Seconds it took; raises RequestFailed at the first failure. `think`: seconds to wait
        after each answer, so the server is back in its blocking poll before the next request
        comes (otherwise whether one more poll happens per request is a race)."""
        started = time.monotonic()
        for _ in range(times):
            sent = request.fresh()  # before the pause: the server is idle while it is resolved
            if think:
                time.sleep(think)
            try:
                # the body goes with the headers in one write (http.client joins them)
                self._connection.request(
                    sent.method, sent.url_path, body=sent.body, headers=sent.headers
                )
                response = self._connection.getresponse()
                body = response.read()
            except (OSError, http.client.HTTPException) as exc:
                raise RequestFailed(
                    f"{request.label or request.url_path}: {type(exc).__name__}: {redact(str(exc))}"
                ) from None
            if not 200 <= response.status < 300:
                snippet = redact(body[:2000].decode(errors="replace").replace("\n", " "))[
                    :120
                ]  # whole, then cut
                raise RequestFailed(
                    f"{request.label or request.url_path}: status {response.status} ({snippet})"
                )
        return time.monotonic() - started

    def close(self) -> None:
        self._connection.close()
