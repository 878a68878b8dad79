"""ruff over the whole project, so `./bw test` is the one command CI needs."""

from __future__ import annotations

import subprocess
import sys

from conftest import REPO


def test_ruff_is_clean() -> None:
    done = subprocess.run([sys.executable, "-m", "ruff", "check", "src", "tests", "apps", "benchmarks", "scripts",
                           "examples"], cwd=REPO, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


def test_every_test_the_last_pass_groups_exists_and_runs_in_that_pass() -> None:
    """conftest's ONE_WORKER_EACH names tests by node id: a renamed test would silently leave its
    group (and unbalance the workers), a test without `runner` or `load_independent` would never be
    in the pass the groups are for."""
    from conftest import ONE_WORKER_EACH

    for group, names in ONE_WORKER_EACH.items():
        for name in names:
            path, _, function = name.partition("::")
            text = (REPO / path).read_text()
            if function:
                assert f"\ndef {function}(" in text, f"{group}: {name} is not defined"
                head = text[: text.index(f"\ndef {function}(")]
                decorators = head[head.rstrip().rfind("\n\n") :]  # the marks right above it
                marked = "load_independent" in decorators or "pytest.mark.runner" in text
            else:  # a whole module: the tests of it that the pass selects
                marked = "pytest.mark.load_independent" in text
            assert marked, f"{group}: {name} carries neither runner nor load_independent"
