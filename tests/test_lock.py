"""benchwatch's own dependencies are locked in uv.lock and ./bw installs exactly those versions."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from conftest import REPO

LOCK = REPO / "uv.lock"
# `python -m venv` seeds these; uv sync leaves them and they are not benchwatch's dependencies.
VENV_SEEDS = {"pip", "setuptools"}


def locked_versions(lock: Path = LOCK) -> dict[str, set[str]]:
    """name -> versions; a package can be locked at one version per Python range."""
    versions: dict[str, set[str]] = {}
    with lock.open("rb") as f:
        for package in tomllib.load(f)["package"]:
            versions.setdefault(package["name"], set()).add(package["version"])
    return versions


def installed_versions(venv: Path) -> dict[str, str]:
    done = subprocess.run(
        [str(venv / "bin" / "uv"), "pip", "freeze", "--python", str(venv / "bin" / "python")],
        capture_output=True,
        text=True,
        check=True,
    )
    versions = {}
    for line in done.stdout.splitlines():
        if line.startswith("-e "):  # the project itself, editable
            continue
        name, _, version = line.partition("==")
        versions[name.lower().replace("_", "-")] = version
    return versions


def assert_venv_matches_lock(venv: Path, project: Path) -> None:
    locked = locked_versions(project / "uv.lock")
    installed = installed_versions(venv)
    assert installed, f"nothing installed in {venv}"
    wrong = {
        n: (v, locked.get(n))
        for n, v in installed.items()
        if n not in VENV_SEEDS and v not in locked.get(n, ())
    }
    assert not wrong, f"installed (version, locked versions) differ: {wrong}"
    check = subprocess.run(
        [
            str(venv / "bin" / "uv"),
            "sync",
            "--frozen",
            "--extra",
            "dev",
            "--check",
            "--offline",
            "--project",
            str(project),
            "--python",
            str(venv / "bin" / "python"),
        ],
        capture_output=True,
        text=True,
    )
    assert check.returncode == 0, check.stdout + check.stderr


def test_lock_matches_pyproject():
    uv = shutil.which("uv", path=str(Path(sys.executable).parent)) or pytest.skip(
        "uv is not installed next to python"
    )
    done = subprocess.run(
        [uv, "lock", "--check", "--offline"], cwd=REPO, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_lock_pins_uv_and_the_dev_tools():
    locked = locked_versions()
    assert {"uv", "pytest", "ruff", "zizmor", "pyyaml", "pydantic", "numpy", "scipy"} <= set(locked)


def test_this_environment_is_the_locked_one():
    venv = REPO / ".venv"
    if Path(sys.prefix).resolve() != venv.resolve():
        pytest.skip(f"tests run outside {venv} (not through ./bw)")
    assert_venv_matches_lock(venv, REPO)


@pytest.mark.slow
@pytest.mark.load_independent
def test_bw_on_a_fresh_machine_installs_exactly_the_locked_versions(tmp_path):
    """A copy of the repository without .venv: ./bw bootstraps uv from the hashes in uv.lock and
    syncs. oha is stubbed on PATH so ./bw does not spend minutes in cargo: this checks Python only."""
    files = subprocess.run(
        ["git", "ls-files", "-co", "--exclude-standard", "-z"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split("\0")
    project = tmp_path / "repo"
    for name in filter(None, files):
        source = REPO / name
        if source.is_file():
            (project / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, project / name)
    stubs = tmp_path / "stubs"
    stubs.mkdir()
    (stubs / "oha").write_text("#!/bin/sh\necho 'oha 1.16.0 (stub)'\n")
    (stubs / "oha").chmod(0o755)
    env = {
        **os.environ,
        "PATH": f"{stubs}:{os.environ['PATH']}",
        "BENCHWATCH_PYTHON": sys._base_executable,
    }
    env.pop("VIRTUAL_ENV", None)
    done = subprocess.run(
        ["./bw", "--version"], cwd=project, env=env, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "installing the locked versions" in done.stderr
    venv = project / ".venv"
    assert_venv_matches_lock(venv, project)
    assert {installed_versions(venv)["uv"]} == locked_versions(project / "uv.lock")["uv"]
