"""What an app's set-up may say: the requests and the seed command run after every boot."""

from __future__ import annotations

import re

from pydantic import Field, field_validator, model_validator

from benchwatch.declarations.requests import RequestParts
from benchwatch.declarations.strict import NAME, Strict


class _StepName(Strict):
    name: str = Field(pattern=NAME, description="names the step in problems")


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


class Setup(Strict):
    """What runs after every boot (after `pre_start`) and before anything is verified or measured,
    the same on both sides of a compare: requests (a login), then a seed command (or first, with
    `command_first`). Their values fill `{setup.NAME}` in the endpoints. A data volume is declared
    here too: a command that writes N rows, N in its argv (posts_pg: `["python", "-m",
    "apps.posts.volume", "100000"]`), so both sides measure tables where an index matters."""

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
