"""The measure job of reusable-publish.yml (a team's own repository), its site step run for real:
the step's own shell, with benchwatch as `tool/bw`, on a real run's figures, before the first
publish (no gh-pages yet) and with a published trend that holds a known step."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from conftest import make_project
from site_demo import STEP_NAME, real_run, step_history

from benchwatch.results import read_run, write_run

REPO = Path(__file__).resolve().parents[1]
WORKFLOW = REPO / ".github" / "workflows" / "reusable-publish.yml"
STEP = "Change points and the site (overview and trends), this push's points included"


def step_script() -> str:
    steps = yaml.safe_load(WORKFLOW.read_text())["jobs"]["measure"]["steps"]
    return next(s["run"] for s in steps if s.get("name") == STEP)


def workspace(tmp: Path, published: bool) -> tuple[Path, dict[str, str]]:
    """The runner's layout: repo/ (the team's checkout), tool/bw, gh-pages/ (when published),
    $RUNNER_TEMP/run and record/ as the previous step leaves them."""
    work, temp = tmp / "work", tmp / "runner-temp"
    repo = make_project(work / "repo", [REPO / "examples" / "todo_api"])
    for args in (["init", "-q", "-b", "main"], ["add", "."],
                 ["-c", "user.name=t", "-c", "user.email=t@localhost", "commit", "-qm", "speed up the list"]):  # fmt: skip
        subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True)
    sha = subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"], check=True, capture_output=True,
                         text=True).stdout.strip()  # fmt: skip
    tool = work / "tool" / "bw"
    tool.parent.mkdir(parents=True)
    tool.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m benchwatch "$@"\n')
    tool.chmod(0o755)
    run = real_run(temp / "run")
    write_run(run, read_run(run))  # the gab files `bw run` writes beside run.json
    (temp / "record").mkdir()
    for name in ("gab-smaller.json", "gab-bigger.json"):
        (temp / "record" / name).write_text((run / name).read_text())
    if published:
        step_history(work / "gh-pages")
    env = {**os.environ, "RUNNER_TEMP": str(temp), "GITHUB_WORKSPACE": str(work), "GITHUB_SHA": sha,
           "GITHUB_SERVER_URL": "https://github.com", "GITHUB_REPOSITORY": "team/api",
           "GITHUB_STEP_SUMMARY": str(tmp / "summary.md")}  # fmt: skip
    env.pop("BENCHWATCH_ROOT", None)
    return work, env


@pytest.mark.parametrize("published", [False, True], ids=["first publish", "published trend"])
def test_the_site_has_this_pushs_trend_and_its_change_points(tmp_path, published):
    work, env = workspace(tmp_path, published)
    done = subprocess.run(["bash", "-euo", "pipefail", "-c", step_script()], cwd=work, env=env,
                          capture_output=True, text=True, timeout=300)  # fmt: skip
    assert done.returncode == 0, done.stderr
    record = Path(env["RUNNER_TEMP"]) / "record"
    trend = json.loads((Path(env["RUNNER_TEMP"]) / "trend" / "dev" / "bench" / "data.js").read_text().split("=", 1)[1])
    pushed = trend["entries"]["benchwatch (smaller is better)"][-1]
    assert pushed["commit"]["id"] == env["GITHUB_SHA"] and pushed["commit"]["message"] == "speed up the list"
    assert any(b["name"].startswith("services@latest") for b in pushed["benches"])
    assert len(trend["entries"]["benchwatch (smaller is better)"]) == (41 if published else 1)
    site = record / "site"
    assert {"index.html", "trends.html"} <= {p.name for p in site.iterdir()}
    assert not (site / "dev").exists()  # github-action-benchmark owns dev/bench on gh-pages: never copied
    # record_push.sh --put SITE . replaces only the names it allows: every one the site writes is among them
    allowed = re.search(r"^SITE_NAMES=\(([^)]*)\)$", (REPO / "scripts" / "record_push.sh").read_text(), re.M)
    assert {p.name for p in site.iterdir()} <= set(allowed.group(1).split())
    changes = json.loads((record / "changes.json").read_text())
    found = [s["name"] for s in changes["series"] if s["changes"]]
    summary = Path(env["GITHUB_STEP_SUMMARY"]).read_text()
    trends = (site / "trends.html").read_text()
    if published:  # the known 10 % step at commit 25 is found, said and drawn
        assert STEP_NAME in found and STEP_NAME in summary
        assert "change point" in trends.lower()
    else:
        assert found == [] and "services" in trends
