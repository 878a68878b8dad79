"""The measure job of reusable-publish.yml (a team's own repository, and benchwatch's own
publish.yml, which calls it), its site step run for real: the step's own shell, with benchwatch as
`tool/bw`, on a real run's figures, before the first publish (no gh-pages yet), with a published
trend that holds a known step, and with the inputs only benchwatch turns on."""

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
from site_demo import STEP_NAME, attributions, real_run, step_history

from benchwatch.results.files import read_run, write_run

REPO = Path(__file__).resolve().parents[1]
WORKFLOW = REPO / ".github" / "workflows" / "reusable-publish.yml"
STEP = "Change points and the site (overview and trends), this push's points included"
# each test runs the step's shell with `tool/bw` on a real run: 7-15 s each, the fast tier's largest
pytestmark = pytest.mark.slow


def step_script() -> str:
    steps = yaml.safe_load(WORKFLOW.read_text())["jobs"]["measure"]["steps"]
    return next(s["run"] for s in steps if s.get("name") == STEP)


def workspace(tmp: Path, published: bool) -> tuple[Path, dict[str, str]]:
    """The runner's layout: repo/ (the team's checkout), tool/bw, gh-pages/ (when published),
    $RUNNER_TEMP/run and record/ as the previous step leaves them."""
    work, temp = tmp / "work", tmp / "runner-temp"
    repo = make_project(work / "repo", [REPO / "examples" / "todo_api"])
    for args in (
        ["init", "-q", "-b", "main"],
        ["add", "."],
        ["-c", "user.name=t", "-c", "user.email=t@localhost", "commit", "-qm", "speed up the list"],
    ):
        subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True)
    sha = subprocess.run(
        ["git", "-C", str(repo), "rev-parse", "HEAD"], check=True, capture_output=True, text=True
    ).stdout.strip()
    tool = work / "tool" / "bw"
    tool.parent.mkdir(parents=True)
    # like ./bw, it runs in its own folder: a relative path given to it would resolve under tool/
    tool.write_text(
        f'#!/bin/sh\ncd "$(dirname "$0")"\nexec "{sys.executable}" -m benchwatch "$@"\n'
    )
    tool.chmod(0o755)
    run = real_run(temp / "run")
    write_run(run, read_run(run))  # the gab files `bw run` writes beside run.json
    (temp / "record").mkdir()
    for name in ("gab-smaller.json", "gab-bigger.json"):
        (temp / "record" / name).write_text((run / name).read_text())
    if published:
        step_history(work / "gh-pages")
    env = {
        **os.environ,
        "RUNNER_TEMP": str(temp),
        "GITHUB_WORKSPACE": str(work),
        "GITHUB_SHA": sha,
        "GITHUB_SERVER_URL": "https://github.com",
        "GITHUB_REPOSITORY": "team/api",
        "GITHUB_STEP_SUMMARY": str(tmp / "summary.md"),
        "GITHUB_OUTPUT": str(tmp / "output"),
        "NIGHTLY": "false",
    }
    env.pop("BENCHWATCH_ROOT", None)
    return work, env


@pytest.mark.parametrize("published", [False, True], ids=["first publish", "published trend"])
def test_the_site_has_this_pushs_trend_and_its_change_points(tmp_path, published):
    work, env = workspace(tmp_path, published)
    # with no gh-pages yet, our nightly-trend input has nothing to read and must not fail the step;
    # with a published nightly trend, a user's default (false) must not read it
    env["NIGHTLY"] = "false" if published else "true"
    done = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", step_script()],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    record = Path(env["RUNNER_TEMP"]) / "record"
    trend = json.loads(
        (Path(env["RUNNER_TEMP"]) / "trend" / "dev" / "bench" / "data.js")
        .read_text()
        .split("=", 1)[1]
    )
    pushed = trend["entries"]["benchwatch (smaller is better)"][-1]
    assert (
        pushed["commit"]["id"] == env["GITHUB_SHA"]
        and pushed["commit"]["message"] == "speed up the list"
    )
    assert any(b["name"].startswith("services@latest") for b in pushed["benches"])
    assert len(trend["entries"]["benchwatch (smaller is better)"]) == (41 if published else 1)
    site = record / "site"
    assert {"index.html", "trends.html"} <= {p.name for p in site.iterdir()}
    assert not (
        site / "dev"
    ).exists()  # github-action-benchmark owns dev/bench on gh-pages: never copied
    # record_push.sh --put SITE . replaces only the names it allows: every one the site writes is among them
    allowed = re.search(
        r"^SITE_NAMES=\(([^)]*)\)$", (REPO / "scripts" / "record_push.sh").read_text(), re.M
    )
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
    # a user's defaults: no parent compare, and this run counted nothing (gab-counts.json is [])
    assert Path(env["GITHUB_OUTPUT"]).read_text().splitlines() == ["counts=false", "relative=false"]
    assert not any(s["suite"].startswith("benchwatch nightly") for s in changes["series"])
    assert (
        "0.165.0" not in (site / "releases.html").read_text()
    )  # the nightly's attributions only when asked
    assert set(trend["entries"]) <= {
        "benchwatch (smaller is better)",
        "benchwatch (bigger is better)",
        "benchwatch (vs parent)",
    }


COUNTED = "services@latest GET /services?offset=0 c=10 instructions/req"
RELEASED = "0.165.0"  # fastapi's version in the first real attribution (tests/fixtures/site)


def test_our_inputs_add_the_parent_ratio_the_counts_the_nightly_trend_and_the_releases(tmp_path):
    """benchwatch's publish.yml: the side-by-side ratio with the parent and the counts per request
    become their own series, change points cover the nightly's trend, the releases page reads the
    attributions the nightly recorded on gh-pages."""
    work, env = workspace(tmp_path, published=True)
    env["NIGHTLY"] = "true"
    temp = Path(env["RUNNER_TEMP"])
    (temp / "relative").mkdir()
    (temp / "relative" / "gab-relative.json").write_text(
        json.dumps([{"name": f"{STEP_NAME} (vs parent)", "unit": "ratio", "value": 1.01}])
    )
    (temp / "relative" / "relative.md").write_text("compared with the push's before\n")
    (temp / "record" / "gab-counts.json").write_text(
        json.dumps([{"name": COUNTED, "unit": "instructions", "value": 812345.0}])
    )
    attribution = attributions()[0]
    (work / "gh-pages" / "nightly" / "attribution").mkdir(parents=True)
    filed = work / "gh-pages" / "nightly" / "attribution" / "2026-11-24-0123456789ab.json"
    filed.write_text(attribution.read_text())
    done = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", step_script()],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert Path(env["GITHUB_OUTPUT"]).read_text().splitlines() == ["counts=true", "relative=true"]
    record = temp / "record"
    assert {"gab-relative.json", "relative.md", "gab-counts.json"} <= {
        p.name for p in record.iterdir()
    }
    trend = json.loads((temp / "trend" / "dev" / "bench" / "data.js").read_text().split("=", 1)[1])
    [counts] = trend["entries"]["benchwatch counts (per request)"]
    assert counts["commit"]["id"] == env["GITHUB_SHA"] and counts["benches"][0]["name"] == COUNTED
    assert trend["entries"]["benchwatch (vs parent)"][-1]["commit"]["id"] == env["GITHUB_SHA"]
    changes = json.loads((record / "changes.json").read_text())
    assert any(s["suite"] == "benchwatch nightly (smaller is better)" for s in changes["series"])
    releases = (record / "site" / "releases.html").read_text()
    assert RELEASED in releases  # a release the attribution names
    assert not (record / "site" / "nightly").exists()  # drawn from gh-pages, never copied


NIGHTLY = REPO / ".github" / "workflows" / "reusable-nightly.yml"
NIGHTLY_STEP = "Change points over the nightly trend, tonight's points included"


@pytest.mark.parametrize("counted", [False, True], ids=["no counts", "counts"])
def test_the_nightly_appends_tonights_points_and_finds_the_change_points_of_its_trend(
    tmp_path, counted
):
    """reusable-nightly.yml's change-point step (ours and a user's): tonight's figures appended to
    a copy of the published nightly trend, the known step of `next` found, the counts their own
    series when the run counted something."""
    work, env = workspace(tmp_path, published=True)
    record = Path(env["RUNNER_TEMP"]) / "record"
    counts = [{"name": COUNTED, "unit": "instructions", "value": 812345.0}] if counted else []
    (record / "gab-counts.json").write_text(json.dumps(counts))
    steps = yaml.safe_load(NIGHTLY.read_text())["jobs"]["measure"]["steps"]
    script = next(s["run"] for s in steps if s.get("name") == NIGHTLY_STEP)
    done = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", script],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert Path(env["GITHUB_OUTPUT"]).read_text().splitlines() == [f"counts={str(counted).lower()}"]
    trend = json.loads(
        (Path(env["RUNNER_TEMP"]) / "trend" / "nightly" / "data.js").read_text().split("=", 1)[1]
    )
    tonight = trend["entries"]["benchwatch nightly (smaller is better)"]
    assert len(tonight) == 21 and tonight[-1]["commit"]["id"] == env["GITHUB_SHA"]
    assert ("benchwatch nightly counts (per request)" in trend["entries"]) is counted
    assert (
        not (work / "gh-pages" / "nightly" / "data.js").read_text().count(env["GITHUB_SHA"])
    )  # a copy, never gh-pages
    changes = json.loads((record / "changes.json").read_text())
    found = {s["name"] for s in changes["series"] if s["changes"]}
    assert any(name.startswith("services@next ") for name in found), (
        found
    )  # `next` 8 % faster from night 12
    assert (record / "changes.md").read_text() in Path(env["GITHUB_STEP_SUMMARY"]).read_text()
