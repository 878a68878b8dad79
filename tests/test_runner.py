"""Our workflows as a real Actions runner runs them: nektos/act, jobs on this host.

Each test copies this working tree into a local bare remote (main, and an empty gh-pages as
docs/github.md's set-up makes it), narrows the callers to one small variant, and runs the
callers under act with our stand-ins for every pinned action (tests/runner/actions/) and a stub
GitHub API on 127.0.0.1 (tests/runner/stub_api.py). What is asserted is what lands where GitHub
would keep it: the artifacts, the stub's requests (comments, issues) and the remote's gh-pages.
The step scripts have their own tests; these check the wiring between the YAML, each step's
env, the inputs, the working directory and the jobs. docs/contributing.md says how to run them.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from conftest import REPO
from runner.harness import Sandbox, act_binary, tail
from runner.stub_api import StubAPI

pytestmark = [
    pytest.mark.slow,
    # in CI (ci.yml, .ci/run) act is installed, and a missing act fails there instead of skipping
    pytest.mark.skipif(
        act_binary() is None and not os.environ.get("CI"),
        reason="act is not installed (.ci/run installs it)",
    ),
]

REPOSITORY = "bench/benchwatch"
VARIANT = "hello@latest"  # one small app: the whole set stays within a few minutes
MARKER = "<!-- benchwatch-compare -->"
PYTHON = '      python-version: "3.11"\n'  # the line after which a caller gets its narrowing inputs
SCENARIOS = f'      scenarios: "{VARIANT}"\n'


def narrowed(workflow: str, after: str, lines: str) -> tuple[str, str, str]:
    """An edit adding `lines` to a caller's `with:` after the line `after`."""
    return (f".github/workflows/{workflow}", after, after + lines)


def check_ran(done, what: str) -> None:
    assert done.returncode == 0, f"{what} failed under act:\n{tail(done.stdout)}"


def pr_payload(sandbox: Sandbox, number: int, base: str, head: str) -> dict:
    return {
        "action": "synchronize",
        "number": number,
        "pull_request": {
            "number": number,
            "title": "A no-op change to hello",
            "state": "open",
            "html_url": f"{sandbox.api.url}/{sandbox.repository}/pull/{number}",
            "user": {"login": "contributor"},
            "head": {
                "sha": head,
                "ref": "feature",
                "repo": {"id": 2, "full_name": sandbox.repository},
            },
            "base": {
                "sha": base,
                "ref": "main",
                "repo": {"id": 1, "full_name": sandbox.repository},
            },
        },
        "repository": sandbox.repository_payload(),
    }


def test_a_pull_request_is_compared_and_its_comment_posted(tmp_path: Path) -> None:
    with StubAPI(REPOSITORY) as api:
        sandbox = Sandbox(tmp_path, api, REPOSITORY)
        main = sandbox.start(REPO, [narrowed("benchmark-pr.yml", PYTHON, SCENARIOS)])
        head = sandbox.commit(
            "feature", "apps/hello/NOTES.md", "A note, no code.\n", "A no-op change to hello"
        )
        api.state.pulls[1] = {
            "number": 1,
            "state": "open",
            "changed_files": 1,
            "head": {"sha": head, "ref": "feature", "repo": {"id": 2}},
            "base": {"sha": main, "ref": "main"},
        }
        api.state.pull_files[1] = [{"filename": "apps/hello/NOTES.md"}]

        compared = sandbox.act(
            "pull_request", "benchmark-pr.yml", pr_payload(sandbox, 1, main, head), head, 101
        )

        artifact = sandbox.artifacts / "101" / "benchwatch-compare"
        assert artifact.is_dir(), f"no artifact uploaded:\n{tail(compared.stdout)}"
        assert sorted(p.name for p in artifact.iterdir()) == [
            "comment.md",
            "compare.json",
            "exit-code.txt",
            "pr-number.txt",
        ]
        assert (artifact / "pr-number.txt").read_text() == "1\n"
        code = (artifact / "exit-code.txt").read_text().strip()
        # measured: 0 (no regression) or 1 (a regression; noise on a no-op is possible); the
        # job's own conclusion follows compare's exit code
        assert code in ("0", "1"), f"compare exited {code}:\n{tail(compared.stdout)}"
        assert (compared.returncode == 0) == (code == "0"), tail(compared.stdout)
        report = json.loads((artifact / "compare.json").read_text())
        assert VARIANT in json.dumps(report), "the compare did not measure the narrowed variant"
        assert api.requests == [], "the pull request's job must not call the API"

        conclusion = "success" if code == "0" else "failure"
        run = {
            "id": 101,
            "event": "pull_request",
            "conclusion": conclusion,
            "head_sha": head,
            "head_branch": "feature",
            "head_repository": {"id": 2},
            "html_url": f"{api.url}/{REPOSITORY}/actions/runs/101",
        }
        payload = {
            "action": "completed",
            "workflow_run": run,
            "repository": sandbox.repository_payload(),
        }
        check_ran(
            sandbox.act("workflow_run", "pr-comment.yml", payload, main, 102), "pr-comment.yml"
        )

        posted = api.calls("POST", rf"/repos/{REPOSITORY}/issues/1/comments")
        assert len(posted) == 1
        body = posted[0].body["body"]
        assert body.startswith(MARKER)
        verdict = "no regression found" if code == "0" else "a regression (exit 1)"
        assert f"[run 101]({run['html_url']}) on `{head[:12]}` reported: **{verdict}**" in body
        # below the header, compare's own report (its @ neutralised: no mention)
        heading = next(
            line
            for line in (artifact / "comment.md").read_text().splitlines()
            if line.startswith("## ")
        )
        assert heading in body.split("---", 1)[1]
        assert "changes the benchmark tooling" not in body
        assert posted[0].authorization == "token runner-test-token"

        # the next run of the same pull request updates that one comment
        run["id"], run["html_url"] = 103, f"{api.url}/{REPOSITORY}/actions/runs/103"
        shutil.copytree(sandbox.artifacts / "101", sandbox.artifacts / "103")
        check_ran(
            sandbox.act("workflow_run", "pr-comment.yml", payload, main, 104),
            "pr-comment.yml again",
        )
        assert len(api.calls("POST", rf"/repos/{REPOSITORY}/issues/1/comments")) == 1
        updated = api.calls("PATCH", rf"/repos/{REPOSITORY}/issues/comments/\d+")
        assert len(updated) == 1 and "[run 103]" in updated[0].body["body"]
        assert [c["body"] for c in api.state.comments] == [updated[0].body["body"]]
