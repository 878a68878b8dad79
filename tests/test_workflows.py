"""The GitHub workflows: actionlint and zizmor clean, plus the security facts we rely on."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
GITHUB = ROOT / ".github"
WORKFLOWS = sorted((GITHUB / "workflows").glob("*.yml"))
ACTIONS = sorted((GITHUB / "actions").glob("*/action.yml"))
PINNED_COMMIT_CHECK = ('[[ "$BW_REF" =~ ^[0-9a-f]{40}$ ]] || { echo "::error::benchwatch-ref: give the 40-hex commit of '
                       'a benchwatch release, not a tag or branch (those can be moved; benchwatch init writes the '
                       'commit)"; exit 3; }')
PINNED = re.compile(r"^[\w.-]+/[\w./-]+@[0-9a-f]{40} # v\d+(\.\d+)*$")


def _tool(name: str) -> str:
    path = shutil.which(name) or next(
        (str(p) for p in [Path(sys.executable).parent / name, Path.home() / "go" / "bin" / name] if p.exists()),
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
        "ci.yml", "benchmark-pr.yml", "pr-comment.yml", "publish.yml", "nightly.yml", "weekly.yml",
        "reusable-pr.yml", "reusable-comment.yml", "reusable-publish.yml", "reusable-nightly.yml",
    }  # fmt: skip
    assert (GITHUB / "dependabot.yml").exists()


def test_actionlint_is_clean():
    result = subprocess.run([_tool("actionlint")], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def test_zizmor_reports_nothing():
    result = subprocess.run(
        [_tool("zizmor"), "--offline", "--persona=auditor", "--format", "plain", ".github"],
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
        assert job["permissions"] == {"contents": "read"} and "secrets" not in job  # no `secrets: inherit`
    assert "secrets." not in (GITHUB / "workflows" / "benchmark-pr.yml").read_text()


def test_our_pr_workflow_is_the_one_users_get():
    """benchwatch measures itself at the PR's head, through the users' reusable-pr.yml."""
    (job,) = _load(GITHUB / "workflows" / "benchmark-pr.yml")["jobs"].values()
    assert job["uses"] == "./.github/workflows/reusable-pr.yml"
    assert job["with"]["benchwatch-ref"] == "${{ github.event.pull_request.head.sha }}"
    declared = _load(GITHUB / "workflows" / "reusable-pr.yml")[True]["workflow_call"]["inputs"]
    assert set(job["with"]) <= set(declared)


@pytest.mark.parametrize("name", ["pr-comment.yml", "reusable-comment.yml"])
def test_pr_comment_never_checks_out_code(name):
    path = GITHUB / "workflows" / name
    assert not any("checkout" in line for line in _uses_lines(path))
    assert "./bw" not in path.read_text()


def test_our_commenter_is_the_one_users_get():
    (job,) = _load(GITHUB / "workflows" / "pr-comment.yml")["jobs"].values()
    assert job["uses"] == "./.github/workflows/reusable-comment.yml"


def _benchmark_steps(path: Path) -> list[dict]:
    return [s for s in _steps(path) if "github-action-benchmark@" in s.get("uses", "")]


def _record_runs(path: Path) -> list[str]:
    return [s["run"] for s in _steps(path) if "scripts/record_push.sh" in s.get("run", "")]


@pytest.mark.parametrize("name", ["publish.yml", "nightly.yml", "weekly.yml", "reusable-publish.yml",
                                  "reusable-nightly.yml"])
def test_gh_pages_is_pushed_once(name):
    path = GITHUB / "workflows" / name
    steps = _benchmark_steps(path)
    tools = ["customSmallerIsBetter", "customBiggerIsBetter"] + (["customSmallerIsBetter"] if name == "publish.yml" else [])
    assert [s["with"]["tool"] for s in steps] == tools  # publish: + the (vs parent) ratios
    assert len({s["with"]["name"] for s in steps}) == len(steps)
    assert all(s["with"]["auto-push"] is False for s in steps)
    assert "skip-fetch-gh-pages" not in steps[0]["with"]
    assert all(s["with"]["skip-fetch-gh-pages"] is True for s in steps[1:])
    assert all(s["with"]["max-items-in-chart"] == 200 for s in steps)
    assert len(_record_runs(path)) == 1  # the one push, by the script tests/test_record_push.py rehearses
    assert "git push" not in path.read_text() and "git -C" not in path.read_text()


def test_publish_settings():
    steps = _benchmark_steps(GITHUB / "workflows" / "publish.yml")
    assert {s["with"]["benchmark-data-dir-path"] for s in steps} == {"dev/bench"}
    for step in steps[:2]:  # the absolute figures of the quick run
        assert step["with"]["comment-on-alert"] is True
        assert step["with"]["alert-threshold"] == "${{ needs.merge.outputs.threshold }}"
    merge = _load(GITHUB / "workflows" / "publish.yml")["jobs"]["merge"]
    assert merge["outputs"]["threshold"] == "${{ steps.threshold.outputs.value }}"


def test_weekly_runs_the_full_plan_into_its_own_trend():
    path = GITHUB / "workflows" / "weekly.yml"
    doc = _load(path)
    assert set(doc[True]) == {"schedule", "workflow_dispatch"}
    assert "./bw run --no-micro --shard" in path.read_text() and "--quick" not in path.read_text()
    assert {s["with"]["benchmark-data-dir-path"] for s in _benchmark_steps(path)} == {"weekly"}
    assert all("weekly" in s["with"]["name"] for s in _benchmark_steps(path))
    assert '--put "$RUNNER_TEMP/record/asv" asv' in _record_runs(path)[0]


def test_publish_relative_trend_compares_the_push_before_and_publishes_its_own_series():
    """The ratio of each push to its parent, measured side by side, is its own trend; a first push
    or a force-push whose `before` is not an ancestor gives no point, and the summary says so."""
    path = GITHUB / "workflows" / "publish.yml"
    jobs = _load(path)["jobs"]
    relative = jobs["relative"]
    checkout = next(s for s in relative["steps"] if s.get("uses", "").startswith("actions/checkout@"))
    assert checkout["with"]["fetch-depth"] == 0
    parent = next(s for s in relative["steps"] if s.get("id") == "parent")
    assert parent["env"] == {"BEFORE": "${{ github.event.before }}", "EVENT": "${{ github.event_name }}"}
    compare = next(s for s in relative["steps"] if "./bw compare" in s.get("run", ""))
    assert compare["if"] == "steps.parent.outputs.parent != ''"
    assert '--base "$PARENT" --head "$GITHUB_SHA"' in compare["run"] and "--quick --no-micro" in compare["run"]
    assert './bw relative "$RUNNER_TEMP/compare" --out "$out/gab-relative.json"' in compare["run"]
    [step] = [s for s in _benchmark_steps(path) if s["with"]["name"] == "benchwatch (vs parent)"]
    assert step["if"] == "needs.merge.outputs.relative == 'true'"
    assert step["with"]["output-file-path"] == "${{ runner.temp }}/record/gab-relative.json"
    changes = next(s["run"] for s in jobs["merge"]["steps"] if s.get("id") == "changes")
    assert '--suite "benchwatch (vs parent)"' in changes  # the same suite name as the record step
    assert "./bw changes" in changes and '--json-file "$record/changes.json"' in changes
    assert jobs["merge"]["outputs"]["relative"] == "${{ steps.changes.outputs.relative }}"
    site = next(s["run"] for s in jobs["merge"]["steps"] if "./bw site" in s.get("run", ""))
    assert '--changes "$RUNNER_TEMP/record/changes.json"' in site


def _relative_parent(tmp_path: Path, repo: Path, sha: str, before: str, event: str = "push") -> tuple[str, str]:
    """publish.yml's parent step, its own shell on a real repository: (parent, what the summary says)."""
    steps = _load(GITHUB / "workflows" / "publish.yml")["jobs"]["relative"]["steps"]
    parent = next(s for s in steps if s.get("id") == "parent")
    temp, output, summary = tmp_path / "temp", tmp_path / "output", tmp_path / "summary"
    temp.mkdir(exist_ok=True)
    for f in (output, summary):
        f.write_text("")
    env = {"PATH": "/usr/bin:/bin", "BEFORE": before, "EVENT": event, "GITHUB_SHA": sha, "RUNNER_TEMP": str(temp),
           "GITHUB_OUTPUT": str(output), "GITHUB_STEP_SUMMARY": str(summary)}  # fmt: skip
    done = subprocess.run(["bash", "-euo", "pipefail", "-c", parent["run"]], cwd=repo, env=env,
                          capture_output=True, text=True, timeout=30)  # fmt: skip
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
    assert _relative_parent(tmp_path, repo, c2, "", "workflow_dispatch")[0] == c1  # a manual run: first parent
    parent, said = _relative_parent(tmp_path, repo, rewritten, "", "workflow_dispatch")
    assert parent == "" and "root commit" in said


@pytest.mark.parametrize("name, source", [("publish.yml", "main"), ("nightly.yml", "nightly")])
def test_change_points_are_found_in_measure_jobs_and_reported_by_the_record_job(name, source):
    jobs = _load(GITHUB / "workflows" / name)["jobs"]
    measure = [s.get("run", "") for j, job in jobs.items() if j != "record" for s in job["steps"]]
    assert any("./bw changes" in run and "changes.json" in run for run in measure)
    record = jobs["record"]
    assert record["permissions"]["issues"] == "write"
    [step] = [s for s in record["steps"] if "change-points.js" in s.get("with", {}).get("script", "")]
    assert f"source: '{source}'" in step["with"]["script"]


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
    path = GITHUB / "workflows" / "nightly.yml"
    assert {s["with"]["benchmark-data-dir-path"] for s in _benchmark_steps(path)} == {"nightly"}
    assert "nightly-regression" in path.read_text()


def test_pr_trend_steps_read_the_head_run_that_compare_writes():
    """compare writes <out>/head/gab-{smaller,bigger}.json (tests/test_compare.py checks that)."""
    path = GITHUB / "workflows" / "reusable-pr.yml"
    text = path.read_text()
    outs = re.findall(r'\bout="\$RUNNER_TEMP/([\w-]+)"', text)
    assert len(outs) == 1 and '--out "$out"' in text
    paths = {s["with"]["output-file-path"] for s in _benchmark_steps(path)}
    assert paths == {f"${{{{ runner.temp }}}}/{outs[0]}/head/gab-{d}.json" for d in ("smaller", "bigger")}


def test_nightly_record_reads_the_head_run_that_compare_writes_via_the_artifact():
    path = GITHUB / "workflows" / "nightly.yml"
    text = path.read_text()
    assert './bw compare --base latest --head next --quick --rounds 12 --out "$RUNNER_TEMP/nightly"' in text
    assert ('cp "$RUNNER_TEMP/nightly/head/gab-smaller.json" "$RUNNER_TEMP/nightly/head/gab-bigger.json" \\\n'
            '            "$RUNNER_TEMP/nightly/comment.md" "$RUNNER_TEMP/nightly-record/"') in text  # fmt: skip
    jobs = _load(path)["jobs"]
    upload = next(s for s in jobs["measure"]["steps"] if "upload-artifact@" in s.get("uses", ""))
    download = next(s for s in jobs["record"]["steps"] if "download-artifact@" in s.get("uses", ""))
    assert upload["with"]["name"] == download["with"]["name"] == "nightly-record"
    assert upload["with"]["path"] == download["with"]["path"] == "${{ runner.temp }}/nightly-record"
    paths = {s["with"]["output-file-path"] for s in _benchmark_steps(path)}
    assert paths == {f"${{{{ runner.temp }}}}/nightly-record/gab-{d}.json" for d in ("smaller", "bigger")}
    # what is recorded is what the check step accepted, never the artifact itself
    check = next(s for s in jobs["record"]["steps"] if "nightly-record.js" in s.get("with", {}).get("script", ""))
    assert check["env"] == {"RECORD_DIR": "${{ runner.temp }}/nightly-record", "CHECKED_DIR": "${{ runner.temp }}/nightly-checked"}
    assert '--put "$RUNNER_TEMP/nightly-checked/state.json" nightly/state.json' in _record_runs(path)[0]
    assert '--add "$RUNNER_TEMP/nightly-checked/attribution" nightly/attribution' in _record_runs(path)[0]
    assert "nightly-record/" not in _record_runs(path)[0]


def test_weekly_merges_the_micro_run_and_publishes_its_asv_site_and_publish_the_dashboard():
    path = GITHUB / "workflows" / "weekly.yml"
    text = path.read_text()
    assert "./bw run --no-micro --shard" in text  # asv runs once, in the micro job
    assert "name: shard-micro" in text and "pattern: shard-*" in text  # merged like a shard
    jobs = _load(path)["jobs"]
    merge = "\n".join(s.get("run", "") for s in jobs["merge"]["steps"])
    assert 'cp -r "$RUNNER_TEMP/shards/shard-micro/asv-html" "$record/asv"' in merge
    publish = GITHUB / "workflows" / "publish.yml"
    jobs = _load(publish)["jobs"]
    site = next(s["run"] for s in jobs["merge"]["steps"] if "./bw site" in s.get("run", ""))
    assert './bw site --out "$RUNNER_TEMP/record/site" --run "$RUNNER_TEMP/quick"' in site  # built in a measure job
    assert "./bw run --quick --no-micro" in publish.read_text()
    assert '--put "$RUNNER_TEMP/record/site" .' in _record_runs(publish)[0]


# --- measure and record: write tokens never meet third-party code ------------------------------

WRITE_SCOPES = ("contents", "issues", "pull-requests")
RECORD_ACTIONS = ("actions/checkout@", "actions/download-artifact@",
                  "benchmark-action/github-action-benchmark@", "actions/github-script@")  # fmt: skip
THIRD_PARTY_CODE = re.compile(r"\./bw\b|\bbenchwatch\b|uv pip install|\buv\b|\boha\b|pip install|cargo|python")


def _jobs(names: tuple[str, ...] = ()) -> list[tuple[str, str, dict]]:
    return [(p.name, name, job) for p in WORKFLOWS if not names or p.name in names
            for name, job in _load(p)["jobs"].items()]  # fmt: skip


def _job_params(jobs: list[tuple[str, str, dict]]) -> list:
    return [pytest.param(*j, id=f"{j[0]}:{j[1]}") for j in jobs]


def _writes(job: dict) -> bool:
    return any(job["permissions"].get(scope) == "write" for scope in WRITE_SCOPES)


def test_the_writing_jobs_are_the_record_jobs_and_the_commenter():
    writers = {(workflow, name) for workflow, name, job in _jobs() if _writes(job)}
    assert writers == {("publish.yml", "record"), ("nightly.yml", "record"), ("weekly.yml", "record"),
                       ("pr-comment.yml", "comment"), ("reusable-publish.yml", "record"),
                       ("reusable-nightly.yml", "record"), ("reusable-comment.yml", "comment")}  # fmt: skip


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
        if run.strip() == PINNED_COMMIT_CHECK:
            continue  # bash's own test of an input, before the checkout of the script
        if run:
            assert not THIRD_PARTY_CODE.search(run), f"{workflow} {name}: {run}"
            # a reusable workflow runs benchwatch's copy, checked out at the caller's pinned tag
            script_path = "record-tool/scripts/record_push.sh " if workflow.startswith("reusable-") else "scripts/record_push.sh "
            assert run.lstrip().startswith(script_path), f"{workflow} {name}: {run}"
        script = step.get("with", {}).get("script", "")
        for required in re.findall(r"require\(`\$\{process\.env\.GITHUB_WORKSPACE\}/([\w./-]+)`\)", script):
            script += (ROOT / required).read_text()  # a script kept in the repository: checked the same way
        assert "child_process" not in script and "exec(" not in script
        for required in re.findall(r"require\('\./([\w-]+\.js)'\)", script):
            script += (GITHUB / "scripts" / required).read_text()  # a module of .github/scripts: the same rules
        assert not re.search(r"require\((?!'fs'|'path'|'\./[\w-]+\.js'|`\$\{process\.env\.GITHUB_WORKSPACE\}/\.github/scripts/)", script)
    script = (ROOT / "scripts" / "record_push.sh").read_text()
    code = "\n".join(line for line in script.splitlines() if not line.lstrip().startswith("#"))
    assert not THIRD_PARTY_CODE.search(code), THIRD_PARTY_CODE.search(code)


def test_the_third_party_code_check_catches_each_forbidden_command():
    for run in ("./bw site --out x", "benchwatch merge a", "uv pip install -e .", "oha -z 1s http://x",
                ".venv/bin/python -m benchwatch", "cargo install oha"):  # fmt: skip
        assert THIRD_PARTY_CODE.search(run), run
    assert not THIRD_PARTY_CODE.search('scripts/record_push.sh --repo . --remote "$R" --message "m"')


@pytest.mark.parametrize("workflow, name, job",
                         _job_params([j for j in _jobs(("publish.yml", "nightly.yml", "weekly.yml")) if not _writes(j[2])]))
def test_measure_jobs_read_only_without_tokens(workflow, name, job):
    assert job["permissions"] == {"contents": "read"}
    text = yaml.safe_dump(job["steps"])
    assert "token" not in text.lower() and "secrets." not in text
    for step in job["steps"]:
        if str(step.get("uses", "")).startswith("./.github/actions/setup"):
            assert "save-oha" not in step.get("with", {})  # restore-only cache


def test_setup_action_restores_and_saves_only_when_asked():
    steps = _steps(GITHUB / "actions" / "setup" / "action.yml")
    caches = [s for s in steps if str(s.get("uses", "")).startswith("actions/cache")]
    assert [s["uses"].split("@")[0] for s in caches] == ["actions/cache/restore", "actions/cache/save"]
    assert "inputs.save-oha == 'true'" in caches[1]["if"]
    assert _load(GITHUB / "actions" / "setup" / "action.yml")["inputs"]["save-oha"]["default"] == "false"
    savers = {workflow for workflow, _, job in _jobs() for s in job.get("steps", []) if "save-oha" in s.get("with", {})}
    assert savers == {"ci.yml"}


@pytest.mark.parametrize("name", ["publish.yml", "nightly.yml", "weekly.yml"])
def test_publish_and_nightly_run_only_on_main(name):
    """workflow_dispatch from another branch would push that branch's numbers into main's trend."""
    for job_name, job in _load(GITHUB / "workflows" / name)["jobs"].items():
        assert job["if"].startswith("github.ref == 'refs/heads/main'"), job_name


def test_publish_and_nightly_record_in_separate_groups_that_never_cancel():
    groups = {}
    for name in ("publish.yml", "nightly.yml", "weekly.yml"):
        doc = _load(GITHUB / "workflows" / name)
        assert doc["concurrency"]["cancel-in-progress"] is False
        record = doc["jobs"]["record"]["concurrency"]
        assert record["cancel-in-progress"] is False
        groups[name] = (doc["concurrency"]["group"], record["group"])
    assert groups["publish.yml"][0] == "publish-${{ github.sha }}"  # a newer push never drops an older one
    assert len({g for pair in groups.values() for g in pair}) == 6


def test_publish_records_which_commits_it_covers():
    run = _record_runs(GITHUB / "workflows" / "publish.yml")[0]
    assert '--state dev/bench/published.json --sha "$SHA"' in run
    record = _load(GITHUB / "workflows" / "publish.yml")["jobs"]["record"]
    checkout = next(s for s in record["steps"] if s.get("uses", "").startswith("actions/checkout@"))
    assert checkout["with"]["fetch-depth"] == 0  # the history between the last published commit and this one


def test_no_container_image_without_a_digest():
    for path in WORKFLOWS:
        for image in re.findall(r"^\s*image:\s*(\S+)", path.read_text(), re.M):
            assert "@sha256:" in image, f"{path.name}: {image}"
    ci = _load(GITHUB / "workflows" / "ci.yml")
    assert "services" not in ci["jobs"]["test"]
    start = next(s["run"] for s in ci["jobs"]["test"]["steps"] if "pg_ctl" in s.get("run", ""))
    assert '-h 127.0.0.1 -p 5432' in start and "127.0.0.1:5432" in ci["jobs"]["test"]["env"]["TEST_DATABASE_URL"]


def test_dependabot_covers_the_lock_and_every_directory_with_uses():
    updates = _load(GITHUB / "dependabot.yml")["updates"]
    by_ecosystem = {u["package-ecosystem"]: u for u in updates}
    assert set(by_ecosystem) == {"uv", "github-actions"}
    assert by_ecosystem["uv"]["directory"] == "/"
    holders = {"/" if p.parent.name == "workflows" else "/" + p.parent.relative_to(ROOT).as_posix()
               for p in WORKFLOWS + ACTIONS if _uses_lines(p)}  # fmt: skip
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
const core = { warning: (m) => calls.push(['warning', m]), setFailed: (m) => calls.push(['setFailed', m]) };
const github = {
  rest: {
    pulls: { get: async () => ({ data: scenario.pr }), listFiles: 'listFiles' },
    issues: { listComments: 'listComments', listForRepo: 'listForRepo', updateComment: record('updateComment'),
              createComment: record('createComment'), update: record('update'), create: record('create') },
  },
  paginate: async (list) => scenario[list] || [],
};
const context = { repo: { owner: 'o', repo: 'r' }, payload: { workflow_run: scenario.run },
                  serverUrl: 'https://github.com', runId: 99 };
(async () => {
SCRIPT
})().then(() => console.log(JSON.stringify(calls)), (e) => { console.error(e); process.exit(1); });
"""


def _github_script(workflow: str, name: str | None = None) -> tuple[str, dict]:
    """The (named) github-script step's script; a caller of a local reusable workflow gives the callee's."""
    (job, *_) = _load(GITHUB / "workflows" / workflow)["jobs"].values()
    if str(job.get("uses", "")).startswith("./.github/workflows/"):
        workflow = job["uses"].rsplit("/", 1)[1]
    step = next(s for s in _steps(GITHUB / "workflows" / workflow)
                if "github-script@" in s.get("uses", "") and name in (None, s.get("name")))  # fmt: skip
    return step["with"]["script"], step.get("env", {})


def _run_script(workflow: str, tmp_path: Path, scenario: dict, env: dict, step: str | None = None) -> list:
    node = _tool("node")
    script, _ = _github_script(workflow, step)
    program = tmp_path / "harness.js"
    program.write_text(HARNESS.replace("SCRIPT", script))
    done = subprocess.run([node, str(program)], capture_output=True, text=True, timeout=60,
                          env={"PATH": "/usr/bin:/bin", "SCENARIO": json.dumps(scenario), "GITHUB_WORKSPACE": str(ROOT),
                               **env})  # fmt: skip
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


MARKER = "<!-- benchwatch-compare -->"
RUN = {"id": 42, "html_url": "https://github.com/o/r/actions/runs/42", "head_sha": "a" * 40,
       "head_branch": "feature", "head_repository": {"id": 7}, "conclusion": "success"}  # fmt: skip
PR = {"head": {"sha": "a" * 40, "ref": "feature", "repo": {"id": 7}}, "state": "open"}


@pytest.fixture
def artifact(tmp_path):
    directory = tmp_path / "artifact"
    directory.mkdir()
    (directory / "pr-number.txt").write_text("12\n")
    (directory / "comment.md").write_text("0 regressions, ping @acme/security and see [here](https://x.example)\n")
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
    assert head.startswith(MARKER + "\n\n**benchwatch** [run 42](https://github.com/o/r/actions/runs/42) on `aaaaaaaaaaaa`")
    assert "**a regression, or benchwatch could not measure**" in head  # from the run's conclusion
    assert "not verified" in head and "WARNING" not in head
    assert "@\u200bacme/security" in rest and "@acme" not in body
    assert body.count(MARKER) == 1


def test_pr_comment_warns_when_the_pr_changes_the_tooling(tmp_path, artifact):
    files = [{"filename": "apps/hello/app.py"}, {"filename": ".github/workflows/ci.yml"}, {"filename": "bw"},
             {"filename": "src/benchwatch/cli.py"}, {"filename": "new.toml", "previous_filename": "pyproject.toml"}]
    [(_, args)] = _comment(tmp_path, artifact, listFiles=files)
    head = args["body"].partition("\n\n---\n\n")[0]
    assert "[!WARNING]" in head
    for name in (".github/workflows/ci.yml", "bw", "src/benchwatch/cli.py", "pyproject.toml"):
        assert f"`{name}`" in head
    assert "apps/hello" not in head
    [(_, args)] = _comment(tmp_path, artifact, listFiles=[{"filename": "apps/hello/app.py"}])
    assert "WARNING" not in args["body"]


def test_pr_comment_updates_only_the_bots_sticky_comment(tmp_path, artifact):
    comments = [{"id": 1, "user": {"login": "mallory", "type": "User"}, "body": MARKER + " fake"},
                {"id": 2, "user": {"login": "some-app[bot]", "type": "Bot"}, "body": MARKER + " fake"},
                {"id": 3, "user": {"login": "github-actions[bot]", "type": "Bot"}, "body": MARKER + " old"}]
    [(kind, args)] = _comment(tmp_path, artifact, listComments=comments)
    assert kind == "updateComment" and args["comment_id"] == 3
    [(kind, _)] = _comment(tmp_path, artifact, listComments=comments[:2])
    assert kind == "createComment"


@pytest.mark.parametrize("change, what", [
    ({"head": {**PR["head"], "sha": "b" * 40}}, "head commit"),
    ({"head": {**PR["head"], "repo": {"id": 8}}}, "head repository"),
    ({"head": {**PR["head"], "repo": None}}, "head repository"),
    ({"head": {**PR["head"], "ref": "main"}}, "head branch"),
    ({"state": "closed"}, "state"),
])  # fmt: skip
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
    assert _comment(tmp_path, artifact)[-1] == ["setFailed", "pr-number.txt does not hold a pull request number"]


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
    calls = _run_script("nightly.yml", tmp_path, {"listForRepo": listed}, {"RECORD_DIR": str(record)}, NIGHTLY_ISSUE)
    assert [(kind, args["issue_number"]) for kind, args in calls] == [("update", 9), ("createComment", 9)]
    assert "pydantic 3.0.0a1" in calls[0][1]["body"] and "slower" in calls[0][1]["body"]
    calls = _run_script("nightly.yml", tmp_path, {"listForRepo": listed[:1]}, {"RECORD_DIR": str(record)}, NIGHTLY_ISSUE)
    assert [kind for kind, _ in calls] == ["create"]


def test_nightly_attributes_a_regression_in_the_measure_job_and_the_issue_names_the_release(tmp_path):
    path = GITHUB / "workflows" / "nightly.yml"
    jobs = _load(path)["jobs"]
    measure_runs = "\n".join(s.get("run", "") for s in jobs["measure"]["steps"])
    assert "./bw attribute --base latest --head next --changed-in" in measure_runs
    assert "--pin-next stacks.toml" in measure_runs and "--record-measured" in measure_runs
    assert "attribute" not in "\n".join(s.get("run", "") for s in jobs["record"]["steps"])
    record = tmp_path / "record"
    record.mkdir()
    (record / "releases.md").write_text("starlette 2.0.0\n")
    (record / "attribution.md").write_text("**Responsible:** latest+starlette (starlette) 1.12x slower\n")
    calls = _run_script("nightly.yml", tmp_path, {"listForRepo": []}, {"RECORD_DIR": str(record)}, NIGHTLY_ISSUE)
    assert "latest+starlette (starlette) 1.12x slower" in calls[0][1]["body"]


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
    point = lambda sha: {"commit": sha, "date": "2026-11-01", "url": f"https://github.com/o/r/commit/{sha}", "value": 1.0}  # noqa: E731
    change = {"before": point("a" * 40), "after": point(commit), "ratio": 1.07, "low": 1.05, "high": 1.09,
              "p_value": 1e-7, "n_before": 9, "n_after": 1, "kind": "regression", "acknowledged": None}  # fmt: skip
    return {"name": name, "suite": "benchwatch (vs parent)", "mode": "spike", "points": 10, "alert": alert,
            "changes": [change]}  # fmt: skip


def _change_points(tmp_path: Path, series: list[dict], listed: list[dict]) -> list:
    record = tmp_path / "record"
    record.mkdir(exist_ok=True)
    (record / "changes.md").write_text("## Change points\n| x | ping @team |\n")
    (record / "changes.json").write_text(json.dumps({"schema_version": 1, "series": series}))
    program = tmp_path / "harness.js"
    program.write_text(CHANGE_HARNESS)
    done = subprocess.run([_tool("node"), str(program)], capture_output=True, text=True, timeout=60, env={
        "PATH": "/usr/bin:/bin", "SCENARIO": json.dumps({"listForRepo": listed}), "RECORD_DIR": str(record),
        "MODULE": str(GITHUB / "scripts" / "change-points.js")})  # fmt: skip
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_change_point_issues_one_per_alerting_series_and_the_summary(tmp_path):
    cpu = "svc@latest GET / c=10 cpu/req (vs parent)"
    calls = _change_points(tmp_path, [_series(cpu, True), _series("svc rss peak (vs parent)", False)], [])
    kinds = [kind for kind, _ in calls]
    assert kinds == ["summary", "list", "create"]
    assert "@\u200bteam" in calls[0][1]  # the job summary gets the markdown, mentions neutralised
    assert calls[1][1]["labels"] == "change-point" and calls[1][1]["state"] == "open"
    created = calls[2][1]
    assert created["title"] == f"Change point: {cpu} [benchwatch (vs parent)]" and created["labels"] == ["change-point"]
    assert f"key={'b' * 40} -->" in created["body"] and "[`bbbbbbbb`](https://github.com/o/r/commit/" in created["body"]
    assert "1.070" in created["body"] and "benchwatch-acks.toml" in created["body"]
    # the same series again: found by its title (pull requests skipped), the same change: nothing new
    listed = [{"number": 3, "title": created["title"], "pull_request": {"url": "x"}},
              {"number": 4, "title": created["title"], "body": created["body"]}]  # fmt: skip
    assert [k for k, _ in _change_points(tmp_path, [_series(cpu, True)], listed)] == ["summary", "list"]
    # a new change point in that series: the issue is updated and gets a comment
    calls = _change_points(tmp_path, [_series(cpu, True, commit="c" * 40)], listed)
    assert [(k, a["issue_number"]) for k, a in calls[2:]] == [("update", 4), ("createComment", 4)]


def test_change_point_script_reads_only_regular_files(tmp_path):
    secret = tmp_path / "secret.json"
    secret.write_text(json.dumps({"series": [_series("x cpu/req", True)]}))
    record = tmp_path / "record"
    record.mkdir()
    _change_points(tmp_path, [], [])
    (record / "changes.json").unlink()
    (record / "changes.json").symlink_to(secret)
    program = tmp_path / "harness.js"
    done = subprocess.run([_tool("node"), str(program)], capture_output=True, text=True, timeout=60, env={
        "PATH": "/usr/bin:/bin", "SCENARIO": "{}", "RECORD_DIR": str(record),
        "MODULE": str(GITHUB / "scripts" / "change-points.js")})  # fmt: skip
    calls = json.loads(done.stdout)
    assert [k for k, _ in calls] == ["summary", "warning", "warning"]  # not a regular file; nothing checked
    assert "changes.json" in calls[1][1]


REUSABLE = ["reusable-pr.yml", "reusable-comment.yml", "reusable-publish.yml", "reusable-nightly.yml"]


@pytest.mark.parametrize("name", REUSABLE)
def test_reusable_workflows_are_only_called(name):
    assert set(_load(GITHUB / "workflows" / name)[True]) == {"workflow_call"}


def test_reusable_pr_is_read_only_and_the_commenter_runs_no_code():
    pr = _load(GITHUB / "workflows" / "reusable-pr.yml")
    assert [job["permissions"] for job in pr["jobs"].values()] == [{"contents": "read"}]
    assert "secrets." not in (GITHUB / "workflows" / "reusable-pr.yml").read_text()
    assert "secrets" not in pr[True]["workflow_call"]
    comment = GITHUB / "workflows" / "reusable-comment.yml"
    assert not any("checkout" in line for line in _uses_lines(comment))
    assert "tool/bw" not in comment.read_text()
    script = next(s["with"]["script"] for s in _steps(comment) if "github-script" in s.get("uses", ""))
    assert "<!-- benchwatch-compare -->" in script and "^[1-9][0-9]{0,9}$" in script


@pytest.mark.parametrize("name", ["reusable-publish.yml", "reusable-nightly.yml"])
def test_reusable_record_job_runs_only_git_and_pinned_actions(name):
    jobs = _load(GITHUB / "workflows" / name)["jobs"]
    assert jobs["measure"]["permissions"] == {"contents": "read"}
    assert jobs["record"]["permissions"] == {"contents": "write"}
    runs = [s["run"] for s in jobs["record"]["steps"] if "run" in s]
    assert len(runs) == 2 and runs[0].lstrip().startswith('[[ "$BW_REF" =~ ^[0-9a-f]{40}$ ]]')
    assert runs[1].startswith("record-tool/scripts/record_push.sh ")
    uses = [s["uses"].split("@")[0] for s in jobs["record"]["steps"] if "uses" in s]
    assert set(uses) == {"actions/checkout", "actions/download-artifact", "benchmark-action/github-action-benchmark"}
    tool = next(s for s in jobs["record"]["steps"] if s.get("with", {}).get("path") == "record-tool")
    assert tool["with"]["sparse-checkout"] == "scripts/record_push.sh"


def test_caller_workflows_that_init_writes_are_actionlint_clean(tmp_path):
    from benchwatch.scaffold.workflows import caller_workflows

    sha = "0123456789abcdef0123456789abcdef01234567"
    files = caller_workflows(f"someone/benchwatch@{sha}")
    assert set(files) == {"benchwatch-pr.yml", "benchwatch-comment.yml", "benchwatch-publish.yml",
                          "benchwatch-nightly.yml"}  # fmt: skip
    folder = tmp_path / ".github" / "workflows"
    folder.mkdir(parents=True)
    for name, text in files.items():
        (folder / name).write_text(text)
        doc = yaml.safe_load(text)
        (job,) = doc["jobs"].values()
        assert job["uses"] == f"someone/benchwatch/.github/workflows/reusable-{name.split('-')[1]}@{sha}"
        assert doc["permissions"] == {} and "permissions" in job
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    result = subprocess.run([_tool("actionlint")], cwd=tmp_path, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    pr = yaml.safe_load(files["benchwatch-pr.yml"])
    assert pr["jobs"]["compare"]["permissions"] == {"contents": "read"}
    assert set(yaml.safe_load(files["benchwatch-comment.yml"])[True]) == {"workflow_run"}
