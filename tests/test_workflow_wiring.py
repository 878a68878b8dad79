"""The wiring between a workflow's YAML and its shell steps, the faults a real runner found
(issue 30) that running each step's script alone had missed: the env each step reads, the working
directory tool/bw runs in, the inputs the steps pass on, and who a workflow may notify."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest
import yaml
from test_workflow_attacks import inputs, run_step, step

from benchwatch.errors import EXIT_BAD_INPUT as BAD_INPUT

ROOT = Path(__file__).resolve().parents[1]
GITHUB = ROOT / ".github"
FILES = sorted((GITHUB / "workflows").glob("*.yml")) + sorted(
    (GITHUB / "actions").glob("*/action.yml")
)
REUSABLE_MEASURING = {
    "reusable-pr.yml": "compare",
    "reusable-publish.yml": "measure",
    "reusable-nightly.yml": "measure",
}

# --- every step gets the env it reads ----------------------------------------------------------

READ = re.compile(r"\$\{?#?([A-Za-z_][A-Za-z0-9_]*)")
ASSIGNED = re.compile(
    r"(?:^|[\s;&|(])(?:local\s+|export\s+)?([A-Za-z_][A-Za-z0-9_]*)\+?=(?!=)", re.M
)
LOOPED = re.compile(r"\b(?:for|read(?:\s+-\w+)*)\s+([A-Za-z_][A-Za-z0-9_]*)")
RUNNER_PROVIDED = re.compile(r"^(GITHUB_\w+|RUNNER_\w+|HOME|PATH|CI)$")


def unset_reads(script: str, given: set[str]) -> set[str]:
    """The shell variables a `run:` script reads that nothing sets: neither the script itself, nor
    the env given to it, nor the runner (GITHUB_*, RUNNER_*, HOME, PATH, CI)."""
    assigned = set(ASSIGNED.findall(script)) | set(LOOPED.findall(script))
    return {
        name
        for name in set(READ.findall(script)) - assigned - given
        if not RUNNER_PROVIDED.match(name)
    }


def run_steps(path: Path) -> list[tuple[str, str, set[str], str]]:
    """(job, step name, the env it is given (step, job and workflow), its script) of every run step."""
    doc = yaml.safe_load(path.read_text())
    jobs = doc.get("jobs") or {"action": {"steps": doc.get("runs", {}).get("steps", [])}}
    found = []
    for job_name, job in jobs.items():
        outer = set(doc.get("env") or {}) | set(job.get("env") or {})
        for s in job.get("steps", []):
            if "run" in s:
                found.append(
                    (
                        job_name,
                        s.get("name") or s.get("id") or "?",
                        outer | set(s.get("env") or {}),
                        s["run"],
                    )
                )
    return found


def test_the_reads_finder_sees_a_variable_only_another_step_sets():
    """The fault issue 30 found: COUNTS set in "Check the inputs", tested in "Run the apps"."""
    script = 'selection=()\n[[ "$COUNTS" == true ]] && selection+=(--counts)\nfor f in "${selection[@]}"; do echo "$f $HOME"; done'
    assert unset_reads(script, {"SCENARIOS"}) == {"COUNTS"}
    assert unset_reads(script, {"COUNTS"}) == set()
    assert unset_reads('x=1 y=""\necho "$x${y:-}${#x} ${RUNNER_TEMP}/$GITHUB_SHA"', set()) == set()


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.parent.name + "/" + p.name)
def test_every_run_step_is_given_every_variable_it_reads(path):
    problems = [
        f"{job} / {name}: {sorted(missing)}"
        for job, name, given, script in run_steps(path)
        if (missing := unset_reads(script, given))
    ]
    assert problems == []


# --- paths that cross into tool/bw are absolute (bw runs in its own folder) ---------------------

BW_IN_ITS_FOLDER = r"""#!/bin/bash
# benchwatch as far as paths go: like ./bw it changes into its own folder first, then every path
# it is given must name something there (an output: its folder); writes the outputs it is asked for
cd "$(dirname "${BASH_SOURCE[0]}")"
echo "$*" >> "$LOG"
while [[ $# -gt 0 ]]; do
  case "$1" in
    --data|--attribution|--attributions|--gab|--run|--changes)
      [[ -e "$2" ]] || { echo "ERROR: $1 $2: not found from $PWD" >&2; exit 3; }; shift ;;
    --out|--json-file)
      [[ -d "$(dirname "$2")" ]] || { echo "ERROR: $1 $2: no such folder from $PWD" >&2; exit 3; }
      if [[ "$1" == --json-file ]]; then echo '{"series": []}' > "$2"; else mkdir -p "$2"; fi; shift ;;
    trend-add) [[ -d "$(dirname "$2")" ]] || { echo "ERROR: trend-add $2: no such folder from $PWD" >&2; exit 3; }
      echo "window.BENCHMARK_DATA = {}" > "$2"; shift ;;
  esac
  shift
done
"""


def workspace_with_pages(tmp_path: Path) -> tuple[Path, Path, Path]:
    """$GITHUB_WORKSPACE with repo/ (one commit), tool/bw (the stand-in) and a gh-pages checkout
    holding both trends and one attribution, and $RUNNER_TEMP with the measure job's record."""
    from test_record_push import git

    work, temp = tmp_path / "work", tmp_path / "temp"
    (work / "tool").mkdir(parents=True)
    (work / "tool" / "bw").write_text(BW_IN_ITS_FOLDER)
    (work / "tool" / "bw").chmod(0o755)
    (work / "repo").mkdir()
    git(work / "repo", "init", "-q", "-b", "main")
    git(work / "repo", "commit", "-q", "--allow-empty", "-m", "a commit")
    for name in (
        "dev/bench/data.js",
        "nightly/data.js",
        "nightly/attribution/2026-11-20-0123456789ab.json",
    ):
        (work / "gh-pages" / name).parent.mkdir(parents=True, exist_ok=True)
        (work / "gh-pages" / name).write_text("{}")
    (temp / "record").mkdir(parents=True)
    for name in ("gab-smaller.json", "gab-bigger.json", "gab-counts.json"):
        (temp / "record" / name).write_text('[{"name": "x", "unit": "us", "value": 1}]')
    (temp / "run").mkdir()
    return work, temp, tmp_path / "log"


@pytest.mark.parametrize(
    "workflow, name",
    [
        (
            "reusable-publish.yml",
            "Change points and the site (overview and trends), this push's points included",
        ),
        ("reusable-nightly.yml", "Change points over the nightly trend, tonight's points included"),
    ],
)
def test_the_paths_given_to_tool_bw_hold_from_its_own_folder(tmp_path, workflow, name):
    """Issue 30's first fault: `--data gh-pages` resolved under tool/ and every publish stopped."""
    work, temp, log = workspace_with_pages(tmp_path)
    output, summary = tmp_path / "output", tmp_path / "summary"
    found = step(workflow, "measure", name)
    env = {
        "NIGHTLY": "true",
        "RUNNER_TEMP": str(temp),
        "GITHUB_WORKSPACE": str(work),
        "GITHUB_SHA": "c" * 40,
        "GITHUB_SERVER_URL": "https://github.com",
        "GITHUB_REPOSITORY": "o/r",
        "GITHUB_OUTPUT": str(output),
        "GITHUB_STEP_SUMMARY": str(summary),
        "LOG": str(log),
    }
    done = run_step(
        found,
        {k: v for k, v in env.items() if k != "NIGHTLY" or "NIGHTLY" in found.get("env", {})},
        cwd=work,
    )
    assert done.returncode == 0, done.stderr
    said = log.read_text()
    if (
        workflow == "reusable-publish.yml"
    ):  # the published trends and attributions were read, not skipped
        assert (
            f"--data {work}/gh-pages/nightly/data.js" in said
            and f"--attributions {work}/gh-pages/nightly/attribution" in said
        )
        assert f"--data {work}/gh-pages " in said
    assert "counts=true" in output.read_text()


# --- git and the API go to the server the run is on ($GITHUB_SERVER_URL), never github.com by name --

# "https://github.com/…", "…@github.com/…", "https://api.github.com/…": a host named in a URL
GITHUB_COM = re.compile(r"(?:://|@)(?:api\.)?github\.com\b")
SCRIPTS = (
    FILES + sorted((GITHUB / "scripts").glob("*.js")) + sorted((ROOT / "scripts").glob("*.sh"))
)


def push_steps() -> list[tuple[str, str, dict]]:
    return [
        (path.name, job, s)
        for path in FILES
        for job, each in (yaml.safe_load(path.read_text()).get("jobs") or {}).items()
        for s in each.get("steps", [])
        if "record_push.sh" in s.get("run", "")
    ]


def test_no_workflow_or_script_names_github_com_as_the_server():
    """Issue 30: the record jobs pushed to https://x-access-token:…@github.com/… whatever server
    the run was on (GitHub Enterprise, the runner test's stub). Links in docs are fine; here, none."""
    assert GITHUB_COM.search(
        '--remote "https://x-access-token:${GH_TOKEN}@github.com/${GITHUB_REPOSITORY}.git"'
    )
    assert not GITHUB_COM.search(
        "go install github.com/nektos/act@v0.2.89 # 41898282+x[bot]@users.noreply.github.com"
    )
    named = [
        f"{path.relative_to(ROOT)}:{n}: {line.strip()}"
        for path in SCRIPTS
        for n, line in enumerate(path.read_text().splitlines(), 1)
        if GITHUB_COM.search(line)
    ]
    assert named == []


@pytest.mark.parametrize("server", ["https://github.example.com", "http://127.0.0.1:8123"])
@pytest.mark.parametrize(
    "workflow, job, found", push_steps(), ids=lambda x: x if isinstance(x, str) else ""
)
def test_the_record_jobs_push_to_the_server_the_run_is_on(tmp_path, server, workflow, job, found):
    for folder in (
        "scripts",
        "record-tool/scripts",
    ):  # record_push.sh as the step finds it: says its arguments
        (tmp_path / folder).mkdir(parents=True)
        (tmp_path / folder / "record_push.sh").write_text(
            '#!/bin/sh\nfor a in "$@"; do echo "$a"; done\n'
        )
        (tmp_path / folder / "record_push.sh").chmod(0o755)
    env = {name: "" for name in found.get("env", {})} | {"GH_TOKEN": "t0ken", "SHA": "c" * 40}
    done = run_step(
        found,
        {
            **env,
            "GITHUB_SERVER_URL": server,
            "GITHUB_REPOSITORY": "o/r",
            "RUNNER_TEMP": str(tmp_path / "temp"),
        },
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    args = done.stdout.splitlines()
    scheme, host = server.split("://")
    assert args[args.index("--remote") + 1] == f"{scheme}://x-access-token:t0ken@{host}/o/r.git"


# --- the nightly's releases compare honours scenarios; another stack is refused ----------------


def test_the_releases_compare_gets_the_scenarios(tmp_path):
    from test_workflows import _nightly_step

    name = "Compare latest (pinned baseline) with next on this runner"
    found = step("reusable-nightly.yml", "measure", name)
    assert found["env"]["SCENARIOS"] == "${{ inputs.scenarios }}"
    done, record, _ = _nightly_step(tmp_path, name, env={"SCENARIOS": "hello*@*", "APP_ENV": ""})
    assert done.returncode == 0, done.stderr
    compare = (tmp_path / "log").read_text().splitlines()[0].split()
    assert compare[:5] == ["compare", "--base", "latest", "--head", "next"] and compare[5:7] == [
        "-k",
        "hello*@*",
    ]
    done, _, _ = _nightly_step(tmp_path / "all", name, env={"SCENARIOS": "", "APP_ENV": ""})
    assert "-k" not in (tmp_path / "all" / "log").read_text().split()


def test_the_releases_compare_of_an_own_app_is_own_against_own_next(tmp_path):
    from test_workflows import _nightly_step

    name = "Compare latest (pinned baseline) with next on this runner"
    env = {"STACKS": "own", "INDEX_URL": "http://127.0.0.1:8080", "APP_ENV": ""}
    done, record, _ = _nightly_step(tmp_path, name, env=env)
    assert done.returncode == 0, done.stderr
    log = (tmp_path / "log").read_text().splitlines()
    assert log[0].split()[:5] == ["compare", "--base", "own", "--head", "own-next"]
    assert not any("--record-measured" in line for line in log)  # no `next` environment to record
    assert (record / "comment.md").is_file()


def test_the_releases_of_an_own_app_are_stable_ones_and_say_what_moves_on_its_lock(tmp_path):
    from test_workflows import _nightly_step

    env = {"STACKS": "own", "INDEX_URL": "http://127.0.0.1:8080"}
    done, record, _ = _nightly_step(tmp_path, "Resolve the newest releases", env=env)
    assert done.returncode == 0, done.stderr
    log = (tmp_path / "log").read_text().splitlines()
    releases = log[0].split()
    assert releases[:3] == ["releases", "--index-url", "http://127.0.0.1:8080"]
    assert "--pre" not in releases and "--pin-next" not in releases  # own-next moves to stable ones
    assert log[1].startswith("own-next --markdown ")
    assert log[2] == "UV_DEFAULT_INDEX=http://127.0.0.1:8080/simple"
    assert "fastapi 0.121.0 → 0.165.0" in (record / "releases.md").read_text()


def test_a_regression_on_an_own_lock_is_compared_package_by_package(tmp_path):
    from test_workflows import _nightly_step

    name = "Attribute a regression on an app's own lock to the package responsible"
    found = step("reusable-nightly.yml", "measure", name)
    assert "inputs.stacks == 'own'" in found["if"] and "exit_code == '1'" in found["if"]
    env = {"INDEX_URL": "http://127.0.0.1:8080", "SCENARIOS": "shop*", "APP_ENV": ""}
    done, record, _ = _nightly_step(tmp_path, name, code=1, env=env)
    assert done.returncode == 0, done.stderr
    compares = [line.split() for line in (tmp_path / "log").read_text().splitlines()]
    heads = [c[4] for c in compares if c[0] == "compare"]
    assert heads == [
        "own-next+fastapi",
        "own-next+starlette",
    ]  # what own-next --moved-packages said
    assert all(c[1:3] == ["--base", "own"] and "shop*" in c for c in compares if c[0] == "compare")
    table = (record / "attribution.md").read_text()
    assert "| fastapi | **regression** (exit 1): no comment |" in table
    assert "| starlette | **regression** (exit 1): no comment |" in table


@pytest.mark.parametrize(
    "stacks, code",
    [("latest", 0), ("", 0), ("own", 0), ("v1-last", BAD_INPUT), ("latest,next", BAD_INPUT)],
)
def test_releases_with_another_stack_is_refused_not_ignored(stacks, code):
    check = step("reusable-nightly.yml", "measure", "Check the inputs")
    done = run_step(
        check,
        {k: v for k, v in inputs(STACKS=stacks, RELEASES="true").items() if k in check["env"]},
    )
    assert done.returncode == code, done.stdout + done.stderr
    if code:
        assert "::error::stacks: releases compares latest with next" in done.stdout
    assert (
        run_step(
            check,
            {k: v for k, v in inputs(STACKS=stacks, RELEASES="false").items() if k in check["env"]},
        ).returncode
        == 0
    )


# --- the nightly resolves releases on one index and its record job checks them there ------------

MIRROR_STATE = {
    "schema": 1,
    "pre": True,
    "versions": {"fastapi": "0.130.0", "pydantic": "2.13.0b1"},
}


class StubIndex:
    """A package index as a mirror serves it: only the projects' JSON (`/pypi/<name>/json`, its
    `releases`), on 127.0.0.1 under a path; every path asked is kept."""

    def __init__(self, releases: dict[str, list[str]], prefix: str = "/mirror") -> None:
        import http.server
        import threading

        self.asked: list[str] = []
        stub = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                stub.asked.append(self.path)
                name = self.path.removeprefix(f"{prefix}/pypi/").removesuffix("/json")
                if not self.path.startswith(prefix) or name not in releases:
                    self.send_error(404)
                    return
                body = json.dumps(
                    {"info": {"name": name}, "releases": {v: [] for v in releases[name]}}
                ).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}{prefix}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def __enter__(self) -> StubIndex:
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()


def test_the_nightly_resolves_the_releases_on_its_index_url_input(tmp_path):
    """Issue 30: the index was PyPI whatever the caller wanted; now the `index-url` input (default
    https://pypi.org) is what `bw releases` resolves on."""
    from test_workflows import _nightly_step

    declared = yaml.safe_load((GITHUB / "workflows" / "reusable-nightly.yml").read_text())[True][
        "workflow_call"
    ]
    assert declared["inputs"]["index-url"]["default"] == "https://pypi.org"
    name = "Resolve the newest releases"
    assert (
        step("reusable-nightly.yml", "measure", name)["env"]["INDEX_URL"]
        == "${{ inputs.index-url }}"
    )
    done, _, _ = _nightly_step(tmp_path, name, env={"INDEX_URL": "http://127.0.0.1:9/mirror"})
    assert done.returncode == 0, done.stderr
    said = (tmp_path / "log").read_text().split()
    assert (
        said[:1] == ["releases"]
        and said[said.index("--index-url") + 1] == "http://127.0.0.1:9/mirror"
    )


@pytest.mark.parametrize(
    "url, code",
    [
        ("https://pypi.org", 0),
        ("http://127.0.0.1:9/mirror/", 0),
        ("https://mirror.example:8443/pypi-proxy", 0),
        ("https://user:secret@mirror.example", BAD_INPUT),
        ("file:///etc", BAD_INPUT),
        ("https://mirror.example/?x=1", BAD_INPUT),
        ("https://mirror.example; id", BAD_INPUT),
        ("", BAD_INPUT),
    ],
)
def test_the_index_url_input_is_an_http_url_without_credentials(url, code):
    check = step("reusable-nightly.yml", "measure", "Check the inputs")
    assert check["env"]["INDEX_URL"] == "${{ inputs.index-url }}"
    done = run_step(check, {k: v for k, v in inputs(INDEX_URL=url).items() if k in check["env"]})
    assert done.returncode == code, done.stdout + done.stderr
    if code:
        assert "::error::index-url: an http(s) URL" in done.stdout


def record_check(tmp_path: Path, index_url: str, state: dict) -> list:
    """The nightly record job's check step (its github-script, the module at record-tool/), on an
    artifact holding `state`, given `index_url` as reusable-nightly.yml gives it the input."""
    from test_workflows import _github_script, _run_script

    _, env = _github_script(
        "reusable-nightly.yml",
        "Check the artifact (the gab files; with releases, state.json's schema, "
        "attribution names and JSON) before anything is recorded",
    )
    assert env["INDEX_URL"].startswith("${{ inputs.index-url }}")
    record = tmp_path / "record"
    record.mkdir(parents=True)
    (record / "state.json").write_text(json.dumps(state))
    (record / "gab-smaller.json").write_text('[{"name": "x", "unit": "us", "value": 1}]')
    given = {
        "RECORD_DIR": str(record),
        "CHECKED_DIR": str(tmp_path / "checked"),
        "RELEASES": "true",
        "INDEX_URL": index_url,
    }
    return _run_script(
        "reusable-nightly.yml",
        tmp_path,
        {},
        given,
        "Check the artifact (the gab files; with releases, "
        "state.json's schema, attribution names and JSON) before anything is recorded",
    )


def test_the_record_job_checks_the_state_on_the_index_the_nightly_resolved_on(tmp_path):
    """The check asked https://pypi.org whatever index the nightly used, so a mirror's state was
    refused: now the same input, and the versions are looked up in the project JSON's `releases`."""
    with StubIndex(
        {"fastapi": ["0.129.0", "0.130.0"], "pydantic": ["2.12.0", "2.13.0b1"]}
    ) as index:
        calls = record_check(tmp_path, index.url + "/", {**MIRROR_STATE, "index_url": index.url})
        assert [c for c in calls if c[0] == "setFailed"] == []
        assert (
            json.loads((tmp_path / "checked" / "state.json").read_text())["index_url"] == index.url
        )
        assert sorted(index.asked) == ["/mirror/pypi/fastapi/json", "/mirror/pypi/pydantic/json"]
        # a version the mirror does not list yet is still refused, and so is a state from another index
        unlisted = {**MIRROR_STATE, "index_url": index.url, "versions": {"fastapi": "0.131.0"}}
        calls = record_check(tmp_path / "unlisted", index.url, unlisted)
        assert [
            "setFailed",
            f"state.json in the artifact: versions.fastapi 0.131.0 is not on {index.url}; nothing recorded",
        ] in calls
        calls = record_check(
            tmp_path / "other", index.url, {**MIRROR_STATE, "index_url": "https://pypi.org"}
        )
        assert [
            "setFailed",
            f"state.json in the artifact: index_url is not {index.url}; nothing recorded",
        ] in calls
    calls = record_check(
        tmp_path / "credentials",
        "https://user:secret@mirror.example",
        {**MIRROR_STATE, "index_url": "x"},
    )
    assert calls == [
        [
            "setFailed",
            "index-url: not an http(s) URL without credentials, query or fragment; nothing recorded",
        ]
    ]


# --- only gating figures notify people ----------------------------------------------------------


def benchmark_steps() -> list[tuple[str, dict]]:
    return [
        (path.name, s)
        for path in FILES
        for job in (yaml.safe_load(path.read_text()).get("jobs") or {}).values()
        for s in job.get("steps", [])
        if "github-action-benchmark@" in s.get("uses", "")
    ]


@pytest.mark.parametrize(
    "name, found", benchmark_steps(), ids=lambda x: x if isinstance(x, str) else x["with"]["name"]
)
def test_only_the_counts_per_request_may_comment_on_a_commit(name, found):
    """A commit comment notifies people; two no-op pushes each got one from one-round p99 and
    requests/s. Only the gab file of the counts per request (gating) may raise one."""
    comment = found["with"].get("comment-on-alert", False)
    if comment is not False:
        assert found["with"]["output-file-path"].endswith("/gab-counts.json"), found["with"]["name"]


def run_with_counts():
    """A run holding every kind of figure: test_report's synthetic run and counts per request."""
    from test_report import synthetic_run

    from benchwatch.figures.figure_key import load_key
    from benchwatch.figures.metrics import INSTRUCTIONS, SYSCALLS, Counted
    from benchwatch.results.schema import Figure

    run = synthetic_run()
    for metric, value in ((INSTRUCTIONS, 412_000.0), (SYSCALLS, 31.0)):
        run.figures.append(
            Figure(
                name=load_key("x@latest", "GET /a", Counted(), metric).name,
                kind="load",
                variant="x@latest",
                scenario="x",
                stack="latest",
                metric=metric.key,
                unit=metric.unit,
                bigger_is_better=False,
                samples=[value, value],
                value=value,
                endpoint="GET /a",
                params=Counted().params(),
            )
        )
    return run


def test_the_counts_gab_file_holds_only_the_counts():
    """What the one commenting suite reads: results.gab_entries(counts=True) of a run holding every
    kind of figure keeps only the counts per request (instructions, system calls), deterministic,
    so its tight threshold is not noise; never one-round timings. (In a compare their estimated
    cost gates; the trend keeps the counts, which do not depend on the machine's weights.)"""
    from benchwatch.figures import metrics
    from benchwatch.results.schema import gab_entries

    run = run_with_counts()
    kinds = {f.metric for f in run.figures if f.valid}
    assert {
        metrics.P99.key,
        metrics.RPS.key,
    } <= kinds and kinds & metrics.COUNT_KEYS  # the test has all kinds
    counted = {e["name"] for e in gab_entries(run.figures, bigger_is_better=False, counts=True)}
    assert counted == {f.name for f in run.figures if f.valid and f.metric in metrics.COUNT_KEYS}


# --- the agreed inputs: database and the app-env secret -----------------------------------------


@pytest.mark.parametrize("workflow, job", REUSABLE_MEASURING.items())
@pytest.mark.parametrize(
    "value, code", [("", 0), ("postgresql", 0), ("mysql", BAD_INPUT), ("postgresql; id", BAD_INPUT)]
)
def test_the_database_input_is_postgresql_or_nothing(workflow, job, value, code):
    check = step(workflow, job, "Check the inputs")
    assert check["env"]["DATABASE"] == "${{ inputs.database }}"
    done = run_step(check, {k: v for k, v in inputs(DATABASE=value).items() if k in check["env"]})
    assert done.returncode == code
    if code:
        assert "::error::database: give postgresql or nothing" in done.stdout
    declared = yaml.safe_load((GITHUB / "workflows" / workflow).read_text())[True]["workflow_call"]
    assert declared["inputs"]["database"] == {
        **declared["inputs"]["database"],
        "type": "string",
        "default": "",
    }
    postgres = step(workflow, job, "PostgreSQL's server binaries, for apps that declare a database")
    assert (
        postgres["if"] == "inputs.database == 'postgresql'"
        and "apt-get install -y -qq postgresql" in postgres["run"]
    )


BENCHWATCH_BOOTS = re.compile(
    r"tool/bw (run|compare|attribute)(?![\w-])"
)  # compare-merge boots nothing


@pytest.mark.parametrize("workflow, job", REUSABLE_MEASURING.items())
def test_the_app_env_secret_reaches_only_the_steps_that_boot_the_apps(workflow, job):
    """Declared optional; given as APP_ENV to exactly the steps that run the apps (and sourced
    there), to no other step, no job or workflow env, no write job, no action's inputs."""
    text = (GITHUB / "workflows" / workflow).read_text()
    doc = yaml.safe_load(text)
    assert doc[True]["workflow_call"]["secrets"] == {
        "app-env": {**doc[True]["workflow_call"]["secrets"]["app-env"], "required": False}
    }
    given = []
    for job_name, each in doc["jobs"].items():
        assert "secrets." not in yaml.safe_dump(each.get("env", {})), job_name
        for s in each["steps"]:
            rest = {k: v for k, v in s.items() if k != "env"}
            assert "secrets." not in yaml.safe_dump(rest), s.get("name")
            env = s.get("env", {})
            if "secrets." in yaml.safe_dump(env):
                assert env["APP_ENV"] == "${{ secrets.app-env }}" and [
                    v for v in env.values() if "secrets." in str(v)
                ] == [env["APP_ENV"]]
                assert s["run"].lstrip().startswith("source tool/scripts/app_env.sh\n"), s["name"]
                given.append((job_name, s["name"]))
            else:
                assert not BENCHWATCH_BOOTS.search(s.get("run", "")), (
                    f"{s.get('name')} boots the apps without app-env"
                )
    assert given and {j for j, _ in given} == {job}
    assert text.count("secrets.") == len(given)


def source_app_env(tmp_path: Path, app_env: str) -> subprocess.CompletedProcess:
    script = 'source scripts/app_env.sh\necho "APP_ENV=${APP_ENV-unset}"\nenv | grep -E "^(BENCH_|TOKEN|QUOTED|EMPTY)" | sort'
    return subprocess.run(
        ["bash", "-euo", "pipefail", "-c", script],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=30,
        env={"PATH": os.environ["PATH"], "APP_ENV": app_env},
    )


def test_app_env_lines_become_masked_variables(tmp_path):
    done = source_app_env(
        tmp_path,
        "# the apps' logins\nBENCH_USER=alice\n\nBENCH_PASSWORD=s3cr=t x\r\n"
        "export TOKEN=\"quoted value\"\nQUOTED='single'\nEMPTY=\n",
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    masks = [line for line in lines if line.startswith("::add-mask::")]
    assert masks == [
        "::add-mask::alice",
        "::add-mask::s3cr=t x",
        "::add-mask::quoted value",
        "::add-mask::single",
    ]
    assert (
        "APP_ENV=unset" in lines
    )  # the whole secret is gone from the environment bw and the servers get
    assert lines[-5:] == [
        "BENCH_PASSWORD=s3cr=t x",
        "BENCH_USER=alice",
        "EMPTY=",
        "QUOTED=single",
        "TOKEN=quoted value",
    ]


@pytest.mark.parametrize(
    "line, why",
    [
        ("GITHUB_TOKEN=x", "GITHUB_TOKEN belongs to the runner"),
        ("RUNNER_TEMP=/tmp/x", "RUNNER_TEMP belongs"),
        ("ACTIONS_RUNTIME_TOKEN=x", "ACTIONS_RUNTIME_TOKEN belongs"),
        ("PATH=/evil", "PATH belongs"),
        ("HOME=/evil", "HOME belongs"),
        ("LD_PRELOAD=/evil.so", "LD_PRELOAD belongs"),
        ("BASH_ENV=/evil", "BASH_ENV belongs"),
        ("lower=x", "the name is not"),
        ("1ST=x", "the name is not"),
        ("A-B=x", "the name is not"),
        ("NOEQUALS", "no '='"),
    ],
)
def test_app_env_refuses_a_name_the_runner_or_shell_owns_without_showing_the_value(
    tmp_path, line, why
):
    done = source_app_env(tmp_path, f"BENCH_USER=alice\n{line}\n")
    assert done.returncode == BAD_INPUT
    assert f"::error::app-env secret, line 2: {why}" in done.stdout
    value = line.partition("=")[2]
    assert not value or value not in done.stdout.replace("::add-mask::alice", "")
    assert "BENCH_USER=alice" not in done.stdout.splitlines()  # nothing ran after the refusal


# --- N1: no Actions cache is unpacked where anything runs ---------------------------------------


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.parent.name + "/" + p.name)
def test_no_job_restores_an_actions_cache(path):
    """actions/cache unpacks with tar -P: an entry written by any job of the repository (the
    nightly's, which runs brand-new releases with the runtime token) can replace tool/bw, a script
    or ~/.cargo/bin/cargo before a check could run. No job restores one; oha is built."""
    assert "actions/cache" not in path.read_text()


# --- callers: the nightly only on main, one commenter per pull request --------------------------


def test_the_nightly_caller_init_writes_runs_only_on_main():
    from benchwatch.scaffold.workflows import caller_workflows

    nightly = yaml.safe_load(
        caller_workflows("someone/benchwatch@" + "0" * 40)["benchwatch-nightly.yml"]
    )
    assert "workflow_dispatch" in nightly[True]
    for job in nightly["jobs"].values():
        assert job["if"] == "github.ref == 'refs/heads/main'"


def test_the_comment_caller_init_writes_posts_one_at_a_time_per_pull_request():
    from benchwatch.scaffold.workflows import caller_workflows

    comment = yaml.safe_load(
        caller_workflows("someone/benchwatch@" + "0" * 40)["benchwatch-comment.yml"]
    )
    group = comment["concurrency"]["group"]
    assert (
        "github.event.workflow_run.head_repository.id" in group
        and "github.event.workflow_run.head_branch" in group
    )
    assert comment["concurrency"]["cancel-in-progress"] is False


def test_our_nightly_and_comment_callers_have_the_same_guards():
    ours = yaml.safe_load((GITHUB / "workflows" / "nightly.yml").read_text())
    assert all(
        job["if"].startswith("github.ref == 'refs/heads/main'") for job in ours["jobs"].values()
    )
    assert (
        yaml.safe_load((GITHUB / "workflows" / "pr-comment.yml").read_text())["concurrency"][
            "cancel-in-progress"
        ]
        is False
    )


# --- PR text mentions no one, and a variant id or command in code stays as it is ---------------
# Issue 30: the comment put a zero-width space after every `@`, inside code too, so `hello@latest`
# copied from the comment into a command did not match. GitHub links and notifies nothing in code:
# now only text outside code spans is broken, and only code spans no surrounding markdown can
# turn back into text (.github/scripts/neutralise.js, inline in reusable-comment.yml).

ZW = "\u200b"
REFERENCE = re.compile(
    r"(?:^|[^A-Za-z0-9_])(@[A-Za-z0-9][A-Za-z0-9-]*|#[0-9]+|GH-[0-9]+|/(?:issues|pull|discussions)/[0-9]+)",
    re.I,
)


def references(markdown: str) -> list[str]:
    """What GitHub would make a mention or an issue link of: @name, #N, GH-N, /issues/N in the
    text of the rendered HTML outside code, pre and links. markdown-it (CommonMark, tables, raw
    HTML as GitHub keeps it) stands in for GitHub's renderer, which is not here."""
    from html.parser import HTMLParser

    markdown_it = pytest.importorskip("markdown_it")
    html = (
        markdown_it.MarkdownIt("commonmark", {"html": True})
        .enable(["table", "strikethrough"])
        .render(markdown)
    )
    found: list[str] = []

    class Text(HTMLParser):
        def __init__(self) -> None:
            super().__init__(convert_charrefs=True)
            self.open: list[str] = []

        def handle_starttag(self, tag, attrs):
            if tag not in ("br", "hr", "img", "input"):
                self.open.append(tag)

        def handle_endtag(self, tag):
            if tag in self.open:
                del self.open[len(self.open) - 1 - self.open[::-1].index(tag) :]

        def handle_data(self, data):
            if not {"code", "pre", "a"} & set(self.open):
                found.extend(REFERENCE.findall(data))

    Text().feed(html)
    return found


NEUTRALISE_ALL = """
const { neutralise } = require(process.env.MODULE);
console.log(JSON.stringify(JSON.parse(process.env.TEXTS).map((t) => neutralise(t))));
"""


def neutralised(tmp_path: Path, texts: list[str]) -> list[str]:
    """neutralise.js's neutralise (quiet, then plainTags) of each text, in one node process."""
    from test_workflows import _tool

    program = tmp_path / "neutralise-all.js"
    program.write_text(NEUTRALISE_ALL)
    done = subprocess.run(
        [_tool("node"), str(program)],
        capture_output=True,
        text=True,
        timeout=60,
        env={
            "PATH": "/usr/bin:/bin",
            "MODULE": str(GITHUB / "scripts" / "neutralise.js"),
            "TEXTS": json.dumps(texts),
        },
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


# what benchwatch writes (report/comment.py): ids and a command in code, a folded table, a problem
OURS = """<!-- benchwatch-compare -->
## benchwatch: 1 regression, 0 improvements, 3 unchanged

**base** variant `hello@latest` vs **head** variant `hello-falcon@latest` — same machine, 6 rounds.

<details><summary>3 unchanged</summary>

| | figure | base | head | change [95 % CI] | floor |
|---|---|---|---|---|---|
| ⚪ | hello GET / c=10 cpu/req | 120 µs | 121 µs | +0.8 % | 3.0 % |
| | ↳ per request: `epoll_ctl` 0.00 → 2.00 | | | | |

</details>

- no counts: valgrind is missing: `hello@latest` `GET /`, `posts@seed-v1` `GET /posts`
- `hello-falcon@latest` `GET /` [boot]: server exited with code 1

Again by hand: `./bw compare --base latest --head next -k 'hello*@*,*@latest'`; thanks @alice, see #12.
"""
# an @ after a letter was never broken (a@b mentions no one); after `*`, `'` or a space it was, in code too
COPYABLE = [
    "`hello@latest`",
    "`hello-falcon@latest`",
    "`posts@seed-v1`",
    "`./bw compare --base latest --head next -k 'hello*@*,*@latest'`",
]


def test_variant_ids_and_commands_in_code_stay_copyable_in_the_pr_comment(tmp_path):
    from test_workflow_attacks import post_comment

    body = post_comment(tmp_path, OURS).partition("\n\n---\n\n")[2]
    for code in COPYABLE:
        assert code in body, code
    assert f"thanks @{ZW}alice, see #{ZW}12" in body  # outside code: broken as before
    assert references(body) == []
    assert body.count(ZW) == 2


def test_compares_problem_lines_show_the_variant_id_as_code():
    from benchwatch.judge.verdict import Comparison, SideInfo
    from benchwatch.report.comment import render
    from benchwatch.results.schema import Problem

    side = lambda role: SideInfo(role=role, spec="latest", kind="stack")  # noqa: E731

    def comparison(rows, problems):
        return Comparison(
            base=side("base"),
            head=side("head"),
            rounds=8,
            quick=True,
            rows=rows,
            problems=problems,
        )

    text = render(
        comparison(
            [],
            [
                Problem(
                    variant="hello@latest",
                    endpoint="GET /",
                    phase="boot",
                    reason="server exited",
                    detail='Traceback\n  File "<string>", line 1, in <module>\n@app.get',
                )
            ],
        )
    )
    line = next(x for x in text.splitlines() if "[boot]" in x)
    assert line == "- `hello@latest` `GET /` [boot]: server exited"
    assert text.split(line, 1)[1].startswith(
        "\n\n  <details>"
    )  # its folded traceback a paragraph apart


# Each would carry a mention past a neutraliser that trusted every pair of backticks: a run that
# pairs across lines or blocks, a table cell, an HTML block, a link that reads the backticks
# first, a bare \r ending a line, an escaped backtick. The stand-in renderer mentions @z in each.
HOSTILE = [
    "x `a\n# b` `@z` `w`",  # the heading ends the paragraph: "b` `" is code, @z is text
    "`a\nb` `@z` `w`\n\n- `a\n- b` `@z` `w`",
    "| h | i |\n|---|---|\n| `a | @z` |",  # a table splits the cell first
    "<details>\n`@z`\n</details>",  # an HTML block: the backticks are text
    "<b>\n`@z`",
    "[a](x`y) @z` `q`",  # the link's destination takes the first backtick
    "`a\r# @z `",  # \r ends a line as \n does
    "\\`@z`",  # an escaped backtick opens nothing
]
# The same for GitHub's extensions, which the stand-in lacks (autolinks that run over backticks,
# math), cmark's reading of a reference label, and two that only look like them
HOSTILE_ON_GITHUB = [
    "http://h`y @z` `q`",
    "www.h.io`y @z` `q`",
    "$`@z`$",
    "[a][x`y] @z` `q`\n\n[x`y]: /u",
    "`` `@z` ``x`",
    "<pre>\n\n`@z`\n\n</pre>",
]


@pytest.mark.parametrize("text", HOSTILE + HOSTILE_ON_GITHUB)
def test_a_code_span_that_surrounding_markdown_can_undo_mentions_no_one(tmp_path, text):
    (out,) = neutralised(tmp_path, [text])
    assert "@z" not in out and f"@{ZW}z" in out
    assert references(out) == []


def test_the_reference_finder_sees_what_the_hostile_texts_would_mention():
    """The stand-in renderer agrees: left as they are, these texts mention @z."""
    for text in HOSTILE:
        assert "@z" in references(text), text


def test_no_mix_of_backticks_pipes_lines_and_tags_mentions_anyone(tmp_path):
    """2,000 random texts of the pieces markdown reads around a code span, emphasis and character
    references among them: after the neutraliser none renders a mention or an issue link, and a
    span standing alone keeps its @."""
    import random

    pieces = [
        "`",
        "``",
        "@z",
        "@y ",
        " ",
        "x",
        "\n",
        "\n\n",
        "\r",
        "|",
        "\\",
        "[a](",
        "[b][",
        ")",
        "]",
        "<b>",
        "</b>",
        "<details>",
        "</details>",
        "# ",
        "> ",
        "- ",
        "    ",
        "$",
        "http://h",
        "&#64;v",
        "#7",
        "```\n",
        "~~",
        "_",
        "__",
        "*",
        "&#x40;",
        "&commat;",
        "&num;",
        "&#x23;",
        "&#35;",
        "&amp;",
        "G&#x48;-",
        "GH-",
        "1",
        "@",
    ]
    rng = random.Random(30)
    texts = ["".join(rng.choice(pieces) for _ in range(rng.randint(1, 24))) for _ in range(2000)]
    for text, out in zip(texts, neutralised(tmp_path, texts), strict=True):
        assert references(out) == [], (text, out)
    assert neutralised(tmp_path, ["a `x@y` b", "`@z`\n\nthen @y"]) == [
        "a `x@y` b",
        f"`@z`\n\nthen @{ZW}y",
    ]


def test_a_cut_comment_cannot_leave_a_code_span_open(tmp_path):
    """Past 60,000 characters the body is cut: a code span losing its closing backtick would turn
    what it held into text, so what is left is neutralised again."""
    from test_workflow_attacks import post_comment

    body = post_comment(tmp_path, "x" * 59_990 + " `ping @zed and more`\n").partition(
        "\n\n---\n\n"
    )[2]
    assert "(truncated; full report in the run)" in body
    assert "@z" not in body and f"`ping @{ZW}z" in body
    assert references(body) == []


def test_a_cut_nightly_issue_cannot_leave_a_code_span_open(tmp_path):
    from test_workflow_attacks import node_call

    record = tmp_path / "nightly-record"
    record.mkdir()
    (record / "comment.md").write_text(
        "x" * 59_800 + " `ping @zed " + "y" * 400 + "`\n"
    )  # the cut falls in the y's
    [(kind, args)] = node_call(tmp_path, "nightly-record.js", "issue", RECORD_DIR=str(record))
    body = args["body"]
    assert (
        kind == "create"
        and body.startswith("<!-- benchwatch-nightly -->")
        and "(truncated; see " in body
    )
    assert "@z" not in body and f"`ping @{ZW}z" in body
    assert references(body) == []
