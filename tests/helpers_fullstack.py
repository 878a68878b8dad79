"""The template-shaped fixture (tests/fixtures/fullstack_repo) as a team adopts it: its settings
and secrets, `init` from the repository root and from backend/, `verify`, committed; and benchwatch
and git run on it. Shared by tests/test_fullstack.py and tests/test_fullstack_faults.py."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import REPO

FIXTURE = REPO / "tests" / "fixtures" / "fullstack_repo"
SECRETS = {
    "BENCHWATCH_USER": "admin@example.com",
    "BENCHWATCH_PASSWORD": "pw-5d4c3b2a19",
    "APP_SECRET_KEY": "k-8f7e6d5c4b",
}
PINNED = (
    "--workflows-from=someone/benchwatch@0123456789abcdef0123456789abcdef01234567"  # no network
)
SETTINGS = [
    "--pre-start",
    "bash scripts/prestart.sh",  # migrations, then the first superuser
    "--env",
    "POSTGRES_SERVER={database_host}",
    "--env",
    "POSTGRES_PORT={database_port}",
    "--env",
    "POSTGRES_USER={database_user}",
    "--env",
    "POSTGRES_PASSWORD={database_password}",
    "--env",
    "POSTGRES_DB={database_name}",
    "--env",
    "SECRET_KEY=${APP_SECRET_KEY}",
    "--env",
    "FIRST_SUPERUSER=${BENCHWATCH_USER}",
    "--env",
    "FIRST_SUPERUSER_PASSWORD=${BENCHWATCH_PASSWORD}",
]


def _environ() -> dict[str, str]:
    from benchwatch.measure import database

    configured = os.environ.get("TEST_DATABASE_URL")
    if not configured and database.server_bin() is None:
        pytest.skip("no TEST_DATABASE_URL and no PostgreSQL server binaries")
    environ = {k: v for k, v in os.environ.items() if k != "BENCHWATCH_ROOT"}
    return {**environ, **SECRETS, **({database.URL_ENV: configured} if configured else {})}


def _reads_database_work(environ: dict[str, str]) -> bool:
    """Whether the compare's cluster lets benchwatch read pg_stat_statements: its own throwaway
    one always does; a configured one when it loads the extension."""
    from benchwatch.measure import database, database_work

    configured = environ.get(database.URL_ENV)
    return not configured or database_work.available(database.parse_url(configured))


def _bw(
    *args: str, cwd: Path, environ: dict[str, str], timings: dict[str, float], name: str
) -> subprocess.CompletedProcess:
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "benchwatch", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        env=environ,
        timeout=900,
    )
    timings[name] = round(time.monotonic() - started, 1)
    return done


def _git(repo: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t", *args],
        check=True,
        capture_output=True,
    )


def _copy(adopted: tuple[Path, dict[str, str]], tmp_path: Path) -> tuple[Path, dict[str, str]]:
    repo, environ = adopted
    copy = tmp_path / "repo"
    shutil.copytree(repo, copy, symlinks=True)
    return copy, environ


def _adopted(tmp_path: Path, environ: dict[str, str], timings: dict[str, float]) -> Path:
    """The repository after `init` from its root and from backend/, verified and committed."""
    repo = tmp_path / "repo"
    shutil.copytree(FIXTURE, repo, ignore=shutil.ignore_patterns("__pycache__"))
    _git(repo, "init", "-q")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "the template's backend")

    # from the repository root: the scan finds backend/app/main.py, whose imports resolve from backend/
    done = _bw(
        "init",
        PINNED,
        *SETTINGS,
        cwd=repo,
        environ=environ,
        timings=timings,
        name="init from the root",
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert (
        "init: backend/app/main.py imports resolve from backend/: that is the app folder"
        in done.stdout
    )
    app_file = repo / "backend" / "benchwatch" / "benchwatch-app.toml"
    text = app_file.read_text()
    assert 'app = "app.main:app"' in text and 'requirements = "../uv.lock"' in text
    assert 'database = "postgresql"' in text and 'ready_path = "/api/v1/openapi.json"' in text
    assert 'form = { username = "${BENCHWATCH_USER}", password = "${BENCHWATCH_PASSWORD}" }' in text
    assert 'path_params = { id = "{setup.items_id}" }' in text  # from the record the set-up creates
    assert 'quick = ["items"]  # --quick (a PR) load-tests the GET lists behind the login' in text
    assert (
        "# [[endpoints]]   # DELETE /api/v1/items/{id}: a DELETE removes what it is sent to" in text
    )
    summary = next(line for line in done.stdout.splitlines() if line.startswith("init: declared "))
    assert summary.startswith("init: declared 5, left out 2"), done.stdout
    assert (
        "init: create the repository secret BENCHWATCH_APP_ENV with one NAME=value line for each of "
        "APP_SECRET_KEY, BENCHWATCH_PASSWORD, BENCHWATCH_USER"
    ) in done.stdout
    declared = _declared(app_file)
    assert declared["items_id"]["headers"] == {"Authorization": "Bearer {setup.token}"}
    assert declared["post_items"]["json"] == {"title": "Groceries"}  # the schema's example
    caller = (repo / ".github" / "workflows" / "benchwatch-pr.yml").read_text()
    assert (
        "      database: postgresql" in caller
        and "app-env: ${{ secrets.BENCHWATCH_APP_ENV }}" in caller
    )
    assert (repo / ".gitignore").read_text().splitlines()[-2:] == ["results/", ".benchwatch/"]
    assert not [s for s in SECRETS.values() if s in text + done.stdout + done.stderr]

    # from backend/ itself: the same declaration (--force replaces it)
    first = text
    again = _bw(
        "init",
        PINNED,
        "--force",
        *SETTINGS,
        cwd=repo / "backend",
        environ=environ,
        timings=timings,
        name="init from backend/",
    )
    assert again.returncode == 0, again.stdout + again.stderr
    assert _declared(app_file).keys() == declared.keys() and app_file.read_text() == first
    assert (repo / ".gitignore").read_text().count("results/") == 1

    done = _bw("verify", cwd=repo, environ=environ, timings=timings, name="verify")
    assert done.returncode == 0 and "1 of 1 variants verified" in done.stdout, (
        done.stdout + done.stderr
    )
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "benchwatch")
    return repo


def _declared(app_file: Path) -> dict[str, dict]:
    import tomllib

    return {e["name"]: e for e in tomllib.loads(app_file.read_text())["endpoints"]}
