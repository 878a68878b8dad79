"""Placeholders in a declaration's strings: their forms, and their values at one moment.

The forms (nothing else is one: a JSON body's own braces are text):

    ${NAME}             an environment variable of the process running benchwatch, read at run
                        time; secrets live only there (the shell; on GitHub, the `app-env` secret
                        that scripts/app_env.sh exports: docs/github.md)
    {tmp}               a fresh directory per server boot
    {unique}            a fresh value for every request sent: 32 lowercase hex digits (a random
                        UUID's), the same length every time, so a request's size and its counts
                        per request stay comparable (`u{unique}@example.com` for an e-mail that
                        must not exist yet). Every sender benchwatch controls resolves it per
                        request (verify, the set-up, the counting client, init's probes); oha
                        sends one fixed request, so an endpoint whose request holds it is counted
                        only, never timed, and `quick` may not name it
    {setup.NAME}        a value the app's set-up produced for this boot
    {database_url}, {database_host}, {database_port}, {database_name}, {database_user},
    {database_password}  the boot's own PostgreSQL database (`database = "postgresql"`)

Escapes: `$${` is the text `${`; a brace form written with doubled braces (`{{tmp}}`,
`{{setup.token}}`, `{{database_url}}`, `{{unique}}`) is that text with single braces.

A value read from `${NAME}` is remembered as a secret and kept out of every file and line
benchwatch writes (redaction). A golden body is kept with its strings escaped and its secrets as
`${NAME}` (`as_references`), and resolved again when compared.
"""

from __future__ import annotations

import os
import re
import uuid
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from benchwatch.declarations.redaction import redact, remember

DATABASE_PARTS = ("url", "host", "port", "name", "user", "password")
ENV_NAME = r"[A-Za-z_][A-Za-z0-9_]*"
SETUP_NAME = r"[A-Za-z_][A-Za-z0-9_]*"

_TOKEN = re.compile(
    r"(?P<dollar>\$\$\{)"
    r"|\{\{(?P<escaped>tmp|unique|setup\.[^{}]*|database_[a-z_]*)\}\}"
    r"|\$\{(?P<env>[^{}]*)\}"
    r"|\{(?P<brace>tmp|unique|setup\.[^{}]*|database_[a-z_]*)\}"
    r"|(?P<open>\$\{)"
)

Kind = Literal["env", "tmp", "unique", "setup", "database"]
UNIQUE = "{unique}"
UNIQUE_LENGTH = 32


class PlaceholderError(ValueError):
    """A string that holds something shaped like a placeholder that is none."""


@dataclass(frozen=True)
class Ref:
    kind: Kind
    name: str = ""

    @property
    def text(self) -> str:
        if self.kind == "env":
            return "${" + self.name + "}"
        if self.kind in ("tmp", "unique"):
            return "{" + self.kind + "}"
        return (
            "{" + (f"setup.{self.name}" if self.kind == "setup" else f"database_{self.name}") + "}"
        )


def _ref(match: re.Match[str]) -> Ref | None:
    """The placeholder a token is, None for an escape; PlaceholderError for a malformed one."""
    if match.group("dollar") is not None or match.group("escaped") is not None:
        return None
    if match.group("open") is not None:
        raise PlaceholderError("`${` without its closing `}` (write `$${` for the text `${`)")
    env = match.group("env")
    if env is not None:
        if not re.fullmatch(ENV_NAME, env):
            raise PlaceholderError(
                f"`${{{env}}}` is not a placeholder: an environment variable's name is "
                "letters, digits and `_` (write `$${` for the text `${`)"
            )
        return Ref("env", env)
    brace = match.group("brace")
    if brace == "tmp":
        return Ref("tmp")
    if brace == "unique":
        return Ref("unique")
    if brace.startswith("setup."):
        name = brace.removeprefix("setup.")
        if not re.fullmatch(SETUP_NAME, name):
            raise PlaceholderError(
                f"`{{{brace}}}` is not a placeholder: a set-up value's name is letters, digits and `_`"
            )
        return Ref("setup", name)
    part = brace.removeprefix("database_")
    if part not in DATABASE_PARTS:
        known = ", ".join(f"{{database_{p}}}" for p in DATABASE_PARTS)
        raise PlaceholderError(f"`{{{brace}}}` is not a placeholder; the database's are {known}")
    return Ref("database", part)


def refs(text: str) -> list[Ref]:
    """The placeholders in `text`, in order; PlaceholderError names a malformed one."""
    found = []
    for match in _TOKEN.finditer(text):
        ref = _ref(match)
        if ref is not None:
            found.append(ref)
    return found


# what a CI runner gives benchwatch's own process and an app must never get, neither in its
# environment nor through a `${NAME}`: on GitHub, GITHUB_OUTPUT / GITHUB_ENV (files that set the
# job's outputs and later steps' environment), ACTIONS_RUNTIME_TOKEN (artifacts, caches),
# RUNNER_TEMP. A pull request's app code runs as our server; scripts/app_env.sh refuses these
# names in the workflows' app-env secret for the same reason.
RUNNER_PREFIXES = ("GITHUB_", "ACTIONS_", "RUNNER_")


def without_runner(environ: Mapping[str, str]) -> dict[str, str]:
    return {k: v for k, v in environ.items() if not k.startswith(RUNNER_PREFIXES)}


def app_environ() -> dict[str, str]:
    """The environment `${NAME}` is resolved from, and a server inherits: ours, the runner's apart."""
    return without_runner(os.environ)


@dataclass(frozen=True)
class Context:
    """What placeholders resolve to at one moment of one boot."""

    environ: Mapping[str, str] = field(
        default_factory=app_environ, repr=False
    )  # secrets: never printed
    tmp: str | None = None
    setup: Mapping[str, str] = field(default_factory=dict)
    database: Mapping[str, str] | None = None  # DATABASE_PARTS -> value

    def with_setup(self, values: Mapping[str, str]) -> Context:
        return replace(self, setup={**self.setup, **values})


class Unresolved(Exception):
    """A placeholder with no value here: a variable not set, a set-up value not given."""

    def __init__(self, ref: Ref, why: str) -> None:
        super().__init__(f"{ref.text} {why}")
        self.ref = ref
        self.why = why


def value_of(ref: Ref, context: Context) -> str:
    if ref.kind == "env":
        value = context.environ.get(ref.name)
        if value is None:
            raise Unresolved(ref, "is not set in the environment")
        remember(ref.name, value)
        return value
    if ref.kind == "tmp":
        if context.tmp is None:
            raise Unresolved(ref, "has no value here (only a server's boot has a fresh directory)")
        return context.tmp
    if ref.kind == "unique":
        return uuid.uuid4().hex  # fresh at every resolution: every request sent resolves its own
    if ref.kind == "setup":
        if ref.name not in context.setup:
            given = ", ".join(sorted(context.setup)) or "none"
            raise Unresolved(ref, f"was not given by the set-up (it gave: {given})")
        return context.setup[ref.name]
    if context.database is None:
        raise Unresolved(ref, 'has no value: the app declares no `database = "postgresql"`')
    return context.database[ref.name]


def resolve(text: str, context: Context, encode: Callable[[str], str] | None = None) -> str:
    """`text` with every placeholder replaced by its value (passed through `encode`, e.g. URL
    quoting, when given) and every escape by its text; Unresolved when a value is missing."""

    def one(match: re.Match[str]) -> str:
        if match.group("dollar") is not None:
            return "${"
        if match.group("escaped") is not None:
            return "{" + match.group("escaped") + "}"
        ref = _ref(match)
        assert ref is not None
        value = value_of(ref, context)
        return encode(value) if encode else value

    return _TOKEN.sub(one, text)


def resolve_tree(value: Any, context: Context) -> Any:
    """A JSON value with every string in it resolved (keys are left as written)."""
    if isinstance(value, str):
        return resolve(value, context)
    if isinstance(value, dict):
        return {k: resolve_tree(v, context) for k, v in value.items()}
    if isinstance(value, list):
        return [resolve_tree(v, context) for v in value]
    return value


def strings_in(value: Any, where: str) -> Iterator[tuple[str, str]]:
    """(where, text) of every string in a JSON/TOML value: `where.key`, `where[0]`."""
    if isinstance(value, str):
        yield where, value
    elif isinstance(value, dict):
        for key, inner in value.items():
            yield from strings_in(inner, f"{where}.{key}")
    elif isinstance(value, list):
        for index, inner in enumerate(value):
            yield from strings_in(inner, f"{where}[{index}]")


_LITERAL = re.compile(r"\$\{|\{(?:tmp|unique|setup\.[^{}]*|database_[a-z_]*)\}")


def escape(text: str) -> str:
    """`text` written so that `resolve` gives it back as it is: `${` as `$${`, `{tmp}` as `{{tmp}}`."""
    return _LITERAL.sub(lambda m: "$${" if m.group(0) == "${" else "{" + m.group(0) + "}", text)


def as_references(value: Any) -> Any:
    """A JSON value to keep in a file (a golden body): every string escaped, then every remembered
    secret in it written as its `${NAME}`; `resolve_tree` with the current context gives the value
    back, with this run's secrets. Keys are kept as they are."""
    if isinstance(value, str):
        return redact(escape(value))
    if isinstance(value, dict):
        return {k: as_references(v) for k, v in value.items()}
    if isinstance(value, list):
        return [as_references(v) for v in value]
    return value
