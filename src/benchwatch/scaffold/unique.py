"""A write the app refuses when its body is sent again (a user whose e-mail exists already): the
body's unique-key strings made fresh per request with `{unique}`, for init to try once more.

The rule: a string in the JSON body (at any depth) is a unique key when its value is an e-mail
(`local@domain`, as init makes one for a `format: email` field or a field named so) or its key is
one of UNIQUE_KEYS (case and `_`/`-` aside): `email`, `username`, `login`, `handle`, `slug`,
`name`, or a key ending in `email`. `full_name`, `title`, `description` are not: many records
share them. An e-mail keeps its domain (`u{unique}@example.com`); any other becomes `u{unique}`:
both the same length for every request (placeholders.UNIQUE_LENGTH)."""

from __future__ import annotations

import re
from typing import Any

from benchwatch.declarations.placeholders import UNIQUE
from benchwatch.declarations.requests import Endpoint

UNIQUE_KEYS = frozenset({"email", "username", "login", "handle", "slug", "name"})
_EMAIL = re.compile(r"[^@\s]+@([^@\s]+\.[^@\s]+)")


def _is_key(key: str) -> bool:
    plain = re.sub(r"[_-]", "", key.lower())
    return plain in UNIQUE_KEYS or plain.endswith("email")


def _fresh(value: str) -> str:
    email = _EMAIL.fullmatch(value)
    return f"u{UNIQUE}@{email.group(1)}" if email else f"u{UNIQUE}"


def _walk(value: Any, where: str, found: list[str]) -> Any:
    if isinstance(value, dict):
        out = {}
        for key, inner in value.items():
            here = f"{where}.{key}" if where else key
            if (
                isinstance(inner, str)
                and UNIQUE not in inner
                and (_is_key(key) or _EMAIL.fullmatch(inner))
            ):
                out[key] = _fresh(inner)
                found.append(here)
            else:
                out[key] = _walk(inner, here, found)
        return out
    if isinstance(value, list):
        return [_walk(inner, f"{where}[{i}]", found) for i, inner in enumerate(value)]
    return value


def made_unique(endpoint: Endpoint) -> tuple[Endpoint, tuple[str, ...]] | None:
    """`endpoint` with its JSON body's unique-key strings as `{unique}` values, and those fields'
    paths (`email`, `owner.email`); None when its body has none (nothing to try)."""
    if not endpoint.has_json:
        return None
    found: list[str] = []
    body = _walk(endpoint.json_body, "", found)
    if not found:
        return None
    return endpoint.model_copy(update={"json_body": body}), tuple(found)
