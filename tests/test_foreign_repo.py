"""benchwatch as a user gets it: the built wheel in a fresh venv, run in a throwaway repository
with its own FastAPI app and git history (`init`, `verify`, `run`, `compare` of two commits)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import REPO

SHOP = REPO / "tests" / "fixtures" / "shop"  # the user's app: scripts/time_user_repo.sh uses it too


def _run(
    argv: list[str], cwd: Path, env: dict[str, str], timeout: float = 600
) -> subprocess.CompletedProcess:
    done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, f"{' '.join(argv)}: {done.stdout[-1500:]}\n{done.stderr[-1500:]}"
    return done


def _uv() -> str:
    found = Path(sys.executable).parent / "uv"
    return (
        str(found) if found.is_file() else shutil.which("uv") or pytest.skip("uv is not installed")
    )


@pytest.mark.slow
def test_the_wheel_in_a_fresh_venv_benchmarks_a_foreign_repository(tmp_path: Path) -> None:
    uv = _uv()
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("BENCHWATCH_ROOT", "VIRTUAL_ENV", "PYTHONPATH"))
    }
    env["PATH"] = os.pathsep.join([str(Path.home() / ".cargo" / "bin"), env.get("PATH", "")])
    env.update(
        GIT_AUTHOR_NAME="t",
        GIT_AUTHOR_EMAIL="t@example.com",
        GIT_COMMITTER_NAME="t",
        GIT_COMMITTER_EMAIL="t@example.com",
    )
    _run([uv, "build", "--wheel", "--out-dir", str(tmp_path / "dist"), str(REPO)], tmp_path, env)
    (wheel,) = (tmp_path / "dist").glob("benchwatch-*.whl")
    venv = tmp_path / "venv"
    _run([uv, "venv", "--quiet", "--python", sys.executable, str(venv)], tmp_path, env)
    _run(
        [uv, "pip", "install", "--quiet", "--python", str(venv / "bin" / "python"), str(wheel)],
        tmp_path,
        env,
    )
    benchwatch = str(venv / "bin" / "benchwatch")
    packaged = _run(
        [
            str(venv / "bin" / "python"),
            "-c",
            "import benchwatch.project.stacks as c; print(c.default_stacks_file())",
        ],
        tmp_path,
        env,
    )
    assert str(venv) in packaged.stdout  # the stacks come from the wheel, not from this checkout

    repo = tmp_path / "shop-repo"
    (repo / "shop").mkdir(parents=True)
    (repo / "shop" / "__init__.py").write_text("")
    shutil.copy(SHOP / "main.py", repo / "shop" / "main.py")
    shutil.copy(SHOP / "requirements.txt", repo / "requirements.txt")
    _run(["git", "init", "-q"], repo, env)
    _run(["git", "add", "-A"], repo, env)
    _run(["git", "commit", "-qm", "A shop"], repo, env)

    timings: dict[str, float] = {}

    def step(name: str, *args: str) -> subprocess.CompletedProcess:
        started = time.monotonic()
        done = _run([benchwatch, *args], repo, env)
        timings[name] = round(time.monotonic() - started, 1)
        return done

    step("init", "init")
    app_file = (repo / "benchwatch" / "benchwatch-app.toml").read_text()
    assert 'app = "shop.main:app"' in app_file and "# The app reads SHOP_CURRENCY" in app_file
    assert (
        json.loads((repo / "benchwatch" / "expected" / "items.json").read_text())[1]["name"]
        == "item 1"
    )
    # the path parameter is filled from the list's first record, saved by a set-up request
    assert 'path = "/items/{item_id}"' in app_file and 'item_id = "{setup.items_id}"' in app_file
    assert (repo / "benchwatch" / "expected" / "items_item_id.json").is_file()
    again = subprocess.run([benchwatch, "init"], cwd=repo, env=env, capture_output=True, text=True)
    assert (
        again.returncode == 3 and again.stderr.startswith("ERROR: ") and "--force" in again.stderr
    )
    step("verify", "verify")
    step("run", "run", "--quick", "--no-micro", "--out", str(tmp_path / "run"))
    run = json.loads((tmp_path / "run" / "run.json").read_text())
    (key,) = run["environment"]["stacks"]
    assert (
        key.startswith("own:shop_repo:")
        and run["environment"]["stacks"][key]["pydantic"] == "2.0.3"
    )

    # the pull request that adds benchwatch (and changes the code, not the answers)
    main = repo / "shop" / "main.py"
    main.write_text(main.read_text().replace("return ITEMS\n", "return list(ITEMS)\n"))
    _run(["git", "add", "-A"], repo, env)
    _run(["git", "commit", "-qm", "Benchmark the shop with benchwatch"], repo, env)
    out = tmp_path / "compare"
    step(
        "compare",
        "compare",
        "--base",
        "HEAD~1",
        "--head",
        "HEAD",
        "--quick",
        "--no-micro",
        "--no-counts",
        "--out",
        str(out),
    )
    comparison = json.loads((out / "compare.json").read_text())
    assert comparison["base"]["declarations_from"] == "HEAD"
    assert comparison["problems"] == [] and comparison["rows"]
    assert "measured with `HEAD`'s declarations" in (out / "comment.md").read_text()
    print("timings (s):", timings)  # shown with -s; README's figures come from such a run
