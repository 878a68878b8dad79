"""ruff's linter and formatter over the whole project, and mypy over src/benchwatch (its settings:
pyproject.toml's [tool.mypy]), so `./bw test` is the one command CI needs."""

from __future__ import annotations

import subprocess
import sys

from conftest import REPO

LINTED = ["src", "tests", "apps", "benchmarks", "scripts", "examples"]


def _ruff(*argv: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "ruff", *argv], cwd=REPO, capture_output=True, text=True
    )


def test_ruff_is_clean() -> None:
    done = _ruff("check", *LINTED)
    assert done.returncode == 0, done.stdout + done.stderr


def test_ruff_format_leaves_every_file_as_it_is() -> None:
    """The apps, examples and benchmarks are left as written (pyproject.toml says why)."""
    done = _ruff("format", "--check", ".")
    assert done.returncode == 0, done.stdout + done.stderr


def test_mypy_finds_no_error_in_the_package() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "mypy"], cwd=REPO, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Success: no issues found" in done.stdout
