"""A local bare repository standing in for GitHub, and git run as a fixed committer: what the
record jobs' tests (test_record_push.py, test_faults.py) clone from and push to."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from conftest import REPO

RECORD_PUSH = REPO / "scripts" / "record_push.sh"
GIT_ENV = {
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.org",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.org",
    "HOME": "/nonexistent",
    "GIT_CONFIG_NOSYSTEM": "1",
}


def git(cwd: Path, *args: str, env: dict[str, str] | None = None) -> str:
    """git's output, stripped; a failing git fails the test with its stderr."""
    done = subprocess.run(
        ["git", *args],
        cwd=cwd,
        env=env if env is not None else {**os.environ, **GIT_ENV},
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, f"git {' '.join(args)}: {done.stderr}"
    return done.stdout.strip()


def bare_github(tmp_path: Path, commits: int, env: dict[str, str] | None = None) -> Path:
    """A bare 'GitHub' at tmp_path/origin.git with main (c1..c<commits>, each changing app.txt)
    and an empty gh-pages branch (docs/github.md's set-up); its seed clone stays at tmp_path/seed."""
    bare = tmp_path / "origin.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(bare), env=env)
    seed = tmp_path / "seed"
    git(tmp_path, "clone", "-q", str(bare), str(seed), env=env)
    for n in range(1, commits + 1):
        (seed / "app.txt").write_text(f"version {n}\n")
        git(seed, "add", "app.txt", env=env)
        git(seed, "commit", "-q", "-m", f"c{n}", env=env)
    git(seed, "push", "-q", "origin", "main", env=env)
    git(seed, "switch", "-q", "--orphan", "gh-pages", env=env)
    git(seed, "commit", "-q", "--allow-empty", "-m", "Start gh-pages", env=env)
    git(seed, "push", "-q", "origin", "gh-pages", env=env)
    return bare


def on_pages(clone: Path, env: dict[str, str] | None = None) -> None:
    """A clone switched to gh-pages, fetched from origin (what github-action-benchmark does)."""
    git(clone, "fetch", "-q", "origin", "gh-pages:gh-pages", env=env)
    git(clone, "switch", "-q", "gh-pages", env=env)


def record_push(clone: Path, remote: Path, message: str, *args: str) -> list[str]:
    """The command line of scripts/record_push.sh for one record job's clone."""
    return [
        "bash",
        str(RECORD_PUSH),
        "--repo",
        str(clone),
        "--remote",
        str(remote),
        "--message",
        message,
        *args,
    ]
