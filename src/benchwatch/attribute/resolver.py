"""Ask uv whether a stack resolves, without installing it (`uv pip compile`)."""

from __future__ import annotations

import subprocess

from benchwatch.declarations.stacks import Stack
from benchwatch.environments.envs import resolution_flags
from benchwatch.environments.uv_tool import uv_environ, uv_executable


def try_resolve(stack: Stack) -> str | None:
    """None when the stack's requirements resolve for its Python; else uv's error text."""
    argv = [
        uv_executable(),
        "pip",
        "compile",
        "-",
        "--quiet",
        "--no-header",
        "--python-version",
        stack.python,
    ]
    argv += resolution_flags(stack)  # as the environment would be built
    try:
        done = subprocess.run(
            argv,
            input="\n".join(stack.requirements()) + "\n",
            capture_output=True,
            text=True,
            timeout=300,
            env=uv_environ(),
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"uv pip compile did not run: {exc}"
    return (
        None
        if done.returncode == 0
        else (done.stderr.strip() or f"uv exited with {done.returncode}")
    )
