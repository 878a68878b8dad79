from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import psutil
import pytest

from benchwatch.project.variants import Variant

REPO = Path(__file__).resolve().parents[1]
FIXTURE_APPS = REPO / "tests" / "fixtures" / "apps"

# `./bw test`'s last pass runs the workflows under act and the load_independent tests two at a time
# (`-n 2 --dist loadgroup`). Each group below goes to one worker, whole (a module's fixture is built
# once), so both workers take about as long: the seconds are each test's own at -n 2 on 2 cores
# (2026-11-27: 847 s and 809 s). The other tests of that pass (210 s) go to whichever worker is free.
ONE_WORKER_EACH = {
    "half-a": (
        "tests/test_runner.py::test_two_pushes_to_main_publish_the_trends_the_site_and_the_counts",  # 306 s
        "tests/test_fullstack.py",  # 304 s: two inits, verify, a run, the PR's compare
        "tests/test_compare.py::test_real_micro_compare_times_pairs_counts_instructions_and_catches_an_injected_slowdown",  # 118 s
        "tests/test_bisect.py",  # 119 s
        "tests/test_runner.py::test_a_pull_request_is_compared_and_its_comment_posted",  # 154 s
        "tests/test_attribute.py",  # 88 s
    ),
    "half-b": (
        "tests/test_runner.py::test_a_night_resolves_next_on_pypi_records_it_after_the_last_and_opens_the_issues",  # 223 s
        "tests/test_runner.py::test_the_callers_init_writes_compare_a_users_pull_request_and_comment",  # 172 s
        "tests/test_team_repo.py",  # 172 s: three inits, verify, a run, a compare by counts
        # an init and two PR runs under act: 1,015 s beside other jobs (load average 12-16, 2026-11-28),
        # alone not measured yet (the other runner tests took 2-4 times as long under such a load)
        "tests/test_runner.py::test_a_team_s_app_with_a_login_a_database_and_its_secret_is_compared_on_its_pull_requests",
    ),
}


def pytest_xdist_make_scheduler(config: pytest.Config, log):
    """`--dist loadgroup` by ONE_WORKER_EACH. pytest-xdist's own loadgroup cannot be used: it
    groups by renaming each marked test (`item._nodeid`), which pytest 9 no longer reads, so its
    `xdist_group` marks are silently ignored (tried with pytest 9.2.0 and pytest-xdist 3.8.0;
    pytest-dev/pytest-xdist#1386)."""
    if config.getvalue("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class OneWorkerEach(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return next(
                (group for group, tests in ONE_WORKER_EACH.items() if nodeid.startswith(tests)),
                nodeid,
            )

    return OneWorkerEach(config, log)


def make_project(directory: Path, apps: list[Path], extra_settings: str = "") -> Path:
    """A throwaway benchwatch project using the repository's real stacks and the given apps."""
    directory.mkdir(parents=True, exist_ok=True)
    shutil.copy(REPO / "stacks.toml", directory / "stacks.toml")
    listed = ", ".join(f'"{app}"' for app in apps)
    (directory / "benchwatch.toml").write_text(
        f'[benchwatch]\napps = [{listed}]\ndefault_stacks = ["seed-v1", "latest"]\n{extra_settings}'
    )
    return directory


@pytest.fixture(autouse=True)
def _no_remembered_secrets():
    """The secrets a test's in-process command remembered (redaction.remember, kept for a
    process's life) are not the next test's: each would be redacted from its files and lines."""
    from benchwatch.declarations import redaction

    redaction.forget_all()
    yield
    redaction.forget_all()


@pytest.fixture
def fixture_project(tmp_path: Path) -> Path:
    apps = sorted(p for p in FIXTURE_APPS.iterdir() if (p / "benchwatch-app.toml").is_file())
    return make_project(tmp_path / "project", apps + [REPO / "examples" / "todo_api"])


def benchwatch(
    *args: str, root: Path | None = None, env: dict | None = None, timeout: float = 600
) -> subprocess.CompletedProcess:
    """Run the real CLI in a subprocess, as a user would."""
    environ = {**os.environ, **(env or {})}
    if root is not None:
        environ["BENCHWATCH_ROOT"] = str(root)
    return subprocess.run(
        [sys.executable, "-m", "benchwatch", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=environ,
        cwd=root or REPO,
    )


@dataclass
class Done:
    returncode: int
    stdout: str
    stderr: str


@pytest.fixture
def cli(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]):
    """The CLI in this process (fast: no interpreter start-up), with `benchwatch()`'s signature,
    for commands that boot no server. `benchwatch()` runs it as a user would, in a subprocess."""
    from benchwatch.cli import main

    def call(*args: str, root: Path | None = None, env: dict | None = None) -> Done:
        monkeypatch.chdir(root or REPO)
        for key, value in {
            **(env or {}),
            **({"BENCHWATCH_ROOT": str(root)} if root else {}),
        }.items():
            monkeypatch.setenv(key, value)
        capsys.readouterr()
        try:
            code = main(list(args))
        except SystemExit as exc:  # argparse
            code = int(exc.code or 0)
        captured = capsys.readouterr()
        return Done(code, captured.out, captured.err)

    return call


def uvicorn_processes(marker: str) -> list[psutil.Process]:
    """Live uvicorn processes whose command line or working directory mentions `marker`."""
    found = []
    for proc in psutil.process_iter(["cmdline", "cwd"]):
        try:
            cmdline = " ".join(proc.info["cmdline"] or [])
            if "uvicorn" in cmdline and (marker in cmdline or marker in (proc.info["cwd"] or "")):
                found.append(proc)
        except psutil.Error:
            continue
    return found


def _postgres_bin() -> Path | None:
    found = sorted(Path("/usr/lib/postgresql").glob("*/bin/pg_ctl"))
    return found[-1].parent if found else None


@pytest.fixture(scope="session")
def postgres_url(tmp_path_factory: pytest.TempPathFactory):
    """TEST_DATABASE_URL (set by .ci/run), else a throwaway cluster on loopback (pg_stat_statements
    loaded, as benchwatch's own), else skip."""
    from benchwatch.measure.database import PRELOAD

    configured = os.environ.get("TEST_DATABASE_URL")
    if configured:
        yield configured
        return
    pg_bin = _postgres_bin()
    if pg_bin is None or os.geteuid() != 0 or shutil.which("runuser") is None:
        pytest.skip("no TEST_DATABASE_URL and no local PostgreSQL to start (run .ci/run)")
    directory = Path(tempfile.mkdtemp(prefix="benchwatch-pg-"))
    shutil.chown(directory, "postgres")
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    as_postgres = ["runuser", "-u", "postgres", "--"]
    subprocess.run(
        [*as_postgres, pg_bin / "initdb", "-D", directory / "data", "-A", "trust", "-U", "bench"],
        check=True,
        capture_output=True,
    )
    subprocess.run(
        [
            *as_postgres,
            pg_bin / "pg_ctl",
            "-D",
            directory / "data",
            "-o",
            f"-k {directory} -h 127.0.0.1 -p {port} {PRELOAD}",
            "-l",
            directory / "log",
            "-w",
            "start",
        ],
        check=True,
        capture_output=True,
    )
    subprocess.run(
        [
            pg_bin / "psql",
            "-X",
            "-q",
            "-h",
            "127.0.0.1",
            "-p",
            str(port),
            "-U",
            "bench",
            "-d",
            "postgres",
            "-c",
            "CREATE EXTENSION IF NOT EXISTS pg_stat_statements",
        ],
        check=True,
        capture_output=True,
    )
    try:
        yield f"postgresql+psycopg://bench@127.0.0.1:{port}/postgres"
    finally:
        subprocess.run(
            [*as_postgres, pg_bin / "pg_ctl", "-D", directory / "data", "-m", "fast", "stop"],
            capture_output=True,
        )
        shutil.rmtree(directory, ignore_errors=True)


def variant(app_name: str, stack: str = "latest", flavor: str | None = None) -> Variant:
    """An in-memory variant of a one-endpoint app (GET /), for tests that boot nothing."""
    from benchwatch.declarations.apps import AppDeclaration
    from benchwatch.declarations.requests import Endpoint
    from benchwatch.declarations.stacks import Stack
    from benchwatch.project.apps import App

    endpoint = Endpoint(name="root", path="/")
    declaration = AppDeclaration(name=app_name, app="main:app", endpoints=[endpoint])
    return Variant(
        app=App(declaration, REPO),
        flavor=flavor,
        stack=Stack(name=stack, pins={"fastapi": "1.0"}),
        import_string="main:app",
        endpoints=(endpoint,),
        quick_endpoints=(endpoint,),
        env={},
    )
