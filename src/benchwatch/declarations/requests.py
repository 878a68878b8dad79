"""What a request benchwatch sends may say (an endpoint's, a set-up step's), and what its answer
must be."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from benchwatch.declarations import placeholders
from benchwatch.declarations.strict import NAME, Strict

_METHOD = Literal["GET", "POST", "PUT", "PATCH", "DELETE"]
PATH_PARAM = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")
_HEADER_NAME = r"^[!#$%&'*+.^_`|~0-9A-Za-z-]+$"
QueryValue = str | int | float | bool | list[str | int | float | bool]
FormValue = str | int | float | bool


# why an endpoint whose request holds `{unique}` has counts and no timings (coverage, list, docs)
PER_REQUEST_WHY = "counts only: its request holds a value unique per request, and the load test sends one fixed request"


class Expect(Strict):
    """What `verify` checks of an endpoint's answer before anything is measured."""

    status: int = Field(default=200, ge=100, le=599, description="the expected HTTP status")
    content_type: str = Field(
        default="application/json", description="the expected media type of the response"
    )
    json_file: str | None = Field(
        default=None,
        alias="json",
        description=(
            "a golden JSON body, relative to this file; compared after masking the `volatile` keys"
        ),
    )
    volatile: list[str] = Field(
        default=[],
        description=(
            "keys whose values change from request to request: masked (to their JSON type) wherever they occur"
        ),
    )
    min_bytes: int | None = Field(
        default=None, ge=0, description="the smallest acceptable body, in bytes"
    )
    max_bytes: int | None = Field(
        default=None, ge=0, description="the largest acceptable body, in bytes"
    )


def _json_only(value: Any, where: str = "json") -> None:
    """TOML values JSON has no form for (dates and times) are an error, not a silent string."""
    if isinstance(value, dict):
        for key, inner in value.items():
            _json_only(inner, f"{where}.{key}")
    elif isinstance(value, list):
        for index, inner in enumerate(value):
            _json_only(inner, f"{where}[{index}]")
    elif not isinstance(value, str | int | float | bool):
        raise ValueError(
            f"{where}: a {type(value).__name__} has no JSON form; write it as a string"
        )


class RequestParts(Strict):
    """What a request benchwatch sends is made of (an endpoint's, a set-up step's). String values
    may hold placeholders (`${NAME}`, `{setup.NAME}`, `{tmp}`, `{unique}`, `{database_*}`: docs/your-repository.md)."""

    method: _METHOD = Field(default="GET", description="the HTTP method")
    path: str = Field(
        pattern=r"^/",
        description=(
            "the URL path as the OpenAPI schema writes it; each `{name}` in it is filled from `path_params` "
            "(labels and figure names keep the template)"
        ),
    )
    path_params: dict[str, str] = Field(
        default={},
        description=(
            'a value for every `{name}` of `path`, e.g. `{ id = "{setup.item_id}" }` (URL-encoded when sent)'
        ),
    )
    query: str | dict[str, QueryValue] = Field(
        default="",
        description=(
            "the query: a raw string without `?` (`limit=10&offset=0`), or a table (`{ limit = 10 }`, "
            "an array repeats its key), URL-encoded when sent"
        ),
    )
    headers: dict[str, str] = Field(
        default={},
        description=(
            'request headers, e.g. `{ Authorization = "Bearer {setup.token}" }` (the content type is `content_type`)'
        ),
    )
    json_body: Any = Field(
        default=None,
        alias="json",
        description=(
            "a JSON body written as TOML (a table or an array), sent as `application/json`; "
            "one body kind at most (`json`, `form`, `body`, `body_file`)"
        ),
    )
    form: dict[str, FormValue] | None = Field(
        default=None,
        description=(
            "a form body (`application/x-www-form-urlencoded`), e.g. an OAuth2 password login's "
            '`{ username = "${BENCH_USER}", password = "${BENCH_PASSWORD}" }`'
        ),
    )
    body: str | None = Field(default=None, description="the request body as text")
    body_file: str | None = Field(
        default=None,
        description=(
            "a file holding the request body, relative to this file (sent as it is: no placeholders)"
        ),
    )
    content_type: str | None = Field(
        default=None,
        description=(
            "the request's content type (default: `application/json` for `json`, "
            "`application/x-www-form-urlencoded` for `form`)"
        ),
    )

    @field_validator("json_body")
    @classmethod
    def _json_value(cls, value: Any) -> Any:
        _json_only(value)
        return value

    @field_validator("headers")
    @classmethod
    def _header_names(cls, headers: dict[str, str]) -> dict[str, str]:
        for name, value in headers.items():
            if not re.fullmatch(_HEADER_NAME, name):
                raise ValueError(f"{name!r} is not a header name")
            if name.lower() in ("content-type", "content-length", "host"):
                raise ValueError(
                    f"{name}: benchwatch sets this header (give the body's type as `content_type`)"
                )
            if "\n" in value or "\r" in value:
                raise ValueError(f"{name}: a header value is one line")
        return headers

    @model_validator(mode="after")
    def _one_body_and_every_parameter(self) -> RequestParts:
        bodies = [
            key
            for key, given in (
                ("json", "json_body" in self.model_fields_set),
                ("form", self.form is not None),
                ("body", self.body is not None),
                ("body_file", self.body_file is not None),
            )
            if given
        ]
        if len(bodies) > 1:
            raise ValueError(f"give one body at most, not {' and '.join(f'`{b}`' for b in bodies)}")
        in_path = PATH_PARAM.findall(self.path)
        missing = [name for name in in_path if name not in self.path_params]
        if missing:
            raise ValueError(
                f"path {self.path}: give `path_params` a value for {', '.join(missing)}"
            )
        unused = [name for name in self.path_params if name not in in_path]
        if unused:
            raise ValueError(
                f"path_params: {', '.join(unused)} is in no `{{...}}` of path {self.path}"
            )
        if (
            "${" in self.path
            or "{setup." in self.path
            or "{tmp}" in self.path
            or "{database_" in self.path
        ):
            raise ValueError(
                f"path {self.path}: give placeholders in `path_params`, not in the path"
            )
        return self

    @property
    def has_json(self) -> bool:
        return "json_body" in self.model_fields_set

    @property
    def per_request(self) -> bool:
        """Its request holds `{unique}`, a value fresh for every request: each send resolves its
        own, so oha (one fixed request) cannot load-test it (counted only: PER_REQUEST_WHY)."""
        return any(
            ref.kind == "unique"
            for _, text in request_strings(self, "")
            for ref in _refs_or_none(text)
        )

    @property
    def query_text(self) -> str:
        """The query as declared (placeholders unresolved): a raw string as written, a table as
        `key=value&…` in its order."""
        if isinstance(self.query, str):
            return self.query
        parts = []
        for key, value in self.query.items():
            for one in value if isinstance(value, list) else [value]:
                parts.append(f"{key}={_query_text(one)}")
        return "&".join(parts)

    @property
    def url_path(self) -> str:
        """The path template and the declared query: what labels are made of, never sent as it is."""
        query = self.query_text
        return f"{self.path}?{query}" if query else self.path

    @property
    def body_kind(self) -> str | None:
        if self.has_json:
            return "json"
        if self.form is not None:
            return "form"
        if self.body is not None:
            return "body"
        return "body_file" if self.body_file is not None else None

    @property
    def media_type(self) -> str | None:
        """The content type sent: the declared one, else the one of the body kind."""
        if self.content_type:
            return self.content_type
        return {"json": "application/json", "form": "application/x-www-form-urlencoded"}.get(
            self.body_kind or ""
        )


def _query_text(value: str | int | float | bool) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


class _EndpointName(Strict):
    name: str = Field(
        pattern=NAME,
        description="unique within the app; `quick`, flavors and `compare VARIANT:ENDPOINT` use it",
    )


# the name first in each table of configuration.md: pydantic collects the fields of the last base first
class Endpoint(RequestParts, _EndpointName):
    """One request the load tests send, and what its answer must be."""

    micro_case: str | None = Field(
        default=None,
        description=(
            "the `benchmarks/` case whose `response_model` micro-benchmark isolates this endpoint's work "
            "(the report sets the two side by side)"
        ),
    )
    expect: Expect = Field(default=Expect(), description="what the answer must be (below)")

    @property
    def label(self) -> str:
        return f"{self.method} {self.url_path}"


def _refs_or_none(text: str) -> list[placeholders.Ref]:
    try:
        return placeholders.refs(text)
    except placeholders.PlaceholderError:
        return []  # _check_placeholders names it


def request_strings(request: RequestParts, where: str) -> Iterator[tuple[str, str]]:
    for key, value in request.path_params.items():
        yield f"{where}.path_params.{key}", value
    if isinstance(request.query, str):
        if request.query:
            yield f"{where}.query", request.query
    else:
        yield from placeholders.strings_in(request.query, f"{where}.query")
    for key, value in request.headers.items():
        yield f"{where}.headers.{key}", value
    if request.has_json:
        yield from placeholders.strings_in(request.json_body, f"{where}.json")
    yield from placeholders.strings_in(request.form or {}, f"{where}.form")
    if request.body is not None:
        yield f"{where}.body", request.body
