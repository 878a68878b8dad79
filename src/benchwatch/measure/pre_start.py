"""The app's declared pre-start command (migrations, initial data), run before its server boots."""

from __future__ import annotations

import subprocess
from pathlib import Path

from benchwatch.declarations.placeholders import Context
from benchwatch.measure.server import BootError
from benchwatch.measure.server_command import resolved
from benchwatch.measure.stopping import stop
from benchwatch.project.variants import Variant

PRE_START_TIMEOUT_S = 300


def run_pre_start(variant: Variant, environ: dict, root: Path, context: Context) -> None:
    """The declared command, in a process group of its own: a script's children (`bash
    scripts/prestart.sh` runs python) are stopped with it when it runs too long or is interrupted."""
    declared = variant.app.declaration.pre_start or []
    argv = [resolved(variant, f"pre_start[{i}]", arg, context) for i, arg in enumerate(declared)]
    try:
        process = subprocess.Popen(
            argv,
            cwd=root,
            env=environ,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
            text=True,
            start_new_session=True,
        )
    except OSError as exc:
        raise BootError(variant.id, f"pre_start {declared[0]!r} failed: {exc}") from None
    try:
        out, err = process.communicate(timeout=PRE_START_TIMEOUT_S)
    except subprocess.TimeoutExpired:  # what it said so far: a step waiting for a database says why
        stop(process, grace=2.0)
        out, err = process.communicate()
        raise BootError(
            variant.id,
            f"pre_start still running after {PRE_START_TIMEOUT_S} s",
            _tail(err) or _tail(out),
        ) from None
    except BaseException:
        stop(process, grace=2.0)
        raise
    if process.returncode != 0:
        raise BootError(
            variant.id, f"pre_start exited with {process.returncode}", _tail(err) or _tail(out)
        )


def _tail(output: str | bytes | None, lines: int = 12) -> str:
    text = output.decode(errors="replace") if isinstance(output, bytes) else (output or "")
    return "\n".join(text.strip().splitlines()[-lines:])
