"""The stacks a project can use: the ones every installation carries, then its own stacks.toml."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import ValidationError

from benchwatch.declarations.stacks import Stack
from benchwatch.errors import UserError
from benchwatch.project.files import DEFAULT_STACKS_FILE, STACKS_FILE, explain, read_toml


def default_stacks_file() -> Path:
    """The stacks every installation carries: the wheel holds this repository's stacks.toml as
    benchwatch/default_stacks.toml (pyproject's force-include); a source checkout reads it in place."""
    packaged = Path(__file__).parents[1] / DEFAULT_STACKS_FILE
    return packaged if packaged.is_file() else Path(__file__).resolve().parents[3] / STACKS_FILE


def load_stacks(root: Path) -> dict[str, Stack]:
    """The default stacks, then the repository's optional stacks.toml: it adds or overrides stacks.
    A stack that `extends` another takes its pins (and dates) and says only what differs, its
    Python most often: `[stacks.latest-py313]` follows every bump of `latest`."""
    tables = _stack_tables(default_stacks_file())
    own = root / STACKS_FILE
    if own.is_file() and own.resolve() != default_stacks_file().resolve():
        tables.update(_stack_tables(own))
    stacks: dict[str, Stack] = {}
    for name, (path, _) in tables.items():
        merged = _extended(name, tables)
        try:
            stacks[name] = Stack(name=name, **merged)
        except ValidationError as exc:
            raise explain(path, exc, f"stacks.{name}") from None
    return stacks


def _stack_tables(path: Path) -> dict[str, tuple[Path, dict[str, Any]]]:
    table = read_toml(path).get("stacks")
    if not isinstance(table, dict) or not table:
        raise UserError(f"{path}: needs at least one [stacks.<name>] table")
    for name, body in table.items():
        if not isinstance(body, dict):
            raise UserError(f"{path}: stacks.{name}: write it as a [stacks.{name}] table")
    return {name: (path, body) for name, body in table.items()}


_INHERITED = ("pins", "exclude_newer", "resolved_at_run_time", "requires", "python")


def _extended(name: str, tables: dict[str, tuple[Path, dict[str, Any]]]) -> dict[str, Any]:
    """A stack's table with what it `extends` filled in (one level: the base is a plain stack)."""
    path, body = tables[name]
    base_name = body.get("extends")
    if base_name is None:
        return body
    if base_name not in tables:
        raise UserError(
            f"{path}: stacks.{name}: extends unknown stack {base_name!r}; known: {', '.join(tables)}"
        )
    base = tables[base_name][1]
    if "extends" in base:
        raise UserError(
            f"{path}: stacks.{name}: extends {base_name!r}, which extends another stack: name a plain one"
        )
    return {**{key: base[key] for key in _INHERITED if key in base}, **body}
