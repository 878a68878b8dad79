"""What init's requests answered: each one sent to the booted app twice (a GET to see what
changes, a write to see that it can be repeated under load), and on an error status or no
answer, the server's own error line."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

import httpx

from benchwatch.declarations.placeholders import Context
from benchwatch.declarations.redaction import redact
from benchwatch.declarations.requests import RequestParts
from benchwatch.measure.request import Prepared, prepare
from benchwatch.project.apps import App


@dataclass(frozen=True)
class Answer:
    """What one request answered at init (a GET twice)."""

    status: int  # 0: no answer
    content_type: str = ""
    first: object = None
    second: object = None
    error: str = ""  # the server's own error line, or why there was no answer
    again: str = ""  # a write answered 2xx, then this to the same request ("400: {detail}")

    @property
    def failed(self) -> bool:
        """No answer, or a server error: the app or its set-up is broken, not the request."""
        return self.status == 0 or self.status >= 500

    def said(self) -> str:
        said = f"answered {self.status} at init" if self.status else "no answer at init"
        return f"{said}: {self.error}" if self.error else said


class Serving(Protocol):
    """What asking needs of a booted server (measure's `Server`): its process and its log."""

    @property
    def process(self) -> subprocess.Popen[Any]: ...

    def alive(self) -> bool: ...

    def stderr_tail(self, lines: int = 12) -> str: ...


def ask_endpoint(
    client: httpx.Client, srv: Serving, app: App, endpoint: RequestParts, context: Context
) -> Answer:
    """`ask` with `endpoint`'s request, resolved again for the second send when it holds `{unique}`."""
    again = (lambda: prepare(app, endpoint, context)) if endpoint.per_request else None
    return ask(client, srv, prepare(app, endpoint, context), again)


def ask(
    client: httpx.Client,
    srv: Serving,
    request: Prepared,
    again: Callable[[], Prepared] | None = None,
) -> Answer:
    """Send `request`; answered 2xx, it is sent once more (a write, to see it can be repeated:
    `again` says what the second answered when that was an error), as `again()` makes it when
    given (a `{unique}` resolved afresh). On an error status or no answer, the server's own last
    error line."""
    if not srv.alive():
        return Answer(
            0, error=f"the server exited (code {srv.process.returncode}) at an earlier request"
        )
    before = len(srv.stderr_tail(lines=10_000).splitlines())

    def send(sent: Prepared) -> httpx.Response:
        return client.request(
            sent.method, sent.target, content=sent.body, headers=sent.header_dict()
        )

    try:
        first = send(request)
        content_type = first.headers.get("content-type", "").split(";")[0].strip()
        if (
            not 200 <= first.status_code < 300
        ):  # asked once: the server may close the connection after an error
            logged = server_error(srv, before, wait=2.0 if first.status_code >= 500 else 0.0)
            return Answer(first.status_code, content_type, error=logged or _detail(first))
        second = send(again() if again is not None else request)
        if not 200 <= second.status_code < 300:
            logged = server_error(srv, before, wait=2.0 if second.status_code >= 500 else 0.0)
            said_again = f"{second.status_code}: {logged or _detail(second)}".rstrip(": ")
            return Answer(first.status_code, content_type, _json(first), again=said_again)
        if content_type != "application/json":
            return Answer(first.status_code, content_type)
    except httpx.HTTPError as exc:
        code = _exit_code(
            srv, wait=1.0
        )  # a server that dies drops its connection a moment before it exits
        died = "" if code is None else f"the server exited (code {code}); "
        return Answer(
            0,
            error=died + (server_error(srv, before) or f"{type(exc).__name__}: {exc}".strip(": ")),
        )
    try:
        return Answer(first.status_code, content_type, first.json(), second.json())
    except ValueError:
        return Answer(first.status_code, content_type)


def _json(reply: httpx.Response) -> object:
    try:
        return reply.json()
    except ValueError:
        return None


def _exit_code(srv: Serving, wait: float) -> int | None:
    """The server's exit code if it exits within `wait` seconds, else None (still serving)."""
    try:
        return srv.process.wait(timeout=wait)
    except subprocess.TimeoutExpired:
        return None


_EXCEPTION_LINE = re.compile(
    r"^[A-Za-z_][\w.]*: \S"
)  # `sqlalchemy.exc.ProgrammingError: (...) ...`


def server_error(srv: Serving, before: int, wait: float = 0.0) -> str:
    """The server's error since log line `before`: a traceback's exception line (its message may
    run on over more lines), else the last line logged. An error answer can arrive before its
    traceback is logged: up to `wait` seconds for it."""
    deadline = time.monotonic() + wait
    while True:
        new = [ln for ln in srv.stderr_tail(lines=10_000).splitlines()[before:] if ln.strip()]
        if new or time.monotonic() >= deadline:
            break
        time.sleep(0.05)
    if new and wait:
        time.sleep(0.2)  # the rest of the traceback
        new = [ln for ln in srv.stderr_tail(lines=10_000).splitlines()[before:] if ln.strip()]
    exceptions = [ln for ln in new if _EXCEPTION_LINE.match(ln)]
    return (exceptions or new or [""])[-1].strip()[:300]


def _detail(reply: httpx.Response) -> str:
    """An error answer's own words, for the declaration's comment: a secret it quotes is redacted
    (whole, before the cut), as the server's logged lines are."""
    try:
        body = reply.json()
    except ValueError:
        return redact(reply.text.strip().splitlines()[0])[:300] if reply.text.strip() else ""
    detail = body.get("detail", body) if isinstance(body, dict) else body
    return redact(json.dumps(detail, ensure_ascii=False))[:300]


def show_tail(tail: str) -> None:
    for line in tail.splitlines()[-12:]:
        print(f"    | {line}", file=sys.stderr)
