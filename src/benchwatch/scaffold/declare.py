"""The text of the files init writes: benchwatch.toml and benchwatch-app.toml."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

from benchwatch.declarations.apps import Endpoint, SetupRequest
from benchwatch.scaffold.declared_requests import LOGIN_WHY, PASSWORD_VAR, USER_VAR, Candidate


def _s(text: str) -> str:
    return json.dumps(text)  # a JSON string is a valid TOML basic string


@dataclass
class AppText:
    name: str
    import_string: str
    root: str  # relative to the app file
    requirements: str | None  # relative to the app file; None: stacks = ["latest"]
    python: str | None
    declared: list[Candidate]
    left_out: list[Candidate]
    env_names: list[str]  # read by the app and not given: a commented hint
    migrations: list[str]  # hints like "alembic.ini"
    env: dict[str, str] = field(default_factory=dict)  # init --env KEY=VALUE
    pre_start: list[str] | None = None  # init --migrate, --pre-start
    database: str = ""  # "postgresql": a fresh database per boot
    login: SetupRequest | None = None  # the schema's OAuth2 password flow
    setup: list[SetupRequest] = field(default_factory=list)  # what the declared endpoints need
    quick: list[str] = field(default_factory=list)
    why_quick: str = ""
    schema_path: str = "/openapi.json"


def project_text(app_dir: str) -> str:
    """benchwatch.toml at the repository root; `app_dir` is the app's declaration folder relative
    to it (another app's `init` adds its own)."""
    lines = [
        "# Written by `benchwatch init`: the apps this repository benchmarks (each folder holds a",
        "# benchwatch-app.toml). The default stacks ship with benchwatch (`benchwatch stacks`); a",
        "# stacks.toml next to this file adds stacks or overrides them by name.",
        "[benchwatch]",
        f"apps = [{_s(app_dir)}]",
        'default_stacks = ["latest"]',
    ]
    return "\n".join(lines) + "\n"


def app_text(app: AppText) -> str:
    lines = [
        f"# Written by `benchwatch init` from the OpenAPI schema of {app.import_string}.",
        "# Every key is described in benchwatch's docs/CONTRACTS.md; `benchwatch verify` checks it.",
        f"name = {_s(app.name)}",
        f"root = {_s(app.root)}  # import root and working directory, relative to this file",
        f"app = {_s(app.import_string)}",
    ]
    if app.requirements:
        lines.append(
            f"requirements = {_s(app.requirements)}  # exact pins: its own environment, variant {app.name}@own"
        )
    else:
        lines += [
            "# No requirements file of exact pins was found, so the app runs on benchwatch's `latest` stack",
            "# (FastAPI, Pydantic, uvicorn, ...). Anything else it imports needs your own pinned file:",
            '# requirements = "../requirements.txt"   (instead of `stacks`)',
            'stacks = ["latest"]',
        ]
    if app.python:
        lines.append(f"python = {_s(app.python)}")
    elif app.requirements:
        lines.append(
            '# python = "3.12"   # default: .python-version, else the lowest installed CPython requires-python allows'
        )
    else:
        lines.append('# python = "3.12"   # uv finds or installs it; default: the stack\'s (3.11)')
    lines += [
        "",
        "# What init cannot guess: fill in what the app needs before it serves, never left to chance.",
    ]
    if app.env:
        given = ", ".join(f"{key} = {_s(value)}" for key, value in app.env.items())
        lines.append(
            f"env = {{ {given} }}   # settings given to init; {{tmp}}: a fresh temp dir per boot"
        )
    if app.env_names:
        lines.append(
            f"# The app reads {', '.join(app.env_names)} from its environment: give each a value here"
        )
        lines.append(
            "# (benchwatch passes its own environment through, but a run should not depend on it)."
        )
        example = ", ".join(f'{n} = "..."' for n in app.env_names)
        lines.append(
            f"# env = {{ {example} }}   # {{tmp}}: a fresh temp dir per server boot, e.g. sqlite:///{{tmp}}/app.db"
        )
    elif not app.env:
        lines.append(
            '# env = { DATABASE_URL = "sqlite:///{tmp}/app.db" }   # settings; {tmp}: a fresh temp dir per boot'
        )
    if app.pre_start:
        lines.append(
            "# The migration init ran before the boot, run with the app's Python before each boot:"
        )
        lines.append(f"pre_start = [{', '.join(map(_s, app.pre_start))}]")
    else:
        hint = f" (found {', '.join(app.migrations)})" if app.migrations else ""
        lines.append(
            f"# A migration or seed command, run with the app's Python before each boot{hint}:"
        )
        lines.append('# pre_start = ["python", "-m", "alembic", "upgrade", "head"]')
    if app.database:
        lines.append(
            f"database = {_s(app.database)}  # a fresh, empty database for every boot: {{database_url}}, ..."
        )
    if app.schema_path != "/openapi.json":
        lines.append(
            f"ready_path = {_s(app.schema_path)}  # the app's openapi_url: answers once the app is up"
        )
    if app.quick:
        lines.append(
            f"quick = [{', '.join(map(_s, app.quick))}]  # --quick (a PR) load-tests {app.why_quick}; "
            "every endpoint is counted"
        )
    lines += _setup_lines(app)
    for item in app.declared:
        assert item.endpoint is not None
        lines += ["", "[[endpoints]]"]
        if item.unique:
            lines.append(
                f"# {', '.join(item.unique)}: {{unique}}, fresh per request (the app refused a repeated one "
                "at init); counted, not load-tested"
            )
        lines += [*_request_lines(item.endpoint, with_name=True), "[endpoints.expect]"]
        expect = item.endpoint.expect
        if expect.status != 200:
            lines.append(f"status = {expect.status}")
        if expect.content_type != "application/json":
            lines.append(f"content_type = {_s(expect.content_type)}")
        if expect.json_file:
            lines.append(f"json = {_s(expect.json_file)}  # the body it answered at init")
        if expect.volatile:
            lines.append(
                f"volatile = [{', '.join(map(_s, expect.volatile))}]  # differed between requests or boots at init"
            )
    if not app.declared:
        lines += [
            "",
            "# No endpoint answered 2xx at init, so nothing is declared yet:",
            "# fill in at least one of the examples below (a value for each parameter), then run",
            "# `benchwatch verify`.",
        ]
    if app.left_out:
        lines += [
            "",
            "# Not declared: fill in what each needs, uncomment, then `benchwatch verify`.",
        ]
        for item in app.left_out:
            operation = item.operation
            lines += ["#", f"# [[endpoints]]   # {operation.method} {operation.path}: {item.why}"]
            if (
                item.endpoint is not None and item.param is None
            ):  # the request init sent: its values filled in
                lines += [f"# {line}" for line in _request_lines(item.endpoint, with_name=True)]
                continue
            lines += [
                f"# name = {_s(item.name)}",
                f"# method = {_s(operation.method)}",
                f"# path = {_s(operation.path)}",
            ]
            if operation.path_params:
                given = ", ".join(f'{p} = "..."' for p in operation.path_params)
                lines.append(f"# path_params = {{ {given} }}")
            if operation.auth:
                lines.append('# headers = { Authorization = "Bearer {setup.token}" }')
            if (
                operation.method in ("POST", "PUT", "PATCH")
                and operation.body is not None
                and item.why != LOGIN_WHY
            ):
                lines.append('# json = { field = "value" }')
    return "\n".join(lines) + "\n"


def _setup_lines(app: AppText) -> list[str]:
    """The [setup]: the login and the requests whose ids the endpoints use; the login commented
    out when nothing declared needs it (the credentials were not set at init)."""
    if app.setup:
        lines = [
            "",
            f"# After every boot, before anything is measured: the login ({USER_VAR} and {PASSWORD_VAR} are",
            "# read from the environment: on GitHub, lines of the BENCHWATCH_APP_ENV secret), then the",
            "# records the endpoints read (their ids fill path parameters; an empty list gets one).",
            "[setup]",
        ]
        for request in app.setup:
            lines += ["", "[[setup.requests]]", *_request_lines(request, with_name=True)]
            if request.save:
                lines.append(f"save = {_toml(request.save)}")
        return lines
    if app.login is None:
        return []
    lines = [
        "",
        f"# The schema has an OAuth2 password login. Set {USER_VAR} and {PASSWORD_VAR} (a user of the",
        "# app) and run init again to declare the endpoints behind it, or uncomment:",
        "# [setup]",
        "# [[setup.requests]]",
    ]
    lines += [f"# {line}" for line in _request_lines(app.login, with_name=True)]
    lines.append(f"# save = {_toml(app.login.save)}")
    return lines


def _request_lines(request: Endpoint | SetupRequest, *, with_name: bool) -> list[str]:
    lines = [f"name = {_s(request.name)}"] if with_name else []
    if request.method != "GET":
        lines.append(f"method = {_s(request.method)}")
    lines.append(f"path = {_s(request.path)}")
    for key in ("path_params", "headers", "form"):
        value = getattr(request, key)
        if value:
            lines.append(f"{key} = {_toml(value)}")
    if request.has_json:
        lines.append(
            f"json = {_toml(request.json_body)}  # from the schema: its examples, else made from its types"
        )
    return lines


def _toml(value: object) -> str:
    """A TOML inline value (JSON's null has no TOML form: such keys are left out)."""
    if isinstance(value, dict):
        items = [f"{_key(k)} = {_toml(v)}" for k, v in value.items() if v is not None]
        return "{ " + ", ".join(items) + " }" if items else "{}"
    if isinstance(value, list):
        return "[" + ", ".join(_toml(v) for v in value if v is not None) + "]"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return json.dumps(value)
    return _s(str(value))


def _key(key: str) -> str:
    return key if re.fullmatch(r"[A-Za-z0-9_-]+", key) else _s(key)
