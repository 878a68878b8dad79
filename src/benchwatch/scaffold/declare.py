"""The text of the files init writes: benchwatch.toml and benchwatch-app.toml."""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from benchwatch.scaffold.schema import Operation


def _s(text: str) -> str:
    return json.dumps(text)  # a JSON string is a valid TOML basic string


@dataclass
class Declared:
    """One endpoint init declares: what it answered at init."""

    name: str
    operation: Operation
    content_type: str
    golden: str | None = None  # expected/<name>.json, relative to the app file
    volatile: list[str] = field(default_factory=list)


@dataclass
class AppText:
    name: str
    import_string: str
    root: str  # relative to the app file
    requirements: str | None  # relative to the app file; None: stacks = ["latest"]
    python: str | None
    declared: list[Declared]
    left_out: list[tuple[str, Operation, str]]  # (name, operation, why)
    env_names: list[str]  # read by the app and not given: a commented hint
    migrations: list[str]  # hints like "alembic.ini"
    env: dict[str, str] = field(default_factory=dict)  # init --env KEY=VALUE
    pre_start: list[str] | None = None  # init --migrate


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
        lines.append(f"requirements = {_s(app.requirements)}  # exact pins: its own environment, variant {app.name}@own")
    else:
        lines += [
            "# No requirements file of exact pins was found, so the app runs on benchwatch's `latest` stack",
            "# (FastAPI, Pydantic, uvicorn, ...). Anything else it imports needs your own pinned file:",
            '# requirements = "../requirements.txt"   (instead of `stacks`)',
            'stacks = ["latest"]',
        ]
    if app.python:
        lines.append(f"python = {_s(app.python)}")
    else:
        lines.append('# python = "3.12"   # uv finds or installs it; default: the stack\'s (3.11)')
    lines += ["", "# What init cannot guess: fill in what the app needs before it serves, never left to chance."]
    if app.env:
        given = ", ".join(f"{key} = {_s(value)}" for key, value in app.env.items())
        lines.append(f"env = {{ {given} }}   # settings given to init; {{tmp}}: a fresh temp dir per boot")
    if app.env_names:
        lines.append(f"# The app reads {', '.join(app.env_names)} from its environment: give each a value here")
        lines.append("# (benchwatch passes its own environment through, but a run should not depend on it).")
        example = ", ".join(f"{n} = \"...\"" for n in app.env_names)
        lines.append(f"# env = {{ {example} }}   # {{tmp}}: a fresh temp dir per server boot, e.g. sqlite:///{{tmp}}/app.db")
    elif not app.env:
        lines.append('# env = { DATABASE_URL = "sqlite:///{tmp}/app.db" }   # settings; {tmp}: a fresh temp dir per boot')
    if app.pre_start:
        lines.append("# The migration init ran before the boot, run with the app's Python before each boot:")
        lines.append(f"pre_start = [{', '.join(map(_s, app.pre_start))}]")
    else:
        hint = f" (found {', '.join(app.migrations)})" if app.migrations else ""
        lines.append(f"# A migration or seed command, run with the app's Python before each boot{hint}:")
        lines.append('# pre_start = ["python", "-m", "alembic", "upgrade", "head"]')
    if app.declared:
        lines.append(f"quick = [{_s(app.declared[0].name)}]  # what --quick measures")
    for item in app.declared:
        lines += ["", "[[endpoints]]", f"name = {_s(item.name)}", f"path = {_s(item.operation.path)}"]
        lines.append("[endpoints.expect]")
        if item.content_type != "application/json":
            lines.append(f"content_type = {_s(item.content_type)}")
        if item.golden:
            lines.append(f"json = {_s(item.golden)}  # the body it answered at init")
        if item.volatile:
            lines.append(f"volatile = [{', '.join(map(_s, item.volatile))}]  # differed between two requests at init")
    if not app.declared:
        lines += ["", "# No parameter-free GET answered 200 at init, so nothing is declared yet:",
                  "# fill in at least one of the examples below (a value for each parameter), then run",
                  "# `benchwatch verify`."]  # fmt: skip
    if app.left_out:
        lines += ["", "# Not declared: fill in the parameters or body, uncomment, then `benchwatch verify`."]
        for name, operation, why in app.left_out:
            lines += [
                "#",
                f"# [[endpoints]]   # {operation.method} {operation.path}: {why}",
                f"# name = {_s(name)}",
                f"# method = {_s(operation.method)}",
                f"# path = {_s(operation.path)}",
            ]
            if operation.method in ("POST", "PUT", "PATCH"):
                lines.append("# body = '{\"field\": \"value\"}'\n# content_type = \"application/json\"")
    return "\n".join(lines) + "\n"
