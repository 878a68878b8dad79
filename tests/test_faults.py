"""Faults planted in real runs, and what each leaves behind (docs/faults.md tabulates them): benchwatch
killed with SIGKILL mid-round (plain, under valgrind, with its own PostgreSQL cluster), a server killed
mid-round, PostgreSQL stopped mid-run, results written to a full filesystem, two record jobs pushing
gh-pages at once, a corrupt or truncated data.js. The faults are planted from here, on the real
processes (a kill, a `pg_ctl stop`, a full tmpfs), not through hooks in benchwatch.

None of these is `load_independent`: several check that no server of their own project is left."""

from __future__ import annotations

import json
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
from conftest import FIXTURE_APPS, REPO, benchwatch, make_project, uvicorn_processes
from helpers_git import GIT_ENV, bare_github, git, on_pages, record_push

from benchwatch.measure import database
from benchwatch.results.files import read_run
from benchwatch.trend import history

pytestmark = pytest.mark.slow

GOOD = FIXTURE_APPS / "good"
ITEMS = REPO / "tests" / "fixtures" / "items_api"
ITEMS_SECRETS = {
    "ITEMS_TEST_SECRET": "k3y-for-faults-1b2c",
    "BENCH_USER": "bench",
    "BENCH_PASSWORD": "pw-faults-3d4e",
}
T = TypeVar("T")


def own_app(tmp_path: Path, name: str) -> Path:
    """A copy of the `good` fixture app named `name`: its servers are found by its folder alone."""
    app = tmp_path / name
    shutil.copytree(GOOD, app, ignore=shutil.ignore_patterns("__pycache__"))
    declaration = app / "benchwatch-app.toml"
    declaration.write_text(declaration.read_text().replace('name = "good"', f'name = "{name}"'))
    return app


def start(
    args: list[str], project: Path, tmp_path: Path, env: dict | None = None
) -> subprocess.Popen:
    """`benchwatch ARGS` as a user runs it; its output in files (a pipe nobody reads could block it)."""
    environ = {
        k: v for k, v in os.environ.items() if k != database.URL_ENV
    }  # its own cluster unless `env` names one
    environ.update({"BENCHWATCH_ROOT": str(project), **(env or {})})
    return subprocess.Popen(
        [sys.executable, "-m", "benchwatch", *args],
        env=environ,
        cwd=project,
        stdout=open(tmp_path / "stdout", "w"),
        stderr=open(tmp_path / "stderr", "w"),
        stdin=subprocess.DEVNULL,
    )


def output(tmp_path: Path) -> str:
    return (tmp_path / "stdout").read_text() + (tmp_path / "stderr").read_text()


def wait_for(
    find: Callable[[], T | None],
    process: subprocess.Popen,
    tmp_path: Path,
    what: str,
    timeout: float = 300,
) -> T:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = find()
        if found:
            return found
        if process.poll() is not None:
            pytest.fail(
                f"benchwatch exited ({process.returncode}) before {what}:\n{output(tmp_path)[-3000:]}"
            )
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


def cluster_of(server: psutil.Process) -> Path:
    """The folder of the throwaway PostgreSQL cluster (measure/database.py's) whose database the
    server uses: the one listening on the port of the server's ITEMS_DATABASE_URL."""
    port = server.environ()["ITEMS_DATABASE_URL"].rsplit(":", 1)[1].split("/")[0]
    for proc in psutil.process_iter(["cmdline"]):
        argv = proc.info["cmdline"] or []
        if f"-p {port}" in " ".join(argv) or ["-p", port] == argv[-2:]:
            for arg in argv:
                if database.CLUSTER_PREFIX in arg and arg.endswith("/data"):
                    return Path(arg).parent
    pytest.fail(f"no throwaway cluster of benchwatch's listens on port {port}")


def scratch_of(server: psutil.Process) -> Path:
    """The boot's {tmp} folder: where the server's log (its stdout) is."""
    return Path(os.readlink(f"/proc/{server.pid}/fd/1")).parent


def needs_local_postgres() -> None:
    """benchwatch starts its own cluster from PostgreSQL's server binaries (as root through runuser)."""
    if database.server_bin() is None or (os.geteuid() == 0 and shutil.which("runuser") is None):
        pytest.skip("needs PostgreSQL's server binaries (initdb, pg_ctl), and runuser as root")


def as_cluster_owner() -> list[str]:
    return ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []


def items_pg(tmp_path: Path) -> Path:
    """The items API on a per-boot PostgreSQL database, copied so that its servers are ours alone."""
    app = tmp_path / "items"
    shutil.copytree(ITEMS, app, ignore=shutil.ignore_patterns("__pycache__"))
    return app / "postgres"


# --- benchwatch killed with SIGKILL ---------------------------------------------------------------


def test_sigkill_of_a_load_leaves_no_server_and_no_scratch_folder(tmp_path: Path) -> None:
    app = own_app(tmp_path, "good")
    project = make_project(tmp_path / "project", [app])
    process = start(
        ["load", "--quick", "-k", "good@latest", "--out", str(tmp_path / "out")], project, tmp_path
    )
    server = wait_for(lambda: answering(str(app)), process, tmp_path, "server answering")
    scratch = scratch_of(server)
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=30)
    assert running_after(lambda: uvicorn_processes(str(app))) == []
    assert running_after(lambda: [scratch] if scratch.exists() else [], 10) == []


def test_sigkill_of_a_load_on_its_own_postgresql_cluster_leaves_no_server_and_no_cluster(
    tmp_path: Path,
) -> None:
    needs_local_postgres()
    app = items_pg(tmp_path)
    project = make_project(tmp_path / "project", [app])
    process = start(
        ["load", "--quick", "-k", "items_pg@latest", "--out", str(tmp_path / "out")],
        project,
        tmp_path,
        env=ITEMS_SECRETS,
    )
    server = wait_for(
        lambda: answering(str(app.parent), "/health"), process, tmp_path, "server answering"
    )
    cluster = cluster_of(server)
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=30)
    assert running_after(lambda: uvicorn_processes(str(app.parent))) == []
    assert running_after(lambda: cluster_processes(str(cluster)), 30) == []
    assert running_after(lambda: [cluster] if cluster.exists() else [], 10) == []


@pytest.mark.postgres
def test_sigkill_of_a_load_on_a_configured_postgresql_drops_the_boots_database(
    tmp_path: Path, postgres_url: str
) -> None:
    app = items_pg(tmp_path)
    project = make_project(tmp_path / "project", [app])
    process = start(
        ["load", "--quick", "-k", "items_pg@latest", "--out", str(tmp_path / "out")],
        project,
        tmp_path,
        env={**ITEMS_SECRETS, database.URL_ENV: postgres_url},
    )
    server = wait_for(
        lambda: answering(str(app.parent), "/health"), process, tmp_path, "server answering"
    )
    name = server.environ()["ITEMS_DATABASE_URL"].rsplit("/", 1)[1]
    cluster = database.parse_url(postgres_url)

    def exists() -> list[str]:
        argv, extra = cluster.psql_command(
            f"SELECT datname FROM pg_database WHERE datname = '{name}'"
        )
        done = subprocess.run(
            [*argv, "-t", "-A"], env={**os.environ, **extra}, capture_output=True, text=True
        )
        assert done.returncode == 0, done.stderr
        return done.stdout.split()

    assert exists() == [name]
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=30)
    assert running_after(lambda: uvicorn_processes(str(app.parent))) == []
    assert running_after(exists, 30) == []


def test_sigkill_of_a_count_leaves_no_valgrind_server(tmp_path: Path) -> None:
    if shutil.which("valgrind") is None:
        pytest.skip("valgrind is not installed")
    app = own_app(tmp_path, "good")
    project = make_project(tmp_path / "project", [app])
    process = start(
        [
            "counts",
            "--quick",
            "-k",
            "good@latest",
            "--repeats",
            "1",
            "--out",
            str(tmp_path / "out"),
        ],
        project,
        tmp_path,
    )
    wait_for(
        lambda: answering(str(app), wrapped="valgrind"),
        process,
        tmp_path,
        "server under valgrind answering",
    )
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=30)
    assert running_after(lambda: uvicorn_processes(str(app))) == []


# --- a server killed mid-round, PostgreSQL stopped mid-run -------------------------------------------


def test_a_server_killed_mid_round_leaves_its_figures_invalid_with_the_reason_and_the_others_measured(
    tmp_path: Path,
) -> None:
    victim, other = own_app(tmp_path, "victim"), own_app(tmp_path, "other")
    project = make_project(tmp_path / "project", [victim, other])
    out = tmp_path / "out"
    process = start(
        ["load", "--quick", "--rounds", "1", "-k", "victim@latest,other@latest", "--out", str(out)],
        project,
        tmp_path,
    )
    server = wait_for(
        lambda: under_load(str(victim)), process, tmp_path, "oha loading the victim's server"
    )
    server.kill()
    code = process.wait(timeout=600)
    text = output(tmp_path)
    assert code == 2, text
    run = read_run(out)
    assert run.complete
    assert not [f for f in run.figures if f.variant == "victim@latest" and f.valid]
    died = [p for p in run.problems if p.variant == "victim@latest"]
    assert died and all("died" in p.reason or "refused" in p.reason.lower() for p in died), died
    assert "victim@latest" in text and "died" in text
    measured = {f.metric for f in run.figures if f.variant == "other@latest" and f.valid}
    assert {"cpu_us_per_request", "rps"} <= measured, run.problems
    assert not [p for p in run.problems if p.variant == "other@latest"]
    assert all(
        e["name"].startswith("other@latest ")
        for e in json.loads((out / "gab-smaller.json").read_text())
    )
    assert uvicorn_processes(str(tmp_path)) == []


def test_postgresql_stopped_mid_run_leaves_that_figure_invalid_with_the_servers_error(
    tmp_path: Path,
) -> None:
    needs_local_postgres()
    app, other = items_pg(tmp_path), own_app(tmp_path, "other")
    project = make_project(tmp_path / "project", [app, other])
    out = tmp_path / "out"
    process = start(
        [
            "load",
            "--quick",
            "--rounds",
            "1",
            "-k",
            "items_pg@latest,other@latest",
            "--out",
            str(out),
        ],
        project,
        tmp_path,
        env=ITEMS_SECRETS,
    )
    server = wait_for(
        lambda: under_load(str(app.parent)), process, tmp_path, "oha loading the database's server"
    )
    cluster = cluster_of(server)
    pg_ctl = database.server_bin() / "pg_ctl"  # type: ignore[operator]
    stopped = subprocess.run(
        [*as_cluster_owner(), str(pg_ctl), "-D", str(cluster / "data"), "-m", "immediate", "stop"],
        capture_output=True,
        text=True,
    )
    assert stopped.returncode == 0, stopped.stderr
    code = process.wait(timeout=600)
    text = output(tmp_path)
    assert code == 2, text
    run = read_run(out)
    assert not [f for f in run.figures if f.variant == "items_pg@latest" and f.valid]
    failed = [p for p in run.problems if p.variant == "items_pg@latest"]
    assert failed, text
    assert any("OperationalError" in (p.detail or "") for p in failed), (
        failed
    )  # the server's own traceback
    assert (
        "the server said: sqlalchemy.exc.OperationalError: (psycopg.OperationalError) connection"
        in text
    ), text
    assert {"cpu_us_per_request", "rps"} <= {
        f.metric for f in run.figures if f.variant == "other@latest" and f.valid
    }
    assert not [
        s
        for s in ITEMS_SECRETS.values()
        if len(s) > 8 and s in text + (out / "run.json").read_text()
    ]
    assert uvicorn_processes(str(tmp_path)) == []
    assert running_after(lambda: [cluster] if cluster.exists() else [], 10) == []


# --- a full filesystem --------------------------------------------------------------------------------


@pytest.fixture
def tiny_fs(tmp_path: Path):
    """A 1 MiB tmpfs mounted for the test (as root, or through `sudo -n` as a GitHub runner has it),
    unmounted after."""
    prefix = [] if os.geteuid() == 0 else ["sudo", "-n"]
    mount = tmp_path / "tiny"
    mount.mkdir()
    done = subprocess.run(
        [*prefix, "mount", "-t", "tmpfs", "-o", "size=1m,mode=1777", "tmpfs", str(mount)],
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")
    try:
        yield mount
    finally:
        subprocess.run([*prefix, "umount", "-l", str(mount)], capture_output=True)


def fill(mount: Path) -> None:
    """Take every byte left on the filesystem (a file can still be created: tmpfs counts inodes apart)."""
    with open(mount / "filler", "wb", buffering=0) as handle:
        chunk = b"\0" * 4096
        while True:
            try:
                handle.write(chunk)
            except OSError:
                break
    with open(mount / "filler", "ab", buffering=0) as handle:
        try:
            handle.write(b"\0")
            pytest.fail("the filesystem is not full")
        except OSError:
            pass


def test_results_on_a_full_filesystem_are_one_error_and_no_half_written_file(
    tmp_path: Path, tiny_fs: Path
) -> None:
    app = own_app(tmp_path, "good")
    project = make_project(tmp_path / "project", [app])
    out = tiny_fs / "out"
    out.mkdir()
    fill(tiny_fs)
    done = benchwatch(
        "load", "--quick", "--rounds", "1", "-k", "good@latest", "--out", str(out), root=project
    )
    assert done.returncode == 3, done.stdout + done.stderr
    errors = [line for line in done.stderr.splitlines() if line.startswith("ERROR:")]
    assert len(errors) == 1 and "No space left on device" in errors[0] and str(out) in errors[0], (
        done.stderr
    )
    assert "Traceback" not in done.stderr
    assert list(out.iterdir()) == []  # nothing half-written, no temporary file left
    assert uvicorn_processes(str(tmp_path)) == []


def test_a_history_on_a_full_filesystem_is_untouched(tmp_path: Path, tiny_fs: Path) -> None:
    gab = tmp_path / "gab.json"
    gab.write_text(
        json.dumps([{"name": "good@latest GET /items c=10 cpu/req", "unit": "us", "value": 120.5}])
    )
    data_js = tiny_fs / "dev" / "bench" / "data.js"
    first = benchwatch(*trend_add(data_js, gab, "a" * 40))
    assert first.returncode == 0, first.stderr
    before = data_js.read_bytes()
    fill(tiny_fs)
    done = benchwatch(*trend_add(data_js, gab, "b" * 40))
    assert done.returncode == 3, done.stderr
    assert done.stderr.startswith(
        f"ERROR: {data_js}: could not be written (No space left on device)"
    ), done.stderr
    assert data_js.read_bytes() == before
    assert sorted(p.name for p in data_js.parent.iterdir()) == ["data.js"]


# --- gh-pages: two publishes at once, a corrupt or truncated data.js ---------------------------------


@pytest.fixture
def remote(tmp_path: Path) -> Path:
    """A bare 'GitHub' with main (two commits) and an empty gh-pages branch (docs/github.md's set-up)."""
    return bare_github(tmp_path, 2)


def trend_add(data_js: Path, gab: Path, sha: str) -> tuple[str, ...]:
    """`benchwatch trend-add`'s arguments: the gab file's points added to data_js as `sha`'s."""
    return (
        "trend-add",
        str(data_js),
        "--gab",
        str(gab),
        "--suite",
        history.SMALLER,
        "--commit",
        sha,
    )


def add_point(data_js: Path, gab: Path, value: float, sha: str) -> None:
    """One trend point added to a data.js by `benchwatch trend-add`, from a gab file at `gab`."""
    gab.write_text(
        json.dumps([{"name": "good@latest GET /items c=10 cpu/req", "unit": "us", "value": value}])
    )
    added = benchwatch(*trend_add(data_js, gab, sha))
    assert added.returncode == 0, added.stderr


def record_job(
    remote: Path, workdir: Path, name: str, sha: str, data_dir: str, value: float
) -> subprocess.Popen:
    """One record job: a fresh clone, the trend point added to gh-pages' data.js by `benchwatch
    trend-add` (what github-action-benchmark does with auto-push: false), then record_push.sh started."""
    clone = workdir / name
    git(workdir, "clone", "-q", str(remote), str(clone))
    on_pages(clone)
    add_point(clone / data_dir / "data.js", workdir / f"{name}.json", value, sha)
    git(clone, "add", "-A")
    git(clone, "commit", "-q", "-m", f"add {name}")
    git(clone, "switch", "-q", "main")
    state = ["--state", f"{data_dir}/published.json", "--sha", sha]
    return subprocess.Popen(
        record_push(clone, remote, f"{name} files", *state),
        env={**os.environ, **GIT_ENV},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def published_points(remote: Path, data_dir: str) -> list[tuple[str, float]]:
    text = git(remote, "show", f"gh-pages:{data_dir}/data.js")
    data = json.loads(text.removeprefix(history.PREFIX).rstrip(";\n"))
    return [(e["commit"]["id"], e["benches"][0]["value"]) for e in data["entries"][history.SMALLER]]


def test_a_publish_and_a_nightly_pushing_gh_pages_at_once_both_land(
    remote: Path, tmp_path: Path
) -> None:
    c1, c2 = git(remote, "rev-list", "--reverse", "main").split()
    jobs = [
        record_job(remote, tmp_path, "publish", c2, "dev/bench", 100.0),
        record_job(remote, tmp_path, "nightly", c2, "nightly", 200.0),
    ]
    results = [job.communicate(timeout=120) for job in jobs]
    assert [job.returncode for job in jobs] == [0, 0], results
    assert published_points(remote, "dev/bench") == [(c2, 100.0)]
    assert published_points(remote, "nightly") == [(c2, 200.0)]


def test_two_publishes_of_one_trend_at_once_one_lands_the_other_retries_and_nothing_is_lost(
    remote: Path,
    tmp_path: Path,
) -> None:
    c1, c2 = git(remote, "rev-list", "--reverse", "main").split()
    jobs = [
        record_job(remote, tmp_path, "first", c1, "dev/bench", 100.0),
        record_job(remote, tmp_path, "second", c2, "dev/bench", 101.0),
    ]
    results = [job.communicate(timeout=120) for job in jobs]
    codes = [job.returncode for job in jobs]
    assert sorted(codes) == [0, 1], (
        results
    )  # both edited dev/bench/data.js: the later push cannot rebase
    loser = codes.index(1)
    assert results[loser][1].strip().splitlines()[-1] == (
        "ERROR: gh-pages changed underneath in the same files (dev/bench/data.js): "
        "another record job of the same kind pushed; re-run this one"
    )
    winner_point = [(c1, 100.0), (c2, 101.0)][1 - loser]
    assert published_points(remote, "dev/bench") == [winner_point], (
        codes,
        results,
    )  # the winner's, whole
    # the re-run (a new record job of the same commit) lands on top: both points published
    sha, value = [(c1, 100.0), (c2, 101.0)][loser]
    rerun = record_job(remote, tmp_path, "rerun", sha, "dev/bench", value)
    _, err = rerun.communicate(timeout=120)
    assert rerun.returncode == 0, err
    assert sorted(published_points(remote, "dev/bench")) == sorted([(c1, 100.0), (c2, 101.0)])


def truncated_history(tmp_path: Path) -> tuple[Path, bytes]:
    """A data.js with two entries, cut in the middle of the second (a push or a disk that stopped)."""
    gab = tmp_path / "gab.json"
    gab.write_text(
        json.dumps([{"name": "good@latest GET /items c=10 cpu/req", "unit": "us", "value": 120.5}])
    )
    data_js = tmp_path / "pages" / "dev" / "bench" / "data.js"
    for sha in ("a" * 40, "b" * 40):
        done = benchwatch(*trend_add(data_js, gab, sha))
        assert done.returncode == 0, done.stderr
    whole = data_js.read_bytes()
    data_js.write_bytes(whole[: len(whole) * 3 // 4])
    return data_js, data_js.read_bytes()


@pytest.mark.parametrize("damage", ["truncated", "corrupt"])
def test_a_damaged_data_js_is_reported_and_never_overwritten(tmp_path: Path, damage: str) -> None:
    data_js, before = truncated_history(tmp_path)
    if damage == "corrupt":
        before = before.replace(b'"entries"', b'"entries" oops', 1) + b"}}"
        data_js.write_bytes(before)
    gab = tmp_path / "gab.json"
    site = tmp_path / "site"
    commands = {
        "trend-add": trend_add(data_js, gab, "c" * 40),
        "changes": ("changes", "--data", str(data_js.parent)),
        "site": ("site", "--out", str(site), "--data", str(data_js.parent), "--no-copy"),
    }
    for name, args in commands.items():
        done = benchwatch(*args, root=REPO)
        assert done.returncode == 3, (name, done.stdout, done.stderr)
        errors = [line for line in done.stderr.splitlines() if line.startswith("ERROR:")]
        assert errors == [
            f"ERROR: {data_js}: corrupt history" + errors[0].split("corrupt history", 1)[-1]
        ], (name, done.stderr)
        assert "fix or move it away" in errors[0]
        assert data_js.read_bytes() == before, name
    assert sorted(p.name for p in data_js.parent.iterdir()) == ["data.js"]
    assert not (site / "index.html").exists()


def test_a_record_job_never_pushes_a_damaged_data_js_back_with_less(
    remote: Path, tmp_path: Path
) -> None:
    """github-action-benchmark reads a data.js it cannot parse as an empty history ("Could not find
    data.js … Using empty default") and writes the new point alone: record_push.sh refuses that push."""
    c1, c2 = git(remote, "rev-list", "--reverse", "main").split()
    damaged, _ = truncated_history(tmp_path)  # two entries, cut inside the second
    seed = tmp_path / "seed"
    git(seed, "switch", "-q", "gh-pages")
    (seed / "dev" / "bench").mkdir(parents=True)
    shutil.copy(damaged, seed / "dev" / "bench" / "data.js")
    git(seed, "add", "-A")
    git(seed, "commit", "-q", "-m", "a push that stopped half-way")
    git(seed, "push", "-q", "origin", "gh-pages")
    before = git(remote, "rev-parse", "gh-pages")
    clone = tmp_path / "job"
    git(tmp_path, "clone", "-q", str(remote), str(clone))
    on_pages(clone)
    (clone / "dev" / "bench" / "data.js").unlink()  # what the action does: starts again empty …
    add_point(clone / "dev" / "bench" / "data.js", tmp_path / "gab-c2.json", 99.0, c2)
    # … and writes this push's point alone
    git(clone, "commit", "-q", "-am", "add c2")
    git(clone, "switch", "-q", "main")
    done = subprocess.run(
        record_push(clone, remote, "c2", "--state", "dev/bench/published.json", "--sha", c2),
        env={**os.environ, **GIT_ENV},
        capture_output=True,
        text=True,
    )
    assert done.returncode == 1, done.stderr
    assert (
        done.stderr.strip()
        .splitlines()[-1]
        .startswith(
            "ERROR: dev/bench/data.js: gh-pages holds 2 entries and this push would leave 1"
        )
    ), done.stderr
    assert (
        git(remote, "rev-parse", "gh-pages") == before
    )  # nothing pushed: the damaged file stays to be repaired
