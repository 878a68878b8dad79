"""What a benchwatch.toml, a stacks.toml and a benchwatch-app.toml may say: the validated models."""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterator
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from benchwatch.declarations import placeholders
from benchwatch.figures.metrics import CPU, P50, P99, RPS, RSS_IDLE, RSS_PEAK, RSS_WARM

_NAME = r"^[a-z0-9][a-z0-9_]*$"
_STACK_NAME = (
    r"^[a-z0-9][a-z0-9._+-]*$"  # "+": attribute's intermediate stacks (v2-pre-rust+fastapi)
)


# what the stack `own-next` moves on an app's own lock unless benchwatch.toml's `watch` says otherwise
WATCHED_PACKAGES = ("fastapi", "pydantic", "pydantic-core", "starlette", "uvicorn")


def normalize_package(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Stack(_Strict):
    """A named, exactly pinned dependency set: one uv environment per stack (and Python)."""

    name: str = Field(
        pattern=_STACK_NAME, description="the stack's name: the key of its `[stacks.<name>]` table"
    )
    description: str = Field(
        default="", description="what the stack is for (`benchwatch stacks` prints it)"
    )
    python: str = Field(
        default="3.11",
        pattern=r"^3\.\d+(\.\d+)?$",
        description=(
            "the CPython of the stack's environments, `3.12` or an exact `3.12.1`: found where it is installed "
            "(uv's Python installs, pyenv's versions, PATH); one build per version for a whole command, the newest "
            "patch release first (docs/methodology.md#one-interpreter-per-command)"
        ),
    )
    exclude_newer: dt.date | None = Field(
        default=None,
        description=(
            "uv resolves the dependencies nobody pins as they were on this date, so an environment "
            "built next year is the same as one built today"
        ),
    )
    pins: dict[str, str] = Field(
        default={},
        description=(
            'exact versions, `package = "version"`; after the install the real versions are read back '
            "and a pin that did not hold is an error. Required unless `resolved_at_run_time`"
        ),
    )
    resolved_at_run_time: bool = Field(
        default=False,
        description=(
            "resolved when its environment is built (pre-releases included), from `requires` instead of `pins`"
        ),
    )
    requires: list[str] = Field(
        default=[],
        description=(
            'requirement strings of a stack resolved at run time, e.g. `"psycopg[binary]"`'
        ),
    )
    extends: str | None = Field(
        default=None,
        pattern=_STACK_NAME,
        description=(
            "another stack whose `pins`, `exclude_newer`, `python` (and run-time resolution) this one takes, "
            'saying only what differs: `extends = "latest"` with `python = "3.13"` is `latest` on CPython 3.13'
        ),
    )

    @field_validator("pins")
    @classmethod
    def _exact_pins(cls, pins: dict[str, str]) -> dict[str, str]:
        for package, version in pins.items():
            if not re.fullmatch(r"[0-9][0-9A-Za-z.+!-]*", version):
                raise ValueError(f"pin {package} = {version!r} is not an exact version")
        return pins

    @model_validator(mode="after")
    def _pins_or_requires(self) -> Stack:
        if self.resolved_at_run_time and not self.requires:
            raise ValueError("a stack resolved at run time needs `requires`")
        if not self.resolved_at_run_time and not self.pins:
            raise ValueError("a pinned stack needs `pins`")
        return self

    def requirements(self) -> list[str]:
        if self.resolved_at_run_time:
            return list(self.requires)
        return [f"{package}=={version}" for package, version in self.pins.items()]

    def pinned_versions(self) -> dict[str, str]:
        """Exact pins, and a run-time stack's exact requirements (`fastapi==0.166.0b1`)."""
        exact = [
            re.fullmatch(r"([A-Za-z0-9._-]+)(?:\[[^\]]*\])?==([0-9][0-9A-Za-z.+!-]*)", r)
            for r in self.requires
        ]
        pinned = {normalize_package(m.group(1)): m.group(2) for m in exact if m}
        return {**pinned, **{normalize_package(p): v for p, v in self.pins.items()}}


class Expect(_Strict):
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


_METHOD = Literal["GET", "POST", "PUT", "PATCH", "DELETE"]
PATH_PARAM = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")
_HEADER_NAME = r"^[!#$%&'*+.^_`|~0-9A-Za-z-]+$"
QueryValue = str | int | float | bool | list[str | int | float | bool]
FormValue = str | int | float | bool


class DeclarationError(ValueError):
    """A bad value found by a check over the whole file, with the key it is at
    (`endpoints.item.headers.Authorization`): config's messages name it instead of `top level`."""

    def __init__(self, where: str, message: str) -> None:
        super().__init__(f"{where}: {message}")
        self.where = where
        self.message = message


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


class RequestParts(_Strict):
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


class _EndpointName(_Strict):
    name: str = Field(
        pattern=_NAME,
        description="unique within the app; `quick`, flavors and `compare VARIANT:ENDPOINT` use it",
    )


class _StepName(_Strict):
    name: str = Field(pattern=_NAME, description="names the step in problems")


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


class SetupRequest(RequestParts, _StepName):
    """One request of the set-up (a login, a record created), sent once per boot before anything
    is measured; values of its JSON answer become `{setup.NAME}`."""

    expect_status: int | None = Field(
        default=None,
        ge=100,
        le=599,
        description=("the status the answer must have (default: any 2xx)"),
    )
    save: dict[str, str] = Field(
        default={},
        description=(
            'set-up values from the JSON answer: `{ token = "access_token", item_id = "id" }`; a dotted path '
            "(`data.0.id`) reaches into objects and arrays"
        ),
    )

    @field_validator("save")
    @classmethod
    def _save_names(cls, save: dict[str, str]) -> dict[str, str]:
        for name, where in save.items():
            if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
                raise ValueError(f"{name!r}: a set-up value's name is letters, digits and `_`")
            if not where or any(not part for part in where.split(".")):
                raise ValueError(
                    f"{name} = {where!r}: give a dotted path into the answer, e.g. `access_token`"
                )
        return save


class Setup(_Strict):
    """What runs after every boot (after `pre_start`) and before anything is verified or measured,
    the same on both sides of a compare: requests (a login), then a seed command (or first, with
    `command_first`). Their values fill `{setup.NAME}` in the endpoints."""

    requests: list[SetupRequest] = Field(default=[], description="requests sent in order (below)")
    command: list[str] | None = Field(
        default=None,
        description=(
            "a seed command (argv) run in the app's environment from `root`, with the server's variables plus "
            "`BENCHWATCH_BASE_URL` and every set-up value so far as `BENCHWATCH_SETUP_<NAME>`; must exit 0; "
            "its last line of output, if a JSON object of strings and numbers, adds set-up values"
        ),
    )
    callable: str | None = Field(
        default=None,
        pattern=r"^[A-Za-z_][\w.]*:[A-Za-z_]\w*$",
        description=(
            "instead of `command`: `module:function` imported in the app's environment and called with no "
            "arguments (awaited if async), with the same variables; the dict it returns adds set-up values"
        ),
    )
    command_first: bool = Field(
        default=False,
        description=(
            "run the command (or callable) before the requests (e.g. it creates the user the login needs)"
        ),
    )
    timeout: float = Field(
        default=120.0, gt=0, le=3600, description="seconds the whole set-up may take"
    )

    @model_validator(mode="after")
    def _consistent(self) -> Setup:
        if self.command is not None and self.callable is not None:
            raise ValueError("give `command` or `callable`, not both")
        if self.command is not None and not self.command:
            raise ValueError("command: give the program and its arguments")
        names = [r.name for r in self.requests]
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:
            raise ValueError(f"requests: two are called {twice[0]!r}")
        return self

    @property
    def seeds(self) -> bool:
        """Whether a command or callable runs (its values are known only when it has run)."""
        return self.command is not None or self.callable is not None


class Flavor(_Strict):
    """A small override of the app's defaults: one more variant per stack, `<name>-<flavor>@<stack>`."""

    description: str = Field(default="", description="what this flavor changes")
    app: str | None = Field(
        default=None, description="another uvicorn import string (default: the app's)"
    )
    stacks: list[str] | None = Field(
        default=None, description="the stacks this flavor runs on (default: the app's)"
    )
    endpoints: list[str] | None = Field(
        default=None, description="the endpoint names it serves (default: all)"
    )
    env: dict[str, str] = Field(
        default={}, description="environment variables merged over the app's `env`"
    )
    quick: list[str] | None = Field(
        default=None, description="its endpoints measured by `--quick` (default: the app's)"
    )


class AppDeclaration(_Strict):
    """One app under test, declared in a `benchwatch-app.toml` in its directory.
    Variant ids: `<name>[-<flavor>]@<stack>`."""

    name: str = Field(
        pattern=_NAME, description="the scenario name, the first part of every variant id"
    )
    description: str = Field(
        default="", description="what the app is (`benchwatch list` prints it)"
    )
    seed: str | None = Field(
        default=None,
        description="which published write-up the app reproduces (`benchwatch list` shows it)",
    )
    root: str = Field(
        default=".", description="the import root and working directory, relative to this file"
    )
    app: str = Field(
        pattern=r"^[A-Za-z_][\w.]*:[A-Za-z_]\w*$",
        description="the uvicorn import string, resolved from `root`, e.g. `main:app`",
    )
    stacks: list[str] | None = Field(
        default=None,
        description=(
            "the stacks it runs on (default: every stack the command selects); give `stacks` or `requirements`, not both"
        ),
    )
    requirements: str | None = Field(
        default=None,
        description=(
            "the app's own pins, relative to this file: a requirements file of exact pins (`name==version`, "
            "environment markers allowed after `;`), or the app's `uv.lock` / `pyproject.toml` (installed as "
            "`uv export --frozen` gives it: no dev groups, not the project itself). One variant, `<name>@own`, "
            "instead of one per stack"
        ),
    )
    python: str | None = Field(
        default=None,
        pattern=r"^3\.\d+(\.\d+)?$",
        description=(
            "the CPython of the app's environments, `3.12` or `3.12.1`; default: the stack's, or for an app's own "
            "requirements its `.python-version`, else the lowest installed version its `requires-python` allows"
        ),
    )
    env: dict[str, str] = Field(
        default={},
        description=(
            "environment variables of the server (and `pre_start`); `{tmp}` becomes a fresh directory per boot, "
            "`${NAME}` the variable of benchwatch's own environment (a secret), `{database_url}` the boot's database; "
            "not `PYTHONPATH` (benchwatch sets it to `root`), `VIRTUAL_ENV` or a runner's `GITHUB_*`, `ACTIONS_*`, "
            "`RUNNER_*`"
        ),
    )
    pre_start: list[str] | None = Field(
        default=None,
        description=(
            "a command (argv) run before every boot, in the app's environment, from `root`, with `env` and `root` on "
            "`PYTHONPATH` (a script run by its path imports the project); must exit 0 within 300 s (e.g. a migration)"
        ),
    )
    database: Literal["postgresql"] | None = Field(
        default=None,
        description=(
            "a fresh, empty PostgreSQL database for every boot (created before `pre_start`, dropped after the "
            "server stops): `{database_url}` and its parts in `env`; the cluster is `BENCHWATCH_POSTGRES_URL`'s "
            "or one benchwatch starts on 127.0.0.1"
        ),
    )
    setup: Setup | None = Field(
        default=None,
        description=(
            "what runs after every boot, before anything is verified or measured: a login, seed data (below)"
        ),
    )
    ready_path: str | None = Field(
        default=None,
        description="the path polled until the server answers (default: the first GET endpoint)",
    )
    ready_timeout: float = Field(
        default=30.0, gt=0, le=600, description="seconds a boot may take before it fails"
    )
    quick: list[str] | None = Field(
        default=None,
        description=(
            "the endpoint names `--quick` measures (default: the first endpoint that can be load-tested); "
            "not one whose request holds `{unique}` (counted only)"
        ),
    )
    endpoints: list[Endpoint] = Field(
        min_length=1, description="the requests to measure, at least one (below)"
    )
    flavors: dict[str, Flavor] = Field(
        default={}, description=("small overrides of these defaults, by name (`[a-z0-9_]`, below)")
    )

    @model_validator(mode="after")
    def _consistent(self) -> AppDeclaration:
        if self.stacks is not None and self.requirements is not None:
            raise ValueError("give `stacks` or `requirements`, not both")
        names = [e.name for e in self.endpoints]
        duplicates = sorted({n for n in names if names.count(n) > 1})
        if duplicates:
            raise ValueError(f"endpoint names must be unique: {', '.join(duplicates)}")
        labels = [e.label for e in self.endpoints]
        same = sorted({label for label in labels if labels.count(label) > 1})
        if same:
            twins = [e.name for e in self.endpoints if e.label == same[0]]
            raise ValueError(
                f"endpoints {' and '.join(twins)} are both {same[0]!r}: figures are named by method, "
                "path template and query, so give them different ones"
            )
        for flavor_name, flavor in self.flavors.items():
            if not re.fullmatch(_NAME, flavor_name):
                raise ValueError(f"flavor name {flavor_name!r} must match {_NAME}")
            for listed in (flavor.endpoints or []) + (flavor.quick or []):
                if listed not in names:
                    raise ValueError(f"flavors.{flavor_name} names unknown endpoint {listed!r}")
        _check_placeholders(self)
        per_request = {e.name for e in self.endpoints if e.per_request}
        for where, listed in [("quick", n) for n in self.quick or []] + [
            (f"flavors.{f}.quick", n)
            for f, flavor in self.flavors.items()
            for n in flavor.quick or []
        ]:
            if listed not in names:
                raise ValueError(f"{where} names unknown endpoint {listed!r}")
            if listed in per_request:
                raise ValueError(
                    f"{where} names endpoint {listed!r}, whose request holds {{unique}}: {PER_REQUEST_WHY} "
                    "(take it out of quick)"
                )
        return self


def declared_strings(
    decl: AppDeclaration, endpoints: list[Endpoint] | None = None, flavor: str | None = None
) -> Iterator[tuple[str, str]]:
    """(key path, text) of every string of an app declaration that may hold placeholders: `env.X`,
    `pre_start[0]`, `setup.requests.login.form.password`, `endpoints.item.headers.Authorization`;
    `endpoints` and `flavor` narrow it to one variant's (a flavor's `env` over the app's)."""
    flavor_env = decl.flavors[flavor].env if flavor is not None else {}
    for key, value in decl.env.items():
        if key not in flavor_env:
            yield f"env.{key}", value
    for key, value in flavor_env.items():
        yield f"flavors.{flavor}.env.{key}", value
    for index, arg in enumerate(decl.pre_start or []):
        yield f"pre_start[{index}]", arg
    if decl.setup is not None:
        for request in decl.setup.requests:
            yield from request_strings(request, f"setup.requests.{request.name}")
        for index, arg in enumerate(decl.setup.command or []):
            yield f"setup.command[{index}]", arg
    for endpoint in decl.endpoints if endpoints is None else endpoints:
        yield from request_strings(endpoint, f"endpoints.{endpoint.name}")


# why an endpoint whose request holds `{unique}` has counts and no timings (coverage, list, docs)
PER_REQUEST_WHY = "counts only: its request holds a value unique per request, and the load test sends one fixed request"


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


def _check_placeholders(decl: AppDeclaration) -> None:
    """Every placeholder well formed and able to have a value where it stands: no set-up value
    before boot (env, pre_start), a database part only with `database`, and (when no command can
    add values) every `{setup.NAME}` saved by an earlier set-up request."""
    setup = decl.setup or Setup()
    saved_before: dict[str, set[str]] = {}
    saved: set[str] = set()
    for request in setup.requests:
        saved_before[f"setup.requests.{request.name}."] = set(saved)
        saved |= set(request.save)
    open_ended = setup.seeds
    for where, text in declared_strings(decl, flavor=None):
        try:
            found = placeholders.refs(text)
        except placeholders.PlaceholderError as exc:
            raise DeclarationError(where, str(exc)) from None
        before_boot = where.startswith(("env.", "pre_start["))
        for ref in found:
            if ref.kind == "setup" and before_boot:
                raise DeclarationError(
                    where, f"{ref.text}: set-up values exist only after the server booted"
                )
            if ref.kind == "unique" and (before_boot or where.startswith("setup.command")):
                raise DeclarationError(
                    where, f"{ref.text}: a value fresh per request goes in a request only"
                )
            if ref.kind == "database" and decl.database is None:
                raise DeclarationError(where, f'{ref.text} needs `database = "postgresql"`')
            if ref.kind == "setup" and not open_ended:
                known = next(
                    (names for prefix, names in saved_before.items() if where.startswith(prefix)),
                    saved,
                )
                if ref.name not in known:
                    raise DeclarationError(
                        where,
                        f"{ref.text}: no set-up request before it saves {ref.name!r} "
                        f'(`save = {{ {ref.name} = "..." }}`)',
                    )
    for name, flavor in decl.flavors.items():
        for key, value in flavor.env.items():
            where = f"flavors.{name}.env.{key}"
            try:
                found = placeholders.refs(value)
            except placeholders.PlaceholderError as exc:
                raise DeclarationError(where, str(exc)) from None
            for ref in found:
                if ref.kind == "setup":
                    raise DeclarationError(
                        where, f"{ref.text}: set-up values exist only after the server booted"
                    )
                if ref.kind == "database" and decl.database is None:
                    raise DeclarationError(where, f'{ref.text} needs `database = "postgresql"`')


class ProjectSettings(_Strict):
    """The `[benchwatch]` table of the project file; the repository root is the folder holding it."""

    apps: list[str] = Field(
        min_length=1,
        description=(
            "the app directories, relative to this file; each holds a `benchwatch-app.toml`"
        ),
    )
    default_stacks: list[str] | None = Field(
        default=None,
        description=(
            "the stacks a command uses when `--stacks` names none (default: every stack but `next` and the stacks "
            "that `extend` another, which are asked for by name)"
        ),
    )
    reference_stack: str | None = Field(
        default=None,
        description="the stack report ratios are taken against; none: no ratios (docs/questions.md)",
    )
    watch: list[str] = Field(
        default=list(WATCHED_PACKAGES),
        description=(
            "the packages the stack `own-next` moves to their newest releases on an app's own lock "
            "(everything else as locked; docs/github.md)"
        ),
    )
    watch_pre: bool = Field(
        default=False, description="`own-next` takes the watched packages' pre-releases too"
    )
    micro_quick: list[str] = Field(
        default=[],
        description=(
            "regexes over asv benchmark names (`module.Class.time_x('param')`): the micro-benchmarks `--quick` "
            "runs; default: every one"
        ),
    )


# what a question may compare: the figures its side-by-side rounds measure (closed loops per
# endpoint; memory per server, which needs a fresh boot every round)
QUESTION_METRICS = tuple(m.key for m in (CPU, RPS, P50, P99, RSS_IDLE, RSS_WARM, RSS_PEAK))


def _question_metric(key: str) -> str:
    if key not in QUESTION_METRICS:
        raise ValueError(
            f"metric {key!r} is not one a question measures; choose from {', '.join(QUESTION_METRICS)}"
        )
    return key


class QuestionLane(_Strict):
    """One server of a question: a variant (`scenario@stack`), at one endpoint per step."""

    variant: str = Field(
        pattern=r"^[a-z0-9][a-z0-9_-]*@[a-z0-9][a-z0-9._+-]*$",
        description="the variant this server runs, `scenario@stack` as `benchwatch list` prints it",
    )
    endpoints: list[str] | None = Field(
        default=None,
        description="one endpoint name per step; default: endpoints named like the steps",
    )
    name: str | None = Field(
        default=None, description="what the report calls the lane; default: the variant"
    )

    @property
    def label(self) -> str:
        return self.name or self.variant


class Published(_Strict):
    """A figure someone published, set beside the question's answer (the report's study section)."""

    who: str = Field(min_length=1, description="who published it")
    what: str = Field(min_length=1, description="what they measured")
    figure: str = Field(min_length=1, description="their number, as published")
    source: str = Field(default="", description="a link, or a file in the repository")
    setup: str = Field(default="", description="how they measured it")
    note: str = Field(
        default="", description="what a reader should know beside it (shown under the study table)"
    )
    metrics: list[str] = Field(
        default=[CPU.key], min_length=1, description="the question's metrics that answer it"
    )
    heads: list[str] = Field(
        default=[], description="the pairs whose head lane is one of these answer it; [] every pair"
    )
    steps: list[str] = Field(default=[], description="the steps that answer it; [] every step")


class Question(_Strict):
    """Lanes loaded side by side in every round of `run`; answered as head/base ratios per pair."""

    name: str = Field(
        pattern=_NAME, description="unique; names the question's answers in the report"
    )
    title: str = Field(
        default="",
        description="what the question asks, shown after its name where the report lists its answers",
    )
    steps: list[str] | None = Field(
        default=None,
        description="loaded one after the other, every lane at once; default: the first lane's endpoints",
    )
    lanes: list[QuestionLane] = Field(
        min_length=2, description="the servers loaded at the same moment"
    )
    metrics: list[str] = Field(
        default=[CPU.key],
        min_length=1,
        description=f"what each pair compares, of {', '.join(QUESTION_METRICS)}",
    )
    pairs: list[tuple[str, str]] | None = Field(
        default=None, description="(base, head) lane names; default: every lane against the first"
    )
    published: list[Published] = Field(
        default=[], description="figures others published, set beside the answers"
    )

    @field_validator("metrics")
    @classmethod
    def _known_metrics(cls, metrics: list[str]) -> list[str]:
        return [_question_metric(key) for key in metrics]

    @model_validator(mode="after")
    def _consistent(self) -> Question:
        labels = [lane.label for lane in self.lanes]
        twice = sorted({n for n in labels if labels.count(n) > 1})
        if twice:
            raise ValueError(f"two lanes are called {twice[0]!r}: give each a distinct `name`")
        if self.steps is None and self.lanes[0].endpoints is None:
            raise ValueError("give `steps` (endpoint names) or the lanes' `endpoints`")
        steps = self.step_names
        if len(set(steps)) != len(steps) or not steps:
            raise ValueError(f"steps must be distinct and at least one: {steps}")
        for lane in self.lanes:
            if lane.endpoints is not None and len(lane.endpoints) != len(steps):
                raise ValueError(
                    f"lane {lane.label!r} names {len(lane.endpoints)} endpoints for {len(steps)} steps {steps}"
                )
        for base, head in self.pairs or []:
            if base == head:
                raise ValueError(f"pairs: [{base!r}, {head!r}] pairs a lane with itself")
            for name in (base, head):
                if name not in labels:
                    raise ValueError(f"pairs: no lane called {name!r}; lanes: {', '.join(labels)}")
        heads = {head for _, head in self.lane_pairs}
        for i, figure in enumerate(self.published):
            where = f"published[{i}]"
            for key in figure.metrics:
                if key not in self.metrics:
                    raise ValueError(
                        f"{where}: metric {key!r} is not one of the question's metrics {self.metrics}"
                    )
            for head in figure.heads:
                if head not in heads:
                    raise ValueError(
                        f"{where}: heads: {head!r} is the head of no pair; heads: {', '.join(sorted(heads))}"
                    )
            for step in figure.steps:
                if step not in steps:
                    raise ValueError(
                        f"{where}: steps: {step!r} is not a step; steps: {', '.join(steps)}"
                    )
        return self

    @property
    def step_names(self) -> list[str]:
        return list(self.steps) if self.steps is not None else list(self.lanes[0].endpoints or [])

    def lane_endpoints(self, lane: QuestionLane) -> list[str]:
        return list(lane.endpoints) if lane.endpoints is not None else self.step_names

    @property
    def lane_pairs(self) -> list[tuple[str, str]]:
        """(base, head) lane names: the declared pairs, or every lane against the first."""
        if self.pairs is not None:
            return [tuple(p) for p in self.pairs]  # type: ignore[misc]
        first = self.lanes[0].label
        return [(first, lane.label) for lane in self.lanes[1:]]
