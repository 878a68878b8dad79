"""What a stacks.toml may say: a stack, one exactly pinned dependency set."""

from __future__ import annotations

import datetime as dt
import re

from pydantic import Field, field_validator, model_validator

from benchwatch.declarations.pins import exact_pin
from benchwatch.declarations.strict import Strict

_STACK_NAME = (
    r"^[a-z0-9][a-z0-9._+-]*$"  # "+": attribute's intermediate stacks (v2-pre-rust+fastapi)
)


def normalize_package(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


class Stack(Strict):
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
            if not exact_pin(f"{package}=={version}"):
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
        exact = [pin for pin in map(exact_pin, self.requires) if pin]
        pinned = {normalize_package(name): version for name, version in exact}
        return {**pinned, **{normalize_package(p): v for p, v in self.pins.items()}}
