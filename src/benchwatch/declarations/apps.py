"""What a benchwatch-app.toml may say: one app under test, its flavors, and the check that every
placeholder in it can have a value where it stands."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Literal

from pydantic import Field, model_validator

from benchwatch.declarations import placeholders
from benchwatch.declarations.requests import PER_REQUEST_WHY, Endpoint, request_strings
from benchwatch.declarations.setup import Setup
from benchwatch.declarations.strict import NAME, Strict


class DeclarationError(ValueError):
    """A bad value found by a check over the whole file, with the key it is at
    (`endpoints.item.headers.Authorization`): project.files.explain names it instead of `top level`."""

    def __init__(self, where: str, message: str) -> None:
        super().__init__(f"{where}: {message}")
        self.where = where
        self.message = message


class Flavor(Strict):
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


class AppDeclaration(Strict):
    """One app under test, declared in a `benchwatch-app.toml` in its directory.
    Variant ids: `<name>[-<flavor>]@<stack>`."""

    name: str = Field(
        pattern=NAME, description="the scenario name, the first part of every variant id"
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
            if not re.fullmatch(NAME, flavor_name):
                raise ValueError(f"flavor name {flavor_name!r} must match {NAME}")
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
