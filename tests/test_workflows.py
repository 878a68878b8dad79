"""The GitHub workflows: actionlint and zizmor clean, plus the security facts we rely on."""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
GITHUB = ROOT / ".github"
WORKFLOWS = sorted((GITHUB / "workflows").glob("*.yml"))
ACTIONS = sorted((GITHUB / "actions").glob("*/action.yml"))
PINNED_COMMIT_CHECK = (
    '[[ "$BW_REF" =~ ^[0-9a-f]{40}$ ]] || { echo "::error::benchwatch-ref: give the 40-hex commit of '
    "a benchwatch release, not a tag or branch (those can be moved; benchwatch init writes the "
    'commit)"; exit 3; }'
)
PINNED = re.compile(r"^[\w.-]+/[\w./-]+@[0-9a-f]{40} # v\d+(\.\d+)*$")


def _tool(name: str) -> str:
    path = shutil.which(name) or next(
        (
            str(p)
            for p in [Path(sys.executable).parent / name, Path.home() / "go" / "bin" / name]
            if p.exists()
        ),
        None,
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
        "ci.yml",
        "benchmark-pr.yml",
        "pr-comment.yml",
        "publish.yml",
        "nightly.yml",
        "weekly.yml",
        "reusable-pr.yml",
        "reusable-comment.yml",
        "reusable-publish.yml",
        "reusable-nightly.yml",
        "reusable-issues.yml",
    }
    assert (GITHUB / "dependabot.yml").exists()


def test_actionlint_is_clean():
    result = subprocess.run([_tool("actionlint")], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def test_zizmor_reports_nothing():
    result = subprocess.run(
        [_tool("zizmor"), "--offline", "--persona=auditor", "--format", "plain", ".github"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
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
        assert (
            job["permissions"] == {"contents": "read"} and "secrets" not in job
        )  # no `secrets: inherit`
    assert "secrets." not in (GITHUB / "workflows" / "benchmark-pr.yml").read_text()


def test_our_pr_workflow_is_the_one_users_get():
    """benchwatch measures itself at the PR's head, through the users' reusable-pr.yml."""
    (job,) = _load(GITHUB / "workflows" / "benchmark-pr.yml")["jobs"].values()
    assert job["uses"] == "./.github/workflows/reusable-pr.yml"
    assert job["with"]["benchwatch-ref"] == "${{ github.event.pull_request.head.sha }}"
    declared = _load(GITHUB / "workflows" / "reusable-pr.yml")[True]["workflow_call"]["inputs"]
    assert set(job["with"]) <= set(declared)


def _checks_out_only_benchwatchs_neutraliser(path: Path) -> bool:
    """The one checkout a commenter may make: benchwatch's neutralise.js at the pinned commit, no PR code."""
    checkouts = [s for s in _steps(path) if "actions/checkout@" in s.get("uses", "")]
    return all(
        c["with"]["ref"] == "${{ inputs.benchwatch-ref }}"
        and c["with"]["sparse-checkout"] == ".github/scripts/neutralise.js"
        for c in checkouts
    )


@pytest.mark.parametrize("name", ["pr-comment.yml", "reusable-comment.yml"])
def test_pr_comment_never_checks_out_code(name):
    path = GITHUB / "workflows" / name
    assert _checks_out_only_benchwatchs_neutraliser(path)
    assert name == "reusable-comment.yml" or not any(
        "checkout" in line for line in _uses_lines(path)
    )
    assert "./bw" not in path.read_text()


def test_our_commenter_is_the_one_users_get():
    (job,) = _load(GITHUB / "workflows" / "pr-comment.yml")["jobs"].values()
    assert job["uses"] == "./.github/workflows/reusable-comment.yml"


# --- one definition: our workflows call the reusable ones users get ----------------------------

OUR_CALLERS = {
    "benchmark-pr.yml": "reusable-pr.yml",
    "pr-comment.yml": "reusable-comment.yml",
    "publish.yml": "reusable-publish.yml",
    "nightly.yml": "reusable-nightly.yml",
}
LEVELS = {"none": 0, "read": 1, "write": 2}


def _ceiling_problems(job: dict, callee: dict) -> list[str]:
    """What GitHub refuses before any job starts (whatever their `if:`): a called job asking for
    more than the calling job grants."""
    granted = job.get("permissions", {})
    return [
        f"{name} asks {scope}: {level}, the caller grants {granted.get(scope, 'none')}"
        for name, nested in callee["jobs"].items()
        for scope, level in nested.get("permissions", {}).items()
        if LEVELS[level] > LEVELS[granted.get(scope, "none")]
    ]


def test_the_permission_ceiling_check_catches_a_caller_granting_too_little():
    issues = _load(GITHUB / "workflows" / "reusable-issues.yml")
    assert _ceiling_problems({"permissions": {"contents": "write"}}, issues) == [
        "issues asks issues: write, the caller grants none"
    ]
    assert _ceiling_problems({"permissions": {"contents": "read", "issues": "write"}}, issues) == []


@pytest.mark.parametrize("caller", OUR_CALLERS)
def test_our_workflows_only_call_the_reusable_ones(caller):
    """One definition: no job of ours carries steps of its own; each calls a reusable workflow with
    inputs it declares (the required ones given, booleans as booleans), benchwatch at the commit
    that triggered the run, no secrets, and grants what the called jobs ask."""
    jobs = _load(GITHUB / "workflows" / caller)["jobs"]
    assert OUR_CALLERS[caller] in {
        str(job.get("uses", "")).rsplit("/", 1)[-1] for job in jobs.values()
    }
    for name, job in jobs.items():
        assert "steps" not in job, (
            f"{caller}: job {name} has its own steps; a reusable workflow defines them"
        )
        assert job["uses"].startswith("./.github/workflows/reusable-"), job["uses"]
        callee = _load(GITHUB / "workflows" / job["uses"].rsplit("/", 1)[1])
        declared = callee[True]["workflow_call"].get("inputs", {})
        given = job.get("with", {})
        assert set(given) <= set(declared), set(given) - set(declared)
        assert {n for n, spec in declared.items() if spec.get("required")} <= set(given)
        for key, value in given.items():
            if not str(value).startswith("${{"):
                assert isinstance(value, bool) is (declared[key]["type"] == "boolean"), key
        if "benchwatch-ref" in given:
            assert given["benchwatch-ref"] in (
                "${{ github.sha }}",
                "${{ github.event.pull_request.head.sha }}",
            )
            assert given["benchwatch-repository"] == "${{ github.repository }}"
        assert "secrets" not in job
        assert _ceiling_problems(job, callee) == []


def _benchmark_steps(path: Path) -> list[dict]:
    return [s for s in _steps(path) if "github-action-benchmark@" in s.get("uses", "")]


def _record_runs(path: Path) -> list[str]:
    return [s["run"] for s in _steps(path) if "scripts/record_push.sh" in s.get("run", "")]


# the suites each record job commits, in order: the absolute figures, then the counts per request
# (history.COUNTS) and, for publish, the `(vs parent)` ratios
SUITES = {
    "weekly.yml": ["customSmallerIsBetter", "customBiggerIsBetter"],
    "reusable-publish.yml": [
        "customSmallerIsBetter",
        "customBiggerIsBetter",
        "customSmallerIsBetter",
        "customSmallerIsBetter",
    ],
    "reusable-nightly.yml": [
        "customSmallerIsBetter",
        "customBiggerIsBetter",
        "customSmallerIsBetter",
    ],
}


@pytest.mark.parametrize("name", list(SUITES))
def test_gh_pages_is_pushed_once(name):
    path = GITHUB / "workflows" / name
    steps = _benchmark_steps(path)
    assert [s["with"]["tool"] for s in steps] == SUITES[name]
    assert len({s["with"]["name"] for s in steps}) == len(steps)
    assert all(s["with"]["auto-push"] is False for s in steps)
    assert "skip-fetch-gh-pages" not in steps[0]["with"]
    assert all(s["with"]["skip-fetch-gh-pages"] is True for s in steps[1:])
    assert all(s["with"]["max-items-in-chart"] == 200 for s in steps)
    assert (
        len(_record_runs(path)) == 1
    )  # the one push, by the script tests/test_record_push.py rehearses
    assert "git push" not in path.read_text() and "git -C" not in path.read_text()


@pytest.mark.parametrize("name", ["reusable-publish.yml", "reusable-nightly.yml"])
def test_the_counts_per_request_are_their_own_suite_with_a_tight_threshold(name):
    """Counts are deterministic: their own series (history.COUNTS), alerting at 105 %, recorded
    only when the run counted something (the measure job says so)."""
    from benchwatch.trend.history import COUNTS

    doc = _load(GITHUB / "workflows" / name)
    [step] = [
        s for s in _benchmark_steps(GITHUB / "workflows" / name) if "counts" in s["with"]["name"]
    ]
    assert step["with"]["name"] == (
        COUNTS
        if name == "reusable-publish.yml"
        else COUNTS.replace("benchwatch ", "benchwatch nightly ")
    )
    # the artifact is checked first (.github/scripts/nightly-record.js's gab)
    assert step["with"]["output-file-path"] == "${{ runner.temp }}/checked/gab-counts.json"
    assert step["with"]["alert-threshold"] == "${{ inputs.counts-alert-threshold }}"
    assert doc[True]["workflow_call"]["inputs"]["counts-alert-threshold"]["default"] == "105%"
    assert step["if"] == "needs.measure.outputs.counts == 'true'"
    assert doc["jobs"]["measure"]["outputs"]["counts"] == "${{ steps.changes.outputs.counts }}"


def test_weekly_runs_the_full_plan_into_its_own_trend():
    path = GITHUB / "workflows" / "weekly.yml"
    doc = _load(path)
    assert set(doc[True]) == {"schedule", "workflow_dispatch"}
    assert "./bw run --no-micro --shard" in path.read_text() and "--quick" not in path.read_text()
    assert {s["with"]["benchmark-data-dir-path"] for s in _benchmark_steps(path)} == {"weekly"}
    assert all("weekly" in s["with"]["name"] for s in _benchmark_steps(path))
    assert '--put "$RUNNER_TEMP/record/asv" asv' in _record_runs(path)[0]


def test_the_relative_trend_is_its_own_series_recorded_when_the_measure_job_made_a_point():
    """The ratio of each push to its parent, measured side by side, is its own trend; the measure
    job says whether it made a point (tests/test_reusable_publish.py runs that step)."""
    path = GITHUB / "workflows" / "reusable-publish.yml"
    jobs = _load(path)["jobs"]
    checkout = next(s for s in jobs["measure"]["steps"] if s.get("with", {}).get("path") == "repo")
    assert (
        checkout["with"]["fetch-depth"] == 0
    )  # the parent must be in the local history to be checked out
    [step] = [s for s in _benchmark_steps(path) if s["with"]["name"] == "benchwatch (vs parent)"]
    assert step["if"] == "needs.measure.outputs.relative == 'true'"
    assert step["with"]["output-file-path"] == "${{ runner.temp }}/checked/gab-relative.json"
    assert jobs["measure"]["outputs"]["relative"] == "${{ steps.changes.outputs.relative }}"


def _relative_parent(
    tmp_path: Path, repo: Path, sha: str, before: str, event: str = "push"
) -> tuple[str, str]:
    """reusable-publish.yml's parent step (working-directory: repo), its own shell on a real
    repository: (parent, what the summary says)."""
    steps = _load(GITHUB / "workflows" / "reusable-publish.yml")["jobs"]["measure"]["steps"]
    parent = next(s for s in steps if s.get("id") == "parent")
    assert parent["working-directory"] == "repo" and parent["if"] == "inputs.relative-to-parent"
    temp, output, summary = tmp_path / "temp", tmp_path / "output", tmp_path / "summary"
    temp.mkdir(exist_ok=True)
    for f in (output, summary):
        f.write_text("")
    env = {
        "PATH": "/usr/bin:/bin",
        "BEFORE": before,
        "EVENT": event,
        "GITHUB_SHA": sha,
        "RUNNER_TEMP": str(temp),
        "GITHUB_OUTPUT": str(output),
        "GITHUB_STEP_SUMMARY": str(summary),
    }
    done = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", parent["run"]],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.returncode == 0, done.stderr
    return output.read_text().strip().removeprefix("parent="), summary.read_text().strip()


def test_the_relative_parent_is_the_pushs_before_and_said_when_there_is_none(tmp_path):
    from test_record_push import git

    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    shas = []
    for n in range(3):
        git(repo, "commit", "-q", "--allow-empty", "-m", f"c{n}")
        shas.append(git(repo, "rev-parse", "HEAD"))
    c0, c1, c2 = shas
    assert _relative_parent(tmp_path, repo, c2, c0) == (c0, f"compared with the push's before {c0}")
    assert _relative_parent(tmp_path, repo, c0, "0" * 40)[0] == ""  # a new branch: no before
    git(repo, "switch", "-q", "--orphan", "other")
    git(repo, "commit", "-q", "--allow-empty", "-m", "rewritten")
    rewritten = git(repo, "rev-parse", "HEAD")
    parent, said = _relative_parent(tmp_path, repo, rewritten, c2)  # a force-push
    assert parent == "" and said.startswith(f"force-push: before {c2} is not an ancestor")
    parent, said = _relative_parent(tmp_path, repo, c2, "f" * 40)
    assert parent == "" and "not in the history" in said
    assert (
        _relative_parent(tmp_path, repo, c2, "", "workflow_dispatch")[0] == c1
    )  # a manual run: first parent
    parent, said = _relative_parent(tmp_path, repo, rewritten, "", "workflow_dispatch")
    assert parent == "" and "root commit" in said


@pytest.mark.parametrize("caller, kind", [("publish.yml", "publish"), ("nightly.yml", "nightly")])
def test_change_points_found_by_the_measure_job_become_issues_in_the_opt_in_issues_job(
    tmp_path, caller, kind
):
    """Our callers add reusable-issues.yml after the reusable job; its script reads the change
    points the measure job wrote into the record artifact and says which run found them."""
    jobs = _load(GITHUB / "workflows" / caller)["jobs"]
    measured = next(
        name
        for name, job in jobs.items()
        if job["uses"] != "./.github/workflows/reusable-issues.yml"
    )
    issues = jobs["issues"]
    assert issues["uses"] == "./.github/workflows/reusable-issues.yml" and issues["needs"] == [
        measured
    ]
    assert issues["with"]["kind"] == kind
    callee = _load(GITHUB / "workflows" / "reusable-issues.yml")["jobs"]["issues"]
    download = next(s for s in callee["steps"] if "download-artifact@" in s.get("uses", ""))
    reusable = _load(GITHUB / "workflows" / jobs[measured]["uses"].rsplit("/", 1)[1])["jobs"][
        "measure"
    ]
    upload = next(s for s in reusable["steps"] if "upload-artifact@" in s.get("uses", ""))
    assert download["with"]["name"].replace("${{ inputs.kind }}", kind) == upload["with"]["name"]
    # the measure steps that write changes.json run for real in tests/test_reusable_publish.py
    record = tmp_path / "record"
    record.mkdir()
    (record / "changes.md").write_text("| series |\n")
    (record / "changes.json").write_text(
        json.dumps({"schema_version": 1, "series": [_series("svc cpu/req", True)]})
    )
    step = "Change points, in the job summary and one issue per alerting series"
    calls = _run_script(
        "reusable-issues.yml",
        tmp_path,
        {"listForRepo": []},
        {"RECORD_DIR": str(record), "SOURCE": kind},
        step,
    )
    [created] = [args for call, args in calls if call == "create"]
    assert f"found by the {kind} run" in created["body"]


def test_pr_trend_check_is_compare_only():
    steps = _benchmark_steps(GITHUB / "workflows" / "reusable-pr.yml")
    assert len(steps) == 2
    for step in steps:
        assert step["with"]["save-data-file"] is False
        assert step["with"]["summary-always"] is True
        assert step["with"]["auto-push"] is False
        assert "github-token" not in step["with"]
        assert step["with"]["external-data-json-path"]


def test_nightly_trend_is_separate():
    path = GITHUB / "workflows" / "reusable-nightly.yml"
    assert {s["with"]["benchmark-data-dir-path"] for s in _benchmark_steps(path)} == {"nightly"}
    assert all(s["with"]["name"].startswith("benchwatch nightly ") for s in _benchmark_steps(path))


def test_pr_trend_steps_read_the_head_run_that_compare_writes():
    """compare writes <out>/head/gab-{smaller,bigger}.json (tests/test_compare.py checks that)."""
    path = GITHUB / "workflows" / "reusable-pr.yml"
    text = path.read_text()
    outs = re.findall(r'\bout="\$RUNNER_TEMP/([\w-]+)"', text)
    assert len(outs) == 1 and '--out "$out"' in text
    paths = {s["with"]["output-file-path"] for s in _benchmark_steps(path)}
    assert paths == {
        f"${{{{ runner.temp }}}}/{outs[0]}/head/gab-{d}.json" for d in ("smaller", "bigger")
    }


STAND_IN = """#!/bin/bash
# benchwatch as the nightly's steps call it: writes what the real one writes, exits with $CODE
echo "$*" >> "$LOG"
case "$1" in
  compare) while [[ "$1" != --out ]]; do shift; done
           mkdir -p "$2/head"
           for f in gab-smaller gab-bigger gab-counts; do echo '[{"name": "x", "unit": "ms", "value": 1}]' > "$2/head/$f.json"; done
           echo "1.12x slower" > "$2/comment.md"
           exit "$CODE" ;;
  own-next) [[ "$*" != *--moved-packages* ]] || printf 'fastapi\nstarlette\n'
            echo "UV_DEFAULT_INDEX=${UV_DEFAULT_INDEX:-}" >> "$LOG"
            while [[ $# -gt 0 && "$1" != --markdown ]]; do shift; done
            [[ $# -eq 0 ]] || echo "**shop**: fastapi 0.121.0 → 0.165.0" > "$2" ;;
  mechanism) echo "### Mechanism: what moved per request, own → own-next" > "$4" ;;
  attribute) while [[ "$1" != --out ]]; do shift; done
             mkdir -p "$2"
             echo "**Responsible:** latest+starlette" > "$2/attribution.md"
             echo '{"steps": [{"moved": ["starlette"], "ratio": 1.12}]}' > "$2/attribution.json" ;;
esac
"""


def _nightly_step(
    tmp_path: Path,
    name: str,
    code: int = 0,
    env: dict[str, str] | None = None,
) -> tuple[subprocess.CompletedProcess, Path, Path]:
    """One step of reusable-nightly.yml's measure job, its own shell, with a stand-in tool/bw."""
    from test_workflow_attacks import step as named_step

    work, temp = tmp_path / "work", tmp_path / "temp"
    (work / "tool" / "scripts").mkdir(parents=True, exist_ok=True)
    shutil.copy(ROOT / "scripts" / "verdict.sh", work / "tool" / "scripts")
    shutil.copy(ROOT / "scripts" / "app_env.sh", work / "tool" / "scripts")
    (work / "tool" / "bw").write_text(STAND_IN)
    (work / "tool" / "bw").chmod(0o755)
    (temp / "record").mkdir(parents=True, exist_ok=True)
    found = named_step("reusable-nightly.yml", "measure", name)
    env = {
        "PATH": "/usr/bin:/bin",
        "RUNNER_TEMP": str(temp),
        "GITHUB_WORKSPACE": str(work),
        "GITHUB_SHA": "0123456789ab" + "c" * 28,
        "GITHUB_OUTPUT": str(tmp_path / "output"),
        "LOG": str(tmp_path / "log"),
        "CODE": str(code),
        "ROUNDS": "12",
        "SCENARIOS": "",
        "APP_ENV": "",
        **(env or {}),
    }
    done = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", found["run"]],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        timeout=30,
    )
    return done, temp / "record", tmp_path / "output"


@pytest.mark.parametrize("code, fails", [(0, False), (1, False), (2, True), (3, True)])
def test_the_nightly_records_the_head_run_that_compare_writes(tmp_path, code, fails):
    """compare latest -> next: the head's figures (counts included) and the comment go into the
    record artifact; 2 and 3 fail the job, so nothing is recorded and the night is retried."""
    done, record, output = _nightly_step(
        tmp_path, "Compare latest (pinned baseline) with next on this runner", code
    )
    assert (done.returncode != 0) is fails, done.stderr
    assert f"exit_code={code}" in output.read_text()
    if not fails:
        assert sorted(p.name for p in record.iterdir()) == [
            "comment.md",
            "gab-bigger.json",
            "gab-counts.json",
            "gab-smaller.json",
            *(["mechanism.md"] if code == 1 else []),  # a regression's: through what it moved
        ]
        assert (
            "--record-measured" in (tmp_path / "log").read_text().splitlines()[-1]
        )  # the measured packages


def test_tonights_attribution_is_named_as_the_record_jobs_check_accepts(tmp_path):
    """The attribution the measure job files under attribution/ passes nightly-record.js's check
    (YYYY-MM-DD-<12 hex>.json), so the releases page gets it."""
    from test_workflow_attacks import check_artifact, nightly_artifact

    done, record, _ = _nightly_step(
        tmp_path, "Attribute a significant change to the release(s) responsible"
    )
    assert done.returncode == 0, done.stderr
    [filed] = (record / "attribution").iterdir()
    assert filed.name.endswith("-0123456789ab.json") and (record / "attribution.md").exists()
    artifact = nightly_artifact(tmp_path / "check")
    for old in (artifact / "attribution").iterdir():
        old.unlink()
    shutil.copy(filed, artifact / "attribution" / filed.name)
    # the measure job's clock names it, the record job's (an hour later here) checks it
    later = (dt.datetime.now(dt.UTC) + dt.timedelta(hours=1)).isoformat()
    calls, out = check_artifact(tmp_path / "check", artifact, NOW=later)
    assert [p.name for p in (out / "attribution").iterdir()] == [filed.name], calls


@pytest.mark.parametrize("releases", ["true", ""])
def test_the_nightly_push_records_only_what_the_check_accepted(tmp_path, releases):
    """The record job's one push: with releases, the checked state and attributions (never the
    artifact's own files); without, the trend alone (a user's nightly has no release state)."""
    found = next(
        s
        for s in _load(GITHUB / "workflows" / "reusable-nightly.yml")["jobs"]["record"]["steps"]
        if "record_push.sh" in s.get("run", "")
    )
    assert found["env"]["RELEASES"] == "${{ inputs.releases && 'true' || '' }}"
    (tmp_path / "record-tool" / "scripts").mkdir(parents=True)
    script = tmp_path / "record-tool" / "scripts" / "record_push.sh"
    script.write_text('#!/bin/sh\nfor a in "$@"; do echo "$a"; done\n')
    script.chmod(0o755)
    temp = tmp_path / "runner temp"  # a space: the paths stay one argument each
    done = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", found["run"]],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={
            "PATH": "/usr/bin:/bin",
            "GH_TOKEN": "t",
            "SHA": "c" * 40,
            "RELEASES": releases,
            "RUNNER_TEMP": str(temp),
            "GITHUB_REPOSITORY": "o/r",
            "GITHUB_SERVER_URL": "https://github.com",
        },
    )
    assert done.returncode == 0, done.stderr
    args = done.stdout.splitlines()
    assert args[args.index("--state") : args.index("--sha") + 2] == [
        "--state",
        "nightly/published.json",
        "--sha",
        "c" * 40,
    ]
    if releases:
        assert args[-6:] == [
            "--put",
            f"{temp}/checked/state.json",
            "nightly/state.json",
            "--add",
            f"{temp}/checked/attribution",
            "nightly/attribution",
        ]
    else:
        assert "--put" not in args and "--add" not in args
    assert not any("/record/" in a for a in args)


def test_weekly_merges_the_micro_run_and_publishes_its_asv_site_and_publish_the_dashboard():
    path = GITHUB / "workflows" / "weekly.yml"
    text = path.read_text()
    assert "./bw run --no-micro --shard" in text  # asv runs once, in the micro job
    assert "name: shard-micro" in text and "pattern: shard-*" in text  # merged like a shard
    jobs = _load(path)["jobs"]
    merge = "\n".join(s.get("run", "") for s in jobs["merge"]["steps"])
    assert 'cp -r "$RUNNER_TEMP/shards/shard-micro/asv-html" "$record/asv"' in merge
    # publish's site is built in its measure job: tests/test_reusable_publish.py runs that step
    assert (
        '--put "$RUNNER_TEMP/record/site" .'
        in _record_runs(GITHUB / "workflows" / "reusable-publish.yml")[0]
    )


# --- measure and record: write tokens never meet third-party code ------------------------------

WRITE_SCOPES = ("contents", "issues", "pull-requests")
RECORD_ACTIONS = (
    "actions/checkout@",
    "actions/download-artifact@",
    "benchmark-action/github-action-benchmark@",
    "actions/github-script@",
)
THIRD_PARTY_CODE = re.compile(
    r"\./bw\b|\bbenchwatch\b|uv pip install|\buv\b|\boha\b|pip install|cargo|python"
)
# one line of bash testing an input and failing with exit 3: no command substitution, no command but echo
INPUT_CHECK = re.compile(
    r'^\[\[ (?:(?!\$\(|<\(|`|\]\]).)* \]\] \|\| \{ echo "::error::[^"$`]*"; exit 3; \}$'
)


def _jobs(names: tuple[str, ...] = ()) -> list[tuple[str, str, dict]]:
    return [
        (p.name, name, job)
        for p in WORKFLOWS
        if not names or p.name in names
        for name, job in _load(p)["jobs"].items()
    ]


def _job_params(jobs: list[tuple[str, str, dict]]) -> list:
    return [pytest.param(*j, id=f"{j[0]}:{j[1]}") for j in jobs]


def _writes(job: dict) -> bool:
    return any(job["permissions"].get(scope) == "write" for scope in WRITE_SCOPES)


def test_the_writing_jobs_are_the_record_jobs_and_the_commenter():
    writers = {(workflow, name) for workflow, name, job in _jobs() if _writes(job)}
    assert writers == {
        ("publish.yml", "publish"),
        ("publish.yml", "issues"),
        ("nightly.yml", "nightly"),
        ("nightly.yml", "issues"),
        ("weekly.yml", "record"),
        ("pr-comment.yml", "comment"),
        ("reusable-publish.yml", "record"),
        ("reusable-nightly.yml", "record"),
        ("reusable-comment.yml", "comment"),
        ("reusable-issues.yml", "issues"),
    }


@pytest.mark.parametrize("workflow, name, job", _job_params([j for j in _jobs() if _writes(j[2])]))
def test_jobs_with_write_permissions_run_no_third_party_code(workflow, name, job):
    """Nothing but git (scripts/record_push.sh), github-action-benchmark and github-script."""
    if "uses" in job:  # a caller: the reusable workflow's jobs are checked as themselves
        assert job["uses"].startswith("./.github/workflows/reusable-"), job["uses"]
        return
    for step in job["steps"]:
        uses, run = step.get("uses", ""), step.get("run", "")
        assert uses or run
        if uses:
            assert uses.startswith(RECORD_ACTIONS), f"{workflow} {name}: {uses}"
        if all(INPUT_CHECK.match(line) for line in run.strip().splitlines()):
            continue  # bash's own tests of the inputs (no command), before the checkout of the script
        if run:
            assert not THIRD_PARTY_CODE.search(run), f"{workflow} {name}: {run}"
            # a reusable workflow runs benchwatch's copy, checked out at the caller's pinned commit
            script_path = (
                "record-tool/scripts/record_push.sh "
                if workflow.startswith("reusable-")
                else "scripts/record_push.sh "
            )
            assert run.lstrip().startswith(script_path), f"{workflow} {name}: {run}"
        script = step.get("with", {}).get("script", "")
        for required in re.findall(
            r"require\(`\$\{process\.env\.GITHUB_WORKSPACE\}/(?:record-tool/|issue-tool/)?([\w./-]+)`\)",
            script,
        ):
            script += (
                ROOT / required
            ).read_text()  # a script kept in the repository: checked the same way
        assert "child_process" not in script and "exec(" not in script
        for required in re.findall(r"require\('\./([\w-]+\.js)'\)", script):
            script += (
                GITHUB / "scripts" / required
            ).read_text()  # a module of .github/scripts: the same rules
        assert not re.search(
            r"require\((?!'fs'|'path'|'\./[\w-]+\.js'|`\$\{process\.env\.GITHUB_WORKSPACE\}/(record-tool/|issue-tool/)?\.github/scripts/)",
            script,
        )
    script = (ROOT / "scripts" / "record_push.sh").read_text()
    code = "\n".join(line for line in script.splitlines() if not line.lstrip().startswith("#"))
    assert not THIRD_PARTY_CODE.search(code), THIRD_PARTY_CODE.search(code)


def test_the_third_party_code_check_catches_each_forbidden_command():
    for run in (
        "./bw site --out x",
        "benchwatch merge a",
        "uv pip install -e .",
        "oha -z 1s http://x",
        ".venv/bin/python -m benchwatch",
        "cargo install oha",
    ):
        assert THIRD_PARTY_CODE.search(run), run
    assert INPUT_CHECK.match(PINNED_COMMIT_CHECK)
    for line in (
        '[[ "$KIND" == x ]] || { ./bw site; exit 3; }',
        '[[ "$(./bw x)" == y ]] || { echo "::error::x"; exit 3; }',
        '[[ "$K" == x ]] || { echo "::error::`./bw`"; exit 3; }',
        '[[ "$K" == x ]] || { echo "::error::x"; exit 3; }; ./bw',
    ):
        assert not INPUT_CHECK.match(line), line
    assert not THIRD_PARTY_CODE.search(
        'scripts/record_push.sh --repo . --remote "$R" --message "m"'
    )


@pytest.mark.parametrize(
    "workflow, name, job",
    _job_params(
        [
            j
            for j in _jobs(("weekly.yml", "reusable-publish.yml", "reusable-nightly.yml"))
            if not _writes(j[2])
        ]
    ),
)
def test_measure_jobs_read_only_without_tokens(workflow, name, job):
    assert job["permissions"] == {"contents": "read"}
    text = yaml.safe_dump(job["steps"])
    # the one secret, the apps' app-env, only where they boot (tests/test_workflow_wiring.py)
    assert "token" not in text.lower() and "secrets." not in text.replace(
        "${{ secrets.app-env }}", ""
    )


@pytest.mark.parametrize("name", ["publish.yml", "nightly.yml", "weekly.yml"])
def test_publish_and_nightly_run_only_on_main(name):
    """workflow_dispatch from another branch would push that branch's numbers into main's trend."""
    for job_name, job in _load(GITHUB / "workflows" / name)["jobs"].items():
        assert job["if"].startswith("github.ref == 'refs/heads/main'"), job_name


def test_publish_and_nightly_record_in_separate_groups_that_never_cancel():
    """Each workflow's own group and its record job's (in the reusable workflow it calls)."""
    groups = {}
    for name, recorder in (
        ("publish.yml", "reusable-publish.yml"),
        ("nightly.yml", "reusable-nightly.yml"),
        ("weekly.yml", "weekly.yml"),
    ):
        doc = _load(GITHUB / "workflows" / name)
        assert doc["concurrency"]["cancel-in-progress"] is False
        record = _load(GITHUB / "workflows" / recorder)["jobs"]["record"]["concurrency"]
        assert record["cancel-in-progress"] is False
        groups[name] = (doc["concurrency"]["group"], record["group"])
    assert (
        groups["publish.yml"][0] == "publish-${{ github.sha }}"
    )  # a newer push never drops an older one
    assert len({g for pair in groups.values() for g in pair}) == 6


def test_publish_records_which_commits_it_covers():
    run = _record_runs(GITHUB / "workflows" / "reusable-publish.yml")[0]
    assert '--state dev/bench/published.json --sha "$SHA"' in run
    record = _load(GITHUB / "workflows" / "reusable-publish.yml")["jobs"]["record"]
    checkout = next(s for s in record["steps"] if s.get("uses", "").startswith("actions/checkout@"))
    assert (
        checkout["with"]["fetch-depth"] == 0
    )  # the history between the last published commit and this one


def test_no_container_image_without_a_digest():
    for path in WORKFLOWS:
        for image in re.findall(r"^\s*image:\s*(\S+)", path.read_text(), re.M):
            assert "@sha256:" in image, f"{path.name}: {image}"
    ci = _load(GITHUB / "workflows" / "ci.yml")
    assert "services" not in ci["jobs"]["test"]
    start = next(s["run"] for s in ci["jobs"]["test"]["steps"] if "pg_ctl" in s.get("run", ""))
    assert (
        "-h 127.0.0.1 -p 5432" in start
        and "127.0.0.1:5432" in ci["jobs"]["test"]["env"]["TEST_DATABASE_URL"]
    )


def test_dependabot_covers_the_lock_and_every_directory_with_uses():
    updates = _load(GITHUB / "dependabot.yml")["updates"]
    by_ecosystem = {u["package-ecosystem"]: u for u in updates}
    assert set(by_ecosystem) == {"uv", "github-actions"}
    assert by_ecosystem["uv"]["directory"] == "/"
    holders = {
        "/" if p.parent.name == "workflows" else "/" + p.parent.relative_to(ROOT).as_posix()
        for p in WORKFLOWS + ACTIONS
        if _uses_lines(p)
    }
    assert holders == {"/", "/.github/actions/setup"}
    assert set(by_ecosystem["github-actions"]["directories"]) == holders


def test_bw_and_the_workflows_install_only_from_the_lock():
    bw = (ROOT / "bw").read_text()
    assert '"$venv/bin/uv" sync --quiet --frozen --extra dev' in bw
    assert "--require-hashes" in bw and "uv pip install" not in bw
    for path in WORKFLOWS + ACTIONS:
        assert "pip install" not in path.read_text(), path.name


# --- the github-script steps, run under node with a stubbed GitHub -------------------------------

HARNESS = """
const scenario = JSON.parse(process.env.SCENARIO);
const calls = [];
const record = (kind) => async (args) => { calls.push([kind, args]); return { data: {} }; };
const core = { warning: (m) => calls.push(['warning', m]), setFailed: (m) => calls.push(['setFailed', m]),
               summary: { addRaw(text) { calls.push(['summary', text]); return this; }, write: async () => {} } };
const github = {
  rest: {
    // scenario.prs: what each pulls.get answers in turn (a force-push between two), else scenario.pr
    pulls: { get: async () => ({ data: (scenario.prs || []).length ? scenario.prs.shift() : scenario.pr }), listFiles: 'listFiles' },
    issues: { listComments: 'listComments', listForRepo: 'listForRepo', updateComment: record('updateComment'),
              createComment: record('createComment'), update: record('update'), create: record('create') },
  },
  paginate: async (list) => scenario[list] || [],
};
const context = { repo: { owner: 'o', repo: 'r' }, payload: { workflow_run: scenario.run },
                  serverUrl: 'https://github.com', runId: 99, sha: scenario.sha || 'c'.repeat(40) };
(async () => {
SCRIPT
})().then(() => console.log(JSON.stringify(calls)), (e) => { console.error(e); process.exit(1); });
"""


def _github_script(workflow: str, name: str | None = None) -> tuple[str, dict]:
    """The (named) github-script step's script; a caller of a local reusable workflow gives the callee's."""
    (job, *_) = _load(GITHUB / "workflows" / workflow)["jobs"].values()
    if str(job.get("uses", "")).startswith("./.github/workflows/"):
        workflow = job["uses"].rsplit("/", 1)[1]
    step = next(
        s
        for s in _steps(GITHUB / "workflows" / workflow)
        if "github-script@" in s.get("uses", "") and name in (None, s.get("name"))
    )
    return step["with"]["script"], step.get("env", {})


def _workspace(tmp_path: Path) -> Path:
    """$GITHUB_WORKSPACE as the reusable workflows lay it out: benchwatch's sparse checkouts at the
    pinned commit (record-tool/, issue-tool/, comment-tool/), here this repository."""
    work = tmp_path / "workspace"
    work.mkdir(exist_ok=True)
    for name in ("record-tool", "issue-tool", "comment-tool"):
        if not (work / name).exists():
            (work / name).symlink_to(ROOT)
    return work


def _run_script(
    workflow: str, tmp_path: Path, scenario: dict, env: dict, step: str | None = None
) -> list:
    node = _tool("node")
    script, _ = _github_script(workflow, step)
    program = tmp_path / "harness.js"
    program.write_text(HARNESS.replace("SCRIPT", script))
    done = subprocess.run(
        [node, str(program)],
        capture_output=True,
        text=True,
        timeout=60,
        env={
            "PATH": "/usr/bin:/bin",
            "SCENARIO": json.dumps(scenario),
            "GITHUB_WORKSPACE": str(_workspace(tmp_path)),
            **env,
        },
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


MARKER = "<!-- benchwatch-compare -->"
RUN = {
    "id": 42,
    "html_url": "https://github.com/o/r/actions/runs/42",
    "head_sha": "a" * 40,
    "head_branch": "feature",
    "head_repository": {"id": 7},
    "conclusion": "success",
}
PR = {"head": {"sha": "a" * 40, "ref": "feature", "repo": {"id": 7}}, "state": "open"}


@pytest.fixture
def artifact(tmp_path):
    directory = tmp_path / "artifact"
    directory.mkdir()
    (directory / "pr-number.txt").write_text("12\n")
    (directory / "comment.md").write_text(
        "0 regressions, ping @acme/security and see [here](https://x.example)\n"
    )
    return directory


def _comment(tmp_path, artifact, **scenario):
    """pr-comment.yml as GitHub runs it: reusable-comment.yml's script with pr-comment.yml's inputs."""
    scenario = {"run": RUN, "pr": PR, "listFiles": [], "listComments": [], **scenario}
    (job,) = _load(GITHUB / "workflows" / "pr-comment.yml")["jobs"].values()
    env = {"ARTIFACT_DIR": str(artifact), "TOOLING_PATHS": job["with"]["tooling-paths"]}
    return _run_script("pr-comment.yml", tmp_path, scenario, env)


def test_pr_comment_header_is_built_from_the_run_and_mentions_are_neutralised(tmp_path, artifact):
    calls = _comment(tmp_path, artifact, run={**RUN, "conclusion": "failure"})
    [(kind, args)] = calls
    assert kind == "createComment" and args["issue_number"] == 12
    body = args["body"]
    head, _, rest = body.partition("\n\n---\n\n")
    # N4: the disclaimer first, then what the PR's own run (which ran the PR's code) reported
    disclaimer, said = head.split("\n\n")[1:3]
    assert disclaimer.startswith(
        "_Not verified by this repository: the pull request's own benchmark run ran the pull request's code"
    )
    assert said.startswith(
        "**benchwatch** [run 42](https://github.com/o/r/actions/runs/42) on `aaaaaaaaaaaa` reported: "
    )
    assert "**a regression, or benchwatch could not measure**" in head  # from the run's conclusion
    assert "WARNING" not in head
    assert "@\u200bacme/security" in rest and "@acme" not in body
    assert body.count(MARKER) == 1


def test_pr_comment_warns_when_the_pr_changes_the_tooling(tmp_path, artifact):
    # F11: the PR job's editable install runs the wheel's build hook (pyproject.toml names it)
    hook = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["hatch"]["build"][
        "targets"
    ]["wheel"]["hooks"]["custom"]
    build_hook = hook.get("path", "hatch_build.py")
    assert (ROOT / build_hook).is_file()
    files = [
        {"filename": "apps/hello/app.py"},
        {"filename": ".github/workflows/ci.yml"},
        {"filename": "bw"},
        {"filename": "src/benchwatch/cli.py"},
        {"filename": "new.toml", "previous_filename": "pyproject.toml"},
        {"filename": build_hook},
    ]
    [(_, args)] = _comment(tmp_path, artifact, listFiles=files)
    head = args["body"].partition("\n\n---\n\n")[0]
    assert "[!WARNING]" in head
    for name in (
        ".github/workflows/ci.yml",
        "bw",
        "src/benchwatch/cli.py",
        "pyproject.toml",
        build_hook,
    ):
        assert f"`{name}`" in head
    assert "apps/hello" not in head
    [(_, args)] = _comment(tmp_path, artifact, listFiles=[{"filename": "apps/hello/app.py"}])
    assert "WARNING" not in args["body"]


def test_pr_comment_updates_only_the_bots_sticky_comment(tmp_path, artifact):
    comments = [
        {"id": 1, "user": {"login": "mallory", "type": "User"}, "body": MARKER + " fake"},
        {"id": 2, "user": {"login": "some-app[bot]", "type": "Bot"}, "body": MARKER + " fake"},
        {"id": 3, "user": {"login": "github-actions[bot]", "type": "Bot"}, "body": MARKER + " old"},
    ]
    [(kind, args)] = _comment(tmp_path, artifact, listComments=comments)
    assert kind == "updateComment" and args["comment_id"] == 3
    [(kind, _)] = _comment(tmp_path, artifact, listComments=comments[:2])
    assert kind == "createComment"


@pytest.mark.parametrize(
    "change, what",
    [
        ({"head": {**PR["head"], "sha": "b" * 40}}, "head commit"),
        ({"head": {**PR["head"], "repo": {"id": 8}}}, "head repository"),
        ({"head": {**PR["head"], "repo": None}}, "head repository"),
        ({"head": {**PR["head"], "ref": "main"}}, "head branch"),
        ({"state": "closed"}, "state"),
    ],
)
def test_pr_comment_refuses_a_pr_that_does_not_match_the_run(tmp_path, artifact, change, what):
    [(kind, message)] = _comment(tmp_path, artifact, pr={**PR, **change})
    assert kind == "warning" and f"PR #12: {what} is" in message and "not commenting" in message


def test_pr_comment_reads_only_regular_files_under_the_size_limit(tmp_path, artifact):
    secret = tmp_path / "secret.txt"
    secret.write_text("runner secret")
    (artifact / "comment.md").unlink()
    (artifact / "comment.md").symlink_to(secret)
    calls = _comment(tmp_path, artifact)
    assert calls[0][0] == "warning" and "comment.md" in calls[0][1]
    assert calls[1][0] == "createComment" and "runner secret" not in calls[1][1]["body"]
    (artifact / "pr-number.txt").write_text("12" + " " * 300_000)
    assert _comment(tmp_path, artifact)[-1] == [
        "setFailed",
        "pr-number.txt does not hold a pull request number",
    ]


def test_pr_comment_has_a_concurrency_group():
    concurrency = _load(GITHUB / "workflows" / "pr-comment.yml")["concurrency"]
    assert "github.event.workflow_run.head_branch" in concurrency["group"]
    assert concurrency["cancel-in-progress"] is False


NIGHTLY_ISSUE = "Open or update the nightly-regression issue"


def test_nightly_issue_search_skips_pull_requests(tmp_path):
    record = tmp_path / "record"
    record.mkdir()
    (record / "releases.md").write_text("pydantic 3.0.0a1\n")
    (record / "comment.md").write_text("slower\n")
    listed = [{"number": 5, "pull_request": {"url": "x"}}, {"number": 9}]
    calls = _run_script(
        "reusable-issues.yml",
        tmp_path,
        {"listForRepo": listed},
        {"RECORD_DIR": str(record)},
        NIGHTLY_ISSUE,
    )
    assert [(kind, args["issue_number"]) for kind, args in calls] == [
        ("update", 9),
        ("createComment", 9),
    ]
    assert "pydantic 3.0.0a1" in calls[0][1]["body"] and "slower" in calls[0][1]["body"]
    calls = _run_script(
        "reusable-issues.yml",
        tmp_path,
        {"listForRepo": listed[:1]},
        {"RECORD_DIR": str(record)},
        NIGHTLY_ISSUE,
    )
    assert [kind for kind, _ in calls] == ["create"]


def test_nightly_attributes_a_regression_in_the_measure_job_and_the_issue_names_the_release(
    tmp_path,
):
    """The measure job's attribute step writes attribution.md into the record; the issue quotes it."""
    done, record, _ = _nightly_step(
        tmp_path, "Attribute a significant change to the release(s) responsible"
    )
    assert done.returncode == 0, done.stderr
    (record / "releases.md").write_text("starlette 2.0.0\n")
    calls = _run_script(
        "reusable-issues.yml",
        tmp_path,
        {"listForRepo": []},
        {"RECORD_DIR": str(record)},
        NIGHTLY_ISSUE,
    )
    assert (
        "**Responsible:** latest+starlette" in calls[0][1]["body"]
        and "starlette 2.0.0" in calls[0][1]["body"]
    )
    assert calls[0][0] == "create"


CHANGE_HARNESS = """
const scenario = JSON.parse(process.env.SCENARIO);
const calls = [];
const record = (kind) => async (args) => { calls.push([kind, args]); return { data: {} }; };
const core = { warning: (m) => calls.push(['warning', m]),
               summary: { addRaw(text) { calls.push(['summary', text]); return this; }, write: async () => {} } };
const github = { rest: { issues: { listForRepo: 'listForRepo', update: record('update'), create: record('create'),
                                   createComment: record('createComment') } },
                 paginate: async (list, args) => { calls.push(['list', args]); return scenario[list] || []; } };
const context = { repo: { owner: 'o', repo: 'r' }, serverUrl: 'https://github.com', runId: 99 };
const changePoints = require(process.env.MODULE);
changePoints({ github, context, core, dir: process.env.RECORD_DIR, source: 'main' })
  .then(() => console.log(JSON.stringify(calls)), (e) => { console.error(e); process.exit(1); });
"""


def _series(name: str, alert: bool, commit: str = "b" * 40) -> dict:
    def point(sha):
        return {
            "commit": sha,
            "date": "2026-11-01",
            "url": f"https://github.com/o/r/commit/{sha}",
            "value": 1.0,
        }

    change = {
        "before": point("a" * 40),
        "after": point(commit),
        "ratio": 1.07,
        "low": 1.05,
        "high": 1.09,
        "p_value": 1e-7,
        "n_before": 9,
        "n_after": 1,
        "kind": "regression",
        "acknowledged": None,
    }
    return {
        "name": name,
        "suite": "benchwatch (vs parent)",
        "mode": "spike",
        "points": 10,
        "alert": alert,
        "changes": [change],
    }


def _change_points(tmp_path: Path, series: list[dict], listed: list[dict]) -> list:
    record = tmp_path / "record"
    record.mkdir(exist_ok=True)
    (record / "changes.md").write_text("## Change points\n| x | ping @team |\n")
    (record / "changes.json").write_text(json.dumps({"schema_version": 1, "series": series}))
    program = tmp_path / "harness.js"
    program.write_text(CHANGE_HARNESS)
    done = subprocess.run(
        [_tool("node"), str(program)],
        capture_output=True,
        text=True,
        timeout=60,
        env={
            "PATH": "/usr/bin:/bin",
            "SCENARIO": json.dumps({"listForRepo": listed}),
            "RECORD_DIR": str(record),
            "MODULE": str(GITHUB / "scripts" / "change-points.js"),
        },
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_change_point_issues_one_per_alerting_series_and_the_summary(tmp_path):
    cpu = "svc@latest GET / c=10 cpu/req (vs parent)"
    calls = _change_points(
        tmp_path, [_series(cpu, True), _series("svc rss peak (vs parent)", False)], []
    )
    kinds = [kind for kind, _ in calls]
    assert kinds == ["summary", "list", "create"]
    assert "@\u200bteam" in calls[0][1]  # the job summary gets the markdown, mentions neutralised
    assert calls[1][1]["labels"] == "change-point" and calls[1][1]["state"] == "open"
    created = calls[2][1]
    assert created["title"] == f"Change point: {cpu} [benchwatch (vs parent)]" and created[
        "labels"
    ] == ["change-point"]
    assert (
        f"key={'b' * 40} -->" in created["body"]
        and "[`bbbbbbbb`](https://github.com/o/r/commit/" in created["body"]
    )
    assert "1.070" in created["body"] and "benchwatch-acks.toml" in created["body"]
    # the same series again: found by its title (pull requests skipped), the same change: nothing new
    listed = [
        {"number": 3, "title": created["title"], "pull_request": {"url": "x"}},
        {"number": 4, "title": created["title"], "body": created["body"]},
    ]
    assert [k for k, _ in _change_points(tmp_path, [_series(cpu, True)], listed)] == [
        "summary",
        "list",
    ]
    # a new change point in that series: the issue is updated and gets a comment
    calls = _change_points(tmp_path, [_series(cpu, True, commit="c" * 40)], listed)
    assert [(k, a["issue_number"]) for k, a in calls[2:]] == [("update", 4), ("createComment", 4)]


@pytest.mark.parametrize(
    "url, linked",
    [
        ("https://github.com/o/r/commit/" + "b" * 40, True),
        (
            "https://evil.example/o/r/commit/" + "b" * 40,
            False,
        ),  # any https host ending in /commit/<hex>
        ("https://github.com/other/r/commit/" + "b" * 40, False),
        ("https://github.com/o/r/commit/" + "b" * 40 + "#x", False),
        ("https://github.com/o/r/commit/../../../evil/" + "b" * 40, False),
        ("https://github.com.evil.example/o/r/commit/" + "b" * 40, False),
    ],
)
def test_change_point_links_go_only_to_a_commit_of_this_repository(tmp_path, url, linked):
    """N5: the link of each point must start with ${server}/${owner}/${repo}/commit/."""
    series = _series("svc cpu/req", True)
    series["changes"][0]["after"]["url"] = url
    calls = _change_points(tmp_path, [series], [])
    created = calls[-1][1]["body"]
    assert (f"[`bbbbbbbb`]({url})" in created) is linked
    assert (
        "evil" not in created and ("[`bbbbbbbb`]" in created) is linked and "`bbbbbbbb`" in created
    )
    assert (
        "[`aaaaaaaa`](https://github.com/o/r/commit/" + "a" * 40 + ")" in created
    )  # the other point, ours


def test_change_point_script_reads_only_regular_files(tmp_path):
    secret = tmp_path / "secret.json"
    secret.write_text(json.dumps({"series": [_series("x cpu/req", True)]}))
    record = tmp_path / "record"
    record.mkdir()
    _change_points(tmp_path, [], [])
    (record / "changes.json").unlink()
    (record / "changes.json").symlink_to(secret)
    program = tmp_path / "harness.js"
    done = subprocess.run(
        [_tool("node"), str(program)],
        capture_output=True,
        text=True,
        timeout=60,
        env={
            "PATH": "/usr/bin:/bin",
            "SCENARIO": "{}",
            "RECORD_DIR": str(record),
            "MODULE": str(GITHUB / "scripts" / "change-points.js"),
        },
    )
    calls = json.loads(done.stdout)
    assert [k for k, _ in calls] == [
        "summary",
        "warning",
        "warning",
    ]  # not a regular file; nothing checked
    assert "changes.json" in calls[1][1]


REUSABLE = [
    "reusable-pr.yml",
    "reusable-comment.yml",
    "reusable-publish.yml",
    "reusable-nightly.yml",
    "reusable-issues.yml",
]


@pytest.mark.parametrize("name", REUSABLE)
def test_reusable_workflows_are_only_called(name):
    assert set(_load(GITHUB / "workflows" / name)[True]) == {"workflow_call"}


def test_reusable_pr_is_read_only_and_the_commenter_runs_no_code():
    pr = _load(GITHUB / "workflows" / "reusable-pr.yml")
    # read-only in every job: the shards' count reads the declarations (shards: 0), the compare
    # (each shard) and the merge read
    assert {name: job["permissions"] for name, job in pr["jobs"].items()} == {
        "shards": {"contents": "read"},
        "compare": {"contents": "read"},
        "merge": {"contents": "read"},
    }
    # its one secret is the apps' own app-env, given to the compare step alone (test_workflow_wiring.py);
    # GitHub gives a fork's pull request none
    assert set(pr[True]["workflow_call"]["secrets"]) == {"app-env"}
    comment = GITHUB / "workflows" / "reusable-comment.yml"
    assert _checks_out_only_benchwatchs_neutraliser(comment)
    assert "tool/bw" not in comment.read_text()
    script = next(
        s["with"]["script"] for s in _steps(comment) if "github-script" in s.get("uses", "")
    )
    assert "<!-- benchwatch-compare -->" in script and "^[1-9][0-9]{0,9}$" in script


@pytest.mark.parametrize("name", ["reusable-publish.yml", "reusable-nightly.yml"])
def test_reusable_record_job_runs_only_git_and_pinned_actions(name):
    jobs = _load(GITHUB / "workflows" / name)["jobs"]
    assert jobs["measure"]["permissions"] == {"contents": "read"}
    assert jobs["record"]["permissions"] == {
        "contents": "write"
    }  # no issues: reusable-issues.yml, opt-in
    runs = [s["run"] for s in jobs["record"]["steps"] if "run" in s]
    assert len(runs) == 2 and runs[0].strip() == PINNED_COMMIT_CHECK
    assert runs[1].startswith("record-tool/scripts/record_push.sh ")
    uses = {s["uses"].split("@")[0] for s in jobs["record"]["steps"] if "uses" in s}
    assert uses - {"actions/github-script"} == {
        "actions/checkout",
        "actions/download-artifact",
        "benchmark-action/github-action-benchmark",
    }
    tool = next(
        s for s in jobs["record"]["steps"] if s.get("with", {}).get("path") == "record-tool"
    )
    # the script that pushes, and the artifact check (node, run by github-script)
    assert tool["with"]["sparse-checkout"].split() == [
        "scripts/record_push.sh",
        ".github/scripts/*.js",
    ]


def test_caller_workflows_that_init_writes_are_actionlint_clean(tmp_path):
    from benchwatch.scaffold.workflows import caller_workflows

    sha = "0123456789abcdef0123456789abcdef01234567"
    files = caller_workflows(f"someone/benchwatch@{sha}")
    assert set(files) == {
        "benchwatch-pr.yml",
        "benchwatch-comment.yml",
        "benchwatch-publish.yml",
        "benchwatch-nightly.yml",
    }
    folder = tmp_path / ".github" / "workflows"
    folder.mkdir(parents=True)
    for name, text in files.items():
        (folder / name).write_text(text)
        doc = yaml.safe_load(text)
        (job,) = doc["jobs"].values()
        assert (
            job["uses"]
            == f"someone/benchwatch/.github/workflows/reusable-{name.split('-')[1]}@{sha}"
        )
        assert doc["permissions"] == {} and "permissions" in job
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    result = subprocess.run([_tool("actionlint")], cwd=tmp_path, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    pr = yaml.safe_load(files["benchwatch-pr.yml"])
    assert pr["jobs"]["compare"]["permissions"] == {"contents": "read"}
    for name, text in files.items():  # GitHub would refuse the run if a called job asked for more
        (job,) = yaml.safe_load(text)["jobs"].values()
        callee = _load(GITHUB / "workflows" / f"reusable-{name.split('-')[1]}")
        assert _ceiling_problems(job, callee) == [], name
        declared = callee[True]["workflow_call"].get("inputs", {})
        required = {k for k, v in declared.items() if v.get("required")}
        assert required <= set(job.get("with", {})) <= set(declared), (
            name
        )  # e.g. the commenter's benchwatch-ref
        if "benchwatch-ref" in declared:
            assert job["with"]["benchwatch-ref"] == sha, name
    assert set(yaml.safe_load(files["benchwatch-comment.yml"])[True]) == {"workflow_run"}


def test_the_nightly_init_writes_for_an_own_lock_compares_it_with_the_newest_releases(tmp_path):
    from benchwatch.scaffold.workflows import caller_workflows

    files = caller_workflows(SOMEONE, own=True)
    jobs = yaml.safe_load(files["benchwatch-nightly.yml"])["jobs"]
    assert list(jobs) == ["nightly", "issues"]  # the issue a regression opens (test_init.py)
    job = jobs["nightly"]
    assert job["with"]["stacks"] == "own" and job["with"]["releases"] is True
    reusable = _load(GITHUB / "workflows" / "reusable-nightly.yml")[True]["workflow_call"]["inputs"]
    assert reusable["releases"]["type"] == "boolean" and set(job["with"]) <= set(reusable)
    (plain,) = yaml.safe_load(caller_workflows(SOMEONE)["benchwatch-nightly.yml"])["jobs"].values()
    assert plain["with"]["stacks"] == "latest" and "releases" not in plain["with"]
    assert {n: t for n, t in files.items() if n != "benchwatch-nightly.yml"} == {
        n: t for n, t in caller_workflows(SOMEONE).items() if n != "benchwatch-nightly.yml"
    }
    folder = tmp_path / ".github" / "workflows"
    folder.mkdir(parents=True)
    for name, text in files.items():
        (folder / name).write_text(text)
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    result = subprocess.run([_tool("actionlint")], cwd=tmp_path, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def test_callers_with_a_database_and_the_app_env_secret_are_actionlint_clean(tmp_path):
    from benchwatch.scaffold.workflows import caller_workflows

    files = caller_workflows(
        "someone/benchwatch@0123456789abcdef0123456789abcdef01234567",
        database="postgresql",
        app_env=True,
    )
    folder = tmp_path / ".github" / "workflows"
    folder.mkdir(parents=True)
    for name, text in files.items():
        (folder / name).write_text(text)
        (job,) = yaml.safe_load(text)["jobs"].values()
        if name != "benchwatch-comment.yml":
            assert job["with"]["database"] == "postgresql"
            assert job["secrets"] == {"app-env": "${{ secrets.BENCHWATCH_APP_ENV }}"}
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    result = subprocess.run([_tool("actionlint")], cwd=tmp_path, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


# --- issue 39, item 7: the workflows as a team gets them ----------------------------------------

SOMEONE = "someone/benchwatch@0123456789abcdef0123456789abcdef01234567"


@pytest.mark.parametrize("app_env", [False, True])
def test_the_pr_caller_s_header_says_which_secret_it_passes(app_env):
    from benchwatch.scaffold.workflows import caller_workflows

    text = caller_workflows(SOMEONE, app_env=app_env)["benchwatch-pr.yml"]
    header = text.split("\non:\n", 1)[0]
    (job,) = yaml.safe_load(text)["jobs"].values()
    assert ("secrets" in job) is app_env
    assert ("read-only token, no secrets" in header) is not app_env
    if app_env:
        assert (
            "the secret BENCHWATCH_APP_ENV" in header
            and "a pull request from a fork gets no secrets" in header
        )


def test_the_reusable_pr_workflow_s_header_names_its_one_secret():
    header = (GITHUB / "workflows" / "reusable-pr.yml").read_text().split("\non:\n", 1)[0]
    assert "no secrets" not in header and "`app-env`" in header and "--skip-unset" in header


def test_callers_of_the_placeholder_say_so_and_how_to_pin_a_real_copy():
    from benchwatch.scaffold.workflows import PLACEHOLDER, caller_workflows, placeholder_said

    sha = "0123456789abcdef0123456789abcdef01234567"
    for name, text in caller_workflows(f"{PLACEHOLDER}@{sha}").items():
        header = text.split("\non:\n", 1)[0]
        assert f"NOTE: {PLACEHOLDER} is a placeholder" in header, name
        assert f"`benchwatch init --workflows-from OWNER/REPO@{sha}`" in header, name
    for name, text in caller_workflows(SOMEONE).items():
        assert "placeholder" not in text, name
    said = placeholder_said(f"{PLACEHOLDER}@{sha}#v0.1.0")  # default_source's form
    assert said is not None and said.startswith(
        f"init: the workflows call {PLACEHOLDER}@{sha}, a placeholder"
    )
    assert f"--workflows-from OWNER/REPO@{sha}" in said
    assert placeholder_said(SOMEONE) is None


@pytest.mark.parametrize("no_secrets, skips", [("true", True), ("false", False)])
def test_a_pull_request_without_secrets_compares_what_needs_none(tmp_path, no_secrets, skips):
    """A fork's (or Dependabot's) pull request: GitHub passes an empty app-env; the compare step
    asks compare for --skip-unset (what needs a ${NAME} is listed as not measured) instead of
    failing on `${NAME} is not set`. A pull request of the repository itself keeps the exit 3."""
    from test_workflow_attacks import run_step, step

    found = step("reusable-pr.yml", "compare", "Compare merge base and head on this runner")
    assert found["env"]["NO_SECRETS"] == (
        "${{ github.event.pull_request.head.repo.full_name != github.repository || github.actor == 'dependabot[bot]' }}"
    )
    work = tmp_path / "work"
    (work / "tool" / "scripts").mkdir(parents=True)
    shutil.copy(ROOT / "scripts" / "app_env.sh", work / "tool" / "scripts")
    (work / "tool" / "bw").write_text('#!/bin/sh\necho "$@" > "$PWD/bw-args"\nexit 0\n')
    (work / "tool" / "bw").chmod(0o755)
    env = {
        "MERGE_BASE": "b" * 40,
        "HEAD_SHA": "c" * 40,
        "PR_NUMBER": "7",
        "SCENARIOS": "",
        "PATTERNS": "",
        "PROFILE": "false",
        "SHARD": "1",
        "SHARDS": "1",
        "NO_SECRETS": no_secrets,
        "APP_ENV": "",
        "RUNNER_TEMP": str(tmp_path),
        "GITHUB_WORKSPACE": str(work),
        "GITHUB_OUTPUT": str(tmp_path / "output"),
    }
    done = run_step(found, env, cwd=work)
    assert done.returncode == 0, done.stderr
    assert ("--skip-unset" in (work / "bw-args").read_text().split()) is skips
    assert "--shard" not in (work / "bw-args").read_text()  # one runner: no shard
    done = run_step(found, env | {"SHARD": "2", "SHARDS": "4"}, cwd=work)
    assert done.returncode == 0, done.stderr
    assert " --shard 2/4" in (work / "bw-args").read_text()


@pytest.mark.parametrize(
    "workflow, job",
    [
        ("reusable-pr.yml", "compare"),
        ("reusable-publish.yml", "measure"),
        ("reusable-nightly.yml", "measure"),
    ],
)
def test_the_measuring_jobs_install_a_python_the_apps_require(workflow, job):
    """interpreters.install_missing: with BENCHWATCH_INSTALL_PYTHON=1 a Python an app requires
    (`.python-version`, `requires-python`) that the runner lacks is installed with uv."""
    from benchwatch.environments.interpreters import INSTALL_ENV

    assert yaml.safe_load((GITHUB / "workflows" / workflow).read_text())["jobs"][job]["env"] == {
        INSTALL_ENV: "1"
    }


def test_the_shard_count_is_given_or_chosen_from_the_endpoints(tmp_path):
    """reusable-pr.yml's `shards`: a number the caller gives is the matrix; 0 (the default) is one
    runner per 25 endpoints the compare counts (`benchwatch compare-shards` on the pull request's
    declarations); the compare and merge jobs read the count the shards job settled on."""
    from test_workflow_attacks import run_step, step

    pr = _load(GITHUB / "workflows" / "reusable-pr.yml")
    assert pr[True]["workflow_call"]["inputs"]["shards"]["default"] == 0
    job = pr["jobs"]["shards"]
    assert job["outputs"] == {
        "count": "${{ steps.given.outputs.count || steps.chosen.outputs.count }}",
        "list": "${{ steps.given.outputs.list || steps.chosen.outputs.list }}",
    }
    given = step("reusable-pr.yml", "shards", "The runners the caller gives")
    assert given["if"] == "inputs.shards != 0"
    assert all(s["if"] == "inputs.shards == 0" for s in job["steps"] if s.get("id") != "given")
    rest = yaml.safe_dump({k: v for k, v in pr["jobs"].items() if k != "shards"})
    assert "inputs.shards" not in rest and "needs.shards.outputs.count" in rest
    output = tmp_path / "given"
    done = run_step(given, {"SHARDS": "4", "GITHUB_OUTPUT": str(output)})
    assert done.returncode == 0, done.stderr
    assert output.read_text() == "count=4\nlist=[1,2,3,4]\n"
    for bad in ("-1", "100", "x"):
        done = run_step(given, {"SHARDS": bad, "GITHUB_OUTPUT": str(output)})
        assert done.returncode == 3 and "::error::shards:" in done.stdout, bad

    chosen = step(
        "reusable-pr.yml",
        "shards",
        "One runner per 25 endpoints the compare counts (benchwatch compare-shards)",
    )
    work = tmp_path / "work"
    work.mkdir()
    (work / "tool").symlink_to(ROOT)
    (work / "repo").symlink_to(ROOT)
    output = tmp_path / "chosen"
    env = {
        "SCENARIOS": "",
        "PATTERNS": "hello@latest",
        "GITHUB_WORKSPACE": str(work),
        "GITHUB_OUTPUT": str(output),
        "HOME": os.environ.get("HOME", str(tmp_path)),
    }
    done = run_step(chosen, env, cwd=work)
    assert done.returncode == 0, done.stderr
    assert output.read_text() == "endpoints=1\ncount=1\nlist=[1]\n"
