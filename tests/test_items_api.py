"""A team's API behind a login, end to end on real servers (tests/fixtures/items_api): secrets from
the environment, a set-up that logs in and seeds data, path parameters from it, SQLite and a
per-boot PostgreSQL database. The PR compare that watches every declared endpoint, counting those
--quick does not time, is tests/test_fullstack.py's (a template-shaped repository behind a login)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import REPO, benchwatch, make_project, uvicorn_processes

from benchwatch.results.files import read_run

pytestmark = pytest.mark.slow

ITEMS = REPO / "tests" / "fixtures" / "items_api"
SECRETS = {
    "ITEMS_TEST_SECRET": "k3y-for-signing-9a8b7c",
    "BENCH_USER": "bench",
    "BENCH_PASSWORD": "pw-7c6d5e4f3a",
}
SECRET_VALUES = (SECRETS["ITEMS_TEST_SECRET"], SECRETS["BENCH_PASSWORD"])


def _written(directory: Path) -> str:
    """Every file a command wrote: run files, reports, the counters' traces (strace's included)."""
    return "\n".join(p.read_text(errors="replace") for p in directory.rglob("*") if p.is_file())


def test_verify_and_a_quick_run_log_in_seed_the_data_and_measure_behind_the_login(
    tmp_path: Path,
) -> None:
    project = make_project(tmp_path / "project", [ITEMS])
    done = benchwatch("verify", "-k", "items@*", root=project, env=SECRETS)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 of 1 variants verified" in done.stdout
    out = tmp_path / "run"
    done = benchwatch(
        "run",
        "--quick",
        "--no-micro",
        "-k",
        "items@*",
        "--aa",
        "none",
        "--out",
        str(out),
        root=project,
        env=SECRETS,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    run = read_run(out)
    measured = {f.endpoint for f in run.figures if f.valid and f.endpoint}
    assert measured == {
        "GET /items?limit={setup.seeded}"
    }  # the quick endpoint, named by its template
    assert not run.problems
    text = _written(out) + done.stdout + done.stderr
    assert not [s for s in SECRET_VALUES if s in text]
    assert uvicorn_processes(str(ITEMS)) == []


def test_a_failed_login_is_one_set_up_problem_with_the_servers_lines_and_no_secret(
    tmp_path: Path,
) -> None:
    app = tmp_path / "items"
    shutil.copytree(ITEMS, app, ignore=shutil.ignore_patterns("postgres", "__pycache__"))
    declaration = (
        app / "benchwatch-app.toml"
    )  # the login sends another variable than the user was made with
    declaration.write_text(
        declaration.read_text().replace(
            'password = "${BENCH_PASSWORD}"', 'password = "${BENCH_LOGIN_PASSWORD}"'
        )
    )
    project = make_project(tmp_path / "project", [app])
    done = benchwatch(
        "verify",
        "-k",
        "items@*",
        root=project,
        env={**SECRETS, "BENCH_LOGIN_PASSWORD": "not-the-password"},
    )
    text = done.stdout + done.stderr
    assert done.returncode == 2, text
    assert (
        "FAIL items@latest [setup]: set-up request 'login': POST /login: status 401, want 2xx "
        '({"detail":"wrong username or password"})'
    ) in text
    # the server's last lines come with it, with the secret it logged replaced by its variable's name
    assert "items: signing tokens with ${ITEMS_TEST_SECRET}" in text
    assert SECRETS["ITEMS_TEST_SECRET"] not in text and "not-the-password" not in text


@pytest.mark.postgres
def test_a_per_boot_postgresql_database_is_created_migrated_seeded_and_dropped(
    tmp_path: Path,
) -> None:
    from benchwatch.measure import database

    configured = os.environ.get("TEST_DATABASE_URL")
    if not configured and database.server_bin() is None:
        pytest.skip("no TEST_DATABASE_URL and no PostgreSQL server binaries")
    env = {**SECRETS, **({database.URL_ENV: configured} if configured else {})}
    project = make_project(tmp_path / "project", [ITEMS / "postgres"])
    clusters = set(database.cluster_parent().glob(database.CLUSTER_PREFIX + "*"))
    out = tmp_path / "run"
    done = benchwatch(
        "run",
        "--quick",
        "--no-micro",
        "-k",
        "items_pg@*",
        "--aa",
        "none",
        "--out",
        str(out),
        root=project,
        env=env,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    run = read_run(out)
    assert {f.endpoint for f in run.figures if f.valid and f.endpoint} == {
        "GET /items?limit={setup.seeded}"
    }
    if configured:  # every boot's database was dropped
        cluster = database.parse_url(configured)
        left = subprocess.run(
            [
                cluster.psql,
                "-X",
                "-At",
                "-h",
                cluster.host,
                "-p",
                str(cluster.port),
                "-U",
                cluster.user,
                "-d",
                cluster.admin_database,
                "-c",
                "SELECT datname FROM pg_database WHERE datname LIKE 'benchwatch_%'",
            ],
            capture_output=True,
            text=True,
            env={**os.environ, "PGPASSWORD": cluster.password},
        )
        assert left.returncode == 0 and left.stdout.strip() == "", left.stdout + left.stderr
    else:  # the throwaway cluster was stopped and its directory removed
        assert set(database.cluster_parent().glob(database.CLUSTER_PREFIX + "*")) <= clusters
