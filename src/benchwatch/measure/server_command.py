"""The server's command line and environment: uvicorn's arguments, the variables it is given (and
which an app may not set), a wrapper's variables on top, a declared string's placeholders resolved."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence

from benchwatch.declarations.placeholders import (
    RUNNER_PREFIXES,
    Context,
    Unresolved,
    app_environ,
    resolve,
)
from benchwatch.environments.envs import Env
from benchwatch.errors import UserError
from benchwatch.measure import inject
from benchwatch.measure.inject import INJECT_ENVS
from benchwatch.measure.ports import HOST
from benchwatch.project.files import APP_FILE
from benchwatch.project.variants import Variant


def uvicorn_command(
    variant: Variant,
    env: Env,
    port: int,
    wrap: Sequence[str] = (),
    keep_alive: float | None = None,
) -> list[str]:
    """The server's command line: uvicorn in the variant's environment on loopback, after the
    wrapper's command when there is one (`valgrind …`, `py-spy record … --`)."""
    return [
        *wrap,
        str(env.python),
        "-m",
        "uvicorn",
        variant.import_string,
        "--host",
        HOST,
        "--port",
        str(port),
        "--no-access-log",
        "--log-level",
        "warning",
        *(["--timeout-keep-alive", str(int(keep_alive))] if keep_alive else []),
    ]


def server_environment(
    variant: Variant, env: Env, context: Context, role: str | None = None
) -> dict:
    """Ours, the runner's apart, then the declared `env` with its placeholders resolved, the
    environment's bin first on PATH, and the app's project importable: PYTHONPATH is its root alone
    (ours is never the app's), as an install of the project would make it (the full-stack
    template's image installs its `app` package, so its pre-start runs `python app/initial_data.py`,
    a script that imports `app`). The environment holds only the project's dependencies, shared by
    every checkout of one lock, so the root of this checkout is given here. The pre-start command,
    the set-up and the counting wrapper get it too."""
    environ = {k: v for k, v in app_environ().items() if k not in INJECT_ENVS}
    environ.update({k: resolved(variant, f"env.{k}", v, context) for k, v in variant.env.items()})
    environ["PATH"] = f"{env.path / 'bin'}{os.pathsep}{environ.get('PATH', '')}"
    environ["VIRTUAL_ENV"] = str(env.path)
    environ["PYTHONPATH"] = str(variant.app.root)
    environ.update(inject.for_side(role).environ())  # TESTING ONLY: measure/inject.py
    return environ


def refused_setting(name: str) -> str | None:
    """Why an app's `env` may not set `name` (benchwatch gives the server that variable itself, or
    never gives it one), or None."""
    if name == "PYTHONPATH":
        return (
            "benchwatch sets PYTHONPATH to the app's root (its import root), so the project imports in every "
            "boot, its pre-start and set-up"
        )
    if name == "VIRTUAL_ENV":
        return "benchwatch sets VIRTUAL_ENV to the app's own environment"
    if name in INJECT_ENVS:
        return f"{name} is a test's injected slowdown, never an app's setting"
    if name.startswith(RUNNER_PREFIXES):
        return f"{', '.join(p + '*' for p in RUNNER_PREFIXES)} belong to the CI runner and never reach an app"
    return None


def with_wrapper(environ: dict, wrap_environ: Mapping[str, str]) -> dict:
    """The server's variables with the wrapper's on top; a wrapper's PYTHONPATH (the counting
    harness) goes first, the app's root stays after it."""
    merged = {**environ, **wrap_environ}
    if "PYTHONPATH" in wrap_environ and environ.get("PYTHONPATH"):
        merged["PYTHONPATH"] = f"{wrap_environ['PYTHONPATH']}{os.pathsep}{environ['PYTHONPATH']}"
    return merged


def resolved(variant: Variant, where: str, text: str, context: Context) -> str:
    """A declared string with its placeholders resolved; a missing variable is bad input (the
    command's check before any boot names it first: measure/preflight.py)."""
    try:
        return resolve(text, context)
    except Unresolved as exc:
        raise UserError(f"{variant.app.directory / APP_FILE}: {where}: {exc}") from None
