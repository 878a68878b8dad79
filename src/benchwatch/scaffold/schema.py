"""From an OpenAPI schema to the endpoints init declares: each operation's parameters, login and
body, the OAuth2 password login of `securitySchemes`, and bodies built from the schema's examples."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

_METHODS = ("get", "post", "put", "patch", "delete")
_NOTHING = object()


@dataclass(frozen=True)
class Body:
    """A request body the operation requires, and what the schema says of it."""

    media_type: str
    example: Any = None  # built from the schema's examples and defaults; None: it could not be
    missing: tuple[str, ...] = ()  # the fields that have neither

    @property
    def need(self) -> str:
        fields = f" ({', '.join(self.missing)}: no example or default in the schema)" if self.missing else ""
        return f"a {self.media_type} body{fields}"


@dataclass(frozen=True)
class Operation:
    method: str  # upper case
    path: str
    summary: str
    needs: list[str]  # required parameters and request body: why it cannot be called as is
    path_params: tuple[str, ...] = ()
    other_needs: tuple[str, ...] = ()  # required query, header or cookie parameters
    auth: bool = False  # its `security` names a scheme (a login's token)
    body: Body | None = None  # the required request body
    answer_keys: tuple[str, ...] = ()  # the properties of its 2xx JSON answer, when an object

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
            parameters = [_resolve(openapi, p) for p in [*shared, *operation.get("parameters", [])]]
            required = [p for p in parameters if p.get("required") or p.get("in") == "path"]
            needs = [f"{p.get('in', '?')} parameter {p.get('name', '?')}" for p in required]
            body = _body(openapi, _resolve(openapi, operation.get("requestBody") or {}))
            if body is not None:
                needs.append("a request body")
            security = operation.get("security", openapi.get("security"))
            found.append(Operation(
                method.upper(), path, str(operation.get("summary") or operation.get("operationId") or ""), needs,
                path_params=tuple(p.get("name", "?") for p in required if p.get("in") == "path"),
                other_needs=tuple(n for n, p in zip(needs, required, strict=False) if p.get("in") != "path"),
                auth=bool(security) if "security" in operation else secured, body=body,
                answer_keys=_answer_keys(openapi, operation),
            ))  # fmt: skip
    return found


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


def _resolve(openapi: dict[str, Any], node: Any) -> Any:
    """`{"$ref": "#/components/..."}` followed (at most 20 hops)."""
    for _ in range(20):
        if not isinstance(node, dict) or not isinstance(node.get("$ref"), str):
            return node
        target: Any = openapi
        for part in node["$ref"].removeprefix("#/").split("/"):
            target = target.get(part, {}) if isinstance(target, dict) else {}
        node = target
    return node


def _body(openapi: dict[str, Any], request_body: dict[str, Any]) -> Body | None:
    if not request_body.get("required"):
        return None
    content = request_body.get("content") or {}
    media_type = next(iter(content), "application/json")
    media = content.get(media_type) or {}
    if "example" in media:
        return Body(media_type, media["example"])
    named = [e.get("value") for e in (media.get("examples") or {}).values() if isinstance(e, dict) and "value" in e]
    if named:
        return Body(media_type, named[0])
    missing: list[str] = []
    example = example_of(openapi, media.get("schema") or {}, "", missing)
    return Body(media_type, None if missing or example is _NOTHING else example, tuple(missing))


def example_of(openapi: dict[str, Any], node: Any, where: str, missing: list[str]) -> Any:
    """A value for a schema from its `example`, `examples` or `default`; an object from its
    required properties (and those with an example). Fields with none are added to `missing`."""
    node = _resolve(openapi, node)
    if not isinstance(node, dict):
        return _NOTHING
    for key in ("example", "default"):
        if key in node and node[key] is not None:
            return node[key]
    if isinstance(node.get("examples"), list) and node["examples"]:
        return node["examples"][0]
    branches = [b for b in node.get("anyOf", node.get("oneOf", [])) if _resolve(openapi, b).get("type") != "null"]
    if branches:
        return example_of(openapi, branches[0], where, missing)
    if node.get("type") == "object" or "properties" in node:
        built: dict[str, Any] = {}
        required = set(node.get("required", []))
        for name, prop in (node.get("properties") or {}).items():
            inner: list[str] = []
            value = example_of(openapi, prop, f"{where}.{name}" if where else name, inner)
            if name in required:
                missing.extend(inner or ([] if value is not _NOTHING else [f"{where}.{name}" if where else name]))
            if value is not _NOTHING and not inner:
                built[name] = value
        return built
    return _NOTHING


def _answer_keys(openapi: dict[str, Any], operation: dict[str, Any]) -> tuple[str, ...]:
    for status, answer in (operation.get("responses") or {}).items():
        if str(status).startswith("2"):
            schema = _resolve(openapi, ((_resolve(openapi, answer).get("content") or {}).get("application/json") or {}).get("schema"))
            if isinstance(schema, dict):
                return tuple(schema.get("properties") or {})
    return ()


def endpoint_names(paths: list[tuple[str, str]]) -> list[str]:
    """A unique [a-z0-9_] name per (method, path): `/` -> root, `/items/{id}` -> items_id; a
    prefix every path shares (`/api/v1`) is left out of the names."""
    common = _common_prefix([path for _, path in paths])
    names: list[str] = []
    for method, path in paths:
        base = re.sub(r"[^a-z0-9]+", "_", path[len(common):].lower()).strip("_") or "root"
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


def differing_keys(first: Any, second: Any) -> set[str]:
    """Keys whose values differ between two bodies of the same endpoint: init marks them volatile."""
    keys: set[str] = set()
    if isinstance(first, dict) and isinstance(second, dict):
        for key in first.keys() & second.keys():
            if isinstance(first[key], dict | list):
                keys |= differing_keys(first[key], second[key])
            elif first[key] != second[key]:
                keys.add(key)
    elif isinstance(first, list) and isinstance(second, list):
        for a, b in zip(first, second, strict=False):
            keys |= differing_keys(a, b)
    return keys
