"""A team's nightly as `init` writes it, under act (tests/test_runner.py's harness), against a
package index on 127.0.0.1 (tests/runner/package_index.py): PyPI as the app's lock saw it, plus
releases of FastAPI this test builds from the locked wheel.

The repository is shaped like the full-stack template (tests/fixtures/fullstack_repo, adopted by
`init` with test_fullstack.py's settings: a login, a PostgreSQL database per boot), its
declaration narrowed to two of init's five endpoints (the quick one, timed, and one counted) and
its nightly to 6 load rounds: what a night does is the same, in less time. Night one: a newer
FastAPI that changes nothing, and the night is quiet (the state recorded, no issue). Night two: a
newer FastAPI made slower on purpose (FastAPI.__call__, which every request passes, stats `/` a
few hundred times), and the nightly opens one issue, the only one (tonight's change points on the
nightly trend are listed in it), naming the package, its version, an endpoint, the system call
and the functions that moved.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from conftest import REPO
from runner.harness import Sandbox, act_binary, tail
from runner.package_index import PackageIndex, download, rebuilt_wheel
from runner.stub_api import StubAPI

LONG_RUN = "BENCHWATCH_NIGHTLY_RUNNER"

pytestmark = [
    pytest.mark.slow,
    pytest.mark.runner,  # `./bw test -m runner`; .ci/run's runner pass
    pytest.mark.timeout(3600),
    pytest.mark.skipif(
        act_binary() is None and not os.environ.get("CI"),
        reason="act is not installed (.ci/run installs it)",
    ),
    # two nights of the real nightly (a compare, and on night two a compare per moved package):
    # more than .ci/run's budget on a busy 2-core machine, so asked for by name
    pytest.mark.skipif(
        not os.environ.get(LONG_RUN),
        reason=f"two nightlies under act: set {LONG_RUN}=1 to run it",
    ),
]

TOOL = "bench/benchwatch"
TEAM = "team/fullstack"
FULLSTACK = REPO / "tests" / "fixtures" / "fullstack_repo"
WATCHED = ("fastapi", "pydantic", "pydantic-core", "starlette", "uvicorn")
NIGHT_SECONDS = 1500
CALL = "    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:\n"
STATS = 300  # extra stat("/") calls per request in the slower release
SLOWER = CALL + f"        for _ in range({STATS}):  # benchwatch-test: slower on purpose\n"
SLOWER += "            os.stat('/')\n"
KEPT = ("items", "items_id")  # the quick endpoint (timed and counted) and one counted only
ROUNDS = (
    '      rounds: "6"\n'  # the fewest load rounds whose pairs give a 95 % interval (4 gave exit 2)
)
APP = "backend/benchwatch/benchwatch-app.toml"


def locked_versions() -> dict[str, str]:
    lock = tomllib.loads((FULLSTACK / "backend" / "uv.lock").read_text())
    return {p["name"]: p["version"] for p in lock["package"] if p["name"] in WATCHED}


def adopted(sandbox: Sandbox, tool: str, tmp_path: Path, environ: dict[str, str], index: str):
    """The fixture as `init` adopts it, its nightly given the local index; main's commit and the
    repository secret init asked for."""
    from test_fullstack import SECRETS, SETTINGS

    repo = tmp_path / "fullstack"
    shutil.copytree(FULLSTACK, repo, ignore=shutil.ignore_patterns("__pycache__"))
    inited = subprocess.run(
        [sys.executable, "-m", "benchwatch", "init", "--workflows-from", f"{TOOL}@{tool}"]
        + SETTINGS,
        cwd=repo,
        env=environ,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert inited.returncode == 0, inited.stdout + inited.stderr
    asked = re.search(
        r"^init: create the repository secret (\w+) with .* each of (.*) \(", inited.stdout, re.M
    )
    assert asked, inited.stdout
    secrets = {asked[1]: "".join(f"{n}={SECRETS[n]}\n" for n in asked[2].split(", "))}
    nightly = ".github/workflows/benchwatch-nightly.yml"
    written = (repo / nightly).read_text()
    assert "releases: true" in written and "reusable-issues.yml" in written, written
    python = '      python-version: "3.12"\n'
    narrowed(repo / APP, KEPT)
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    main = sandbox.start(
        repo, [(nightly, python, python + ROUNDS + f'      index-url: "{index}"\n')]
    )
    return main, secrets


def narrowed(app_file: Path, kept: tuple[str, ...]) -> None:
    """The declaration with only the `kept` endpoints (their `[endpoints.expect]` tables with
    them; every other table as init wrote it)."""
    text, keep = [], True
    for block in re.split(r"(?m)^(?=\[)", app_file.read_text()):
        if block.startswith("[[endpoints]]"):
            name = re.search(r'(?m)^name = "([^"]+)"', block)
            keep = name is not None and name[1] in kept
        elif not block.startswith("[endpoints."):
            keep = True
        if keep:
            text.append(block)
    app_file.write_text("".join(text))
    declared = [e["name"] for e in tomllib.loads(app_file.read_text())["endpoints"]]
    assert sorted(declared) == sorted(kept), declared


def test_a_team_s_nightly_is_quiet_on_a_harmless_release_and_names_a_slower_one(
    tmp_path: Path,
) -> None:
    from test_fullstack import _environ

    environ = _environ()  # skips without PostgreSQL
    locked = locked_versions()
    with StubAPI(TEAM) as api, PackageIndex(held=locked) as index:
        sandbox = Sandbox(tmp_path, api, TEAM)
        tool = sandbox.add_repository(TOOL, REPO)
        main, secrets = adopted(sandbox, tool, tmp_path, environ, index.url)
        (source,) = [
            f["url"]
            for f in index.simple("fastapi")["files"]
            if f["filename"] == f"fastapi-{locked['fastapi']}-py3-none-any.whl"
        ]
        wheel = download(source, tmp_path / "wheels")
        night = {"schedule": "17 3 * * *", "repository": sandbox.repository_payload()}

        def run_night(run_id: int) -> subprocess.CompletedProcess:
            done = sandbox.act(
                "schedule",
                "benchwatch-nightly.yml",
                night,
                main,
                run_id,
                timeout=NIGHT_SECONDS,
                secrets=secrets,
            )
            assert done.returncode == 0, f"night {run_id} failed under act:\n{tail(done.stdout)}"
            return done

        # night one: a newer FastAPI that changes nothing
        harmless = bumped(locked["fastapi"], 1)
        index.add("fastapi", harmless, rebuilt_wheel(wheel, tmp_path / "harmless", harmless))
        quiet = run_night(701)
        state = json.loads(sandbox.gh_pages("nightly/state.json") or "{}")
        assert state.get("index_url") == index.url, tail(quiet.stdout)
        assert state["versions"]["fastapi"] == harmless, state
        assert (
            "backend@own-next" in quiet.stdout
            and f"fastapi {locked['fastapi']} → {harmless}" in quiet.stdout
        )
        assert api.state.issues == [], [i["title"] for i in api.state.issues]
        assert any(p.startswith(f"/files/fastapi-{harmless}-") for p in index.requests)

        # night two: a newer FastAPI, slower on purpose in what every request passes
        slower = bumped(locked["fastapi"], 2)
        edit = {"fastapi/applications.py": (CALL, SLOWER)}
        index.add("fastapi", slower, rebuilt_wheel(wheel, tmp_path / "slower", slower, edit))
        run_night(702)
        state = json.loads(sandbox.gh_pages("nightly/state.json") or "{}")
        assert state["versions"]["fastapi"] == slower, state
        # one issue, the nightly-regression one: tonight's change points are listed in it
        (issue,) = api.state.issues
        assert {"name": "nightly-regression"} in issue["labels"], issue["labels"]
        body = issue["body"]
        assert f"fastapi {locked['fastapi']} → {slower}" in body, body[:3000]
        assert re.search(r"\| fastapi \| \*\*regression\*\*", body), body[:3000]
        assert "Change points tonight on the nightly trend" in body, body[:6000]
        mechanism = body.partition("### Mechanism: what moved per request, own → own-next")[2]
        assert "GET /api/v1/" in mechanism, body[:6000]  # an endpoint, behind the login
        # the mechanism: the system call, and the functions whose instructions moved
        assert re.search(r"`(newfstatat|stat|statx)` 0\.00 → [1-9]", mechanism), body[:6000]
        assert re.search(r"\| `[^`]+ \([^`]+\)` \| [0-9,]+ \| [0-9,]+ \| \+", mechanism), body[
            :6000
        ]


def bumped(version: str, by: int) -> str:
    """`version` with its last part raised by `by`."""
    parts = version.split(".")
    return ".".join([*parts[:-1], str(int(parts[-1]) + by)])
