"""A declared request (an endpoint, a set-up step) made concrete for one boot: placeholders
resolved, the path filled, the query and body encoded. What verify, oha, the counting client,
the profiler and the set-up send; the label (the template) is what results are named by."""

from __future__ import annotations

import json
from dataclasses import dataclass
from urllib.parse import quote, urlencode

from benchwatch.declarations.placeholders import Context, resolve, resolve_tree
from benchwatch.declarations.requests import PATH_PARAM, RequestParts
from benchwatch.project.apps import App


@dataclass(frozen=True)
class Prepared:
    method: str
    target: str  # path and query, as sent
    headers: tuple[tuple[str, str], ...]  # the declared headers, resolved (content type apart)
    body: bytes | None
    content_type: str | None

    def header_dict(self) -> dict[str, str]:
        """Every header sent, the content type included."""
        found = dict(self.headers)
        if self.content_type:
            found["content-type"] = self.content_type
        return found


def _segment(value: str) -> str:
    return quote(value, safe="")


def prepare(app: App, parts: RequestParts, context: Context) -> Prepared:
    """`parts` resolved in `context`; placeholders.Unresolved when a value is missing."""
    params = {name: resolve(value, context) for name, value in parts.path_params.items()}
    path = PATH_PARAM.sub(lambda m: _segment(params[m.group(1)]), parts.path)
    if isinstance(parts.query, str):
        query = resolve(parts.query, context, encode=_segment)
    else:
        pairs = []
        for key, value in parts.query.items():
            for one in value if isinstance(value, list) else [value]:
                text = one if isinstance(one, str) else json.dumps(one)
                pairs.append((key, resolve(text, context)))
        query = urlencode(pairs)
    headers = tuple((name, resolve(value, context)) for name, value in parts.headers.items())
    return Prepared(
        parts.method,
        f"{path}?{query}" if query else path,
        headers,
        _body(app, parts, context),
        parts.media_type,
    )


def _body(app: App, parts: RequestParts, context: Context) -> bytes | None:
    kind = parts.body_kind
    if kind == "json":
        return json.dumps(resolve_tree(parts.json_body, context), separators=(",", ":")).encode()
    if kind == "form":
        assert parts.form is not None
        fields = [
            (k, resolve(v if isinstance(v, str) else json.dumps(v), context))
            for k, v in parts.form.items()
        ]
        return urlencode(fields).encode()
    if kind == "body":
        assert parts.body is not None
        return resolve(parts.body, context).encode()
    if kind == "body_file":
        assert parts.body_file is not None
        return app.file(parts.body_file).read_bytes()
    return None
