"""Declarations: the project file, the stacks, the apps and the variants derived from them."""

from __future__ import annotations

import datetime as dt
import fnmatch
import hashlib
import json
import os
import re
import tomllib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from benchwatch.errors import UserError

PROJECT_FILE = "benchwatch.toml"
STACKS_FILE = "stacks.toml"
APP_FILE = "benchwatch-app.toml"
OWN_REQUIREMENTS_STACK = "own"

_NAME = r"^[a-z0-9][a-z0-9_]*$"
_STACK_NAME = r"^[a-z0-9][a-z0-9._-]*$"


def normalize_package(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Stack(_Strict):
    name: str = Field(pattern=_STACK_NAME)
    description: str = ""
    python: str = Field(default="3.11", pattern=r"^3\.\d+$")
    exclude_newer: dt.date | None = None
    pins: dict[str, str] = {}
    resolved_at_run_time: bool = False
    requires: list[str] = []

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
        return {normalize_package(p): v for p, v in self.pins.items()}


class Expect(_Strict):
    status: int = Field(default=200, ge=100, le=599)
    content_type: str = "application/json"
    json_file: str | None = Field(default=None, alias="json")
    volatile: list[str] = []
    min_bytes: int | None = Field(default=None, ge=0)
    max_bytes: int | None = Field(default=None, ge=0)


class Endpoint(_Strict):
    name: str = Field(pattern=_NAME)
    method: Literal["GET", "POST", "PUT", "PATCH", "DELETE"] = "GET"
    path: str = Field(pattern=r"^/")
    query: str = ""
    body: str | None = None
    body_file: str | None = None
    content_type: str | None = None
    # the benchmarks/ case whose response_model micro-benchmark isolates this endpoint's work
    micro_case: str | None = None
    expect: Expect = Expect()

    @model_validator(mode="after")
    def _one_body(self) -> Endpoint:
        if self.body is not None and self.body_file is not None:
            raise ValueError("give `body` or `body_file`, not both")
        return self

    @property
    def url_path(self) -> str:
        return f"{self.path}?{self.query}" if self.query else self.path

    @property
    def label(self) -> str:
        return f"{self.method} {self.url_path}"


class Flavor(_Strict):
    description: str = ""
    app: str | None = None
    stacks: list[str] | None = None
    endpoints: list[str] | None = None
    env: dict[str, str] = {}
    quick: list[str] | None = None


class AppDeclaration(_Strict):
    name: str = Field(pattern=_NAME)
    description: str = ""
    seed: str | None = None
    root: str = "."
    app: str = Field(pattern=r"^[A-Za-z_][\w.]*:[A-Za-z_]\w*$")
    stacks: list[str] | None = None
    requirements: str | None = None
    env: dict[str, str] = {}
    pre_start: list[str] | None = None
    ready_path: str | None = None
    ready_timeout: float = Field(default=30.0, gt=0, le=600)
    quick: list[str] | None = None
    endpoints: list[Endpoint] = Field(min_length=1)
    flavors: dict[str, Flavor] = {}

    @model_validator(mode="after")
    def _consistent(self) -> AppDeclaration:
        if self.stacks is not None and self.requirements is not None:
            raise ValueError("give `stacks` or `requirements`, not both")
        names = [e.name for e in self.endpoints]
        duplicates = sorted({n for n in names if names.count(n) > 1})
        if duplicates:
            raise ValueError(f"endpoint names must be unique: {', '.join(duplicates)}")
        for flavor_name, flavor in self.flavors.items():
            if not re.fullmatch(_NAME, flavor_name):
                raise ValueError(f"flavor name {flavor_name!r} must match {_NAME}")
            for listed in (flavor.endpoints or []) + (flavor.quick or []):
                if listed not in names:
                    raise ValueError(f"flavors.{flavor_name} names unknown endpoint {listed!r}")
        for listed in self.quick or []:
            if listed not in names:
                raise ValueError(f"quick names unknown endpoint {listed!r}")
        return self


class ProjectSettings(_Strict):
    apps: list[str] = Field(min_length=1)
    default_stacks: list[str] | None = None
    reference_stack: str | None = None


@dataclass(frozen=True)
class App:
    declaration: AppDeclaration
    directory: Path

    @property
    def name(self) -> str:
        return self.declaration.name

    @property
    def root(self) -> Path:
        return (self.directory / self.declaration.root).resolve()

    def file(self, relative: str) -> Path:
        return self.directory / relative


@dataclass(frozen=True)
class Variant:
    app: App
    flavor: str | None
    stack: Stack
    import_string: str
    endpoints: tuple[Endpoint, ...]
    quick_endpoints: tuple[Endpoint, ...]
    env: dict[str, str]

    @property
    def scenario(self) -> str:
        return self.app.name if self.flavor is None else f"{self.app.name}-{self.flavor}"

    @property
    def id(self) -> str:
        return f"{self.scenario}@{self.stack.name}"

    @property
    def requirements_file(self) -> Path | None:
        own = self.app.declaration.requirements
        return self.app.file(own) if own else None

    @property
    def ready_endpoint(self) -> str:
        if self.app.declaration.ready_path:
            return self.app.declaration.ready_path
        first_get = next((e for e in self.endpoints if e.method == "GET"), None)
        return first_get.url_path if first_get else "/"

    def selected_endpoints(self, quick: bool) -> tuple[Endpoint, ...]:
        return self.quick_endpoints if quick else self.endpoints


@dataclass(frozen=True)
class Project:
    root: Path
    settings: ProjectSettings
    stacks: dict[str, Stack]
    apps: tuple[App, ...]

    @property
    def default_stacks(self) -> list[str]:
        chosen = self.settings.default_stacks
        return chosen if chosen is not None else [s for s in self.stacks if s != "next"]

    @property
    def reference_stack(self) -> str:
        return self.settings.reference_stack or self.default_stacks[0]

    def variants(self, stacks: Sequence[str] | None = None) -> list[Variant]:
        allowed = list(stacks) if stacks is not None else self.default_stacks
        for name in allowed:
            self.stack(name)
        return [v for app in self.apps for v in _variants_of(app, self.stacks, allowed)]

    def stack(self, name: str) -> Stack:
        try:
            return self.stacks[name]
        except KeyError:
            known = ", ".join(self.stacks)
            raise UserError(f"unknown stack {name!r}; known stacks: {known}") from None

    def select(self, patterns: str | None, stacks: Sequence[str] | None = None) -> list[Variant]:
        return select_variants(self.variants(stacks), patterns)


def _variants_of(app: App, stacks: dict[str, Stack], allowed: Sequence[str]) -> Iterable[Variant]:
    decl = app.declaration
    by_name = {e.name: e for e in decl.endpoints}
    flavors: list[tuple[str | None, Flavor]] = [(None, Flavor())] + list(decl.flavors.items())
    for flavor_name, flavor in flavors:
        endpoints = tuple(by_name[n] for n in flavor.endpoints) if flavor.endpoints else tuple(decl.endpoints)
        quick_names = flavor.quick or decl.quick or [endpoints[0].name]
        quick = tuple(e for e in endpoints if e.name in quick_names) or endpoints[:1]
        if decl.requirements is not None:
            stack_list: list[Stack] = [_own_stack(app)]
        else:
            declared = flavor.stacks if flavor.stacks is not None else decl.stacks
            names = [s for s in allowed if declared is None or s in declared]
            stack_list = [stacks[s] for s in names]
        for stack in stack_list:
            yield Variant(
                app=app,
                flavor=flavor_name,
                stack=stack,
                import_string=flavor.app or decl.app,
                endpoints=endpoints,
                quick_endpoints=quick,
                env={**decl.env, **flavor.env},
            )


def _own_stack(app: App) -> Stack:
    path = app.file(app.declaration.requirements or "")
    pins: dict[str, str] = {}
    for line in path.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if not line or line.startswith("-"):
            continue
        match = re.fullmatch(r"([A-Za-z0-9._-]+)(\[[^\]]*\])?\s*==\s*([0-9][0-9A-Za-z.+!-]*)", line)
        if not match:
            raise UserError(f"{path}: {line!r} is not an exact pin (name==version)")
        pins[match.group(1)] = match.group(3)
    return Stack(name=OWN_REQUIREMENTS_STACK, description=f"pinned by {path.name}", pins=pins)


def split_patterns(patterns: str) -> list[str]:
    wanted = [p.strip() for p in patterns.split(",") if p.strip()]
    if not wanted:
        raise UserError("-k: give at least one pattern, e.g. -k 'services@*'")
    return wanted


def matches(variant_id: str, wanted: Sequence[str]) -> bool:
    return any(fnmatch.fnmatchcase(variant_id, p) for p in wanted)


def select_figures(figures: list[Any], patterns: str | None) -> list[Any]:
    """The figures (of any kind) whose variant (`scenario@stack`) a -k pattern matches."""
    if not patterns:
        return figures
    wanted = split_patterns(patterns)
    return [f for f in figures if matches(f.variant, wanted)]


def select_variants(variants: list[Variant], patterns: str | None) -> list[Variant]:
    if not patterns:
        return variants
    wanted = split_patterns(patterns)
    unmatched = [p for p in wanted if not any(fnmatch.fnmatchcase(v.id, p) for v in variants)]
    if unmatched:
        raise UserError(
            f"-k: pattern {', '.join(map(repr, unmatched))} matches no variant "
            "(see `benchwatch list`)"
        )
    return [v for v in variants if matches(v.id, wanted)]


def find_root(start: Path | None = None) -> Path:
    configured = os.environ.get("BENCHWATCH_ROOT")
    if configured:
        root = Path(configured).resolve()
        if not (root / PROJECT_FILE).is_file():
            raise UserError(f"BENCHWATCH_ROOT={configured}: no {PROJECT_FILE} there")
        return root
    here = (start or Path.cwd()).resolve()
    for candidate in (here, *here.parents):
        if (candidate / PROJECT_FILE).is_file():
            return candidate
    raise UserError(f"no {PROJECT_FILE} in {here} or above; run inside a benchwatch project")


def project_defaults(reference: str | None) -> tuple[str | None, tuple[str, ...]]:
    """(reference stack, stack order) of the project around the working directory, for
    commands that also work on files alone (report, site): none when there is no project;
    a project whose declarations are broken is an error, never silently ignored."""
    try:
        root = find_root()
    except UserError:
        return reference, ()
    project = load_project(root)
    return reference or project.reference_stack, tuple(project.stacks)


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(path.read_text())
    except FileNotFoundError:
        raise UserError(f"{path}: file not found") from None
    except tomllib.TOMLDecodeError as exc:
        raise UserError(f"{path}: not valid TOML: {exc}") from None


def _explain(path: Path, exc: ValidationError, prefix: str = "") -> UserError:
    first = exc.errors()[0]
    where = ".".join(str(part) for part in (*([prefix] if prefix else []), *first["loc"]))
    message = first["msg"].removeprefix("Value error, ")
    return UserError(f"{path}: {where or 'top level'}: {message}")


def load_stacks(root: Path) -> dict[str, Stack]:
    path = root / STACKS_FILE
    table = _read_toml(path).get("stacks")
    if not isinstance(table, dict) or not table:
        raise UserError(f"{path}: needs at least one [stacks.<name>] table")
    stacks: dict[str, Stack] = {}
    for name, body in table.items():
        try:
            stacks[name] = Stack(name=name, **body)
        except ValidationError as exc:
            raise _explain(path, exc, f"stacks.{name}") from None
    return stacks


def load_app(directory: Path) -> App:
    path = directory / APP_FILE
    try:
        declaration = AppDeclaration(**_read_toml(path))
    except ValidationError as exc:
        raise _explain(path, exc) from None
    app = App(declaration=declaration, directory=directory.resolve())
    for endpoint in declaration.endpoints:
        for relative in (endpoint.body_file, endpoint.expect.json_file):
            if relative and not app.file(relative).is_file():
                raise UserError(f"{path}: endpoints.{endpoint.name}: file {relative!r} not found")
    if declaration.requirements and not app.file(declaration.requirements).is_file():
        raise UserError(f"{path}: requirements file {declaration.requirements!r} not found")
    return app


def load_project(root: Path | None = None) -> Project:
    root = root or find_root()
    path = root / PROJECT_FILE
    try:
        settings = ProjectSettings(**_read_toml(path).get("benchwatch", {}))
    except ValidationError as exc:
        raise _explain(path, exc, "benchwatch") from None
    stacks = load_stacks(root)
    for name in (settings.default_stacks or []) + [settings.reference_stack or ""]:
        if name and name not in stacks:
            raise UserError(f"{path}: benchwatch: unknown stack {name!r}; known: {', '.join(stacks)}")
    apps: list[App] = []
    for relative in settings.apps:
        directory = root / relative
        if not (directory / APP_FILE).is_file():
            raise UserError(f"{path}: benchwatch.apps: {relative!r} has no {APP_FILE}")
        app = load_app(directory)
        for stack_name in (app.declaration.stacks or []) + [
            s for f in app.declaration.flavors.values() for s in (f.stacks or [])
        ]:
            if stack_name not in stacks:
                raise UserError(f"{directory / APP_FILE}: stacks: unknown stack {stack_name!r}")
        apps.append(app)
    names = [a.name for a in apps]
    if len(set(names)) != len(names):
        raise UserError(f"{path}: two apps share a name: {sorted(names)}")
    return Project(root=root, settings=settings, stacks=stacks, apps=tuple(apps))


def digest(data: Any) -> str:
    return hashlib.sha256(json.dumps(data, sort_keys=True, default=str).encode()).hexdigest()[:12]
