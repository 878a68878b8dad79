"""From an OpenAPI schema to the endpoints init declares: each operation's parameters, login and
body, the OAuth2 password login of `securitySchemes`, a name per endpoint, and values (bodies, path
and query parameters) from the schema's examples, else made from its types and constraints
(schema_values.py)."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from benchwatch.scaffold.schema_values import NOTHING, example_of, resolve

_METHODS = ("get", "post", "put", "patch", "delete")


@dataclass(frozen=True)
class Body:
    """A request body the operation requires, and what the schema says of it."""

    media_type: str
    example: Any = (
        None  # from the schema's examples, else made from its types; None: it could not be
    )
    missing: tuple[str, ...] = ()  # the required fields no value could be made for, and why
    fill: Callable[[str], Any] | None = field(
        default=None, compare=False, repr=False
    )  # seed -> a body

    @property
    def need(self) -> str:
        fields = f" ({'; '.join(self.missing)})" if self.missing else ""
        return f"a {self.media_type} body{fields}"

    def value(self, seed: str) -> Any:
        """The body with made-up unique values (an e-mail) taken from `seed`: two requests that
        create records (an endpoint's, a set-up step's) do not send the same e-mail."""
        return self.fill(seed) if self.fill is not None else self.example


@dataclass(frozen=True)
class Operation:
    method: str  # upper case
    path: str
    summary: str
    needs: list[str]  # required parameters and request body: why it cannot be called as is
    path_params: tuple[str, ...] = ()
    other_needs: tuple[
        str, ...
    ] = ()  # required header or cookie parameters, query ones no value was made for
    auth: bool = False  # its `security` names a scheme (a login's token)
    body: Body | None = None  # the required request body
    answer_keys: tuple[str, ...] = ()  # the properties of its 2xx JSON answer, when an object
    param_values: dict[str, str] = field(
        default_factory=dict
    )  # path parameter -> a value made from the schema
    query: dict[str, Any] = field(
        default_factory=dict
    )  # each required query parameter -> a value made for it

    @property
    def ready(self) -> bool:
        return self.method == "GET" and not self.needs


def operations(openapi: dict[str, Any]) -> list[Operation]:
    found = []
    secured = bool(openapi.get("security"))
    for path, item in (openapi.get("paths") or {}).items():
        shared = item.get("parameters", [])
        for method in _METHODS:
            operation = item.get(method)
            if not isinstance(operation, dict):
                continue
            parameters = [resolve(openapi, p) for p in [*shared, *operation.get("parameters", [])]]
            required = [p for p in parameters if p.get("required") or p.get("in") == "path"]
            needs = [f"{p.get('in', '?')} parameter {p.get('name', '?')}" for p in required]
            made = {str(p.get("name", "?")): _parameter_value(openapi, p) for p in required}
            query = {
                n: v
                for n, v in made.items()
                if v is not NOTHING
                and any(p.get("name") == n and p.get("in") == "query" for p in required)
            }
            body = _body(openapi, resolve(openapi, operation.get("requestBody") or {}))
            if body is not None:
                needs.append("a request body")
            security = operation.get("security", openapi.get("security"))
            found.append(
                Operation(
                    method.upper(),
                    path,
                    str(operation.get("summary") or operation.get("operationId") or ""),
                    needs,
                    path_params=tuple(
                        p.get("name", "?") for p in required if p.get("in") == "path"
                    ),
                    other_needs=tuple(
                        n
                        for n, p in zip(needs, required, strict=False)
                        if p.get("in") != "path" and p.get("name") not in query
                    ),
                    auth=bool(security) if "security" in operation else secured,
                    body=body,
                    answer_keys=_answer_keys(openapi, operation),
                    param_values={
                        n: _text(v)
                        for n, v in made.items()
                        if v is not NOTHING
                        and any(p.get("name") == n and p.get("in") == "path" for p in required)
                    },
                    query=query,
                )
            )
    return found


def _parameter_value(openapi: dict[str, Any], parameter: dict[str, Any]) -> Any:
    """A value for a parameter: its own example(s), else one made from its schema."""
    if parameter.get("example") is not None:
        return parameter["example"]
    named = [
        e.get("value")
        for e in (parameter.get("examples") or {}).values()
        if isinstance(e, dict) and "value" in e
    ]
    if named:
        return named[0]
    missing: list[str] = []
    value = example_of(
        openapi, parameter.get("schema") or {}, str(parameter.get("name", "value")), missing
    )
    return NOTHING if missing or isinstance(value, dict | list) else value


def _text(value: Any) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


def password_login(openapi: dict[str, Any]) -> str | None:
    """The path of the OAuth2 password flow's `tokenUrl` in `securitySchemes`, if the schema has one
    (FastAPI's OAuth2PasswordBearer); a relative URL is taken from the root."""
    schemes = (openapi.get("components") or {}).get("securitySchemes") or {}
    for scheme in schemes.values():
        flow = ((scheme or {}).get("flows") or {}).get("password") or {}
        if scheme.get("type") == "oauth2" and isinstance(flow.get("tokenUrl"), str):
            path = urlsplit(flow["tokenUrl"]).path
            return path if path.startswith("/") else "/" + path
    return None


def _body(openapi: dict[str, Any], request_body: dict[str, Any]) -> Body | None:
    if not request_body.get("required"):
        return None
    content = request_body.get("content") or {}
    media_type = next(iter(content), "application/json")
    media = content.get(media_type) or {}
    if "example" in media:
        return Body(media_type, media["example"])
    named = [
        e.get("value")
        for e in (media.get("examples") or {}).values()
        if isinstance(e, dict) and "value" in e
    ]
    if named:
        return Body(media_type, named[0])
    node = media.get("schema") or {}

    def fill(seed: str) -> Any:
        value = example_of(openapi, node, "", [], seed)
        return None if value is NOTHING else value

    missing: list[str] = []
    example = example_of(openapi, node, "", missing)
    if missing or example is NOTHING:
        return Body(media_type, None, tuple(missing) or ("the schema describes no value",))
    return Body(media_type, example, fill=fill)


def _answer_keys(openapi: dict[str, Any], operation: dict[str, Any]) -> tuple[str, ...]:
    for status, answer in (operation.get("responses") or {}).items():
        if str(status).startswith("2"):
            schema = resolve(
                openapi,
                ((resolve(openapi, answer).get("content") or {}).get("application/json") or {}).get(
                    "schema"
                ),
            )
            if isinstance(schema, dict):
                return tuple(schema.get("properties") or {})
    return ()


def endpoint_names(paths: list[tuple[str, str]]) -> list[str]:
    """A unique [a-z0-9_] name per (method, path): `/` -> root, `/items/{id}` -> items_id; a
    prefix every path shares (`/api/v1`) is left out of the names."""
    common = _common_prefix([path for _, path in paths])
    names: list[str] = []
    for method, path in paths:
        base = re.sub(r"[^a-z0-9]+", "_", path[len(common) :].lower()).strip("_") or "root"
        if not base[0].isalnum():
            base = "e_" + base
        if method != "GET":
            base = f"{method.lower()}_{base}"
        name, n = base, 2
        while name in names:
            name, n = f"{base}_{n}", n + 1
        names.append(name)
    return names


def _common_prefix(paths: list[str]) -> str:
    """The leading path segments (no parameters) every path shares: `/api/v1`, or ""."""
    if len(paths) < 2:
        return ""
    split = [p.strip("/").split("/") for p in paths]
    shared: list[str] = []
    for parts in zip(*split, strict=False):
        if len(set(parts)) != 1 or "{" in parts[0] or any(len(s) <= len(shared) + 1 for s in split):
            break
        shared.append(parts[0])
    return "/" + "/".join(shared) if shared else ""
