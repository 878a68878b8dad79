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
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO
from runner.harness import ZERO, Sandbox, act_binary, tail
from runner.stub_api import StubAPI

pytestmark = [
    pytest.mark.slow,
    # `./bw test -m runner` runs only these; `./bw test` runs them two at a time beside the
    # load_independent tests (bw: -n 2 --dist loadgroup, tests/conftest.py's ONE_WORKER_EACH)
    pytest.mark.runner,
    # each workflow run sets up benchwatch and measures: 7-8 min per run measured on a loaded 2-core host
    pytest.mark.timeout(2700),
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


def data_js(sandbox: Sandbox, path: str) -> dict:
    text = sandbox.gh_pages(path)
    assert text is not None, f"gh-pages has no {path}: {sandbox.gh_pages_files()}"
    prefix = "window.BENCHMARK_DATA = "
    assert text.startswith(prefix)
    return json.loads(text[len(prefix) :])


def push_payload(sandbox: Sandbox, before: str, after: str) -> dict:
    return {
        "ref": "refs/heads/main",
        "before": before,
        "after": after,
        "deleted": False,
        "forced": False,
        "head_commit": sandbox.head_commit(after),
        "repository": sandbox.repository_payload(),
    }


PUBLISH_SUITES = [
    "benchwatch (smaller is better)",
    "benchwatch (bigger is better)",
    "benchwatch counts (per request)",
]
SITE = ["index.html", "trends.html", "releases.html"]


def test_two_pushes_to_main_publish_the_trends_the_site_and_the_counts(tmp_path: Path) -> None:
    with StubAPI(REPOSITORY) as api:
        sandbox = Sandbox(tmp_path, api, REPOSITORY)
        first = sandbox.start(
            REPO,
            [
                narrowed("publish.yml", PYTHON, SCENARIOS),
                (
                    ".github/workflows/publish.yml",
                    'relative-scenarios: "*@latest"',
                    f'relative-scenarios: "{VARIANT}"',
                ),
            ],
        )
        check_ran(
            sandbox.act("push", "publish.yml", push_payload(sandbox, ZERO, first), first, 201),
            "first push",
        )

        data = data_js(sandbox, "dev/bench/data.js")
        assert sorted(data["entries"]) == sorted(PUBLISH_SUITES)
        for suite in PUBLISH_SUITES:
            assert [e["commit"]["id"] for e in data["entries"][suite]] == [first], suite
            assert all(VARIANT in b["name"] for b in data["entries"][suite][0]["benches"]), suite
        # publish's `run --counts`: instructions and system calls per request in their own suite,
        # none in the timings' (tests/test_counts.py counts by name on real servers)
        counts = data["entries"]["benchwatch counts (per request)"][0]["benches"]
        assert {b["name"].rsplit(" seq ", 1)[1] for b in counts} == {
            "instr/req",
            "syscalls/req",
            "retained/req",  # hello has no database: no SQL statements, no buffers
        }
        assert all(b["value"] > 1000 for b in counts if b["name"].endswith(" seq instr/req"))
        timings = [
            b["name"] for suite in PUBLISH_SUITES[:2] for b in data["entries"][suite][0]["benches"]
        ]
        assert timings and not [name for name in timings if " seq " in name]
        assert all(name in sandbox.gh_pages_files() for name in SITE)
        state = json.loads(sandbox.gh_pages("dev/bench/published.json"))
        assert state["commit"] == first and state["previous"] is None
        after_first = set(sandbox.gh_pages_files())

        # planted: the first push's counts per request were half of what they are, so the second
        # push doubles them; a deterministic regression the record job and the issues job must report
        counts = data["entries"]["benchwatch counts (per request)"][0]
        for bench in counts["benches"]:
            bench["value"] /= 2
        sandbox.put_gh_pages(
            "dev/bench/data.js",
            "window.BENCHMARK_DATA = " + json.dumps(data, indent=2),
            "A cheaper first point (planted by the test)",
        )
        # a count of 0 (no memory kept per request) halved is still 0: nothing to report
        counted = {bench["name"] for bench in counts["benches"] if bench["value"] > 0}

        second = sandbox.commit("main", "docs/NOTE.md", "A no-op push.\n", "A second push, no code")
        check_ran(
            sandbox.act("push", "publish.yml", push_payload(sandbox, first, second), second, 202),
            "second push",
        )

        data = data_js(sandbox, "dev/bench/data.js")
        assert sorted(data["entries"]) == sorted([*PUBLISH_SUITES, "benchwatch (vs parent)"])
        for suite in PUBLISH_SUITES:
            assert [e["commit"]["id"] for e in data["entries"][suite]] == [first, second], suite
        relative = data["entries"]["benchwatch (vs parent)"]
        assert [e["commit"]["id"] for e in relative] == [second]
        assert all(
            b["name"].endswith("(vs parent)") and b["unit"] == "x" for b in relative[0]["benches"]
        )
        assert after_first <= set(sandbox.gh_pages_files()), (
            "the second push lost files of the first"
        )
        state = json.loads(sandbox.gh_pages("dev/bench/published.json"))
        assert (
            state["commit"] == second and state["previous"] == first and state["covers"] == [second]
        )
        trends = sandbox.gh_pages("trends.html")
        assert VARIANT in trends and second[:7] in trends

        # the doubled counts: github-action-benchmark's alert as a commit comment on the second
        # push, and one change-point issue per series from the issues job
        assert {c["commit_id"] for c in api.state.commit_comments} == {second}
        alerted = [
            c for c in api.state.commit_comments if "benchwatch counts (per request)" in c["body"]
        ]
        assert len(alerted) == 1 and all(name in alerted[0]["body"] for name in counted)
        issues = {i["title"]: i for i in api.state.issues}
        assert issues and all(i["labels"] == [{"name": "change-point"}] for i in issues.values())
        assert any("benchwatch counts (per request)" in title for title in issues), sorted(issues)


# the packages the nightly watches (releases.PACKAGES); resolved on the real index: nightly.yml
# gives reusable-nightly.yml no index-url, so both the measure job and the record job's check
# (.github/scripts/nightly-record.js) use https://pypi.org
WATCHED = {"fastapi", "pydantic", "starlette", "uvicorn"}
NIGHTLY_SUITES = [
    "benchwatch nightly (smaller is better)",
    "benchwatch nightly (bigger is better)",
    "benchwatch nightly counts (per request)",
]


# a night compares latest with next (12 rounds, counts under valgrind), more rounds when a timing is
# flagged, and attributes a regression: 2 min 20 s on a quiet 2-core host, 3 min 20 s with an
# attribution; under a load of ~12 one night took 16 min (2026-11-27)
NIGHT_SECONDS = 2400

# Last night as the record job leaves it on gh-pages, planted so that one night (the expensive part:
# a releases compare, maybe an attribution) shows everything a night after another does. Its figures
# are those of hello@next in a real night on 2026-11-27 (instructions 440,731 and 3 system calls per
# request), the counts halved: tonight's counts are twice last night's, a deterministic regression the
# record job and the issues job must report. Its versions are all older than anything on PyPI tonight.
LAST_NIGHT_VERSIONS = {
    "fastapi": "0.1.0",
    "pydantic": "2.0",
    "starlette": "0.27.0",
    "uvicorn": "0.22.0",
}
LAST_NIGHT_BENCHES = {
    "benchwatch nightly (smaller is better)": (
        "customSmallerIsBetter",
        [
            {
                "name": "hello@next GET / c=10 cpu/req (side by side)",
                "unit": "us",
                "value": 283.7,
                "range": "± 12.74",
                "extra": "12 samples",
            }
        ],
    ),
    "benchwatch nightly (bigger is better)": (
        "customBiggerIsBetter",
        [
            {
                "name": "hello@next GET / c=10 rps (side by side)",
                "unit": "req/s",
                "value": 1751.6,
                "range": "± 68.03",
                "extra": "12 samples",
            }
        ],
    ),
    "benchwatch nightly counts (per request)": (
        "customSmallerIsBetter",
        [
            {
                "name": "hello@next GET / seq instr/req",
                "unit": "instructions",
                "value": 220365.4,
                "range": "± 38.91",
                "extra": "3 samples; callgrind: 3 phases of 200 requests on one connection",
            },
            {
                "name": "hello@next GET / seq syscalls/req",
                "unit": "calls",
                "value": 1.5,
                "range": "± 0",
                "extra": "3 samples; strace: 3 phases of 400 requests on one connection",
            },
        ],
    ),
}


def plant_last_night(sandbox: Sandbox, commit: str) -> None:
    """nightly/state.json, data.js (one entry per suite) and published.json, as a recorded night of
    `commit` (the nightly measures the same commit night after night)."""
    head = sandbox.head_commit(commit)  # github-action-benchmark's commit of an entry: these fields
    entry = {
        "commit": {
            key: head[key] for key in ("author", "committer", "id", "message", "timestamp", "url")
        },
        "date": 1795686860000,
    }
    data = {
        "lastUpdate": entry["date"],
        "repoUrl": f"{sandbox.api.url}/{sandbox.repository}",
        "entries": {
            suite: [{**entry, "tool": tool, "benches": benches}]
            for suite, (tool, benches) in LAST_NIGHT_BENCHES.items()
        },
    }
    state = {
        "schema": 1,
        "index_url": "https://pypi.org",
        "pre": True,
        "versions": LAST_NIGHT_VERSIONS,
    }
    published = {
        "commit": commit,
        "previous": None,
        "covers": [commit],
        "skipped": [],
        "note": "first publish recorded",
    }
    sandbox.put_gh_pages(
        "nightly/data.js",
        "window.BENCHMARK_DATA = " + json.dumps(data, indent=2),
        "Last night's trend (planted)",
    )
    sandbox.put_gh_pages(
        "nightly/state.json",
        json.dumps(state, indent=2) + "\n",
        "Last night's release state (planted)",
    )
    sandbox.put_gh_pages(
        "nightly/published.json",
        json.dumps(published, indent=2) + "\n",
        "Last night's record (planted)",
    )


@pytest.mark.timeout(NIGHT_SECONDS + 600)
def test_a_night_resolves_next_on_pypi_records_it_after_the_last_and_opens_the_issues(
    tmp_path: Path,
) -> None:
    with StubAPI(REPOSITORY) as api:
        sandbox = Sandbox(tmp_path, api, REPOSITORY)
        # the releases compare runs hello on latest and on next: a pattern naming @latest leaves next empty
        main = sandbox.start(
            REPO, [narrowed("nightly.yml", PYTHON, '      scenarios: "hello@*"\n')]
        )
        plant_last_night(sandbox, main)
        last_night = set(sandbox.gh_pages_files())
        night = {"schedule": "23 3 * * *", "repository": sandbox.repository_payload()}

        check_ran(
            sandbox.act("schedule", "nightly.yml", night, main, 301, timeout=NIGHT_SECONDS),
            "the night",
        )

        state = json.loads(sandbox.gh_pages("nightly/state.json"))
        assert state["index_url"] == "https://pypi.org" and set(state["versions"]) == WATCHED
        # resolved on PyPI tonight: newer than every version of last night, and what next's environment held
        assert all(state["versions"][name] != old for name, old in LAST_NIGHT_VERSIONS.items()), (
            state
        )
        assert {name: state["measured"][name] for name in WATCHED} == state["versions"]
        data = data_js(sandbox, "nightly/data.js")
        assert sorted(data["entries"]) == sorted(NIGHTLY_SUITES)
        for suite in NIGHTLY_SUITES:
            assert [e["commit"]["id"] for e in data["entries"][suite]] == [main, main], suite
            assert data["entries"][suite][0]["benches"] == LAST_NIGHT_BENCHES[suite][1], suite
        counted = {
            b["name"]
            for b in data["entries"]["benchwatch nightly counts (per request)"][1]["benches"]
        }
        # last night's series, and tonight's benchwatch counts the memory kept per request too
        assert counted == {
            b["name"] for b in LAST_NIGHT_BENCHES["benchwatch nightly counts (per request)"][1]
        } | {"hello@next GET / seq retained/req"}
        assert last_night <= set(sandbox.gh_pages_files()), "the night lost files of the last"
        published = json.loads(sandbox.gh_pages("nightly/published.json"))
        assert published["commit"] == main
        issues = {i["title"]: i for i in api.state.issues}
        assert any("benchwatch nightly counts (per request)" in title for title in issues), sorted(
            issues
        )
        assert api.state.commit_comments == []  # nightly.yml: comment-on-alert false


SHOP = REPO / "tests" / "fixtures" / "shop"  # a user's app, as test_foreign_repo.py uses it


@pytest.mark.parametrize("shards", [1, 2])
def test_the_callers_init_writes_compare_a_users_pull_request_and_comment(
    tmp_path: Path, shards: int
) -> None:
    """With `shards: 2` in the caller, reusable-pr.yml's compare runs as a matrix of two shards
    (compare --shard K/2, each uploads its folder) and its merge job makes the one artifact."""
    user = "user/shop"
    with StubAPI(user) as api:
        sandbox = Sandbox(tmp_path, api, user)
        tool = sandbox.add_repository(REPOSITORY, REPO)  # benchwatch, where the callers point
        shop = tmp_path / "shop"
        (shop / "shop").mkdir(parents=True)
        (shop / "shop" / "__init__.py").write_text("")
        shutil.copy(SHOP / "main.py", shop / "shop" / "main.py")
        shutil.copy(SHOP / "requirements.txt", shop / "requirements.txt")
        environ = {k: v for k, v in os.environ.items() if k != "BENCHWATCH_ROOT"}
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "benchwatch",
                "init",
                "--workflows-from",
                f"{REPOSITORY}@{tool}",
            ],
            cwd=shop,
            env=environ,
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert done.returncode == 0, done.stdout + done.stderr
        caller = (shop / ".github" / "workflows" / "benchwatch-pr.yml").read_text()
        assert f"uses: {REPOSITORY}/.github/workflows/reusable-pr.yml@{tool}" in caller
        if shards > 1:
            with_python = '      python-version: "3.12"'
            assert with_python in caller
            (shop / ".github" / "workflows" / "benchwatch-pr.yml").write_text(
                caller.replace(with_python, f"{with_python}\n      shards: {shards}", 1)
            )
        main = sandbox.start(shop, [])
        head = sandbox.commit(
            "feature",
            "shop/main.py",
            (SHOP / "main.py").read_text() + "\n# a comment\n",
            "A comment",
        )
        api.state.pulls[1] = {
            "number": 1,
            "state": "open",
            "changed_files": 1,
            "head": {"sha": head, "ref": "feature", "repo": {"id": 2}},
            "base": {"sha": main, "ref": "main"},
        }
        api.state.pull_files[1] = [{"filename": "shop/main.py"}]

        payload = pr_payload(sandbox, 1, main, head)
        compared = sandbox.act("pull_request", "benchwatch-pr.yml", payload, head, 401)
        artifact = sandbox.artifacts / "401" / "benchwatch-compare"
        assert artifact.is_dir(), f"no artifact uploaded:\n{tail(compared.stdout)}"
        code = (artifact / "exit-code.txt").read_text().strip()
        assert code in ("0", "1"), f"compare exited {code}:\n{tail(compared.stdout)}"
        assert (compared.returncode == 0) == (code == "0"), tail(compared.stdout)
        assert "shop@own" in (artifact / "comment.md").read_text()
        parts = sorted(p.name for p in (sandbox.artifacts / "401").glob("benchwatch-shard-*"))
        assert parts == [f"benchwatch-shard-{k}" for k in range(1, shards + 1) if shards > 1]
        for part in parts:
            assert (sandbox.artifacts / "401" / part / "shard.json").is_file(), part
        if shards > 1:  # the merged compare counted every endpoint: each in one shard
            found = json.loads((artifact / "compare.json").read_text())["extra"]["coverage"]
            assert found["counted"] == found["endpoints"] >= 2, tail(compared.stdout)

        run = {
            "id": 401,
            "event": "pull_request",
            "conclusion": "success" if code == "0" else "failure",
            "head_sha": head,
            "head_branch": "feature",
            "head_repository": {"id": 2},
            "html_url": f"{api.url}/{user}/actions/runs/401",
        }
        payload = {
            "action": "completed",
            "workflow_run": run,
            "repository": sandbox.repository_payload(),
        }
        commented = sandbox.act("workflow_run", "benchwatch-comment.yml", payload, main, 402)
        check_ran(commented, "benchwatch-comment.yml")
        (posted,) = api.calls("POST", rf"/repos/{user}/issues/1/comments")
        assert posted.body["body"].startswith(MARKER) and "shop@own" in posted.body["body"]


FULLSTACK = REPO / "tests" / "fixtures" / "fullstack_repo"  # shaped like the full-stack template


def test_a_team_s_app_with_a_login_a_database_and_its_secret_is_compared_on_its_pull_requests(
    tmp_path: Path,
) -> None:
    """A team's app as `init` adopts it (tests/test_fullstack.py's settings: a login, a PostgreSQL
    database per boot, `${NAME}`s), its repository secret created from the line init printed, then
    its benchwatch-pr.yml under act: green on a no-op, red on a loop in `GET /items/{id}` (counted
    behind the login, so the secret reached the app), and benchwatch-comment.yml posts the comment.
    No secret value in the artifacts or the comment."""
    import re

    from test_fullstack import SECRETS, SETTINGS, _environ

    team = "team/fullstack"
    environ = _environ()  # skips without PostgreSQL; the login and APP_SECRET_KEY for init
    with StubAPI(team) as api:
        sandbox = Sandbox(tmp_path, api, team)
        tool = sandbox.add_repository(REPOSITORY, REPO)  # benchwatch, where the callers point
        repo = tmp_path / "fullstack"
        shutil.copytree(FULLSTACK, repo, ignore=shutil.ignore_patterns("__pycache__"))
        inited = subprocess.run(
            [
                sys.executable,
                "-m",
                "benchwatch",
                "init",
                "--workflows-from",
                f"{REPOSITORY}@{tool}",
                *SETTINGS,
            ],
            cwd=repo,
            env=environ,
            capture_output=True,
            text=True,
            timeout=900,
        )
        assert inited.returncode == 0, inited.stdout + inited.stderr
        asked = re.search(
            r"^init: create the repository secret (\w+) with one NAME=value line for each of (.*) \(Settings",
            inited.stdout,
            re.M,
        )
        assert asked, inited.stdout
        names = asked.group(2).split(", ")
        assert {"BENCHWATCH_USER", "BENCHWATCH_PASSWORD"} <= set(names)
        secrets = {asked.group(1): "".join(f"{name}={SECRETS[name]}\n" for name in names)}
        subprocess.run(
            ["git", "init", "-q", str(repo)], check=True
        )  # start() copies what git keeps
        main = sandbox.start(repo, [])

        def pull_request(number: int, branch: str, path: str, text: str, run_id: int):
            head = sandbox.commit(branch, path, text, f"PR {number}")
            api.state.pulls[number] = {
                "number": number,
                "state": "open",
                "changed_files": 1,
                "head": {"sha": head, "ref": branch, "repo": {"id": 2}},
                "base": {"sha": main, "ref": "main"},
            }
            api.state.pull_files[number] = [{"filename": path}]
            payload = pr_payload(sandbox, number, main, head)
            payload["pull_request"]["head"]["ref"] = branch
            done = sandbox.act(
                "pull_request", "benchwatch-pr.yml", payload, head, run_id, secrets=secrets
            )
            artifact = sandbox.artifacts / str(run_id) / "benchwatch-compare"
            assert artifact.is_dir(), f"no artifact uploaded:\n{tail(done.stdout)}"
            code = (artifact / "exit-code.txt").read_text().strip()
            return done, artifact, code, head

        main_py = "backend/app/main.py"
        noop, noop_artifact, code, _ = pull_request(
            1, "noop", main_py, (FULLSTACK / main_py).read_text() + "\n# a comment\n", 501
        )
        assert code == "0", f"the no-op compare exited {code}:\n{tail(noop.stdout)}"
        assert noop.returncode == 0, tail(noop.stdout)
        coverage = json.loads((noop_artifact / "compare.json").read_text())["extra"]["coverage"]
        assert coverage["counted"] == coverage["endpoints"] == 5, coverage  # behind the login too

        items = "backend/app/api/routes/items.py"
        marker = "    # benchwatch-test: an endpoint outside quick\n"
        slowed_text = (
            (FULLSTACK / items)
            .read_text()
            .replace(marker, marker + "    for _ in range(20000):\n        pass\n")
        )
        slowed, artifact, code, head = pull_request(2, "slow", items, slowed_text, 503)
        assert code == "1", f"the slowdown's compare exited {code}:\n{tail(slowed.stdout)}"
        assert slowed.returncode != 0
        rows = json.loads((artifact / "compare.json").read_text())["rows"]
        assert {r["endpoint"] for r in rows if r["gating"] and r["verdict"] == "regression"} == {
            "GET /api/v1/items/{id}"
        }

        run = {
            "id": 503,
            "event": "pull_request",
            "conclusion": "failure",
            "head_sha": head,
            "head_branch": "slow",
            "head_repository": {"id": 2},
            "html_url": f"{api.url}/{team}/actions/runs/503",
        }
        payload = {
            "action": "completed",
            "workflow_run": run,
            "repository": sandbox.repository_payload(),
        }
        commented = sandbox.act("workflow_run", "benchwatch-comment.yml", payload, main, 504)
        check_ran(commented, "benchwatch-comment.yml")
        (posted,) = api.calls("POST", rf"/repos/{team}/issues/2/comments")
        body = posted.body["body"]
        assert body.startswith(MARKER) and "reported: **a regression (exit 1)**" in body
        assert "GET /api/v1/items/{id}" in body

        written = body + "".join(
            p.read_text(errors="replace")
            for folder in (noop_artifact, artifact)
            for p in folder.iterdir()
        )
        assert not [name for name, value in SECRETS.items() if value in written]
