"""The GitHub workflows: actionlint and zizmor clean, plus the security facts we rely on."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
GITHUB = ROOT / ".github"
WORKFLOWS = sorted((GITHUB / "workflows").glob("*.yml"))
ACTIONS = sorted((GITHUB / "actions").glob("*/action.yml"))
PINNED = re.compile(r"^[\w.-]+/[\w./-]+@[0-9a-f]{40} # v\d+(\.\d+)*$")


def _tool(name: str) -> str:
    path = shutil.which(name) or next(
        (str(p) for p in [Path.home() / "go" / "bin" / name] if p.exists()), None
    )
    if path is None:
        pytest.skip(f"{name} is not installed (.ci/run installs it)")
    return path


def _load(path: Path) -> dict:
    return yaml.safe_load(path.read_text())


def _steps(path: Path) -> list[dict]:
    doc = _load(path)
    if "jobs" in doc:
        return [s for job in doc["jobs"].values() for s in job.get("steps", [])]
    return doc["runs"]["steps"]


def _uses_lines(path: Path) -> list[str]:
    return [m.group(1) for m in re.finditer(r"^\s*-?\s*uses:\s*(.+?)\s*$", path.read_text(), re.M)]


def test_expected_workflows_exist():
    assert {p.name for p in WORKFLOWS} == {
        "ci.yml", "benchmark-pr.yml", "pr-comment.yml", "publish.yml", "nightly.yml",
    }  # fmt: skip
    assert (GITHUB / "dependabot.yml").exists()


def test_actionlint_is_clean():
    result = subprocess.run([_tool("actionlint")], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def test_zizmor_reports_nothing():
    result = subprocess.run(
        [_tool("zizmor"), "--offline", "--format", "plain", ".github"],
        cwd=ROOT, capture_output=True, text=True,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    assert "No findings to report" in result.stdout + result.stderr


@pytest.mark.parametrize("path", WORKFLOWS + ACTIONS, ids=lambda p: p.parent.name + "/" + p.name)
def test_every_action_is_pinned_by_sha_with_version_comment(path):
    lines = _uses_lines(path)
    assert lines
    for line in lines:
        assert line.startswith("./") or PINNED.match(line), f"{path.name}: {line}"


@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda p: p.name)
def test_permissions_empty_at_top_and_declared_per_job(path):
    doc = _load(path)
    assert doc["permissions"] == {}
    for name, job in doc["jobs"].items():
        assert "permissions" in job, f"{path.name}: job {name} has no permissions block"
        assert "write-all" not in str(job["permissions"])


@pytest.mark.parametrize("path", WORKFLOWS + ACTIONS, ids=lambda p: p.parent.name + "/" + p.name)
def test_every_checkout_drops_credentials(path):
    for step in _steps(path):
        if str(step.get("uses", "")).startswith("actions/checkout@"):
            assert step.get("with", {}).get("persist-credentials") is False, step


@pytest.mark.parametrize("path", WORKFLOWS + ACTIONS, ids=lambda p: p.parent.name + "/" + p.name)
def test_no_untrusted_expressions_inside_run(path):
    untrusted = re.compile(r"github\.event\.|github\.head_ref|inputs\.|steps\.[\w-]+\.outputs")
    for step in _steps(path):
        for expression in re.findall(r"\$\{\{(.*?)\}\}", step.get("run", "")):
            assert not untrusted.search(expression), f"{path.name}: {expression}"


def test_pull_request_workflow_is_read_only():
    doc = _load(GITHUB / "workflows" / "benchmark-pr.yml")
    assert set(doc[True]) == {"pull_request"}  # PyYAML reads the key `on` as True
    for job in doc["jobs"].values():
        assert job["permissions"] == {"contents": "read"}
    assert "secrets." not in (GITHUB / "workflows" / "benchmark-pr.yml").read_text()


def test_pr_comment_never_checks_out_code():
    path = GITHUB / "workflows" / "pr-comment.yml"
    assert not any("checkout" in line for line in _uses_lines(path))
    assert "./bw" not in path.read_text()
    script = next(s["with"]["script"] for s in _steps(path) if "github-script" in s.get("uses", ""))
    assert "<!-- benchwatch-compare -->" in script
    assert "^[1-9][0-9]{0,9}$" in script


def _benchmark_steps(path: Path) -> list[dict]:
    return [s for s in _steps(path) if "github-action-benchmark@" in s.get("uses", "")]


@pytest.mark.parametrize("name", ["publish.yml", "nightly.yml"])
def test_gh_pages_is_pushed_once(name):
    path = GITHUB / "workflows" / name
    steps = _benchmark_steps(path)
    assert [s["with"]["tool"] for s in steps] == ["customSmallerIsBetter", "customBiggerIsBetter"]
    assert len({s["with"]["name"] for s in steps}) == 2
    assert all(s["with"]["auto-push"] is False for s in steps)
    assert "skip-fetch-gh-pages" not in steps[0]["with"]
    assert steps[1]["with"]["skip-fetch-gh-pages"] is True
    assert all(s["with"]["max-items-in-chart"] == 200 for s in steps)
    pushes = [s for s in _steps(path) if 'git -C "$site" push' in s.get("run", "")]
    assert len(pushes) == 1
    for job in _load(path)["jobs"].values():
        if any("github-action-benchmark@" in s.get("uses", "") for s in job.get("steps", [])):
            assert job["concurrency"]["group"] == "gh-pages-push"


def test_publish_settings():
    steps = _benchmark_steps(GITHUB / "workflows" / "publish.yml")
    for step in steps:
        assert step["with"]["benchmark-data-dir-path"] == "dev/bench"
        assert step["with"]["comment-on-alert"] is True
        assert step["with"]["alert-threshold"] == "${{ steps.threshold.outputs.value }}"


def test_pr_trend_check_is_compare_only():
    steps = _benchmark_steps(GITHUB / "workflows" / "benchmark-pr.yml")
    assert len(steps) == 2
    for step in steps:
        assert step["with"]["save-data-file"] is False
        assert step["with"]["summary-always"] is True
        assert step["with"]["auto-push"] is False
        assert "github-token" not in step["with"]
        assert step["with"]["external-data-json-path"]


def test_nightly_trend_is_separate():
    path = GITHUB / "workflows" / "nightly.yml"
    assert {s["with"]["benchmark-data-dir-path"] for s in _benchmark_steps(path)} == {"nightly"}
    assert "nightly-regression" in path.read_text()


@pytest.mark.parametrize("name", ["benchmark-pr.yml", "nightly.yml"])
def test_trend_steps_read_the_head_run_that_compare_writes(name):
    """compare writes <out>/head/gab-{smaller,bigger}.json (tests/test_compare.py checks that)."""
    text = (GITHUB / "workflows" / name).read_text()
    outs = re.findall(r'(?:\./bw compare [^\n]*--out |\bout=)"\$RUNNER_TEMP/([\w-]+)"', text)
    assert len(outs) == 1 and ("--out \"$out\"" in text or "--out \"$RUNNER_TEMP" in text)
    out = outs[0]
    paths = {s["with"]["output-file-path"] for s in _benchmark_steps(GITHUB / "workflows" / name)}
    assert paths == {f"${{{{ runner.temp }}}}/{out}/head/gab-{d}.json" for d in ("smaller", "bigger")}


def test_publish_merges_the_micro_run_and_publishes_its_asv_site():
    text = (GITHUB / "workflows" / "publish.yml").read_text()
    assert "./bw run --no-micro --shard" in text  # asv runs once, in the micro job
    assert "name: shard-micro" in text and "pattern: shard-*" in text  # merged like a shard
    assert 'cp -r "$RUNNER_TEMP/shards/shard-micro/asv-html" "$site/asv"' in text
