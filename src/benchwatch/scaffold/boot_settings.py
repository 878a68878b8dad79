"""What init's boots of the app run with, from init's options and the app's folder: the `env`
(`--env` values as `${NAME}` references, a PostgreSQL URL as the per-boot database's), what runs
before each boot (`--pre-start`, `--migrate`), and the app's own pinned requirements."""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from benchwatch.declarations.pins import exact_pin
from benchwatch.errors import UserError
from benchwatch.scaffold import discover
from benchwatch.scaffold.layout import Layout

REQUIREMENTS = ("requirements.txt", "requirements/base.txt", "requirements/prod.txt")
MIGRATION_CONFIG = "alembic.ini"
MIGRATE = ["python", "-m", "alembic", "upgrade", "head"]
_ENV_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_POSTGRES_URL = re.compile(r"^postgres(?:ql)?(\+\w+)?://")


def parse_env(pairs: list[str], option: str = "--env") -> dict[str, str]:
    """`--env KEY=VALUE` (repeatable) as a dict; a malformed one is bad input."""
    settings: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not _ENV_KEY.fullmatch(key):
            raise UserError(
                f"{option} {pair!r}: give KEY=VALUE, KEY a variable name (e.g. DATABASE_URL=postgresql://...)"
            )
        settings[key] = value
    _refuse_what_the_server_sets(settings)
    return settings


def _refuse_what_the_server_sets(settings: dict[str, str]) -> None:
    """A KEY the server's environment takes over (PYTHONPATH, a runner's GITHUB_*) would never
    reach the app: bad input, said with why, rather than dropped."""
    from benchwatch.measure.server_command import refused_setting

    for key in settings:
        refused = refused_setting(key)
        if refused:
            raise UserError(f"--env {key}: {refused}; leave it out")


@contextmanager
def env_references(
    env: dict[str, str], literal: dict[str, str]
) -> Iterator[tuple[dict[str, str], list[str]]]:
    """The declaration's `env`: each `--env KEY=VALUE` as `KEY = "${KEY}"`, read from the
    environment on every later run (a value may be a secret: nothing of it is committed), VALUE
    in init's own environment while it boots the app; one that holds a placeholder (`{database_host}`,
    `${APP_SECRET_KEY}`), or is empty, stays as it is, as does every `--env-literal` one.
    Yields (the env, the names written as references)."""
    from benchwatch.declarations.placeholders import PlaceholderError, refs

    def placeholder(value: str) -> bool:
        try:
            return bool(refs(value))
        except PlaceholderError:
            return True  # written as given: the declaration's check names what is wrong

    given = {
        k: v for k, v in env.items() if v and not placeholder(v) and not _POSTGRES_URL.match(v)
    }
    before = {k: os.environ.get(k) for k in given}
    os.environ.update(given)
    try:
        yield {**env, **{k: "${" + k + "}" for k in given}, **literal}, sorted(given)
    finally:
        for key, value in before.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def per_boot_database(
    env: dict[str, str], say: Callable[[str], None]
) -> tuple[dict[str, str], str]:
    """`database = "postgresql"` when a setting names the boot's database (`{database_url}`, …) or
    points at a PostgreSQL server: such a URL becomes the per-boot database's (`{database_url}`
    with its driver kept), so nothing of a local server (a password, a port) is committed and CI
    can start its own."""
    database = ""
    for key, value in env.items():
        if "{database_" in value:
            database = "postgresql"
        match = _POSTGRES_URL.match(value)
        if match:
            driver = match.group(1) or ""
            env[key] = (
                "{database_url}"
                if not driver
                else f"postgresql{driver}://{{database_user}}:{{database_password}}@{{database_host}}:"
                "{database_port}/{database_name}"
            )
            say(
                f"init: {key} points at a PostgreSQL server: every boot gets a fresh database of its own instead "
                f'(database = "postgresql", {key} = "{env[key]}")'
            )
            database = "postgresql"
    return env, database


def pre_start_command(
    where: Layout, found: discover.FoundApp, migrate: bool, given: str | None
) -> list[str] | None:
    """What runs before each boot: `--pre-start "bash scripts/prestart.sh"` as given, or
    `alembic upgrade head` (`--migrate`) when alembic.ini sits where the app runs."""
    if given is not None:
        try:
            argv = shlex.split(given)
        except ValueError as exc:
            raise UserError(f"--pre-start {given!r}: {exc}") from None
        if not argv or migrate:
            raise UserError(
                "--pre-start: give one command (with its arguments), or --migrate, not both"
            )
        return argv
    if not migrate:
        return None
    if not (where.folder / found.import_root / MIGRATION_CONFIG).is_file():
        raise UserError(
            f"--migrate: no {MIGRATION_CONFIG} in {where.folder / found.import_root}, where the app "
            "runs; give pre_start in its benchwatch-app.toml instead"
        )
    return MIGRATE


def pinned_requirements(where: Layout, say: Callable[[str], None]) -> str | None:
    """The app's own pins, relative to the app file: its `uv.lock` (beside its pyproject.toml),
    else the first requirements file whose every line is an exact pin (name==version, a marker
    may follow), in the app folder, then at the repository root; a file with a line that is not
    is named, with the line, and the app runs on the `latest` stack."""
    for base in dict.fromkeys((where.folder, where.root)):
        if (base / "uv.lock").is_file() and (base / "pyproject.toml").is_file():
            return where.from_app_dir(base / "uv.lock")
        for relative in REQUIREMENTS:
            path = base / relative
            if not path.is_file():
                continue
            lines = [ln.split("#", 1)[0].strip() for ln in path.read_text().splitlines()]
            lines = [ln for ln in lines if ln and not ln.startswith("-")]
            loose = [ln for ln in lines if not exact_pin(ln.partition(";")[0].strip())]
            shown = path.relative_to(where.root)
            if lines and not loose:
                return where.from_app_dir(path)
            if loose:
                say(
                    f"init: {shown}: {loose[0]!r} is not an exact pin (name==version), so the app runs on "
                    "the `latest` stack; pin every line and set requirements = ... to use the file"
                )
    return None
