"""Why init's boot or its login failed, read from what the app said, when the cause is one init can
name: a database the app could not reach, a login that no step before the boot creates; and init's
error when a boot, its login or every request failed, naming that cause."""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchwatch.declarations.apps import AppDeclaration
from benchwatch.errors import UserError
from benchwatch.scaffold.boot_settings import MIGRATE, MIGRATION_CONFIG
from benchwatch.scaffold.declared_requests import PASSWORD_VAR, USER_VAR
from benchwatch.scaffold.discover import SKIPPED_FOLDERS
from benchwatch.scaffold.layout import Layout
from benchwatch.scaffold.probe import Answer, show_tail

DATABASE_HINT = (
    "give the app a fresh database per boot: --env settings naming {database_host}, {database_port}, "
    "{database_user}, {database_password}, {database_name}, or a postgresql:// URL (docs/init.md)"
)
# libpq (psycopg 3, psycopg2 since PostgreSQL 14): `connection to server at "localhost" (::1), port 5432
# failed: Connection refused`; older libpq: `could not connect to server: Connection refused` then
# `Is the server running on host "localhost" (127.0.0.1) and accepting TCP/IP connections on port 5432?`;
# asyncpg: `ConnectionRefusedError: [Errno 111] Connect call failed ('127.0.0.1', 5432)`
# a host or port that came from a `${NAME}` is redacted to it in what the server said
_PORT = r"(\d+|\$\{[A-Za-z_]\w*\})"
_AT_HOST = re.compile(
    r'connection to server at "([^"]+)"(?: \([^)]*\))?, port ' + _PORT + r" failed: ([^\n]+)"
)
_OLD_LIBPQ = re.compile(
    r'could not connect to server: ([^\n]+)\s+Is the server running on host "([^"]+)".*?port '
    + _PORT,
    re.S,
)
_ASYNCPG = re.compile(
    r"(Connect call failed|Multiple exceptions: \[Errno \d+\] Connect call failed) \('([^']+)', "
    + _PORT
    + r"\)"
)
_SOCKET = re.compile(r'connection to server on socket "([^"]+)" failed: ([^\n]+)')
_UNKNOWN_HOST = re.compile(r'could not translate host name "([^"]+)" to address')
_NO_DATABASE = re.compile(r'database "([^"]+)" does not exist')
_BAD_PASSWORD = re.compile(r'password authentication failed for user "[^"]*"')
# settings a first-user step reads (the full-stack template's FIRST_SUPERUSER / FIRST_SUPERUSER_PASSWORD)
_FIRST_USER = re.compile(
    r"\b((?:FIRST_)?SUPERUSER(?:_[A-Z]+)*|FIRST_USER(?:_[A-Z]+)*|ADMIN_(?:EMAIL|USER(?:NAME)?|PASSWORD))\b"
)
_FIRST_USER_FILES = (
    "initial_data.py",
    "create_superuser.py",
    "create_admin.py",
    "createsuperuser.py",
)


def database(said: str) -> str | None:
    """What the app said about its database, when it could not use it: `the database at
    localhost:5432 is unreachable: Connection refused`; None when it said nothing of the kind."""
    for pattern, say in _DATABASE_CAUSES:
        found = pattern.search(said)
        if found:
            return say(found)
    return None


# each way a driver says its database cannot be used, first match wins, and how init says it
_DATABASE_CAUSES: tuple[tuple[re.Pattern[str], Callable[[re.Match[str]], str]], ...] = (
    (
        _AT_HOST,
        lambda m: f"the database at {m.group(1)}:{m.group(2)} is unreachable: {m.group(3).strip()}",
    ),
    (
        _OLD_LIBPQ,
        lambda m: f"the database at {m.group(2)}:{m.group(3)} is unreachable: {m.group(1).strip()}",
    ),
    (
        _ASYNCPG,
        lambda m: f"the database at {m.group(2)}:{m.group(3)} is unreachable: connection refused",
    ),
    (
        _SOCKET,
        lambda m: f"the database at socket {m.group(1)} is unreachable: {m.group(2).strip()}",
    ),
    (_UNKNOWN_HOST, lambda m: f"the database host {m.group(1)!r} is unknown here"),
    (
        _NO_DATABASE,
        lambda m: f"the database {m.group(1)!r} does not exist on the server the app connects to",
    ),
    (
        _BAD_PASSWORD,
        lambda m: "the database refused the app's password (password authentication failed)",
    ),
)


def database_fix(env: dict[str, str]) -> str:
    """What to give when the app's database is not there."""
    if any("{database_" in value for value in env.values()):
        return "check the --env settings that name the database"
    return DATABASE_HINT


def last_exception(said: str) -> str:
    """The last exception line of a traceback in the app's output (`sqlalchemy.exc…: …`), or ""."""
    lines = [
        ln.strip()
        for ln in said.splitlines()
        if re.match(r"^[A-Za-z_][\w.]*(Error|Exception|Exit)\b.*: \S", ln.strip())
    ]
    return lines[-1][:300] if lines else ""


def no_user(
    folder: Path,
    env: dict[str, str],
    pre_start: list[str] | None,
    migrate: list[str],
    user_var: str,
    password_var: str,
    fresh: bool,
) -> str:
    """Why the login was refused, when a fresh database has no such user: what ran before the boot
    and what would create it (the app's first-user settings and the script that reads them)."""
    where = "in the fresh database" if fresh else ""
    if not pre_start:
        ran = f"nothing runs before the boot, so nothing creates that user {where}".rstrip()
    elif pre_start == migrate:
        ran = f"--migrate only migrates: nothing creates that user {where}".rstrip()
    else:
        ran = f"--pre-start {shlex.join(pre_start)!r} ran, and the user is still not there"
    names = _first_user_settings(folder)
    user_setting = next((n for n in names if "PASSWORD" not in n), None)
    password_setting = next((n for n in names if "PASSWORD" in n), None)
    only_migrates = not pre_start or pre_start == migrate
    how = ""
    if user_setting and password_setting:
        given = (
            env.get(user_setting) == f"${{{user_var}}}"
            and env.get(password_setting) == f"${{{password_var}}}"
        )
        if given and not only_migrates:
            return (
                f"{ran}; {user_setting} and {password_setting} are given as ${{{user_var}}} and "
                f"${{{password_var}}}: the pre-start must run the step that reads them"
            )
        if given:
            how = (
                f"{user_setting} and {password_setting} are given as ${{{user_var}}} and ${{{password_var}}}, but "
                "nothing reads them before the boot: give "
            )
        else:
            how = (
                f"the app reads {user_setting} and {password_setting}: give --env '{user_setting}=${{{user_var}}}' "
                f"--env '{password_setting}=${{{password_var}}}' and "
            )
    elif not only_migrates:
        return f"{ran}; make it create the user {user_var} names, or give the credentials of a user it creates"
    else:
        how = "give "
    scripts = _first_user_scripts(folder)
    shell = next((f" (e.g. --pre-start 'bash {s}')" for s in scripts if s.endswith(".sh")), "")
    found = f": the app has {', '.join(scripts)}{shell}" if scripts else f" {user_var} names"
    return f"{ran}; {how}a --pre-start that migrates, then creates the user{found}"


def _python_files(folder: Path) -> list[Path]:
    return [
        p
        for p in sorted(folder.rglob("*.py"))
        if not any(
            part in SKIPPED_FOLDERS or part.startswith(".")
            for part in p.relative_to(folder).parts[:-1]
        )
    ]


def _first_user_settings(folder: Path) -> list[str]:
    names: dict[str, None] = {}
    for path in _python_files(folder):
        for name in _FIRST_USER.findall(path.read_text(errors="replace")):
            names.setdefault(name)
    return list(names)


def _first_user_scripts(folder: Path) -> list[str]:
    found = [p for p in _python_files(folder) if p.name in _FIRST_USER_FILES]
    found += sorted((folder / "scripts").glob("prestart*.sh")) + sorted(folder.glob("prestart*.sh"))
    return [str(p.relative_to(folder)) for p in found]


def boot_failed(where: Layout, probe: AppDeclaration, import_string: str, exc: Any) -> str:
    if exc.phase == "setup":
        return f"{import_string}: the set-up init wrote failed on a fresh boot: {exc.reason}"
    unreachable = database(exc.stderr_tail)
    missing = re.findall(r"ModuleNotFoundError: No module named '([\w.]+)'", exc.stderr_tail)
    if unreachable:
        hint = f"{unreachable}: {database_fix(probe.env)}"
    elif missing:
        hint = (
            f"the app's environment has no module {missing[-1]!r}: its own requirements (uv.lock, "
            "requirements.txt) must pin what it imports, and the app folder is where its imports resolve "
            "from (benchwatch init <folder>)"
        )
    else:
        hint = "give settings with --env KEY=VALUE" if not probe.env else "check the --env settings"
    if not probe.pre_start and not unreachable and (where.folder / MIGRATION_CONFIG).is_file():
        hint += f"; {MIGRATION_CONFIG} is there: --migrate runs `alembic upgrade head` first"
    return f"{import_string} did not boot: {exc.reason} (its last lines above); {hint}"


def login_failed(where: Layout, probe: AppDeclaration, exc: Any, said: str) -> UserError:
    """The login's failure, by its cause: a database the app could not reach (said in its log), a
    user that nothing before the boot creates (refused: 400, 401, 403), else the server's own error."""
    failed = f"the login failed: {exc.reason}"
    unreachable = database(said)
    if unreachable:
        show_tail(said)
        return UserError(
            f"{failed}: {unreachable} (the server's lines above); {database_fix(probe.env)}"
        )
    if exc.status in (400, 401, 403):  # refused: these credentials are no user of the app
        why = no_user(
            where.folder,
            probe.env,
            probe.pre_start,
            MIGRATE,
            USER_VAR,
            PASSWORD_VAR,
            fresh=probe.database is not None,
        )
        return UserError(
            f"{failed}: {USER_VAR} and {PASSWORD_VAR} are not a user of the app; {why}"
        )
    show_tail(said)
    error = last_exception(said)
    shown = " (its last lines above)" if said.strip() else ""
    return UserError(f"{failed}{f': the server said {error}' if error else ''}{shown}")


def stop_when_all_failed(answers: dict[str, Answer], srv: Any, env: dict[str, str]) -> None:
    """Every request answered 5xx or nothing: the app or its set-up is broken (a database that is
    not there, a migration not run), not the requests. Show the server's error; write nothing."""
    if not answers or not all(a.failed for a in answers.values()):
        return
    said = srv.stderr_tail()
    show_tail(said)
    errors = sorted({a.error or f"status {a.status}" for a in answers.values()})
    unreachable = database(said)
    fix = (
        f"{unreachable}: {database_fix(env)}"
        if unreachable
        else "fix that (--env, --migrate, --pre-start)"
    )
    raise UserError(
        f"every request init sent failed ({len(answers)}: {errors[0]}"
        f"{f' and {len(errors) - 1} other errors' if len(errors) > 1 else ''}): the app or its "
        f"settings are broken, so nothing is written; {fix}, then run init again"
    )
