"""The real apps, booted under uvicorn on real stacks, verified like a user would."""

from __future__ import annotations

import pytest
from conftest import REPO, benchwatch, uvicorn_processes

from benchwatch.project.loading import load_project

pytestmark = pytest.mark.slow


def test_every_scenario_verifies_on_seed_v1_and_latest() -> None:
    project = load_project(REPO)
    chosen = [v.id for v in project.variants(["seed-v1", "latest"])]
    assert {v.split("@")[0].split("-")[0] for v in chosen} == {
        "services",
        "github_user",
        "payloads",
        "posts",
        "hello",
    }
    done = benchwatch("verify", "--stacks", "seed-v1,latest", "-q")
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"{len(chosen)} of {len(chosen)} variants verified" in done.stdout
    # the servers run from this checkout (their working directory): no other checkout's count
    assert uvicorn_processes(str(REPO)) == []


def test_posts_on_postgresql(postgres_url: str) -> None:
    done = benchwatch(
        "verify", "-k", "posts@seed-v1,posts@latest", "-q", env={"DATABASE_URL": postgres_url}
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "2 of 2 variants verified" in done.stdout


def test_unreachable_database_url_fails_at_boot_with_the_reason() -> None:
    unreachable = "postgresql+psycopg://bench@127.0.0.1:9/nowhere"  # port 9: nothing listens
    done = benchwatch(
        "verify", "-k", "posts@latest,services@latest", "-q", env={"DATABASE_URL": unreachable}
    )
    assert done.returncode == 2  # not measured
    assert "FAIL posts@latest [boot]: server exited with code" in done.stderr
    assert "127.0.0.1" in done.stderr and "9" in done.stderr  # the tail names what failed
    assert "1 of 2 variants verified; 1 failed" in done.stdout  # services still verified
