"""ruff over the whole project, so `./bw test` is the one command CI needs."""

from __future__ import annotations

import subprocess
import sys

from conftest import REPO


def test_ruff_is_clean() -> None:
    done = subprocess.run([sys.executable, "-m", "ruff", "check", "src", "tests", "apps", "benchmarks", "scripts",
                           "examples"], cwd=REPO, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
