"""What every command that boots servers checks before the first boot (and before it writes
anything): each `${NAME}` its variants use is set, and a database cluster can be had for the apps
that declare one. One `ERROR:` line naming the file and key, exit 3."""

from __future__ import annotations

from collections.abc import Iterable

from benchwatch.config import APP_FILE, Variant
from benchwatch.declarations import declared_strings
from benchwatch.errors import UserError
from benchwatch.measure.server import refused_setting
from benchwatch.placeholders import app_environ, refs, remember


def check(variants: Iterable[Variant]) -> None:
    seen: set[tuple] = set()
    databases: list[Variant] = []
    environ = app_environ()  # a runner's GITHUB_*, ACTIONS_*, RUNNER_* are never an app's
    for variant in variants:
        key = (variant.app.directory, variant.flavor, tuple(e.name for e in variant.endpoints))
        if key in seen:
            continue
        seen.add(key)
        path = variant.app.directory / APP_FILE
        for name in variant.env:  # a variable benchwatch gives the server itself is not an app's setting
            refused = refused_setting(name)
            if refused:
                raise UserError(f"{path}: env.{name}: {refused}; remove it")
        for where, text in declared_strings(variant.app.declaration, list(variant.endpoints), variant.flavor):
            for ref in refs(text):
                if ref.kind != "env":
                    continue
                value = environ.get(ref.name)
                if value is None:
                    raise UserError(f"{path}: {where}: {ref.text} is not set in the environment")
                remember(ref.name, value)
        if variant.app.declaration.database is not None:
            databases.append(variant)
    if databases:
        from benchwatch.measure import database

        database.require(f'{databases[0].app.directory / APP_FILE}: database = "postgresql"')
