"""From an OpenAPI schema to the endpoints init declares: each operation's parameters, login and
body, the OAuth2 password login of `securitySchemes`, and values (bodies, path and query
parameters) from the schema's examples, else made from its types and constraints."""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

_METHODS = ("get", "post", "put", "patch", "delete")
_NOTHING = object()


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
            parameters = [_resolve(openapi, p) for p in [*shared, *operation.get("parameters", [])]]
            required = [p for p in parameters if p.get("required") or p.get("in") == "path"]
            needs = [f"{p.get('in', '?')} parameter {p.get('name', '?')}" for p in required]
            made = {str(p.get("name", "?")): _parameter_value(openapi, p) for p in required}
            query = {
                n: v
                for n, v in made.items()
                if v is not _NOTHING
                and any(p.get("name") == n and p.get("in") == "query" for p in required)
            }
            body = _body(openapi, _resolve(openapi, operation.get("requestBody") or {}))
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
                        if v is not _NOTHING
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
    value = example_of(
        openapi, parameter.get("schema") or {}, str(parameter.get("name", "value")), missing := []
    )
    return _NOTHING if missing or isinstance(value, dict | list) else value


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
        return None if value is _NOTHING else value

    missing: list[str] = []
    example = example_of(openapi, node, "", missing)
    if missing or example is _NOTHING:
        return Body(media_type, None, tuple(missing) or ("the schema describes no value",))
    return Body(media_type, example, fill=fill)


# values for the string formats JSON Schema and pydantic name
_FORMATS = {
    "uuid": "3fa85f64-5717-4562-b3fc-2c963f66afa6",
    "date-time": "2024-01-01T00:00:00Z",
    "date": "2024-01-01",
    "time": "12:00:00",
    "duration": "P1D",
    "uri": "https://example.com/",
    "url": "https://example.com/",
    "hostname": "example.com",
    "ipv4": "127.0.0.1",
    "ipv6": "::1",
    "json-string": "{}",
}
_DEPTH = 12


def example_of(
    openapi: dict[str, Any],
    node: Any,
    where: str,
    missing: list[str],
    seed: str = "init",
    depth: int = 0,
) -> Any:
    """A value for a schema: its `const`, `example`, `default`, `examples` or first `enum` value,
    else one made from its type and constraints (a string of its length and format, a number within
    its bounds, an object of its required properties, an array of one item; `$ref`, `allOf`,
    `anyOf`, `oneOf` followed). An optional property is sent only with a value the schema gives:
    a made-up one could overwrite a record's data in a PATCH. What no value can be made for is
    added to `missing`, saying why; `seed` makes made-up e-mails unique per request."""
    node = _resolve(openapi, node)
    where = where or "body"
    if depth > _DEPTH:
        missing.append(f"{where}: nested too deep (a recursive schema)")
        return _NOTHING
    if not isinstance(node, dict):
        return "value" if node is True else _NOTHING
    given = _given(node)
    if given is not _NOTHING:
        return given
    if "allOf" in node:
        merged = _merged(openapi, node)
        return example_of(openapi, merged, where, missing, seed, depth + 1)
    branches = [
        b for b in node.get("anyOf", node.get("oneOf", [])) if _kind(_resolve(openapi, b)) != "null"
    ]
    if branches:
        for branch in branches:
            tried: list[str] = []
            value = example_of(openapi, branch, where, tried, seed, depth + 1)
            if not tried and value is not _NOTHING:
                return value
        missing.extend(tried)
        return _NOTHING
    kind = _kind(node)
    if kind == "object" or "properties" in node:
        return _object(openapi, node, where, missing, seed, depth)
    if kind == "array":
        inner: list[str] = []
        item = example_of(openapi, node.get("items") or {}, f"{where}[0]", inner, seed, depth + 1)
        count = max(1, int(node.get("minItems") or 0))
        if node.get("maxItems") is not None:
            count = min(count, int(node["maxItems"]))
        if inner or item is _NOTHING:
            if count and node.get("minItems"):
                missing.extend(inner or [f"{where}[0]: no value for its items"])
                return _NOTHING
            return []
        return [item] * count
    if kind == "string":
        return _string(node, where, missing, seed)
    if kind in ("integer", "number"):
        return _number(node, integer=kind == "integer")
    if kind == "boolean":
        return False
    if kind == "null":
        return None
    return _string({}, where, missing, seed)  # any value: a string is one


def _given(node: dict[str, Any]) -> Any:
    """The value the schema itself gives (not null), or _NOTHING."""
    if "const" in node:
        return node["const"]
    for key in ("example", "default"):
        if node.get(key) is not None:
            return node[key]
    if isinstance(node.get("examples"), list) and node["examples"]:
        return node["examples"][0]
    enum = [v for v in node.get("enum") or [] if v is not None]
    return enum[0] if enum else _NOTHING


def _kind(node: dict[str, Any]) -> str | None:
    """The JSON type a schema names; of a list (`["string", "null"]`), the first that is not null."""
    kind = node.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    return kind if isinstance(kind, str) else None


def _merged(openapi: dict[str, Any], node: dict[str, Any]) -> dict[str, Any]:
    """`allOf`'s schemas as one: their properties and required names together."""
    merged: dict[str, Any] = {k: v for k, v in node.items() if k != "allOf"}
    properties = dict(merged.get("properties") or {})
    required = list(merged.get("required") or [])
    for part in node["allOf"]:
        part = _resolve(openapi, part)
        if not isinstance(part, dict):
            continue
        if "allOf" in part:
            part = _merged(openapi, part)
        properties.update(part.get("properties") or {})
        required += [r for r in part.get("required") or [] if r not in required]
        for key, value in part.items():
            if key not in ("properties", "required"):
                merged.setdefault(key, value)
    if properties:
        merged["properties"] = properties
        merged.setdefault("type", "object")
    merged["required"] = required
    return merged


def _object(
    openapi: dict[str, Any],
    node: dict[str, Any],
    where: str,
    missing: list[str],
    seed: str,
    depth: int,
) -> Any:
    built: dict[str, Any] = {}
    required = set(node.get("required", []))
    for name, prop in (node.get("properties") or {}).items():
        inside = f"{where}.{name}" if where != "body" else name
        if name not in required:
            given = _optional_given(openapi, prop)
            if given is not _NOTHING:
                built[name] = given
            continue
        inner: list[str] = []
        value = example_of(openapi, prop, inside, inner, seed, depth + 1)
        if inner or value is _NOTHING:
            missing.extend(inner or [f"{inside}: no value"])
        else:
            built[name] = value
    return built


def _optional_given(openapi: dict[str, Any], prop: Any) -> Any:
    prop = _resolve(openapi, prop)
    if not isinstance(prop, dict):
        return _NOTHING
    given = _given(prop)
    if given is not _NOTHING:
        return given
    for branch in prop.get("anyOf", prop.get("oneOf", [])):
        branch = _resolve(openapi, branch)
        if isinstance(branch, dict) and _kind(branch) != "null" and _given(branch) is not _NOTHING:
            return _given(branch)
    return _NOTHING


def _string(node: dict[str, Any], where: str, missing: list[str], seed: str) -> Any:
    name = re.sub(r"\[\d+\]", "", where).rsplit(".", 1)[-1]
    low, high = int(node.get("minLength") or 0), node.get("maxLength")
    fmt = node.get("format")
    if fmt is None and re.fullmatch(r"(.*_)?e?mail(_.*)?", name.lower()):
        fmt = "email"  # a plain `str` named so is checked as one more often than not
    if fmt == "email":
        local = re.sub(r"[^a-z0-9_]+", "_", f"{seed}_{name}".lower()).strip("_") or "user"
        text = f"{local}@example.com"
    elif fmt in _FORMATS:
        text = _FORMATS[fmt]
    elif fmt == "binary":
        missing.append(f"{where}: a file (format binary)")
        return _NOTHING
    else:
        text = re.sub(r"[^A-Za-z0-9_]+", "_", name).strip("_") or "value"
        text = (text + "x" * low)[: max(low, len(text))]
        if high is not None:
            text = text[: int(high)] or "x"
    pattern = node.get("pattern")
    if isinstance(pattern, str):
        try:
            matches = re.search(pattern, text) is not None
        except re.error:
            matches = False
        if not matches:
            missing.append(f"{where}: a string matching {pattern}")
            return _NOTHING
    if len(text) < low or (high is not None and len(text) > int(high)):
        missing.append(f"{where}: a {fmt} string of {low} to {high} characters")
        return _NOTHING
    return text


def _number(node: dict[str, Any], *, integer: bool) -> int | float:
    """1, moved into the bounds (`minimum`, `maximum`, their exclusive forms) and onto `multipleOf`."""
    low, high = node.get("minimum"), node.get("maximum")
    step = 1 if integer else 0.5
    exclusive_low, exclusive_high = node.get("exclusiveMinimum"), node.get("exclusiveMaximum")
    if isinstance(exclusive_low, bool):  # OpenAPI 3.0: a flag on `minimum`
        low = low + step if exclusive_low and low is not None else low
    elif isinstance(exclusive_low, int | float):
        low = exclusive_low + step if low is None else max(low, exclusive_low + step)
    if isinstance(exclusive_high, bool):
        high = high - step if exclusive_high and high is not None else high
    elif isinstance(exclusive_high, int | float):
        high = exclusive_high - step if high is None else min(high, exclusive_high - step)
    value: float = 1
    if low is not None and value < low:
        value = low
    if high is not None and value > high:
        value = high if low is None or high >= low else low
    multiple = node.get("multipleOf")
    if isinstance(multiple, int | float) and multiple > 0:
        value = math.ceil(value / multiple) * multiple
    return math.ceil(value) if integer else value


def _answer_keys(openapi: dict[str, Any], operation: dict[str, Any]) -> tuple[str, ...]:
    for status, answer in (operation.get("responses") or {}).items():
        if str(status).startswith("2"):
            schema = _resolve(
                openapi,
                (
                    (_resolve(openapi, answer).get("content") or {}).get("application/json") or {}
                ).get("schema"),
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
