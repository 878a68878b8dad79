"""Values made from an OpenAPI schema: what a body, a path or a query parameter is sent with when
the schema gives no example, from its types and constraints (a string of its length and format, a
number within its bounds, an object of its required properties); `$ref`s followed (`resolve`)."""

from __future__ import annotations

import math
import re
from typing import Any

NOTHING = object()  # no value could be made


def resolve(openapi: dict[str, Any], node: Any) -> Any:
    """`{"$ref": "#/components/..."}` followed (at most 20 hops)."""
    for _ in range(20):
        if not isinstance(node, dict) or not isinstance(node.get("$ref"), str):
            return node
        target: Any = openapi
        for part in node["$ref"].removeprefix("#/").split("/"):
            target = target.get(part, {}) if isinstance(target, dict) else {}
        node = target
    return node


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
    node = resolve(openapi, node)
    where = where or "body"
    if depth > _DEPTH:
        missing.append(f"{where}: nested too deep (a recursive schema)")
        return NOTHING
    if not isinstance(node, dict):
        return "value" if node is True else NOTHING
    given = _given(node)
    if given is not NOTHING:
        return given
    if "allOf" in node:
        merged = _merged(openapi, node)
        return example_of(openapi, merged, where, missing, seed, depth + 1)
    branches = [b for b in _branches(node) if _kind(resolve(openapi, b)) != "null"]
    if branches:
        tried: list[str] = []
        for branch in branches:
            tried = []
            value = example_of(openapi, branch, where, tried, seed, depth + 1)
            if not tried and value is not NOTHING:
                return value
        missing.extend(tried)
        return NOTHING
    kind = _kind(node)
    if kind == "object" or "properties" in node:
        return _object(openapi, node, where, missing, seed, depth)
    if kind == "array":
        inner: list[str] = []
        item = example_of(openapi, node.get("items") or {}, f"{where}[0]", inner, seed, depth + 1)
        count = max(1, int(node.get("minItems") or 0))
        if node.get("maxItems") is not None:
            count = min(count, int(node["maxItems"]))
        if inner or item is NOTHING:
            if count and node.get("minItems"):
                missing.extend(inner or [f"{where}[0]: no value for its items"])
                return NOTHING
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


def _branches(node: dict[str, Any]) -> list[Any]:
    """The alternatives of an `anyOf` (else a `oneOf`) node; none for any other."""
    found: list[Any] = node.get("anyOf", node.get("oneOf", []))
    return found


def _given(node: dict[str, Any]) -> Any:
    """The value the schema itself gives (not null), or NOTHING."""
    if "const" in node:
        return node["const"]
    for key in ("example", "default"):
        if node.get(key) is not None:
            return node[key]
    if isinstance(node.get("examples"), list) and node["examples"]:
        return node["examples"][0]
    enum = [v for v in node.get("enum") or [] if v is not None]
    return enum[0] if enum else NOTHING


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
        part = resolve(openapi, part)
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
            if given is not NOTHING:
                built[name] = given
            continue
        inner: list[str] = []
        value = example_of(openapi, prop, inside, inner, seed, depth + 1)
        if inner or value is NOTHING:
            missing.extend(inner or [f"{inside}: no value"])
        else:
            built[name] = value
    return built


def _optional_given(openapi: dict[str, Any], prop: Any) -> Any:
    prop = resolve(openapi, prop)
    if not isinstance(prop, dict):
        return NOTHING
    given = _given(prop)
    if given is not NOTHING:
        return given
    for branch in _branches(prop):
        branch = resolve(openapi, branch)
        if isinstance(branch, dict) and _kind(branch) != "null" and _given(branch) is not NOTHING:
            return _given(branch)
    return NOTHING


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
        return NOTHING
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
            return NOTHING
    if len(text) < low or (high is not None and len(text) > int(high)):
        missing.append(f"{where}: a {fmt} string of {low} to {high} characters")
        return NOTHING
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
