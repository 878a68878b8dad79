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

from benchwatch.config import Variant

REPO = Path(__file__).resolve().parents[1]
FIXTURE_APPS = REPO / "tests" / "fixtures" / "apps"


def make_project(directory: Path, apps: list[Path], extra_settings: str = "") -> Path:
    """A throwaway benchwatch project using the repository's real stacks and the given apps."""
    directory.mkdir(parents=True, exist_ok=True)
    shutil.copy(REPO / "stacks.toml", directory / "stacks.toml")
    listed = ", ".join(f'"{app}"' for app in apps)
    (directory / "benchwatch.toml").write_text(
        f'[benchwatch]\napps = [{listed}]\ndefault_stacks = ["seed-v1", "latest"]\n{extra_settings}'
    )
    return directory


@pytest.fixture
def fixture_project(tmp_path: Path) -> Path:
    apps = sorted(p for p in FIXTURE_APPS.iterdir() if (p / "benchwatch-app.toml").is_file())
    return make_project(tmp_path / "project", apps + [REPO / "examples" / "todo_api"])


def benchwatch(*args: str, root: Path | None = None, env: dict | None = None,
               timeout: float = 600) -> subprocess.CompletedProcess:
    """Run the real CLI in a subprocess, as a user would."""
    environ = {**os.environ, **(env or {})}
    if root is not None:
        environ["BENCHWATCH_ROOT"] = str(root)
    return subprocess.run(
        [sys.executable, "-m", "benchwatch", *args],
        capture_output=True, text=True, timeout=timeout, env=environ, cwd=root or REPO,
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
        for key, value in {**(env or {}), **({"BENCHWATCH_ROOT": str(root)} if root else {})}.items():
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
    """TEST_DATABASE_URL (set by .ci/run), else a throwaway cluster on loopback, else skip."""
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
    subprocess.run([*as_postgres, pg_bin / "initdb", "-D", directory / "data", "-A", "trust", "-U", "bench"],
                   check=True, capture_output=True)
    subprocess.run([*as_postgres, pg_bin / "pg_ctl", "-D", directory / "data", "-o",
                    f"-k {directory} -h 127.0.0.1 -p {port}", "-l", directory / "log", "-w", "start"],
                   check=True, capture_output=True)
    try:
        yield f"postgresql+psycopg://bench@127.0.0.1:{port}/postgres"
    finally:
        subprocess.run([*as_postgres, pg_bin / "pg_ctl", "-D", directory / "data", "-m", "fast", "stop"],
                       capture_output=True)
        shutil.rmtree(directory, ignore_errors=True)


def variant(app_name: str, stack: str = "latest", flavor: str | None = None) -> Variant:
    """An in-memory variant of a one-endpoint app (GET /), for tests that boot nothing."""
    from benchwatch.config import App
    from benchwatch.declarations import AppDeclaration, Endpoint, Stack

    endpoint = Endpoint(name="root", path="/")
    declaration = AppDeclaration(name=app_name, app="main:app", endpoints=[endpoint])
    return Variant(app=App(declaration, REPO), flavor=flavor, stack=Stack(name=stack, pins={"fastapi": "1.0"}),
                   import_string="main:app", endpoints=(endpoint,), quick_endpoints=(endpoint,), env={})
