"""uv as benchwatch runs it: which executable, with which environment, and the folder where what
it builds is cached (the stacks' environments, the apps' exported requirements). A leaf: it
imports nothing of benchwatch but its errors and placeholders' runner variables, so config, envs
and own_requirements can all use it."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

from benchwatch.declarations.placeholders import app_environ
from benchwatch.errors import UserError


def cache_dir() -> Path:
    """The environments' folder: `$BENCHWATCH_CACHE/envs`, else `~/.cache/benchwatch/envs`."""
    configured = os.environ.get("BENCHWATCH_CACHE")
    base = Path(configured) if configured else Path.home() / ".cache" / "benchwatch"
    return base / "envs"


def uv_executable() -> str:
    """The uv beside this Python (./bw installs it there), else the one on PATH."""
    beside_python = Path(sys.executable).parent / "uv"
    if beside_python.is_file():
        return str(beside_python)
    found = shutil.which("uv")
    if not found:
        raise UserError("uv not found: install it with `pip install uv` (or run ./bw, which does)")
    return found


def uv_environ(*, may_download: bool = False) -> dict[str, str]:
    """The environment of every uv call. The runner's variables apart (placeholders.RUNNER_PREFIXES,
    as for the servers): uv runs a package's build backend when it builds from source, and none
    may see GITHUB_OUTPUT, GITHUB_ENV or ACTIONS_RUNTIME_TOKEN. And uv never downloads an
    interpreter behind benchwatch's back: `interpreters.choose` names the one to use (but
    `may_download`: `uv python install`, asked for with BENCHWATCH_INSTALL_PYTHON=1)."""
    return {**app_environ(), **({} if may_download else {"UV_PYTHON_DOWNLOADS": "never"})}
