"""The project's files: their names, the repository root that holds benchwatch.toml, reading one
and naming the key a validation error is at."""

from __future__ import annotations

import os
import tomllib
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from benchwatch.declarations.apps import DeclarationError
from benchwatch.errors import UserError

PROJECT_FILE = "benchwatch.toml"
STACKS_FILE = "stacks.toml"
DEFAULT_STACKS_FILE = "default_stacks.toml"
APP_FILE = "benchwatch-app.toml"


def find_root(start: Path | None = None) -> Path:
    configured = os.environ.get("BENCHWATCH_ROOT")
    if configured:
        root = Path(configured).resolve()
        if not (root / PROJECT_FILE).is_file():
            raise UserError(f"BENCHWATCH_ROOT={configured}: no {PROJECT_FILE} there")
        return root
    here = (start or Path.cwd()).resolve()
    for candidate in (here, *here.parents):
        if (candidate / PROJECT_FILE).is_file():
            return candidate
    raise UserError(f"no {PROJECT_FILE} in {here} or above; run inside a benchwatch project")


def read_toml(path: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(path.read_text())
    except FileNotFoundError:
        raise UserError(f"{path}: file not found") from None
    except tomllib.TOMLDecodeError as exc:
        raise UserError(f"{path}: not valid TOML: {exc}") from None


def explain(path: Path, exc: ValidationError, prefix: str = "") -> UserError:
    first = exc.errors()[0]
    where = ".".join(str(part) for part in (*([prefix] if prefix else []), *first["loc"]))
    message = first["msg"].removeprefix("Value error, ")
    keyed = (first.get("ctx") or {}).get("error")
    if isinstance(keyed, DeclarationError):  # a check over the whole file names its key itself
        where = ".".join(part for part in (where, keyed.where) if part)
        message = keyed.message
    return UserError(f"{path}: {where or 'top level'}: {message}")
