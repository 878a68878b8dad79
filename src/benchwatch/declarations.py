"""What a benchwatch.toml, a stacks.toml and a benchwatch-app.toml may say: the validated models."""

from __future__ import annotations

import datetime as dt
import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

_NAME = r"^[a-z0-9][a-z0-9_]*$"
_STACK_NAME = r"^[a-z0-9][a-z0-9._+-]*$"  # "+": attribute's intermediate stacks (v2-pre-rust+fastapi)


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
        """Exact pins, and a run-time stack's exact requirements (`fastapi==0.166.0b1`)."""
        exact = [re.fullmatch(r"([A-Za-z0-9._-]+)(?:\[[^\]]*\])?==([0-9][0-9A-Za-z.+!-]*)", r) for r in self.requires]
        pinned = {normalize_package(m.group(1)): m.group(2) for m in exact if m}
        return {**pinned, **{normalize_package(p): v for p, v in self.pins.items()}}


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
    # the Python the app's environment uses (uv finds or installs it); default: the stack's
    python: str | None = Field(default=None, pattern=r"^3\.\d+$")
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
