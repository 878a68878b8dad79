"""Each finding of the second security review (docs/security.md), planted and seen refused or
neutralised: the workflows' own shell steps and scripts run for real, not their text compared."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
import yaml

from benchwatch.errors import EXIT_BAD_INPUT as BAD_INPUT
from benchwatch.scaffold.workflows import caller_workflows

ROOT = Path(__file__).resolve().parents[1]
WORKFLOWS = ROOT / ".github" / "workflows"
RELEASE = "0123456789abcdef0123456789abcdef01234567"
REUSABLE = ["reusable-pr.yml", "reusable-publish.yml", "reusable-nightly.yml"]


def step(workflow: str, job: str, name: str) -> dict:
    steps = yaml.safe_load((WORKFLOWS / workflow).read_text())["jobs"][job]["steps"]
    return next(s for s in steps if s.get("name") == name)


def run_step(found: dict, env: dict[str, str], cwd: Path | None = None) -> subprocess.CompletedProcess:
    """A `run:` step's own shell, with its `env:` filled in as GitHub would (our values)."""
    missing = set(found.get("env", {})) - set(env)
    assert not missing, f"the test must give every env the step reads: {missing}"
    return subprocess.run(["bash", "-euo", "pipefail", "-c", found["run"]], env={"PATH": os.environ["PATH"], **env},
                          cwd=cwd, capture_output=True, text=True, timeout=60)  # fmt: skip


def inputs(**over: str) -> dict[str, str]:
    good = {"EVENT": "pull_request", "BW_REPOSITORY": "benchwatch/benchwatch", "BW_REF": RELEASE,
            "SCENARIOS": "", "STACKS": "latest"}  # fmt: skip
    return {**good, **over}


# M3: benchwatch runs (with the write token, in record jobs) from what benchwatch-ref names.


@pytest.mark.parametrize("workflow", REUSABLE)
@pytest.mark.parametrize("ref", ["v0.1.0", "main", RELEASE[:12], RELEASE.upper(), RELEASE + "0", f"{RELEASE}\nv1"])
def test_a_movable_ref_is_refused_before_anything_is_checked_out(workflow, ref):
    check = step(workflow, "compare" if workflow == "reusable-pr.yml" else "measure", "Check the inputs")
    env = {k: v for k, v in inputs(BW_REF=ref).items() if k in check["env"]}
    done = run_step(check, env)
    assert done.returncode == BAD_INPUT
    assert "::error::benchwatch-ref: give the 40-hex commit" in done.stdout
    assert run_step(check, {k: v for k, v in inputs().items() if k in check["env"]}).returncode == 0


@pytest.mark.parametrize("workflow", ["reusable-publish.yml", "reusable-nightly.yml"])
def test_the_record_job_checks_the_commit_again_before_fetching_the_script_it_runs_with_the_write_token(workflow):
    steps = yaml.safe_load((WORKFLOWS / workflow).read_text())["jobs"]["record"]["steps"]
    names = [s.get("name", "") for s in steps]
    check = names.index("Check the pinned commit (the script below runs with the write token)")
    fetch = next(i for i, s in enumerate(steps) if s.get("with", {}).get("path") == "record-tool")
    assert check < fetch
    assert run_step(steps[check], {"BW_REF": "v1.0.0"}).returncode == BAD_INPUT
    assert run_step(steps[check], {"BW_REF": RELEASE}).returncode == 0


def tagged_repository(tmp_path: Path) -> tuple[Path, str]:
    """A bare 'benchwatch' with an annotated tag v9.9.9 on its one commit."""
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@localhost", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@localhost"}  # fmt: skip
    work = tmp_path / "work"
    for args in (["init", "-q", str(work)], ["-C", str(work), "commit", "-q", "--allow-empty", "-m", "release"],
                 ["-C", str(work), "tag", "-a", "v9.9.9", "-m", "v9.9.9"],
                 ["clone", "-q", "--bare", str(work), str(tmp_path / "bw.git")]):  # fmt: skip
        subprocess.run(["git", *args], check=True, capture_output=True, env=env)
    sha = subprocess.run(["git", "-C", str(work), "rev-parse", "HEAD"], check=True, capture_output=True, text=True)
    return tmp_path / "bw.git", sha.stdout.strip()


def test_init_pins_the_tags_commit_in_uses_and_benchwatch_ref(tmp_path):
    bare, sha = tagged_repository(tmp_path)
    files = caller_workflows("someone/benchwatch@v9.9.9", git_url=str(bare))
    for name, text in files.items():
        doc = yaml.safe_load(text)
        (job,) = doc["jobs"].values()
        assert job["uses"] == f"someone/benchwatch/.github/workflows/reusable-{name.split('-')[1]}@{sha}"
        assert f"@{sha} # v9.9.9\n" in text  # the tag stays readable, as a comment
        if "with" in job:
            assert job["with"]["benchwatch-ref"] == sha and f"benchwatch-ref: {sha} # v9.9.9\n" in text
    # what init wrote passes the reusable workflows' own check
    check = step("reusable-publish.yml", "measure", "Check the inputs")
    publish = yaml.safe_load(files["benchwatch-publish.yml"])["jobs"]["publish"]["with"]
    assert run_step(check, inputs(BW_REF=publish["benchwatch-ref"]) | {"STACKS": ""}).returncode == 0


def test_init_refuses_a_tag_it_cannot_resolve_and_writes_nothing(tmp_path):
    from benchwatch.errors import UserError

    bare, _ = tagged_repository(tmp_path)
    with pytest.raises(UserError, match=r"has no tag v0\.0\.1; give OWNER/REPO@<40-hex commit>"):
        caller_workflows("someone/benchwatch@v0.0.1", git_url=str(bare))
    with pytest.raises(UserError, match="give OWNER/REPO@TAG or OWNER/REPO@COMMIT"):
        caller_workflows("someone/benchwatch@--upload-pack=touch /tmp/x")
    assert caller_workflows(f"someone/benchwatch@{RELEASE}")["benchwatch-pr.yml"].count(f"@{RELEASE} # pinned commit") == 1


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
    calls = _run_script("reusable-comment.yml", tmp_path, scenario,
                        {"ARTIFACT_DIR": str(artifact), "TOOLING_PATHS": tooling})  # fmt: skip
    [(kind, args)] = calls
    assert kind == "createComment"
    return args["body"]


ZW = "\u200b"


def test_mentions_backlinks_and_hidden_text_in_the_comment_are_neutralised(tmp_path):
    planted = ("thanks &#64;alice, &commat;bob, &#x40;carol and @dave\n"
               "fixes #5, other/repo#7, GH-9 and https://github.com/other/repo/issues/3\n"
               "<!-- @eve hidden from the reader -->\n")  # fmt: skip
    body = post_comment(tmp_path, planted).partition("\n\n---\n\n")[2]
    for name in ("alice", "bob", "carol", "dave"):
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
    body = post_comment(tmp_path, "</details>\n<details><summary>x</summary>\n").partition("\n\n---\n\n")[2]
    assert "<details>" not in body and "</details>" not in body and "<summary>" not in body
    # what benchwatch writes (compare/comment.py) stays folded
    ours = "<details><summary><b>svc</b> 3 unchanged</summary>\n\n| a | b |\n\n</details>\n"
    assert ours in post_comment(tmp_path, ours)


@pytest.mark.parametrize("path", ["calibration.json", "benchwatch.toml", "stacks.toml", "benchwatch-acks.toml",
                                  "benchmarks/bench_models.py", "apps/hello/benchwatch-app.toml",
                                  "benchwatch/benchwatch-app.toml", ".github/workflows/x.yml"])  # fmt: skip
def test_the_comment_warns_when_the_pr_changes_what_decides_the_verdict(tmp_path, path):
    files = [{"filename": "apps/hello/app.py"}, {"filename": path}]
    head = post_comment(tmp_path, "ok\n", listFiles=files).partition("\n\n---\n\n")[0]
    assert "[!WARNING]" in head and f"`{path}`" in head
    quiet = post_comment(tmp_path, "ok\n", listFiles=files[:1]).partition("\n\n---\n\n")[0]
    assert "WARNING" not in quiet


def test_the_comment_warns_when_github_did_not_list_every_changed_file(tmp_path):
    from test_workflows import PR

    listed = [{"filename": f"apps/hello/f{i}.py"} for i in range(3000)]
    head = post_comment(tmp_path, "ok\n", listFiles=listed, pr={**PR, "changed_files": 3412}).partition("\n\n---\n\n")[0]
    assert "changes 3412 files and GitHub lists only 3000" in head
    head = post_comment(tmp_path, "ok\n", listFiles=listed, pr={**PR, "changed_files": 3000}).partition("\n\n---\n\n")[0]
    assert "WARNING" not in head
