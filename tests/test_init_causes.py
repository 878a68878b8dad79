"""What `benchwatch init` says when the app cannot be adopted as given: the cause the app gave (a
database it could not reach, a login that no step before the boot creates), and a Python that the
app's `requires-python` excludes, before anything is built (issue 39's tries on the real template)."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest
from test_init import git

from benchwatch.errors import UserError
from benchwatch.scaffold.layout import Layout


def test_a_python_that_requires_python_excludes_is_one_error_before_anything_is_built(
    tmp_path: Path, cli
) -> None:
    """`--python 3.13` on an app whose pyproject.toml requires >=3.14 (the template's newest commit):
    one line naming the file, the range and the lowest Python it allows, before the environment is
    built; a declaration's `python` is checked the same way by every command."""
    root = tmp_path / "repo"
    (root / "backend" / "app").mkdir(parents=True)
    (root / "backend" / "app" / "__init__.py").write_text("")
    (root / "backend" / "app" / "main.py").write_text(
        "from fastapi import FastAPI\n\napp = FastAPI()\n"
    )
    (root / "backend" / "pyproject.toml").write_text(
        '[project]\nname = "app"\nversion = "0"\nrequires-python = ">=3.14,<4.0"\n'
    )
    (root / "backend" / "uv.lock").write_text("version = 1\n")
    git(root, "init", "-q")
    done = cli("init", "backend", "--python", "3.13", root=root)
    (line,) = done.stderr.strip().splitlines()
    assert done.returncode == 3 and line.startswith(
        f"ERROR: --python 3.13: {root / 'backend' / 'pyproject.toml'}: requires-python '<4.0,>=3.14' excludes Python "
        "3.13; the lowest it allows is 3.14"
    ), line
    assert "environment" not in done.stdout and not (root / "backend" / "benchwatch").exists()
    app_dir = root / "backend" / "benchwatch"
    app_dir.mkdir()
    (app_dir / "benchwatch-app.toml").write_text(
        'name = "backend"\napp = "app.main:app"\nroot = ".."\n'
        'requirements = "../uv.lock"\npython = "3.13"\n'
        '[[endpoints]]\nname = "docs"\npath = "/docs"\n'
    )
    (root / "benchwatch.toml").write_text('[benchwatch]\napps = ["backend/benchwatch"]\n')
    done = cli("verify", root=root)
    assert done.returncode == 3 and done.stderr.strip().splitlines()[-1].startswith(
        f"ERROR: {app_dir / 'benchwatch-app.toml'}: python = '3.13': {root / 'backend' / 'pyproject.toml'}: "
        "requires-python '<4.0,>=3.14' excludes Python 3.13"
    ), done.stderr


# what the full-stack template's server and its pre-start said when its database was not there
PSYCOPG_REFUSED = (
    "sqlalchemy.exc.OperationalError: (psycopg.OperationalError) connection failed: connection to server at "
    '"127.0.0.1", port 5432 failed: Connection refused\n\tIs the server running on that host and accepting TCP/IP '
    "connections?\n(Background on this error at: https://sqlalche.me/e/20/e3q8)\n"
)


@pytest.mark.parametrize(
    ("said", "cause"),
    [
        (PSYCOPG_REFUSED, "the database at 127.0.0.1:5432 is unreachable: Connection refused"),
        (
            'connection to server at "${POSTGRES_SERVER}", port ${POSTGRES_PORT} failed: Connection refused',  # redacted
            "the database at ${POSTGRES_SERVER}:${POSTGRES_PORT} is unreachable: Connection refused",
        ),
        (
            "psycopg2.OperationalError: could not connect to server: Connection refused\n\tIs the server running on host "
            '"localhost" (127.0.0.1) and accepting\n\tTCP/IP connections on port 5433?\n',
            "the database at localhost:5433 is unreachable: Connection refused",
        ),
        (
            "ConnectionRefusedError: [Errno 111] Connect call failed ('127.0.0.1', 6543)",
            "the database at 127.0.0.1:6543 is unreachable: connection refused",
        ),
        (
            'psycopg.OperationalError: connection failed: could not translate host name "db" to address: Name or service '
            "not known",
            "the database host 'db' is unknown here",
        ),
        (
            'psycopg.OperationalError: connection failed: FATAL:  database "app" does not exist',
            "the database 'app' does not exist on the server the app connects to",
        ),
        (
            'sqlalchemy.exc.ProgrammingError: (psycopg.errors.UndefinedTable) relation "user" does not exist',
            None,
        ),
    ],
)
def test_the_database_the_app_could_not_reach_is_named_from_what_it_said(
    said: str, cause: str | None
) -> None:
    from benchwatch.scaffold import causes

    assert causes.database(said) == cause


FULLSTACK_BACKEND = Path(__file__).parent / "fixtures" / "fullstack_repo" / "backend"


class _Refused(Exception):
    def __init__(self, reason: str, status: int | None) -> None:
        self.reason, self.status = reason, status


def _probe(**settings: object):
    from benchwatch.declarations.apps import AppDeclaration
    from benchwatch.declarations.requests import Endpoint

    return AppDeclaration(
        name="backend",
        app="app.main:app",
        stacks=["latest"],
        endpoints=[Endpoint(name="o", path="/o")],
        **settings,
    )


def test_a_refused_login_says_that_no_step_creates_the_user_and_what_would(
    capsys, tmp_path: Path
) -> None:
    """(d) of issue 39: `--migrate` ran, nothing created the first user, the login answered 400. The
    line says so, names the settings the app's first-user step reads and the scripts it has."""
    from benchwatch.scaffold.boot_settings import MIGRATE
    from benchwatch.scaffold.causes import login_failed

    where = Layout(FULLSTACK_BACKEND.parent, FULLSTACK_BACKEND)
    refused = _Refused(
        'POST /api/v1/login/access-token: status 400, want 2xx ({"detail":"Incorrect email or password"})',
        400,
    )
    env = {"POSTGRES_SERVER": "{database_host}"}
    said = str(
        login_failed(
            where, _probe(env=env, pre_start=MIGRATE, database="postgresql"), refused, "INFO: ok"
        )
    )
    assert said == (
        'the login failed: POST /api/v1/login/access-token: status 400, want 2xx ({"detail":"Incorrect email or '
        'password"}): BENCHWATCH_USER and BENCHWATCH_PASSWORD are not a user of the app; --migrate only migrates: '
        "nothing creates that user in the fresh database; the app reads FIRST_SUPERUSER and FIRST_SUPERUSER_PASSWORD: "
        "give --env 'FIRST_SUPERUSER=${BENCHWATCH_USER}' --env 'FIRST_SUPERUSER_PASSWORD=${BENCHWATCH_PASSWORD}' and "
        "a --pre-start that migrates, then creates the user: the app has app/initial_data.py, scripts/prestart.sh "
        "(e.g. --pre-start 'bash scripts/prestart.sh')"
    )
    assert (
        capsys.readouterr().err == ""
    )  # a refusal is not the server's fault: its lines are not shown
    given = {
        **env,
        "FIRST_SUPERUSER": "${BENCHWATCH_USER}",
        "FIRST_SUPERUSER_PASSWORD": "${BENCHWATCH_PASSWORD}",
    }
    said = str(
        login_failed(
            where,
            _probe(env=given, pre_start=["bash", "scripts/seed.sh"], database="postgresql"),
            refused,
            "",
        )
    )
    assert said.endswith(
        "are not a user of the app; --pre-start 'bash scripts/seed.sh' ran, and the user is still "
        "not there; FIRST_SUPERUSER and FIRST_SUPERUSER_PASSWORD are given as ${BENCHWATCH_USER} and "
        "${BENCHWATCH_PASSWORD}: the pre-start must run the step that reads them"
    )
    said = str(
        login_failed(
            where, _probe(env=given, pre_start=MIGRATE, database="postgresql"), refused, ""
        )
    )
    assert said.endswith(
        "--migrate only migrates: nothing creates that user in the fresh database; FIRST_SUPERUSER "
        "and FIRST_SUPERUSER_PASSWORD are given as ${BENCHWATCH_USER} and ${BENCHWATCH_PASSWORD}, but "
        "nothing reads them before the boot: give a --pre-start that migrates, then creates the user: "
        "the app has app/initial_data.py, scripts/prestart.sh (e.g. --pre-start 'bash "
        "scripts/prestart.sh')"
    )
    bare = Layout(tmp_path, tmp_path)  # an app with no first-user settings or scripts
    assert str(login_failed(bare, _probe(), refused, "")).endswith(
        "are not a user of the app; nothing runs before the boot, so nothing creates that user; give a --pre-start "
        "that migrates, then creates the user BENCHWATCH_USER names"
    )
    assert str(login_failed(bare, _probe(pre_start=["./seed"]), refused, "")).endswith(
        "--pre-start './seed' ran, and the user is still not there; make it create the user BENCHWATCH_USER names, "
        "or give the credentials of a user it creates"
    )


def test_a_login_that_failed_on_an_unreachable_database_says_so_not_the_credentials(capsys) -> None:
    """(a) of issue 39: no database, the login answered 500; the cause was in the server's lines."""
    from benchwatch.scaffold.causes import login_failed

    where = Layout(FULLSTACK_BACKEND.parent, FULLSTACK_BACKEND)
    failed = _Refused(
        "POST /api/v1/login/access-token: status 500, want 2xx (Internal Server Error)", 500
    )
    said = str(
        login_failed(
            where, _probe(), failed, "Traceback (most recent call last):\n" + PSYCOPG_REFUSED
        )
    )
    assert said == (
        "the login failed: POST /api/v1/login/access-token: status 500, want 2xx (Internal Server Error): "
        "the database at 127.0.0.1:5432 is unreachable: Connection refused (the server's lines above); give "
        "the app a fresh database per boot: --env settings naming {database_host}, {database_port}, "
        "{database_user}, {database_password}, {database_name}, or a postgresql:// URL (docs/init.md)"
    )
    assert "    | sqlalchemy.exc.OperationalError" in capsys.readouterr().err
    other = "Traceback (most recent call last):\nKeyError: 'SECRET_KEY'\n"
    assert str(login_failed(where, _probe(), failed, other)).endswith(
        "(Internal Server Error): the server said KeyError: 'SECRET_KEY' (its last lines above)"
    )
    elsewhere = _Refused(
        'POST /login: status 404, want 2xx ({"detail":"Not Found"})', 404
    )  # not a refusal
    assert str(login_failed(where, _probe(), elsewhere, "")) == (
        'the login failed: POST /login: status 404, want 2xx ({"detail":"Not Found"})'
    )


def test_a_boot_or_every_request_failing_on_the_database_names_it(capsys) -> None:
    from benchwatch.measure.server import BootError
    from benchwatch.scaffold.causes import boot_failed, stop_when_all_failed
    from benchwatch.scaffold.probe import Answer

    where = Layout(FULLSTACK_BACKEND.parent, FULLSTACK_BACKEND)
    booted = BootError(
        "backend@own",
        "pre_start exited with 1",
        "+ python app/database_ready.py\n" + PSYCOPG_REFUSED,
    )
    probe = _probe(env={"POSTGRES_SERVER": "{database_host}"}, database="postgresql")
    assert boot_failed(where, probe, "app.main:app", booted) == (
        "app.main:app did not boot: pre_start exited with 1 (its last lines above); the database at 127.0.0.1:5432 "
        "is unreachable: Connection refused: check the --env settings that name the database"
    )
    missing = BootError(
        "backend@own", "pre_start exited with 1", "ModuleNotFoundError: No module named 'tenacity'"
    )
    assert "the app's environment has no module 'tenacity'" in boot_failed(
        where, _probe(), "app.main:app", missing
    )
    server = SimpleNamespace(stderr_tail=lambda: PSYCOPG_REFUSED)
    with pytest.raises(UserError) as caught:
        stop_when_all_failed(
            {"items": Answer(500, error="sqlalchemy.exc.OperationalError: …")}, server, {}
        )
    assert str(caught.value).endswith(
        "so nothing is written; the database at 127.0.0.1:5432 is unreachable: "
        "Connection refused: give the app a fresh database per boot: --env settings "
        "naming {database_host}, {database_port}, {database_user}, {database_password}, "
        "{database_name}, or a postgresql:// URL (docs/init.md), then run init again"
    )
    assert "    | sqlalchemy.exc.OperationalError" in capsys.readouterr().err
