"""own vs own-next measured for real: an app's lock holds `slowlib` 1.0; 2.0, deliberately slower
per call, appears on a local find-links folder; the counts per request regress and the comment names
what moved; `own-next+slowlib` alone regresses too. fastapi and uvicorn come from PyPI."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from benchwatch.environments.uv_tool import uv_executable
from tests.conftest import benchwatch
from tests.wheel_index import add_wheel

FAST = "def work():\n    return sum(range(10))\n"
SLOW = "def work():\n    return sum(i * i for i in range(20000))  # on purpose\n"


@pytest.mark.slow
def test_a_slower_release_of_a_watched_package_regresses_own_next(tmp_path: Path) -> None:
    wheels = tmp_path / "index"
    add_wheel(wheels, "slowlib", "1.0", code=FAST)
    env = {"UV_FIND_LINKS": str(wheels / "simple" / "slowlib"), "UV_PYTHON_DOWNLOADS": "never"}
    root = tmp_path / "repo"
    app = root / "app"
    app.mkdir(parents=True)
    (root / "benchwatch.toml").write_text('[benchwatch]\napps = ["app"]\nwatch = ["slowlib"]\n')
    (app / "main.py").write_text(
        "import slowlib\nfrom fastapi import FastAPI\n\napp = FastAPI()\n\n\n"
        '@app.get("/")\ndef root():\n    return {"v": slowlib.work()}\n'
    )
    (app / "benchwatch-app.toml").write_text(
        'name = "shop"\napp = "main:app"\nrequirements = "uv.lock"\n'
        '[[endpoints]]\nname = "root"\npath = "/"\n'
    )
    python = f"{sys.version_info.major}.{sys.version_info.minor}"
    (app / "pyproject.toml").write_text(
        textwrap.dedent(f"""\
            [project]
            name = "shop"
            version = "0.1.0"
            requires-python = ">={python}"
            dependencies = ["fastapi==0.121.0", "uvicorn==0.38.0", "slowlib==1.0"]

            [tool.uv]
            package = false
            """)
    )
    done = subprocess.run(
        [uv_executable(), "lock", "--quiet", "--directory", str(app), "--python", sys.executable],
        capture_output=True,
        text=True,
        env={**os.environ, **env},
    )
    assert done.returncode == 0, done.stderr
    add_wheel(wheels, "slowlib", "2.0", code=SLOW)

    results = {}
    for head in ("own-next", "own-next+slowlib"):
        out = tmp_path / head
        done = benchwatch(
            "compare",
            "--base",
            "own",
            "--head",
            head,
            "--quick",
            "--no-load",
            "--no-micro",
            "--out",
            str(out),
            "-q",
            root=root,
            env=env,
            timeout=900,
        )
        results[head] = (done, out)

    for head, (done, out) in results.items():
        assert done.returncode == 1, (head, done.stdout[-2000:], done.stderr[-2000:])
        comment = (out / "comment.md").read_text()
        assert "slowlib 1.0 → 2.0" in comment, comment[:1500]
        data = json.loads((out / "compare.json").read_text())
        assert data["summary"]["exit_code"] == 1
