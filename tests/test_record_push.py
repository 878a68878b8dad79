"""Rehearsal of the record jobs' git logic (scripts/record_push.sh, the very script publish.yml
and nightly.yml run) against a local bare repository standing in for GitHub: real git, real
pushes, two record jobs racing, the rebase retry and the published-commit state file."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import helpers_git
import pytest
from helpers_git import GIT_ENV, bare_github, on_pages, record_push

STATE = "dev/bench/published.json"
ENV = {**GIT_ENV, "PATH": "/usr/bin:/bin"}  # the script's and git's whole environment here


def git(cwd: Path, *args: str) -> str:
    return helpers_git.git(cwd, *args, env=ENV)


@pytest.fixture
def origin(tmp_path: Path) -> Path:
    """A bare 'GitHub' with main (c1..c4) and a gh-pages branch."""
    return bare_github(tmp_path, 4, env=ENV)


def commits(origin: Path) -> list[str]:
    return git(origin, "rev-list", "--reverse", "main").split()


class RecordJob:
    """One record job: a fresh clone (actions/checkout), then what github-action-benchmark does
    with auto-push: false (fetch gh-pages, commit a data.js on it, switch back)."""

    def __init__(self, origin: Path, workdir: Path, name: str):
        self.origin, self.clone, self.name = origin, workdir / name, name
        git(workdir, "clone", "-q", str(origin), str(self.clone))

    def benchmark_commit(self, data_dir: str, entry: str) -> None:
        on_pages(self.clone, env=ENV)
        data = self.clone / data_dir / "data.js"
        data.parent.mkdir(parents=True, exist_ok=True)
        old = data.read_text() if data.exists() else ""
        data.write_text(old + f"{entry}\n")
        git(self.clone, "add", "-A")
        git(self.clone, "commit", "-q", "-m", f"add {entry}")
        git(self.clone, "switch", "-q", "-")

    def record(self, *args: str) -> subprocess.Popen:
        return subprocess.Popen(
            record_push(self.clone, self.origin, f"{self.name} files", *args),
            env=ENV,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )


def finish(process: subprocess.Popen) -> tuple[int, str]:
    _, err = process.communicate(timeout=60)
    return process.returncode, err


def pages(origin: Path, path: str) -> str:
    return git(origin, "show", f"gh-pages:{path}")


def site(tmp_path: Path, text: str) -> Path:
    out = tmp_path / f"site-{text}"
    (out / "assets").mkdir(parents=True)
    (out / "index.html").write_text(text)
    (out / "assets" / "style.css").write_text(text)
    return out


def test_publish_records_the_state_and_a_later_publish_says_which_pushes_it_skipped(
    origin, tmp_path
):
    c1, c2, c3, c4 = commits(origin)
    first = RecordJob(origin, tmp_path, "publish-1")
    first.benchmark_commit("dev/bench", "c1")
    code, err = finish(
        first.record("--put", str(site(tmp_path, "one")), ".", "--state", STATE, "--sha", c1)
    )
    assert code == 0, err
    state = json.loads(pages(origin, STATE))
    assert state == {
        "commit": c1,
        "previous": None,
        "covers": [c1],
        "skipped": [],
        "note": "first publish recorded",
    }
    assert pages(origin, "index.html") == "one" and pages(origin, "dev/bench/data.js") == "c1"

    # the pushes of c2 and c3 were cancelled while pending; the publish of c4 names them
    later = RecordJob(origin, tmp_path, "publish-4")
    later.benchmark_commit("dev/bench", "c4")
    code, err = finish(
        later.record("--put", str(site(tmp_path, "four")), ".", "--state", STATE, "--sha", c4)
    )
    assert code == 0, err
    state = json.loads(pages(origin, STATE))
    assert state["previous"] == c1 and state["covers"] == [c2, c3, c4]
    assert state["skipped"] == [c2, c3]
    assert f"skipped, published without a data point of their own: {c2} {c3}" in err
    log = git(origin, "log", "-1", "--format=%B", "gh-pages")
    assert f"Skipped (no data point of their own): {c2} {c3}" in log
    assert pages(origin, "dev/bench/data.js") == "c1\nc4"
    assert pages(origin, "index.html") == "four" and pages(origin, "assets/style.css") == "four"

    # a re-run of the same publish leaves the state alone
    again = RecordJob(origin, tmp_path, "publish-4-again")
    again.benchmark_commit("dev/bench", "c4 again")
    before = git(origin, "rev-parse", "gh-pages")
    code, err = finish(again.record("--state", STATE, "--sha", c4, "--skip-published"))
    assert code == 0, err
    assert f"{c4} is already published ({STATE} names it): nothing pushed" in err
    assert git(origin, "rev-parse", "gh-pages") == before  # no second data point for c4

    # a nightly measures the same commit again each night (new releases): its points are pushed
    nightly = RecordJob(origin, tmp_path, "nightly-again")
    nightly.benchmark_commit("nightly", "night 2")
    code, err = finish(nightly.record("--state", "nightly/published.json", "--sha", c4))
    assert code == 0, err
    third = RecordJob(origin, tmp_path, "nightly-3")
    third.benchmark_commit("nightly", "night 3")
    code, err = finish(third.record("--state", "nightly/published.json", "--sha", c4))
    assert code == 0 and "already the last published commit: state unchanged" in err
    assert pages(origin, "nightly/data.js") == "night 2\nnight 3"


def test_a_record_job_that_runs_late_pushes_nothing_over_a_newer_publish(origin, tmp_path):
    """L4: record jobs can finish out of commit order; c3's must not follow c4's."""
    _, _, c3, c4 = commits(origin)
    newer, late = RecordJob(origin, tmp_path, "publish-4"), RecordJob(origin, tmp_path, "publish-3")
    newer.benchmark_commit("dev/bench", "c4")
    late.benchmark_commit("dev/bench", "c3")
    assert (
        finish(
            newer.record("--put", str(site(tmp_path, "four")), ".", "--state", STATE, "--sha", c4)
        )[0]
        == 0
    )
    before = git(origin, "rev-parse", "gh-pages")
    code, err = finish(
        late.record(
            "--put",
            str(site(tmp_path, "three")),
            ".",
            "--state",
            STATE,
            "--sha",
            c3,
            "--skip-published",
        )
    )
    assert code == 0, err
    # found after the rejected push and the rebase: c4 landed in between
    assert f"{c3} is older than the published {c4} (its record job ran late): nothing pushed" in err
    assert git(origin, "rev-parse", "gh-pages") == before
    assert pages(origin, "index.html") == "four" and pages(origin, "dev/bench/data.js") == "c4"


@pytest.mark.parametrize(
    "planted", ["CNAME", "dev", "nightly", "weekly", "asv", ".nojekyll", "evil.html"]
)
def test_the_site_put_replaces_only_the_sites_own_names(origin, tmp_path, planted):
    """L1: a site directory from an artifact cannot replace another job's trend or the domain."""
    c1, *_ = commits(origin)
    seed = tmp_path / "seed-pages"
    git(tmp_path, "clone", "-q", "-b", "gh-pages", str(origin), str(seed))
    (seed / "CNAME").write_text("bench.example.org\n")
    (seed / "nightly").mkdir()
    (seed / "nightly" / "data.js").write_text("nightly trend\n")
    git(seed, "add", "-A")
    git(seed, "commit", "-q", "-m", "the owner's domain and the nightly trend")
    git(seed, "push", "-q", "origin", "gh-pages")
    before = git(origin, "rev-parse", "gh-pages")
    hostile = site(tmp_path, "mine")
    target = hostile / planted
    if planted in ("CNAME", ".nojekyll", "evil.html"):
        target.write_text("attacker.example.org\n")
    else:
        target.mkdir()
        (target / "data.js").write_text("window.BENCHMARK_DATA = {}\n")
    job = RecordJob(origin, tmp_path, "publish")
    code, err = finish(job.record("--put", str(hostile), ".", "--state", STATE, "--sha", c1))
    assert code == 1
    assert (
        err.strip()
        .splitlines()[-1]
        .startswith(f"ERROR: --put {hostile} . holds '{planted}', not one of the site's names")
    )
    assert git(origin, "rev-parse", "gh-pages") == before
    assert (
        pages(origin, "CNAME") == "bench.example.org"
        and pages(origin, "nightly/data.js") == "nightly trend"
    )


@pytest.mark.parametrize(
    "planted", ["latest/evil/.git", "latest/evil/.GIT", "assets/.git", "latest/passwd", "latest"]
)
def test_a_site_holding_a_git_folder_or_a_symlink_is_refused(origin, tmp_path, planted):
    """F12: `latest/evil/.git` in a site artifact was pushed to gh-pages as a gitlink; a symlink
    would copy a link (or what it points at). Refused, at any depth, before anything is pushed."""
    c1, *_ = commits(origin)
    hostile = site(tmp_path, "mine")
    target = hostile / planted
    if planted == "latest/passwd":
        target.parent.mkdir(parents=True)
        target.symlink_to("/etc/passwd")
    elif planted == "latest":
        (tmp_path / "elsewhere").mkdir()
        target.symlink_to(tmp_path / "elsewhere")
    else:
        target.parent.mkdir(parents=True, exist_ok=True)
        git(tmp_path, "init", "-q", str(target.parent))
        if target.name != ".git":
            (target.parent / ".git").rename(target)
    before = git(origin, "rev-parse", "gh-pages")
    job = RecordJob(origin, tmp_path, "publish")
    code, err = finish(job.record("--put", str(hostile), ".", "--state", STATE, "--sha", c1))
    assert code == 1
    assert (
        err.strip().splitlines()[-1]
        == f"ERROR: --put {hostile} holds '{hostile / planted}' (a symlink or a .git): nothing pushed"
    )
    assert git(origin, "rev-parse", "gh-pages") == before
    assert git(origin, "ls-tree", "-r", "gh-pages") == ""


def test_an_added_folder_holding_a_symlink_or_a_git_folder_is_refused(origin, tmp_path):
    folder = tmp_path / "attribution"
    folder.mkdir()
    (folder / "2026-11-24-0123456789ab.json").write_text("{}\n")
    (folder / "link.json").symlink_to("/etc/passwd")
    job = RecordJob(origin, tmp_path, "nightly")
    code, err = finish(job.record("--add", str(folder), "nightly/attribution"))
    assert code == 1 and err.strip().endswith(
        f"holds '{folder / 'link.json'}' (a symlink or a .git): nothing pushed"
    )
    (folder / "link.json").unlink()
    (folder / ".git").mkdir()
    code, err = finish(job.record("--add", str(folder), "nightly/attribution"))
    assert code == 1 and f"holds '{folder / '.git'}'" in err
    for dest in ("nightly/.git", "x/.Git/y"):
        code, err = finish(job.record("--add", str(tmp_path / "attribution"), dest))
        assert (
            code == 1
            and f"ERROR: --add destination '{dest}' must be a folder inside gh-pages" in err
        )


def test_publish_and_nightly_race_and_the_loser_rebases_and_retries(origin, tmp_path):
    c1, *_ = commits(origin)
    publish = RecordJob(origin, tmp_path, "publish")
    nightly = RecordJob(origin, tmp_path, "nightly")
    # both read gh-pages at the same tip, then nightly pushes first
    publish.benchmark_commit("dev/bench", "main-entry")
    nightly.benchmark_commit("nightly", "nightly-entry")
    state_file = tmp_path / "state.json"
    state_file.write_text('{"fastapi": "1.0"}\n')
    code, err = finish(nightly.record("--put", str(state_file), "nightly/state.json"))
    assert code == 0, err
    code, err = finish(
        publish.record("--put", str(site(tmp_path, "s")), ".", "--state", STATE, "--sha", c1)
    )
    assert code == 0, err
    assert "push rejected (attempt 1): rebasing" in err and "pushed gh-pages (attempt 2)" in err
    assert pages(origin, "nightly/data.js") == "nightly-entry"
    assert pages(origin, "nightly/state.json") == '{"fastapi": "1.0"}'
    assert pages(origin, "dev/bench/data.js") == "main-entry"
    assert json.loads(pages(origin, STATE))["commit"] == c1
    assert git(origin, "log", "--format=%s", "gh-pages").splitlines() == [
        f"Record published commit {c1}",
        "publish files",
        "add main-entry",
        "nightly files",
        "add nightly-entry",
        "Start gh-pages",
    ]


def test_publish_and_nightly_pushing_at_the_same_moment_both_land(origin, tmp_path):
    c1, *_ = commits(origin)
    jobs = {name: RecordJob(origin, tmp_path, name) for name in ("publish", "nightly")}
    jobs["publish"].benchmark_commit("dev/bench", "p")
    jobs["nightly"].benchmark_commit("nightly", "n")
    running = [jobs["publish"].record("--state", STATE, "--sha", c1), jobs["nightly"].record()]
    results = [finish(p) for p in running]
    assert [code for code, _ in results] == [0, 0], results
    assert pages(origin, "dev/bench/data.js") == "p" and pages(origin, "nightly/data.js") == "n"
    assert json.loads(pages(origin, STATE))["commit"] == c1


def test_two_publishes_writing_the_same_trend_fail_clearly_instead_of_merging(origin, tmp_path):
    c1, c2, *_ = commits(origin)
    a, b = RecordJob(origin, tmp_path, "a"), RecordJob(origin, tmp_path, "b")
    a.benchmark_commit("dev/bench", "a")
    b.benchmark_commit("dev/bench", "b")
    assert finish(a.record("--state", STATE, "--sha", c1))[0] == 0
    before = git(origin, "rev-parse", "gh-pages")
    code, err = finish(b.record("--state", STATE, "--sha", c2))
    assert code == 1
    assert err.strip().splitlines()[-1] == (
        "ERROR: gh-pages changed underneath in the same files (dev/bench/data.js): "
        "another record job of the same kind pushed; re-run this one"
    )
    assert git(origin, "rev-parse", "gh-pages") == before


@pytest.mark.parametrize(
    "args, message",
    [
        (["--sha", "abc"], "--state and --sha go together"),
        (["--state", STATE, "--sha", "abc"], "--sha must be a full 40-hex commit, got 'abc'"),
        (["--put", "/nonexistent", "x"], "--put source /nonexistent does not exist"),
        (["--put", "/", "../up"], "--put destination '../up' must stay inside gh-pages"),
        (["--bogus"], "unknown argument '--bogus'"),
        (["--skip-published"], "--skip-published needs --state and --sha"),
    ],
)
def test_bad_arguments_get_one_error_line(origin, tmp_path, args, message):
    job = RecordJob(origin, tmp_path, "job")
    code, err = finish(job.record(*args))
    assert code == 1
    assert err.strip().startswith(f"ERROR: {message}"), err
