"""A boot on real servers: our server answers (not a neighbour on a port we picked), and a 5xx under
load shows the server's own error."""

from __future__ import annotations

import http.server
import sys
import threading
from pathlib import Path
from typing import ClassVar

import pytest
from conftest import REPO, benchwatch, make_project

from benchwatch.environments import envs
from benchwatch.measure import launch, ports, readiness, server
from benchwatch.project.loading import load_project
from benchwatch.results.files import read_run

pytestmark = pytest.mark.slow

GOOD = REPO / "tests" / "fixtures" / "apps" / "good"
RAISES = REPO / "tests" / "fixtures" / "load_apps" / "raises"


class _Neighbour(http.server.BaseHTTPRequestHandler):
    """Someone else's server: answers every request, with a 404."""

    seen: ClassVar[list[str]] = []

    def do_GET(self) -> None:
        _Neighbour.seen.append(self.path)
        self.send_response(404)
        self.send_header("content-length", "0")
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def neighbour():
    httpd = http.server.ThreadingHTTPServer((ports.HOST, 0), _Neighbour)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    _Neighbour.seen.clear()
    yield httpd.server_address[1]
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture
def good(tmp_path: Path):
    project = load_project(make_project(tmp_path / "project", [GOOD]))
    (variant,) = project.select("good@latest")
    ready, failed = envs.prepare([variant])
    assert not failed, failed
    return variant, ready[variant.env_key]


def test_a_neighbour_that_took_the_port_we_picked_is_not_taken_for_our_server(
    good, neighbour, monkeypatch
):
    """The port is picked free, released, then bound by uvicorn: a neighbour bound it in between.
    Before: its answer counted as ready, and its 404s were measured (`status 404, want 200`)."""
    variant, env = good
    picks = iter([neighbour])
    real_free_port = ports.free_port
    monkeypatch.setattr(ports, "free_port", lambda: next(picks, None) or real_free_port())
    with launch.running(variant, env) as srv:
        assert _Neighbour.seen, "the neighbour answered the readiness probe"
        assert (
            srv.port != neighbour
        )  # ours could not bind it, and was started again on another port
        assert readiness.listens(srv)
        with __import__("httpx").Client(base_url=srv.base_url) as client:
            assert client.get("/items").status_code == 200


def test_a_neighbour_answering_while_ours_never_listens_is_a_boot_failure_said_as_such(
    good, neighbour, monkeypatch
):
    variant, env = good
    monkeypatch.setattr(ports, "free_port", lambda: neighbour)
    # a "server" that lives but never listens: the wrapper runs a sleep instead of uvicorn
    wrap = [sys.executable, "-c", "import time; time.sleep(60)"]
    with (
        pytest.raises(server.BootError) as caught,
        launch.running(variant, env, launch.ServerOptions(wrap=wrap, ready_timeout=3)) as srv,
    ):
        pytest.fail(f"booted {srv}")
    assert "not the one benchwatch started" in caught.value.reason
    assert (
        f"pid {__import__('os').getpid()}" in caught.value.reason
    )  # the neighbour is named: this test


def test_a_5xx_under_load_shows_the_servers_own_error(tmp_path: Path) -> None:
    project = make_project(tmp_path / "project", [RAISES])
    out = tmp_path / "out"
    done = benchwatch(
        "load",
        "--quick",
        "-k",
        "raises@latest",
        "--out",
        str(out),
        root=project,
        env={"FAIL_AFTER": "50"},
    )
    assert done.returncode == 2, done.stdout + done.stderr
    (problem, *_) = [p for p in read_run(out).problems if p.phase == "load"]
    assert "x 500" in problem.reason
    assert (
        "the server said: app.PoolExhausted: no connection left in the pool after 50 requests"
        in problem.reason
    )
    trace = problem.detail.splitlines()
    assert trace[-1] == "app.PoolExhausted: no connection left in the pool after 50 requests"
    assert any('app.py", line' in line for line in trace)  # the app's own frame
    assert (
        "no connection left in the pool" in done.stderr
    )  # the command prints the server's lines too


def test_the_server_gets_no_runner_variables(good, tmp_path, monkeypatch):
    """N4: a pull request's app code must not find GITHUB_OUTPUT, GITHUB_ENV or the runtime token
    in its environment (it could rewrite the job's outputs and the verdict); its own stay."""
    variant, env = good
    for name, value in {
        "GITHUB_OUTPUT": str(tmp_path / "output"),
        "GITHUB_ENV": str(tmp_path / "env"),
        "ACTIONS_RUNTIME_TOKEN": "runtime-token",
        "RUNNER_TEMP": str(tmp_path),
        "BENCH_USER": "alice",
    }.items():
        monkeypatch.setenv(name, value)
    dump = tmp_path / "server-environ.json"
    # the wrapper records the environment the server is started with, then becomes the server
    wrap = [
        sys.executable,
        "-c",
        "import json, os, sys; json.dump(dict(os.environ), open(sys.argv[1], 'w')); "
        "os.execv(sys.argv[2], sys.argv[2:])",
        str(dump),
    ]
    with launch.running(variant, env, launch.ServerOptions(wrap=wrap)) as srv:
        assert readiness.listens(srv)
    seen = __import__("json").loads(dump.read_text())
    assert seen["BENCH_USER"] == "alice" and seen["VIRTUAL_ENV"] == str(env.path)
    assert [k for k in seen if k.startswith(("GITHUB_", "ACTIONS_", "RUNNER_"))] == []
