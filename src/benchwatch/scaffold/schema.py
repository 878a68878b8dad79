"""From an OpenAPI schema to the endpoints init declares."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

_METHODS = ("get", "post", "put", "patch", "delete")


@dataclass(frozen=True)
class Operation:
    method: str  # upper case
    path: str
    summary: str
    needs: list[str]  # required parameters and request body: why it cannot be called as is

    @property
    def ready(self) -> bool:
        return self.method == "GET" and not self.needs


def operations(openapi: dict[str, Any]) -> list[Operation]:
    found = []
    for path, item in (openapi.get("paths") or {}).items():
        shared = item.get("parameters", [])
        for method in _METHODS:
            operation = item.get(method)
            if not isinstance(operation, dict):
                continue
            needs = [
                f"{p.get('in', '?')} parameter {p.get('name', '?')}"
                for p in [*shared, *operation.get("parameters", [])]
                if p.get("required") or p.get("in") == "path"
            ]
            if (operation.get("requestBody") or {}).get("required"):
                needs.append("a request body")
            summary = str(operation.get("summary") or operation.get("operationId") or "")
            found.append(Operation(method.upper(), path, summary, needs))
    return found


def endpoint_names(paths: list[tuple[str, str]]) -> list[str]:
    """A unique [a-z0-9_] name per (method, path): `/` -> root, `/items/{id}` -> items_id."""
    names: list[str] = []
    for method, path in paths:
        base = re.sub(r"[^a-z0-9]+", "_", path.lower()).strip("_") or "root"
        if not base[0].isalnum():
            base = "e_" + base
        if method != "GET":
            base = f"{method.lower()}_{base}"
        name, n = base, 2
        while name in names:
            name, n = f"{base}_{n}", n + 1
        names.append(name)
    return names


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
