"""Faults planted in real runs, and what each leaves behind (docs/faults.md tabulates them): benchwatch
killed with SIGKILL mid-round (plain, under valgrind, with its own PostgreSQL cluster), a server killed
mid-round, PostgreSQL stopped mid-run, results written to a full filesystem, two record jobs pushing
gh-pages at once, a corrupt or truncated data.js. The faults are planted from here, on the real
processes (a kill, a `pg_ctl stop`, a full tmpfs), not through hooks in benchwatch.

None of these is `load_independent`: several check that no server of their own project is left."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import httpx
import psutil
import pytest
from conftest import FIXTURE_APPS, REPO, make_project, uvicorn_processes

from benchwatch.measure import database

pytestmark = pytest.mark.slow

GOOD = FIXTURE_APPS / "good"
ITEMS = REPO / "tests" / "fixtures" / "items_api"
ITEMS_SECRETS = {"ITEMS_TEST_SECRET": "k3y-for-faults-1b2c", "BENCH_USER": "bench", "BENCH_PASSWORD": "pw-faults-3d4e"}
T = TypeVar("T")


def own_app(tmp_path: Path, name: str) -> Path:
    """A copy of the `good` fixture app named `name`: its servers are found by its folder alone."""
    app = tmp_path / name
    shutil.copytree(GOOD, app, ignore=shutil.ignore_patterns("__pycache__"))
    declaration = app / "benchwatch-app.toml"
    declaration.write_text(declaration.read_text().replace('name = "good"', f'name = "{name}"'))
    return app


def start(args: list[str], project: Path, tmp_path: Path, env: dict | None = None) -> subprocess.Popen:
    """`benchwatch ARGS` as a user runs it; its output in files (a pipe nobody reads could block it)."""
    environ = {**os.environ, "BENCHWATCH_ROOT": str(project), **(env or {})}
    environ.pop(database.URL_ENV, None)
    return subprocess.Popen([sys.executable, "-m", "benchwatch", *args], env=environ, cwd=project,
                            stdout=open(tmp_path / "stdout", "w"), stderr=open(tmp_path / "stderr", "w"),
                            stdin=subprocess.DEVNULL)  # fmt: skip


def output(tmp_path: Path) -> str:
    return (tmp_path / "stdout").read_text() + (tmp_path / "stderr").read_text()


def wait_for(find: Callable[[], T | None], process: subprocess.Popen, tmp_path: Path, what: str,
             timeout: float = 300) -> T:  # fmt: skip
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = find()
        if found:
            return found
        if process.poll() is not None:
            pytest.fail(f"benchwatch exited ({process.returncode}) before {what}:\n{output(tmp_path)[-3000:]}")
        time.sleep(0.2)
    process.kill()
    pytest.fail(f"no {what} after {timeout:g} s:\n{output(tmp_path)[-3000:]}")


def listening_port(proc: psutil.Process) -> int | None:
    try:
        for child in [proc, *proc.children(recursive=True)]:
            for conn in child.net_connections(kind="tcp"):
                if conn.status == psutil.CONN_LISTEN and conn.laddr:
                    return conn.laddr.port
    except psutil.Error:
        return None
    return None


def answering(marker: str, path: str = "/items", wrapped: str = "") -> psutil.Process | None:
    """A server of `marker` (under `wrapped`, e.g. valgrind) that answers `path`."""
    for proc in uvicorn_processes(marker):
        try:
            if wrapped and wrapped not in proc.cmdline()[0]:
                continue
        except (psutil.Error, IndexError):
            continue
        port = listening_port(proc)
        if port is None:
            continue
        try:
            if httpx.get(f"http://127.0.0.1:{port}{path}", timeout=5).status_code < 500:
                return proc
        except httpx.HTTPError:
            continue
    return None


def under_load(marker: str) -> psutil.Process | None:
    """A server of `marker` that oha is loading right now."""
    ports = {}
    for proc in uvicorn_processes(marker):
        port = listening_port(proc)
        if port is not None:
            ports[port] = proc
    for proc in psutil.process_iter(["name", "cmdline"]):
        if proc.info["name"] == "oha":
            for port, server in ports.items():
                if any(f"127.0.0.1:{port}/" in arg for arg in proc.info["cmdline"] or []):
                    return server
    return None


def running_after(find: Callable[[], list], seconds: float = 15) -> list:
    """What `find` still finds after `seconds` (sooner when it finds nothing)."""
    deadline = time.monotonic() + seconds
    while (left := find()) and time.monotonic() < deadline:
        time.sleep(0.2)
    return [p for p in left if not isinstance(p, psutil.Process) or _running(p)]


def _running(proc: psutil.Process) -> bool:
    try:
        return proc.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def cluster_processes(directory: str) -> list[psutil.Process]:
    found = []
    for proc in psutil.process_iter(["cmdline"]):
        if directory in " ".join(proc.info["cmdline"] or []):
            found.append(proc)
    return found


def cluster_folders() -> set[Path]:
    """The folders of the throwaway PostgreSQL clusters running now (measure/database.py's)."""
    found = set()
    for proc in psutil.process_iter(["cmdline"]):
        for arg in proc.info["cmdline"] or []:
            if database.CLUSTER_PREFIX in arg and arg.endswith("/data"):
                found.add(Path(arg).parent)
    return found


def scratch_of(server: psutil.Process) -> Path:
    """The boot's {tmp} folder: where the server's log (its stdout) is."""
    return Path(os.readlink(f"/proc/{server.pid}/fd/1")).parent


def needs_local_postgres() -> None:
    if database.server_bin() is None or os.geteuid() != 0 or shutil.which("runuser") is None:
        pytest.skip("needs PostgreSQL's server binaries and root (runuser -u postgres), as .ci/run has")


def items_pg(tmp_path: Path) -> Path:
    """The items API on a per-boot PostgreSQL database, copied so that its servers are ours alone."""
    app = tmp_path / "items"
    shutil.copytree(ITEMS, app, ignore=shutil.ignore_patterns("__pycache__"))
    return app / "postgres"


# --- benchwatch killed with SIGKILL ---------------------------------------------------------------


def test_sigkill_of_a_load_leaves_no_server_and_no_scratch_folder(tmp_path: Path) -> None:
    app = own_app(tmp_path, "good")
    project = make_project(tmp_path / "project", [app])
    process = start(["load", "--quick", "-k", "good@latest", "--out", str(tmp_path / "out")], project, tmp_path)
    server = wait_for(lambda: answering(str(app)), process, tmp_path, "server answering")
    scratch = scratch_of(server)
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=30)
    assert running_after(lambda: uvicorn_processes(str(app))) == []
    assert running_after(lambda: [scratch] if scratch.exists() else [], 10) == []


def test_sigkill_of_a_load_on_its_own_postgresql_cluster_leaves_no_server_and_no_cluster(tmp_path: Path) -> None:
    needs_local_postgres()
    app = items_pg(tmp_path)
    project = make_project(tmp_path / "project", [app])
    before = cluster_folders()
    process = start(["load", "--quick", "-k", "items_pg@latest", "--out", str(tmp_path / "out")], project, tmp_path,
                    env=ITEMS_SECRETS)  # fmt: skip
    wait_for(lambda: answering(str(app.parent), "/health"), process, tmp_path, "server answering")
    ours = cluster_folders() - before
    assert ours, "benchwatch started no PostgreSQL cluster of its own"
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=30)
    assert running_after(lambda: uvicorn_processes(str(app.parent))) == []
    for cluster in ours:
        assert running_after(lambda c=cluster: cluster_processes(str(c)), 30) == [], cluster
        assert running_after(lambda c=cluster: [c] if c.exists() else [], 10) == []


def test_sigkill_of_a_count_leaves_no_valgrind_server(tmp_path: Path) -> None:
    if shutil.which("valgrind") is None:
        pytest.skip("valgrind is not installed")
    app = own_app(tmp_path, "good")
    project = make_project(tmp_path / "project", [app])
    process = start(["counts", "--quick", "-k", "good@latest", "--repeats", "1", "--out", str(tmp_path / "out")],
                    project, tmp_path)  # fmt: skip
    wait_for(lambda: answering(str(app), wrapped="valgrind"), process, tmp_path, "server under valgrind answering")
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=30)
    assert running_after(lambda: uvicorn_processes(str(app))) == []
