"""Each finding of the second security review (docs/security.md), planted and seen refused or
neutralised: the workflows' own shell steps and scripts run for real, not their text compared."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
import yaml

from benchwatch.errors import EXIT_BAD_INPUT as BAD_INPUT
from benchwatch.errors import EXIT_CODES
from benchwatch.scaffold.workflows import caller_workflows

ROOT = Path(__file__).resolve().parents[1]
WORKFLOWS = ROOT / ".github" / "workflows"
RELEASE = "0123456789abcdef0123456789abcdef01234567"
REUSABLE = ["reusable-pr.yml", "reusable-publish.yml", "reusable-nightly.yml"]


def step(workflow: str, job: str, name: str) -> dict:
    steps = yaml.safe_load((WORKFLOWS / workflow).read_text())["jobs"][job]["steps"]
    return next(s for s in steps if s.get("name") == name)


def run_step(
    found: dict, env: dict[str, str], cwd: Path | None = None
) -> subprocess.CompletedProcess:
    """A `run:` step's own shell, with its `env:` filled in as GitHub would (our values)."""
    missing = set(found.get("env", {})) - set(env)
    assert not missing, f"the test must give every env the step reads: {missing}"
    return subprocess.run(
        ["bash", "-euo", "pipefail", "-c", found["run"]],
        env={"PATH": os.environ["PATH"], **env},
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
    )


def inputs(**over: str) -> dict[str, str]:
    good = {
        "EVENT": "pull_request",
        "BW_REPOSITORY": "benchwatch/benchwatch",
        "BW_REF": RELEASE,
        "SCENARIOS": "",
        "RELATIVE_SCENARIOS": "",
        "STACKS": "latest",
        "ALERT_THRESHOLD": "150%",
        "COUNTS_THRESHOLD": "105%",
        "COUNTS": "true",
        "DATABASE": "",
        "RELEASES": "false",
        "INDEX_URL": "https://pypi.org",
        "ROUNDS": "12",
    }
    return {**good, **over}


# M3: benchwatch runs (with the write token, in record jobs) from what benchwatch-ref names.


@pytest.mark.parametrize("workflow", REUSABLE)
@pytest.mark.parametrize(
    "ref", ["v0.1.0", "main", RELEASE[:12], RELEASE.upper(), RELEASE + "0", f"{RELEASE}\nv1"]
)
def test_a_movable_ref_is_refused_before_anything_is_checked_out(workflow, ref):
    check = step(
        workflow, "compare" if workflow == "reusable-pr.yml" else "measure", "Check the inputs"
    )
    env = {k: v for k, v in inputs(BW_REF=ref).items() if k in check["env"]}
    done = run_step(check, env)
    assert done.returncode == BAD_INPUT
    assert "::error::benchwatch-ref: give the 40-hex commit" in done.stdout
    assert run_step(check, {k: v for k, v in inputs().items() if k in check["env"]}).returncode == 0


@pytest.mark.parametrize(
    "workflow, job, path",
    [
        ("reusable-publish.yml", "record", "record-tool"),
        ("reusable-nightly.yml", "record", "record-tool"),
        ("reusable-issues.yml", "issues", "issue-tool"),
    ],
)
def test_the_record_job_checks_the_commit_again_before_fetching_the_script_it_runs_with_the_write_token(
    workflow, job, path
):
    steps = yaml.safe_load((WORKFLOWS / workflow).read_text())["jobs"][job]["steps"]
    names = [s.get("name", "") for s in steps]
    check = names.index("Check the pinned commit (the script below runs with the write token)")
    fetch = next(i for i, s in enumerate(steps) if s.get("with", {}).get("path") == path)
    assert check < fetch
    assert run_step(steps[check], {"BW_REF": "v1.0.0"}).returncode == BAD_INPUT
    assert run_step(steps[check], {"BW_REF": RELEASE}).returncode == 0


@pytest.mark.parametrize("workflow", ["reusable-publish.yml", "reusable-nightly.yml"])
@pytest.mark.parametrize("name", ["ALERT_THRESHOLD", "COUNTS_THRESHOLD"])
@pytest.mark.parametrize("value", ["150", "95%", "150%; touch /tmp/x", "1e3%", "", "150%\n200%"])
def test_an_alert_threshold_that_is_not_a_percentage_is_refused(workflow, name, value):
    """github-action-benchmark's alert-threshold: 100 % or more, digits only (it is passed on as text)."""
    check = step(workflow, "measure", "Check the inputs")
    done = run_step(check, {k: v for k, v in inputs(**{name: value}).items() if k in check["env"]})
    assert done.returncode == BAD_INPUT and "a percentage of 100% or more" in done.stdout


def test_the_calibrated_threshold_is_what_calibration_json_gives(tmp_path):
    """reusable-publish.yml's threshold step: the input, or with calibrated-threshold the repository's
    calibration.json through benchwatch (here this repository, with benchwatch as tool/bw)."""
    found = step("reusable-publish.yml", "measure", "The alert threshold")
    (tmp_path / "tool").mkdir()
    (tmp_path / "tool" / "bw").write_text(
        f'#!/bin/sh\nexec "{sys.executable}" -m benchwatch "$@"\n'
    )
    (tmp_path / "tool" / "bw").chmod(0o755)
    (tmp_path / "repo").symlink_to(ROOT)
    expected = subprocess.run(
        [sys.executable, "-m", "benchwatch", "calibrate", "--print-threshold"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    for calibrated, value in (("true", expected), ("false", "150%")):
        output = tmp_path / f"output-{calibrated}"
        done = run_step(
            found,
            {
                "CALIBRATED": calibrated,
                "ALERT_THRESHOLD": "150%",
                "GITHUB_WORKSPACE": str(tmp_path),
                "GITHUB_OUTPUT": str(output),
            },
            cwd=tmp_path,
        )
        assert done.returncode == 0, done.stderr
        assert output.read_text() == f"value={value}\n"


def tagged_repository(tmp_path: Path) -> tuple[Path, str]:
    """A bare 'benchwatch' with an annotated tag v9.9.9 on its one commit."""
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@localhost",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@localhost",
    }
    work = tmp_path / "work"
    for args in (
        ["init", "-q", str(work)],
        ["-C", str(work), "commit", "-q", "--allow-empty", "-m", "release"],
        ["-C", str(work), "tag", "-a", "v9.9.9", "-m", "v9.9.9"],
        ["clone", "-q", "--bare", str(work), str(tmp_path / "bw.git")],
    ):
        subprocess.run(["git", *args], check=True, capture_output=True, env=env)
    sha = subprocess.run(
        ["git", "-C", str(work), "rev-parse", "HEAD"], check=True, capture_output=True, text=True
    )
    return tmp_path / "bw.git", sha.stdout.strip()


def test_init_pins_the_tags_commit_in_uses_and_benchwatch_ref(tmp_path):
    bare, sha = tagged_repository(tmp_path)
    files = caller_workflows("someone/benchwatch@v9.9.9", git_url=str(bare))
    for name, text in files.items():
        doc = yaml.safe_load(text)
        (job,) = doc["jobs"].values()
        assert (
            job["uses"]
            == f"someone/benchwatch/.github/workflows/reusable-{name.split('-')[1]}@{sha}"
        )
        assert f"@{sha} # v9.9.9\n" in text  # the tag stays readable, as a comment
        if "with" in job:
            assert (
                job["with"]["benchwatch-ref"] == sha and f"benchwatch-ref: {sha} # v9.9.9\n" in text
            )
    # what init wrote passes the reusable workflows' own check
    check = step("reusable-publish.yml", "measure", "Check the inputs")
    publish = yaml.safe_load(files["benchwatch-publish.yml"])["jobs"]["publish"]["with"]
    assert (
        run_step(check, inputs(BW_REF=publish["benchwatch-ref"]) | {"STACKS": ""}).returncode == 0
    )


def test_init_refuses_a_tag_it_cannot_resolve_and_writes_nothing(tmp_path):
    from benchwatch.errors import UserError

    bare, _ = tagged_repository(tmp_path)
    with pytest.raises(UserError, match=r"has no tag v0\.0\.1; give OWNER/REPO@<40-hex commit>"):
        caller_workflows("someone/benchwatch@v0.0.1", git_url=str(bare))
    with pytest.raises(UserError, match="give OWNER/REPO@TAG or OWNER/REPO@COMMIT"):
        caller_workflows("someone/benchwatch@--upload-pack=touch /tmp/x")
    assert (
        caller_workflows(f"someone/benchwatch@{RELEASE}")["benchwatch-pr.yml"].count(
            f"@{RELEASE} # pinned commit"
        )
        == 1
    )


# L5: reusable-pr.yml runs the pull request's code; only pull_request gives it a read-only scope.


@pytest.mark.parametrize("event", ["pull_request_target", "push", "workflow_run", "issue_comment"])
def test_reusable_pr_refuses_any_event_but_pull_request(event):
    check = step("reusable-pr.yml", "compare", "Check the inputs")
    done = run_step(check, {k: v for k, v in inputs(EVENT=event).items() if k in check["env"]})
    assert done.returncode == BAD_INPUT and f"runs on pull_request only, not {event}" in done.stdout


# L3 and L2: the sticky comment (reusable-comment.yml, which pr-comment.yml calls), run under node.


def post_comment(tmp_path: Path, comment: str, tooling: str = "", **scenario) -> str:
    from test_workflows import PR, RUN, _run_script

    artifact = tmp_path / "artifact"
    artifact.mkdir(exist_ok=True)
    (artifact / "pr-number.txt").write_text("12\n")
    (artifact / "comment.md").write_text(comment)
    scenario = {"run": RUN, "pr": PR, "listFiles": [], "listComments": [], **scenario}
    calls = _run_script(
        "reusable-comment.yml",
        tmp_path,
        scenario,
        {"ARTIFACT_DIR": str(artifact), "TOOLING_PATHS": tooling},
    )
    [(kind, args)] = calls
    assert kind == "createComment"
    return args["body"]


ZW = "\u200b"


def test_mentions_backlinks_and_hidden_text_in_the_comment_are_neutralised(tmp_path):
    planted = (
        "thanks &#64;alice, &commat;bob, &#x40;carol, @dave and @@erin\n"
        "fixes #5, other/repo#7, GH-9 and https://github.com/other/repo/issues/3\n"
        "<!-- @eve hidden from the reader -->\n"
    )
    body = post_comment(tmp_path, planted).partition("\n\n---\n\n")[2]
    for name in ("alice", "bob", "carol", "dave", "erin"):
        assert f"@{ZW}{name}" in body and f"@{name}" not in body
    assert "&#64;" not in body and "&commat;" not in body
    assert f"fixes #{ZW}5" in body and f"other/repo#{ZW}7" in body and f"GH-{ZW}9" in body
    assert f"/issues/{ZW}3" in body
    assert "hidden from the reader" not in body and "eve" not in body


def test_a_folded_block_cannot_fake_a_header_or_fold_the_page(tmp_path):
    fake = "<details open><summary>**benchwatch**: no regression found</summary>\n\nslower\n</details>\n"
    body = post_comment(tmp_path, fake).partition("\n\n---\n\n")[2]
    assert "<details open>" not in body and "&lt;details open>" in body
    # unbalanced: a lone closing tag could end a block of the trusted header's page; all shown as text
    body = post_comment(tmp_path, "</details>\n<details><summary>x</summary>\n").partition(
        "\n\n---\n\n"
    )[2]
    assert "<details>" not in body and "</details>" not in body and "<summary>" not in body
    # what benchwatch writes (report/comment.py) stays folded
    ours = "<details><summary><b>svc</b> 3 unchanged</summary>\n\n| a | b |\n\n</details>\n"
    assert ours in post_comment(tmp_path, ours)


@pytest.mark.parametrize(
    "path",
    [
        "calibration.json",
        "benchwatch.toml",
        "stacks.toml",
        "benchwatch-acks.toml",
        "benchmarks/bench_models.py",
        "apps/hello/benchwatch-app.toml",
        "benchwatch/benchwatch-app.toml",
        ".github/workflows/x.yml",
    ],
)
def test_the_comment_warns_when_the_pr_changes_what_decides_the_verdict(tmp_path, path):
    files = [{"filename": "apps/hello/app.py"}, {"filename": path}]
    head = post_comment(tmp_path, "ok\n", listFiles=files).partition("\n\n---\n\n")[0]
    assert "[!WARNING]" in head and f"`{path}`" in head
    quiet = post_comment(tmp_path, "ok\n", listFiles=files[:1]).partition("\n\n---\n\n")[0]
    assert "WARNING" not in quiet


def test_the_comment_warns_when_github_did_not_list_every_changed_file(tmp_path):
    from test_workflows import PR

    listed = [{"filename": f"apps/hello/f{i}.py"} for i in range(3000)]
    head = post_comment(
        tmp_path, "ok\n", listFiles=listed, pr={**PR, "changed_files": 3412}
    ).partition("\n\n---\n\n")[0]
    assert "changes 3412 files and GitHub lists only 3000" in head
    head = post_comment(
        tmp_path, "ok\n", listFiles=listed, pr={**PR, "changed_files": 3000}
    ).partition("\n\n---\n\n")[0]
    assert "WARNING" not in head


# M2: the nightly's record job publishes and posts only what .github/scripts/nightly-record.js accepts.

SCRIPTS = ROOT / ".github" / "scripts"
MODULE_HARNESS = """
const calls = [];
const core = { warning: (m) => calls.push(['warning', m]), setFailed: (m) => calls.push(['setFailed', m]),
               summary: { addRaw(text) { calls.push(['summary', text]); return this; }, write: async () => {} } };
const record = (kind) => async (args) => { calls.push([kind, args]); return { data: {} }; };
const github = { rest: { issues: { listForRepo: 'listForRepo', update: record('update'), create: record('create'),
                                   createComment: record('createComment') } },
                 paginate: async () => JSON.parse(process.env.LISTED || '[]') };
const context = { repo: { owner: 'o', repo: 'r' }, serverUrl: 'https://github.com', runId: 99 };
const onIndex = JSON.parse(process.env.ON_INDEX || '{}');
const fetchJson = async (url) => { calls.push(['fetch', url]); return onIndex[url] || null; };
const m = require(process.env.MODULE);
const dir = process.env.RECORD_DIR, out = process.env.OUT_DIR;
const RUN_SHA = '0123456789ab' + 'c'.repeat(28); // the commit of the run whose artifact it is (TONIGHT)
({
  check: () => m.check({ core, dir, out, fetchJson, index: process.env.INDEX_URL, sha: process.env.SHA || RUN_SHA,
                        now: new Date(process.env.NOW || '2026-11-24T22:30:00Z') }),
  issue: () => m.issue({ github, context, core, dir }),
  changePoints: () => m({ github, context, core, dir, source: 'nightly' }),
  neutralise: async () => calls.push(['text', m.neutralise(process.env.TEXT)]),
})[process.env.CALL]().then(() => console.log(JSON.stringify(calls)), (e) => { console.error(e); process.exit(1); });
"""


def node_call(tmp_path: Path, module: str, call: str, **env: str) -> list:
    from test_workflows import _tool

    program = tmp_path / "module-harness.js"
    program.write_text(MODULE_HARNESS)
    done = subprocess.run(
        [_tool("node"), str(program)],
        capture_output=True,
        text=True,
        timeout=60,
        env={"PATH": "/usr/bin:/bin", "MODULE": str(SCRIPTS / module), "CALL": call, **env},
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


GOOD_STATE = {
    "schema": 1,
    "index_url": "https://pypi.org",
    "pre": True,
    "versions": {
        "fastapi": "0.130.0",
        "pydantic": "2.13.0b1",
        "starlette": "0.50.0",
        "uvicorn": "0.38.0",
    },
    "measured": {"fastapi": "0.130.0", "pydantic": "2.13.0b1", "orjson": "3.11.4"},
}
# the index as a mirror serves it: the project's JSON (its `releases`), no per-version document
ON_INDEX = {
    f"https://pypi.org/pypi/{n}/json": {"info": {"name": n}, "releases": {"0.1.0": [], v: []}}
    for n, v in GOOD_STATE["versions"].items()
}
TONIGHT = "2026-11-24-0123456789ab.json"


def nightly_artifact(tmp_path: Path, state: object = GOOD_STATE) -> Path:
    record = tmp_path / "nightly-record"
    (record / "attribution").mkdir(parents=True)
    (record / "state.json").write_text(state if isinstance(state, str) else json.dumps(state))
    (record / "attribution" / TONIGHT).write_text(
        json.dumps({"steps": [{"moved": ["starlette"], "ratio": 1.12}]})
    )
    return record


def check_artifact(
    tmp_path: Path, record: Path, on_index: dict = ON_INDEX, **env: str
) -> tuple[list, Path]:
    out = tmp_path / "nightly-checked"
    calls = node_call(
        tmp_path,
        "nightly-record.js",
        "check",
        RECORD_DIR=str(record),
        OUT_DIR=str(out),
        ON_INDEX=json.dumps(on_index),
        **env,
    )
    return calls, out


def test_only_attribution_files_that_parse_are_published(tmp_path):
    record = nightly_artifact(tmp_path)
    planted = {
        "index.html": "<script>steal()</script>",
        "2026-11-24-0123456789ab.js": "alert(1)",
        "2026-11-25-aaaaaaaaaaaa.json": "<html>not json</html>",
        "2026-11-26-bbbbbbbbbbbb.json": "[1, 2]",
        "2026-13-01-cccccccccccc.json": "{}",
        "README.txt": "{}",
    }
    for name, text in planted.items():
        (record / "attribution" / name).write_text(text)
    secret = tmp_path / "secret.json"
    secret.write_text('{"token": "runner secret"}')
    (record / "attribution" / "2026-11-27-dddddddddddd.json").symlink_to(secret)
    calls, out = check_artifact(tmp_path, record)
    assert [p.name for p in (out / "attribution").iterdir()] == [TONIGHT]
    assert json.loads((out / "attribution" / TONIGHT).read_text())["steps"][0]["moved"] == [
        "starlette"
    ]
    warned = " ".join(m for kind, m in calls if kind == "warning")
    for name in [*planted, "2026-11-27-dddddddddddd.json"]:
        assert json.dumps(name) in warned and "not published" in warned
    assert json.loads((out / "state.json").read_text()) == GOOD_STATE
    assert "setFailed" not in [kind for kind, _ in calls]


@pytest.mark.parametrize(
    "now, accepted",
    [
        ("2026-11-24T22:30:00Z", True),
        ("2026-11-25T01:10:00Z", True),
        ("2026-11-26T01:10:00Z", False),
        ("2026-11-23T23:00:00Z", False),
    ],
)
def test_only_this_runs_attribution_file_is_published(tmp_path, now, accepted):
    """F6: an artifact could name an earlier night's file (its date, any commit); only the run's own
    `<date>-<sha12>.json` is accepted, the date the record job's today or yesterday (UTC)."""
    record = nightly_artifact(tmp_path)
    for earlier in (
        "2026-11-01-eeeeeeeeeeee.json",
        "2026-11-24-eeeeeeeeeeee.json",
        "2026-11-20-0123456789ab.json",
    ):
        (record / "attribution" / earlier).write_text(json.dumps({"steps": []}))
    calls, out = check_artifact(tmp_path, record, NOW=now)
    assert [p.name for p in (out / "attribution").iterdir()] == ([TONIGHT] if accepted else [])
    warned = [m for kind, m in calls if kind == "warning"]
    assert len(warned) == 4 - accepted and all(
        "not this run's" in m and "not published" in m for m in warned
    )
    calls, out = check_artifact(
        tmp_path / "no-sha", nightly_artifact(tmp_path / "no-sha"), SHA="main"
    )
    assert calls == [["setFailed", "the run's commit is not 40 hex; nothing recorded"]]
    steps = yaml.safe_load((WORKFLOWS / "reusable-nightly.yml").read_text())["jobs"]["record"][
        "steps"
    ]
    assert "tool.check({ core, dir, out, index, sha: context.sha })" in next(
        s["with"]["script"]
        for s in steps
        if "nightly-record.js" in s.get("with", {}).get("script", "")
    )


def test_what_the_check_accepts_is_added_to_gh_pages_and_nothing_else_is_touched(tmp_path):
    """The record job's last step: record_push.sh --add the checked folder; earlier nights stay."""
    from test_record_push import RecordJob, finish, git, pages

    record = nightly_artifact(tmp_path)
    (record / "attribution" / "evil.html").write_text("<script>steal()</script>")
    _, out = check_artifact(tmp_path, record)
    bare = tmp_path / "origin.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(bare))
    seed = tmp_path / "seed"
    git(tmp_path, "clone", "-q", str(bare), str(seed))
    git(seed, "commit", "-q", "--allow-empty", "-m", "main")
    git(seed, "push", "-q", "origin", "main")
    git(seed, "switch", "-q", "--orphan", "gh-pages")
    (seed / "nightly" / "attribution").mkdir(parents=True)
    (seed / "nightly" / "attribution" / "2026-11-01-eeeeeeeeeeee.json").write_text("{}\n")
    git(seed, "add", "-A")
    git(seed, "commit", "-q", "-m", "an earlier night")
    git(seed, "push", "-q", "origin", "gh-pages")
    job = RecordJob(bare, tmp_path, "nightly")
    code, err = finish(
        job.record(
            "--put",
            str(out / "state.json"),
            "nightly/state.json",
            "--add",
            str(out / "attribution"),
            "nightly/attribution",
        )
    )
    assert code == 0, err
    listed = git(bare, "ls-tree", "-r", "--name-only", "gh-pages").split()
    assert sorted(listed) == [
        "nightly/attribution/2026-11-01-eeeeeeeeeeee.json",
        f"nightly/attribution/{TONIGHT}",
        "nightly/state.json",
    ]
    assert json.loads(pages(bare, "nightly/state.json"))["versions"]["fastapi"] == "0.130.0"
    # F6: a name already published is never replaced (the same content again, a re-run, is no change)
    again = RecordJob(bare, tmp_path, "rerun")
    code, err = finish(again.record("--add", str(out / "attribution"), "nightly/attribution"))
    assert code == 0, err
    before = git(bare, "rev-parse", "gh-pages")
    (out / "attribution" / TONIGHT).write_text('{"steps": []}\n')
    late = RecordJob(bare, tmp_path, "other")
    code, err = finish(late.record("--add", str(out / "attribution"), "nightly/attribution"))
    assert code == 1 and err.strip().splitlines()[-1] == (
        f"ERROR: --add {out / 'attribution' / TONIGHT}: nightly/attribution/{TONIGHT} is already published with other content; nothing pushed"
    )
    assert git(bare, "rev-parse", "gh-pages") == before
    assert json.loads(pages(bare, f"nightly/attribution/{TONIGHT}"))["steps"][0]["moved"] == [
        "starlette"
    ]


def test_the_state_versions_are_checked_against_the_projects_release_list(tmp_path):
    """Issue 30, 5: a mirror or proxy serves /pypi/<name>/json, often no /pypi/<name>/<version>/json;
    the check asks only the project's JSON, and a version its `releases` lists is on the index."""
    calls, out = check_artifact(tmp_path, nightly_artifact(tmp_path))
    fetched = [url for kind, url in calls if kind == "fetch"]
    assert fetched == [f"https://pypi.org/pypi/{name}/json" for name in GOOD_STATE["versions"]]
    assert "setFailed" not in [kind for kind, _ in calls] and (out / "state.json").exists()
    delisted = {**ON_INDEX, "https://pypi.org/pypi/pydantic/json": {"releases": {"2.12.0": []}}}
    calls, _ = check_artifact(tmp_path / "again", nightly_artifact(tmp_path / "again"), delisted)
    assert calls[-1] == [
        "setFailed",
        "state.json in the artifact: versions.pydantic 2.13.0b1 is not on https://pypi.org; nothing recorded",
    ]


# N3: the nightly's gab files reach github-action-benchmark (and a commit comment) only as checked.

GAB_HARNESS = """
const calls = [];
const core = { warning: (m) => calls.push(['warning', m]), setFailed: (m) => calls.push(['setFailed', m]) };
require(process.env.MODULE).gab({ core, dir: process.env.RECORD_DIR, out: process.env.OUT_DIR })
  .then((ok) => console.log(JSON.stringify([ok, calls])), (e) => { console.error(e); process.exit(1); });
"""


def check_gab(tmp_path: Path, files: dict[str, object]) -> tuple[bool, list, Path]:
    from test_workflows import _tool

    record, out = tmp_path / "record", tmp_path / "checked"
    record.mkdir(parents=True)
    for name, content in files.items():
        (record / name).write_text(content if isinstance(content, str) else json.dumps(content))
    (tmp_path / "gab-harness.js").write_text(GAB_HARNESS)
    done = subprocess.run(
        [_tool("node"), str(tmp_path / "gab-harness.js")],
        capture_output=True,
        text=True,
        timeout=60,
        env={
            "PATH": "/usr/bin:/bin",
            "MODULE": str(SCRIPTS / "nightly-record.js"),
            "RECORD_DIR": str(record),
            "OUT_DIR": str(out),
        },
    )
    assert done.returncode == 0, done.stderr
    ok, calls = json.loads(done.stdout)
    return ok, calls, out


def test_the_gab_files_benchwatch_writes_pass_the_nightly_check_unchanged(tmp_path):
    from test_workflow_wiring import run_with_counts

    from benchwatch.results.files import write_run

    write_run(tmp_path / "run", run_with_counts())
    files = {
        name: (tmp_path / "run" / name).read_text()
        for name in ("gab-smaller.json", "gab-bigger.json", "gab-counts.json")
    }
    assert all(json.loads(text) for text in files.values())
    ok, calls, out = check_gab(tmp_path / "check", files)
    assert ok and calls == []
    for name, text in files.items():
        assert json.loads((out / name).read_text()) == json.loads(text)


@pytest.mark.parametrize(
    "entry, problem",
    [
        (
            {"name": "svc @acme/security cpu/req", "unit": "us", "value": 1},
            "name is not a benchwatch figure name",
        ),
        (
            {"name": "see [here](https://evil.example)", "unit": "us", "value": 1},
            "name is not a benchwatch figure name",
        ),
        (
            {"name": "<img src=x onerror=alert(1)>", "unit": "us", "value": 1},
            "name is not a benchwatch figure name",
        ),
        ({"name": "fixes #1", "unit": "us", "value": 1}, "name is not a benchwatch figure name"),
        ({"name": "a\nb", "unit": "us", "value": 1}, "name is not a benchwatch figure name"),
        # F5: github-action-benchmark prints the name in backticks in a table row: a `|` ends the cell
        (
            {"name": "svc@latest GET /|_@alice_| c=10 cpu/req", "unit": "us", "value": 1},
            "name is not a benchwatch figure name",
        ),
        (
            {"name": "svc@latest GET / c=10 cpu/req _@alice_", "unit": "us", "value": 1},
            "name is not a benchwatch figure name",
        ),
        (
            {"name": "svc@latest GET /` @alice ` c=10 cpu/req", "unit": "us", "value": 1},
            "name is not a benchwatch figure name",
        ),
        ({"name": "x", "unit": "@team", "value": 1}, "name is not a benchwatch figure name"),
        # F5: and the unit as it is, outside the backticks
        (
            {"name": "svc@latest GET / c=10 cpu/req", "unit": "_@alice_", "value": 1},
            "unit is not one of benchwatch's",
        ),
        (
            {"name": "svc@latest GET / c=10 cpu/req", "unit": "us|@alice", "value": 1},
            "unit is not one of benchwatch's",
        ),
        (
            {"name": "svc@latest GET / c=10 cpu/req", "unit": "us", "value": "1"},
            "value is not a finite number",
        ),
        (
            {"name": "x", "unit": "us", "value": 1, "biggerIsBetter": True},
            'unexpected key "biggerIsBetter"',
        ),
        ("x", "not an object"),
    ],
)
def test_a_hostile_gab_entry_is_dropped_and_said(tmp_path, entry, problem):
    good = {
        "name": "svc@latest GET / c=10 cpu/req",
        "unit": "us",
        "value": 12.5,
        "range": "± 0.1",
        "extra": "9 samples",
    }
    ok, calls, out = check_gab(tmp_path, {"gab-smaller.json": [good, entry]})
    [(kind, said)] = calls
    assert (
        ok
        and kind == "warning"
        and said.startswith(f"gab-smaller.json[1]: {problem}")
        and said.endswith("; not recorded")
    )
    assert json.loads((out / "gab-smaller.json").read_text()) == [good]


def test_gab_extras_are_flattened_and_a_gab_file_that_is_not_a_list_records_nothing(tmp_path):
    entry = {
        "name": "svc@latest rss peak",
        "unit": "MB",
        "value": 1,
        "extra": "ping @team, see [x](https://e.example) <b>",
        "range": "± `1` | _@alice_",
    }
    ok, calls, out = check_gab(tmp_path, {"gab-bigger.json": [entry]})
    [kept] = json.loads((out / "gab-bigger.json").read_text())
    assert (
        ok
        and calls == []
        and "@team" not in kept["extra"]
        and "](" not in kept["extra"]
        and "<" not in kept["extra"]
    )
    assert "`" not in kept["range"] and "|" not in kept["range"] and "@alice" not in kept["range"]
    ok, calls, _ = check_gab(tmp_path / "object", {"gab-smaller.json": {"name": "x"}})
    assert (
        not ok
        and calls[0][0] == "setFailed"
        and "gab-smaller.json in the artifact: not a JSON list" in calls[0][1]
    )


@pytest.mark.parametrize("workflow", ["reusable-nightly.yml", "reusable-publish.yml"])
def test_each_record_job_feeds_github_action_benchmark_only_checked_gab_files(workflow):
    """F5: publish's record job passed the artifact's gab files to github-action-benchmark unchecked."""
    steps = yaml.safe_load((WORKFLOWS / workflow).read_text())["jobs"]["record"]["steps"]
    check = next(
        i for i, s in enumerate(steps) if "nightly-record.js" in s.get("with", {}).get("script", "")
    )
    assert "if" not in steps[check] and "tool.gab(" in steps[check]["with"]["script"]
    fed = [s for s in steps if "github-action-benchmark@" in s.get("uses", "")]
    assert len(fed) >= 3
    for i, s in enumerate(steps):
        if "github-action-benchmark@" in s.get("uses", ""):
            assert i > check and s["with"]["output-file-path"].startswith(
                "${{ runner.temp }}/checked/gab-"
            )
    tool = next(s for s in steps if s.get("with", {}).get("path") == "record-tool")
    assert ".github/scripts/*.js" in tool["with"]["sparse-checkout"].split()


GAB_LISTS = """
const m = require(process.env.MODULE);
const names = JSON.parse(process.env.NAMES);
console.log(JSON.stringify({ units: m.UNITS, perEndpoint: m.PER_ENDPOINT, perVariant: m.PER_VARIANT, marks: m.MARKS,
                             accepted: names.map((n) => m.figureName(n)) }));
"""


def gab_names(tmp_path: Path, names: list[str]) -> dict:
    from test_workflows import _tool

    program = tmp_path / "gab-lists.js"
    program.write_text(GAB_LISTS)
    done = subprocess.run(
        [_tool("node"), str(program)],
        capture_output=True,
        text=True,
        timeout=60,
        env={
            "PATH": "/usr/bin:/bin",
            "MODULE": str(SCRIPTS / "nightly-record.js"),
            "NAMES": json.dumps(names),
        },
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def every_name_benchwatch_writes() -> list[str]:
    from benchwatch.figures import figure_key as fk
    from benchwatch.figures.metrics import (
        METRICS,
        MICRO_INSTRUCTIONS,
        Closed,
        Counted,
        Open,
        load_metrics,
    )

    names = []
    for mark in ("", fk.SIDE_BY_SIDE, f" {fk.PARENT_MARK}"):
        for variant in (
            "hello@latest",
            "hello-falcon@seed-v1",
            "posts@v2-pre-rust+fastapi",
            "item_api@3.13",
        ):
            for setting in (Closed(10), Closed(1), Open(0.5), Open(0.25), Counted()):
                for what in load_metrics(setting):
                    for endpoint in (
                        "GET /",
                        "GET /items/{item_id}?limit=10&skip=0",
                        "POST /login/access-token",
                    ):
                        names.append(fk.load_key(variant, endpoint, setting, what, mark).name)
            names += [fk.server_key(variant, m, mark).name for m in METRICS if m.per_variant]
        names += [
            fk.micro_key(("payloads-1MB",), "dump_json", "latest").marked(mark).name,
            fk.micro_key(("services", "n=100"), "peakmem_validate", "seed-v1").marked(mark).name,
            fk.micro_key(("payloads",), "dump_json", "next", instructions=True).marked(mark).name,
        ]
    assert any(MICRO_INSTRUCTIONS.unit in n for n in names)
    return names


def test_the_gab_checks_lists_are_figure_keys_and_metrics(tmp_path):
    """F5: the one definition of a figure name is figure_key.py (metrics.py's metrics, marks): the
    JS check's lists are these, and every name figure_key encodes passes it."""
    from benchwatch.figures import figure_key as fk
    from benchwatch.figures.metrics import METRICS
    from benchwatch.trend import relative

    found = gab_names(tmp_path, every_name_benchwatch_writes())
    assert set(found["units"]) == {m.unit for m in METRICS} | {relative.UNIT}
    assert set(found["perEndpoint"]) == {
        m.short for m in METRICS if m.short and not m.per_variant and m.short != "instructions"
    }
    assert set(found["perVariant"]) == {m.short for m in METRICS if m.per_variant}
    assert set(found["marks"]) == {fk.SIDE_BY_SIDE, f" {fk.PARENT_MARK}"}
    assert all(found["accepted"])


def test_a_name_the_gab_check_accepts_is_one_figure_key_reads_back(tmp_path):
    """Hostile and random names: whatever the JS check accepts, figure_key.decode reads as a figure."""
    import random

    from benchwatch.figures.figure_key import decode

    good = every_name_benchwatch_writes()
    rng = random.Random(42)
    pieces = [
        " ",
        "@",
        "|",
        "`",
        "_",
        "#1",
        "<b>",
        "GH-1",
        "/",
        "c=",
        "rps",
        "&#64;",
        "a",
        "\\",
        "(vs parent)",
        "\n",
    ]
    mutated = []
    for _ in range(1500):
        name = list(rng.choice(good))
        for _ in range(rng.randint(1, 3)):
            name.insert(rng.randint(0, len(name)), rng.choice(pieces))
        mutated.append("".join(name))
    found = gab_names(tmp_path, mutated)
    accepted = [n for n, ok in zip(mutated, found["accepted"], strict=True) if ok]
    assert 0 < len(accepted) < len(mutated)
    for name in accepted:
        assert decode(name) is not None, name
        assert not set(name) & set("|`\\\n"), name


@pytest.mark.parametrize(
    "state, problem",
    [
        ("{not json", "not JSON"),
        ([GOOD_STATE], "not a JSON object"),
        ({**GOOD_STATE, "schema": 2}, "schema is not 1"),
        ({**GOOD_STATE, "hide": True}, 'unexpected key "hide"'),
        ({**GOOD_STATE, "index_url": "https://evil.example"}, "index_url is not https://pypi.org"),
        (
            {**GOOD_STATE, "versions": {**GOOD_STATE["versions"], "fastapi": "0.130.0; rm -rf /"}},
            "versions.fastapi is not a version",
        ),
        (
            {**GOOD_STATE, "versions": {"evil-pkg": "1.0"}},
            'versions names "evil-pkg", not a watched package',
        ),
        (
            {**GOOD_STATE, "versions": {**GOOD_STATE["versions"], "fastapi": "0.131.0"}},
            "versions.fastapi 0.131.0 is not the measured 0.130.0",
        ),
        (
            {**GOOD_STATE, "versions": {**GOOD_STATE["versions"], "uvicorn": "9.0.0"}},
            "versions.uvicorn 9.0.0 is not on https://pypi.org",
        ),
    ],
)
def test_a_hostile_state_json_is_refused_and_nothing_is_recorded(tmp_path, state, problem):
    """A state naming a version before it exists would hide that release on the night it appears."""
    calls, out = check_artifact(tmp_path, nightly_artifact(tmp_path, state))
    failed = [m for kind, m in calls if kind == "setFailed"]
    assert failed == [
        f"state.json in the artifact: {failed[0].split(': ', 1)[1].split('; ')[0]}; nothing recorded"
    ]
    assert problem in failed[0]
    assert not (out / "state.json").exists() and not list((out / "attribution").iterdir())


def test_the_nightly_issue_body_is_neutralised(tmp_path):
    record = tmp_path / "nightly-record"
    record.mkdir()
    (record / "releases.md").write_text("pydantic 3.0.0a1, thanks &#64;maintainer and @core-team\n")
    (record / "attribution.md").write_text(
        "see pydantic/pydantic#123 <!-- hidden --> <details open>x\n"
    )
    (record / "comment.md").write_text("<!-- benchwatch-nightly -->fake marker, 1.12x slower\n")
    [(kind, args)] = node_call(tmp_path, "nightly-record.js", "issue", RECORD_DIR=str(record))
    body = args["body"]
    assert (
        kind == "create"
        and body.startswith("<!-- benchwatch-nightly -->")
        and body.count("benchwatch-nightly") == 1
    )
    assert f"@{ZW}maintainer" in body and f"@{ZW}core-team" in body and "&#64;" not in body
    assert (
        f"pydantic/pydantic#{ZW}123" in body
        and "hidden" not in body
        and "&lt;details open>" in body
    )
    assert "1.12x slower" in body and "pydantic 3.0.0a1" in body


def test_one_run_opens_at_most_five_change_point_issues(tmp_path):
    from test_workflows import _series

    record = tmp_path / "record"
    record.mkdir()
    series = [_series(f"svc{i}@latest GET / c=10 cpu/req", True) for i in range(8)]
    series[0]["changes"][0]["n_before"] = "<img src=x onerror=alert(1)>"
    series[0]["points"] = "10 @everyone"
    (record / "changes.md").write_text("| series |\n")
    (record / "changes.json").write_text(json.dumps({"schema_version": 1, "series": series}))
    calls = node_call(tmp_path, "change-points.js", "changePoints", RECORD_DIR=str(record))
    created = [args for kind, args in calls if kind == "create"]
    assert len(created) == 5
    warned = [m for kind, m in calls if kind == "warning"]
    assert len(warned) == 3 and all("this run already opened 5 issues" in m for m in warned)
    # counts are printed by the script, never copied from the artifact
    assert "<img" not in created[0]["body"] and "@everyone" not in created[0]["body"]
    assert "| n/a / 1 |" in created[0]["body"] and "n/a points" in created[0]["body"]


PLANTED_TEXTS = [
    "&#64;a &commat;b &#x40;c @d e@f",
    "#1 o/r#2 GH-3 https://github.com/o/r/pull/4",
    "<!-- x --> <details open><summary>y</summary></details>",
    "<details><summary>z</summary>\n</details>",
    "`*@latest` and @g\n\n| `x@y` | @h |",
    "x `a\n# b` `@i` `w`",
    "| `a | @j` |",
    "\\`@k` $`@l`$",
]


@pytest.mark.parametrize("text", PLANTED_TEXTS)
def test_the_comment_posts_what_the_one_neutraliser_gives(tmp_path, text):
    """reusable-comment.yml requires .github/scripts/neutralise.js (no copy of its own): the same text out."""
    from test_workflows import PR, RUN, _run_script

    [(_, module_text)] = node_call(tmp_path, "neutralise.js", "neutralise", TEXT=text)
    artifact = tmp_path / "artifact"
    artifact.mkdir(exist_ok=True)
    (artifact / "pr-number.txt").write_text("12\n")
    (artifact / "comment.md").write_text(text)
    [(_, args)] = _run_script(
        "reusable-comment.yml",
        tmp_path,
        {"run": RUN, "pr": PR},
        {"ARTIFACT_DIR": str(artifact), "TOOLING_PATHS": ""},
    )
    assert args["body"].partition("\n\n---\n\n")[2] == module_text


def test_the_comment_holds_no_neutraliser_of_its_own_and_checks_out_only_benchwatchs():
    """F4: one copy. The comment job checks out benchwatch's neutralise.js at the pinned commit, and nothing else."""
    steps = yaml.safe_load((WORKFLOWS / "reusable-comment.yml").read_text())["jobs"]["comment"][
        "steps"
    ]
    checkouts = [s for s in steps if s.get("uses", "").startswith("actions/checkout@")]
    assert [c["with"] for c in checkouts] == [
        {
            "repository": "${{ inputs.benchwatch-repository }}",
            "ref": "${{ inputs.benchwatch-ref }}",
            "path": "comment-tool",
            "sparse-checkout": ".github/scripts/neutralise.js",
            "sparse-checkout-cone-mode": False,
            "persist-credentials": False,
        }
    ]
    check = next(i for i, s in enumerate(steps) if "BW_REF" in s.get("env", {}))
    assert check < steps.index(checkouts[0])
    script = next(s for s in steps if "github-script@" in s.get("uses", ""))["with"]["script"]
    assert "/comment-tool/.github/scripts/neutralise.js" in script
    for own in (
        "const breakRefs",
        "const codeSpans",
        "const quiet",
        "const plainTags =",
        "replace(/@",
    ):
        assert own not in script, own


@pytest.mark.parametrize("ref", ["v1.2.0", "main", ""])
def test_the_comment_refuses_a_movable_ref_before_checking_anything_out(ref):
    found = step(
        "reusable-comment.yml",
        "comment",
        "Check the pinned commit (the script below runs with the write token)",
    )
    done = run_step(found, {"BW_REF": ref, "BW_REPOSITORY": "benchwatch/benchwatch"})
    assert (
        done.returncode == BAD_INPUT
        and "::error::benchwatch-ref: give the 40-hex commit" in done.stdout
    )
    assert (
        run_step(found, {"BW_REF": RELEASE, "BW_REPOSITORY": "benchwatch/benchwatch"}).returncode
        == 0
    )


# F4 (fourth review): each got a mention or an issue link past the neutraliser (`_` is emphasis
# around a mention; a character reference is decoded by GitHub after the neutraliser looked).
F4_PLANTED = {
    "_@alice_": "alice",
    "__@acme/security-team__": "acme",
    "@&#x61;lice": "alice",
    "&#x23;12": "#12",
    "&num;12": "#12",
    "G&#x48;-12": "GH-12",
    "_GH-12_": "GH-12",
    "&commat;bob": "bob",
    "GH\\-12": "GH-12",
    "&amp;#64;carol": None,
}


def test_emphasis_and_character_references_mention_and_link_no_one_in_the_comment(tmp_path):
    from test_workflow_wiring import references

    text = "\n\n".join(F4_PLANTED)
    assert (
        len(references(text)) >= 8
    )  # the stand-in renderer sees what GitHub would mention or link
    body = post_comment(tmp_path, text).partition("\n\n---\n\n")[2]
    assert references(body) == [], body
    for said in ("@alice", "@acme", "#12", "GH-12", "@bob"):
        assert said not in body
    assert (
        f"_@{ZW}alice_" in body and f"__@{ZW}acme/security-team__" in body and f"GH-{ZW}12" in body
    )
    assert (
        "&amp;#" in body and "carol" in body
    )  # decoded once, as GitHub does: shown as the text `&#64;carol`
    # every & is escaped: no reference the neutraliser did not decode reaches GitHub
    assert "&amp;" in post_comment(tmp_path, "a & b &unknownref; c").partition("\n\n---\n\n")[2]
    assert "&unknownref;" not in post_comment(tmp_path, "&unknownref;").partition("\n\n---\n\n")[2]


def test_a_change_point_issue_for_a_series_named_with_a_mention_mentions_no_one(tmp_path):
    from test_workflow_wiring import references
    from test_workflows import _series

    record = tmp_path / "record"
    record.mkdir()
    (record / "changes.json").write_text(
        json.dumps(
            {
                "schema_version": 1,
                "series": [_series("svc@latest GET / c=10 cpu/req _@alice_", True)],
            }
        )
    )
    [(kind, args)] = [
        c
        for c in node_call(tmp_path, "change-points.js", "changePoints", RECORD_DIR=str(record))
        if c[0] == "create"
    ]
    assert "@alice" not in args["title"] and "@alice" not in args["body"]
    assert references(args["body"]) == [] and f"_@{ZW}alice_" in args["body"]


def test_the_comment_checks_the_head_again_after_listing_the_files(tmp_path):
    """A force-push between the head check and the file listing would list another commit's files."""
    from test_workflows import PR

    artifact = tmp_path / "artifact"
    artifact.mkdir()
    (artifact / "pr-number.txt").write_text("12\n")
    (artifact / "comment.md").write_text("ok\n")
    from test_workflows import RUN, _run_script

    pushed = {**PR, "head": {**PR["head"], "sha": "b" * 40}}
    calls = _run_script(
        "reusable-comment.yml",
        tmp_path,
        {"run": RUN, "prs": [PR, pushed], "pr": PR},
        {"ARTIFACT_DIR": str(artifact), "TOOLING_PATHS": ""},
    )
    [(kind, message)] = calls
    assert (
        kind == "warning" and "head commit is " + "b" * 40 + " after listing its files" in message
    )


# L4: a pending record job is replaced only by a newer one of its own kind.


def test_each_kind_of_record_job_has_its_own_concurrency_group():
    groups = {}
    for workflow in [
        "reusable-publish.yml",
        "reusable-nightly.yml",
        "weekly.yml",
    ]:  # publish, nightly: their callers
        record = yaml.safe_load((WORKFLOWS / workflow).read_text())["jobs"]["record"]
        groups[workflow] = record["concurrency"]["group"]
        assert record["concurrency"]["cancel-in-progress"] is False
    assert len(set(groups.values())) == len(groups), groups


# Exit codes: a PR with a broken configuration (3) never shows as a performance regression (1).


@pytest.mark.parametrize("code", sorted(c for c in EXIT_CODES if c < 100))
def test_the_verdict_script_reads_errors_py_table(code):
    done = subprocess.run(
        ["bash", str(ROOT / "scripts" / "verdict.sh"), str(code), "benchwatch compare"],
        capture_output=True,
        text=True,
        timeout=10,
    )
    assert done.returncode == code
    assert done.stdout.startswith("::notice::" if code == 0 else "::error::")
    assert f"benchwatch compare: {EXIT_CODES[code]} (exit {code})" in done.stdout
    missing = subprocess.run(
        ["bash", str(ROOT / "scripts" / "verdict.sh"), ""], capture_output=True, text=True
    )
    assert missing.returncode == 2 and "not measured (no exit code recorded)" in missing.stdout


@pytest.mark.parametrize(
    "workflow, job, script", [("reusable-pr.yml", "compare", "tool/scripts/verdict.sh")]
)
def test_the_pr_job_ends_with_compares_own_exit_code(tmp_path, workflow, job, script):
    verdict = step(workflow, job, "Verdict (exit 0 ok, 1 regression, 2 not measured, 3 bad input)")
    (tmp_path / Path(script).parent).mkdir(parents=True)
    shutil.copy(ROOT / "scripts" / "verdict.sh", tmp_path / script)  # as checked out: executable
    for code in ("0", "1", "2", "3"):
        assert run_step(verdict, {"CODE": code}, cwd=tmp_path).returncode == int(code)
    assert run_step(verdict, {"CODE": ""}, cwd=tmp_path).returncode == 2  # compare never ran


@pytest.mark.parametrize(
    "code, said",
    [
        ("3", "bad input: benchwatch refused"),
        ("2", "not measured"),
        ("1", "a regression (exit 1)"),
        ("x", "a regression, or benchwatch could not measure"),
    ],
)
def test_the_comment_says_which_failure(tmp_path, code, said):
    from test_workflows import RUN

    (tmp_path / "artifact").mkdir()
    (tmp_path / "artifact" / "exit-code.txt").write_text(code + "\n")
    head = post_comment(tmp_path, "ok\n", run={**RUN, "conclusion": "failure"}).partition(
        "\n\n---\n\n"
    )[0]
    assert said in head
    if code == "3":
        assert "regression" not in head


# The PR job's scope: the merge base, and the scenarios a change under apps/<name>/ alone touches.


def test_pr_scope_picks_the_changed_apps_and_everything_for_any_other_change(tmp_path):
    from test_record_push import git

    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    for path in ("apps/hello/app.py", "apps/posts/app.py", "src/tool.py"):
        (repo / path).parent.mkdir(parents=True, exist_ok=True)
        (repo / path).write_text("v1\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "base")
    base = git(repo, "rev-parse", "HEAD")

    def scope(*changed: str, flag: str = "--by-apps-folder") -> dict[str, str]:
        git(repo, "switch", "-q", "-C", "pr", base)
        for path in changed:
            (repo / path).write_text("v2\n")
        git(repo, "commit", "-q", "-am", "change")
        head = git(repo, "rev-parse", "HEAD")
        done = subprocess.run(
            ["bash", str(ROOT / "scripts" / "pr_scope.sh"), str(repo), base, head, flag],
            capture_output=True,
            text=True,
            timeout=30,
        )
        assert done.returncode == 0, done.stderr
        return dict(line.split("=", 1) for line in done.stdout.splitlines())

    assert scope("apps/posts/app.py", "apps/hello/app.py") == {
        "merge_base": base,
        "patterns": "hello*@*,posts*@*",
    }
    assert (
        scope("apps/hello/app.py", "src/tool.py")["patterns"] == ""
    )  # the tool changed: every scenario
    assert (
        scope("apps/hello/app.py", flag="")["patterns"] == ""
    )  # a user's repository: no apps/ convention
    # the workflow's own step, with benchwatch checked out as tool/ beside repo/
    (tmp_path / "tool").symlink_to(ROOT)
    output = tmp_path / "github-output"
    output.write_text("")
    head = git(repo, "rev-parse", "HEAD")
    scope_step = step(
        "reusable-pr.yml", "compare", "The merge base, and the scenarios the change touches"
    )
    for by_apps, patterns in (("true", "hello*@*"), ("false", "")):
        output.write_text("")
        done = run_step(
            scope_step,
            {"BASE_SHA": base, "HEAD_SHA": head, "BY_APPS": by_apps, "GITHUB_OUTPUT": str(output)},
            cwd=tmp_path,
        )
        assert done.returncode == 0, done.stderr
        assert output.read_text().splitlines() == [f"merge_base={base}", f"patterns={patterns}"]
    bad = subprocess.run(
        ["bash", str(ROOT / "scripts" / "pr_scope.sh"), str(repo), "main", base],
        capture_output=True,
        text=True,
    )
    assert bad.returncode == BAD_INPUT and "'main' is not a 40-hex commit" in bad.stderr


@pytest.mark.parametrize("workflow", ["reusable-publish.yml", "reusable-nightly.yml"])
@pytest.mark.parametrize("code, job_code, recorded", [(0, 0, True), (2, 0, True), (3, 3, False)])
def test_a_run_that_refused_its_input_publishes_nothing(
    tmp_path, workflow, code, job_code, recorded
):
    """`bw run` exiting 3 (a broken benchwatch.toml) fails the measure job; 2 publishes what was measured."""
    work, temp = tmp_path / "work", tmp_path / "temp"
    (work / "tool" / "scripts").mkdir(parents=True)
    shutil.copy(ROOT / "scripts" / "verdict.sh", work / "tool" / "scripts")
    shutil.copy(ROOT / "scripts" / "app_env.sh", work / "tool" / "scripts")
    (
        work / "tool" / "bw"
    ).write_text(  # a stand-in for benchwatch: writes its gab files, exits with the code
        '#!/bin/sh\necho "$@" > "$PWD/bw-args"\nwhile [ "$1" != --out ]; do shift; done\nmkdir -p "$2"\n'
        f'echo [] > "$2/gab-smaller.json"; echo [] > "$2/gab-bigger.json"\nexit {code}\n'
    )
    (work / "tool" / "bw").chmod(0o755)
    temp.mkdir()
    done = run_step(
        step(workflow, "measure", "Run the apps"),
        {
            "SCENARIOS": "",
            "STACKS": "latest",
            "QUICK": "false",
            "COUNTS": "true",
            "APP_ENV": "",
            "RUNNER_TEMP": str(temp),
            "GITHUB_WORKSPACE": str(work),
        },
        cwd=work,
    )
    assert done.returncode == job_code, done.stderr
    assert (
        "--counts" in (work / "bw-args").read_text().split()
    )  # instruction-counts on: the run counts
    assert (temp / "record" / "gab-smaller.json").exists() is recorded
    if code == 3:
        assert "::error::benchwatch run: bad input (exit 3)" in done.stdout


def build_wheel(source: Path, out: Path) -> zipfile.ZipFile:
    uv = Path(sys.executable).parent / "uv"
    done = subprocess.run(
        [str(uv), "build", "--wheel", "--quiet", "--out-dir", str(out), str(source)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    (built,) = out.glob("benchwatch-*.whl")
    return zipfile.ZipFile(built)


def benchwatch_source(into: Path) -> Path:
    """This checkout's files as they are now (tracked and new), copied without its .git."""
    listed = subprocess.run(
        ["git", "-C", str(ROOT), "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split("\0")
    for name in filter(None, listed):
        if (ROOT / name).is_file() and not (ROOT / name).is_symlink():
            (into / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, into / name)
    return into


@pytest.mark.slow
def test_the_wheel_carries_its_build_commit_only_from_benchwatchs_own_unchanged_checkout(tmp_path):
    """No --workflows-from: init pins the commit benchwatch was built from (no network, no tag).
    F10: built from a copy inside another repository, the wheel took that repository's HEAD;
    from a tree with changes, a commit that is not what was built."""
    from test_record_push import git

    from benchwatch.scaffold.workflows import caller_workflows, default_source, release_commit

    own = benchwatch_source(tmp_path / "benchwatch")
    git(own, "init", "-q", "-b", "main")
    git(own, "add", "-A")
    git(own, "commit", "-q", "-m", "benchwatch as it is")
    head = git(own, "rev-parse", "HEAD")
    with build_wheel(own, tmp_path / "clean") as wheel:
        assert wheel.read("benchwatch/build_commit.txt").decode().strip() == head
    assert release_commit(own / "src" / "benchwatch") == head  # init from that checkout: its HEAD
    (own / "README.md").write_text((own / "README.md").read_text() + "\nchanged, not committed\n")
    with build_wheel(own, tmp_path / "dirty") as wheel:
        assert "benchwatch/build_commit.txt" not in wheel.namelist()
    theirs = tmp_path / "their-repo"
    vendored = benchwatch_source(theirs / "vendor" / "benchwatch")
    git(theirs, "init", "-q", "-b", "main")
    git(theirs, "add", "-A")
    git(theirs, "commit", "-q", "-m", "their repository, benchwatch vendored in it")
    with build_wheel(vendored, tmp_path / "vendored") as wheel:
        assert "benchwatch/build_commit.txt" not in wheel.namelist()
    assert release_commit(vendored / "src" / "benchwatch") is None
    ours = release_commit()
    if ours is not None:  # this checkout (clean or not: init reads its HEAD) or the installed wheel
        assert (
            f"reusable-pr.yml@{ours} # v" in caller_workflows(default_source())["benchwatch-pr.yml"]
        )


def test_a_cut_comment_leaves_no_block_open(tmp_path):
    """Past 60,000 characters the body is cut: a <details> left open by the cut is shown as text."""
    filler = "x" * 59_990
    body = post_comment(
        tmp_path, f"{filler}<details><summary>rest</summary>\n\n{'y' * 100}\n</details>\n"
    )
    rest = body.partition("\n\n---\n\n")[2]
    assert "(truncated; full report in the run)" in rest
    assert "<details>" not in rest and "&lt;details>" in rest


def test_a_benchwatch_installed_inside_a_users_repository_does_not_take_its_head(tmp_path):
    """N6: without build_commit.txt, `git rev-parse HEAD` in the installed package's folder found
    the user's repository around their .venv, and the callers pinned the user's own HEAD."""
    from test_record_push import git

    from benchwatch.scaffold import workflows

    user = tmp_path / "user-repo"
    package = user / ".venv" / "lib" / "python3.12" / "site-packages" / "benchwatch"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    git(user, "init", "-q", "-b", "main")
    (user / "pyproject.toml").write_text('[project]\nname = "their-app"\n')
    git(user, "add", "pyproject.toml")
    git(user, "commit", "-q", "-m", "the user's own commit")
    assert workflows.release_commit(package) is None
    (user / "pyproject.toml").write_text(
        '[project]\nname = "benchwatch"\n'
    )  # named so, but not its src/benchwatch
    assert workflows.release_commit(package) is None
    (package / "build_commit.txt").write_text(RELEASE + "\n")  # a wheel says which commit it is
    assert workflows.release_commit(package) == RELEASE
    head = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True, text=True, check=True
    )
    assert (
        workflows.release_commit(ROOT / "src" / "benchwatch") == head.stdout.strip()
    )  # benchwatch's own checkout


def test_init_without_a_known_commit_says_how_to_name_one(monkeypatch):
    from benchwatch.scaffold import workflows

    monkeypatch.setattr(workflows, "release_commit", lambda package=None: None)
    with pytest.raises(workflows.UserError) as caught:
        workflows.default_source()
    assert "give --workflows-from benchwatch/benchwatch@<40-hex commit>" in str(caught.value)
