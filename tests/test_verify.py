from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import benchwatch, uvicorn_processes

from benchwatch.environments import envs
from benchwatch.measure import launch, server
from benchwatch.measure.verify import first_difference, mask
from benchwatch.project.loading import load_project

pytestmark = pytest.mark.slow


def test_mask_and_first_difference_name_the_path() -> None:
    got = mask({"items": [{"id": 1, "at": "2024-01-01"}]}, {"at"})
    assert got == {"items": [{"id": 1, "at": "<str>"}]}
    assert first_difference({"a": [1, 2]}, {"a": [1, 3]}) == "$.a[1]: got 2, want 3"
    assert first_difference({"a": [1]}, {"a": [1, 2]}) == "$.a: 1 items, want 2"
    assert first_difference({"a": 1}, {"a": 1, "b": 2}) == "$.b: missing"


def test_verify_reports_each_broken_variant_and_still_checks_the_rest(
    fixture_project: Path,
) -> None:
    done = benchwatch(
        "verify",
        "-k",
        "good@*,broken_import@*,never_ready@*,wrong_body@*,todo_api@*",
        root=fixture_project,
    )
    out = done.stdout + done.stderr
    assert done.returncode == 2, out  # not measured
    assert "2 of 5 variants verified; 3 failed" in out, out
    assert "broken_import@latest [boot]: server exited with code" in out
    assert "this_module_does_not_exist" in out  # the stderr tail is shown
    assert "never_ready@latest [boot]: not ready after 3s" in out
    assert (
        "wrong_body@latest GET /items [verify]: body differs from ../good/expected/items.json: $: 2 items, want 3"
        in out
    )
    assert "wrong_body@latest GET /nope [verify]: status 404, want 200" in out
    assert "FAIL good@latest" not in done.stderr
    assert "FAIL todo_api@own" not in done.stderr  # own requirements, env {tmp}, pre_start all work
    assert uvicorn_processes(str(fixture_project)) == []


def test_port_already_taken_is_a_clear_boot_error(fixture_project: Path) -> None:
    variant = next(v for v in load_project(fixture_project).variants() if v.id == "good@latest")
    env = envs.ensure(variant.stack)
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        taken = sock.getsockname()[1]
        with pytest.raises(server.BootError, match=f"port 127.0.0.1:{taken} is already in use"):
            with launch.running(variant, env, launch.ServerOptions(port=taken)):
                pass


def test_server_tree_is_measured_and_stopped(fixture_project: Path) -> None:
    variant = next(v for v in load_project(fixture_project).variants() if v.id == "good@latest")
    env = envs.ensure(variant.stack)
    with launch.running(variant, env) as srv:
        pid = srv.pid
        assert srv.rss_bytes() > 10_000_000  # a Python process with FastAPI loaded
        assert srv.cpu_seconds() > 0
        assert env.version("fastapi") == "0.165.0"
    assert not _alive(pid)


def test_ctrl_c_during_verify_leaves_no_server(fixture_project: Path) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "benchwatch", "verify", "-k", "slow@*"],
        env={**os.environ, "BENCHWATCH_ROOT": str(fixture_project)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 60
    while not uvicorn_processes("apps/slow") and time.monotonic() < deadline:
        time.sleep(0.2)
    assert uvicorn_processes("apps/slow"), "the slow server never started"
    time.sleep(1.0)  # verify is now waiting on the 30 s endpoint
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err
    assert "interrupted" in err
    assert uvicorn_processes("apps/slow") == []


def test_unknown_pattern_is_one_error_line(fixture_project: Path) -> None:
    done = benchwatch("verify", "-k", "nosuch@*", root=fixture_project)
    assert done.returncode == 3
    assert (
        done.stderr.strip()
        == "ERROR: -k: pattern 'nosuch@*' matches no variant (see `benchwatch list`)"
    )


def test_unknown_stack_is_one_error_line(fixture_project: Path) -> None:
    done = benchwatch("list", "--stacks", "v9", root=fixture_project)
    assert done.returncode == 3
    assert done.stderr.startswith("ERROR: unknown stack 'v9'; known stacks: seed-v1")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True
