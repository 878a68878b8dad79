"""Run benchwatch's workflows under nektos/act, jobs on this host, against local stand-ins.

A Sandbox holds: a local bare remote (`remotes/<owner>/<repo>.git`) that the checkout and
github-action-benchmark stand-ins and record_push.sh reach through git's url.insteadOf (their
https URLs are rewritten to it), a stub GitHub API (stub_api.py), a folder of artifacts per run
id, and act's own cache. Every action the workflows pin is mapped to this folder's stand-in
(`--local-repository`); a pinned action without one stops the test, naming it.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import time
from pathlib import Path
from typing import IO, Any

import psutil
from runner.stub_api import StubAPI

HERE = Path(__file__).resolve().parent
STANDINS = HERE / "actions"
# each pinned repository -> its stand-in folder (a subpath action, owner/repo/sub@sha, inside it)
STANDIN_FOR = {
    "actions/checkout": "checkout",
    "actions/setup-python": "setup-python",
    "actions/upload-artifact": "upload-artifact",
    "actions/download-artifact": "download-artifact",
    "actions/github-script": "github-script",
    "benchmark-action/github-action-benchmark": "github-action-benchmark",
}
PINNED = re.compile(
    r"uses:\s*([A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+)(?:/[A-Za-z0-9_./-]+)?@([0-9a-f]{40})"
)
TOKEN = "runner-test-token"  # what the jobs get as github.token; the stub records it
ZERO = "0" * 40
GIT_IDENTITY = {
    "GIT_AUTHOR_NAME": "runner test",
    "GIT_AUTHOR_EMAIL": "runner@test.invalid",
    "GIT_COMMITTER_NAME": "runner test",
    "GIT_COMMITTER_EMAIL": "runner@test.invalid",
}


def act_binary() -> str | None:
    found = shutil.which("act")
    if found:
        return found
    candidate = Path.home() / "go" / "bin" / "act"
    return str(candidate) if candidate.is_file() else None


def pinned_actions(tree: Path) -> set[tuple[str, str]]:
    """(owner/repo, sha) of every `uses:` pinned in the tree's workflows and local actions."""
    files = [*tree.glob(".github/workflows/*.yml"), *tree.glob(".github/actions/*/action.yml")]
    return {(m[1], m[2]) for f in files for m in PINNED.finditer(f.read_text())}


def git(cwd: Path, *args: str, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(
        ["git", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        env={**os.environ, **GIT_IDENTITY, **(env or {})},
    )
    if done.returncode != 0:
        raise RuntimeError(f"git {' '.join(args)} in {cwd}: {done.stderr.strip()}")
    return done.stdout.strip()


def copy_tree(source: Path, dest: Path) -> None:
    """The source repository's files as its working tree holds them (tracked and new, not
    ignored); a folder that is no repository, whole."""
    if not (source / ".git").exists():
        shutil.copytree(source, dest, dirs_exist_ok=True)
        return
    listed = git(source, "ls-files", "-z", "--cached", "--others", "--exclude-standard")
    for name in filter(None, listed.split("\0")):
        src = source / name
        if not src.exists() and not src.is_symlink():
            continue  # deleted in the working tree
        target = dest / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, target, follow_symlinks=False)


class Sandbox:
    def __init__(self, root: Path, api: StubAPI, repository: str) -> None:
        self.root = root
        self.api = api
        self.repository = repository
        self.remote = root / "remotes" / f"{repository}.git"
        self.remotes = {repository: self.remote}  # every repository a job can fetch
        self.workflow_sources: dict[tuple[str, str], Path] = {}  # remote reusable workflows
        self.work = root / "work"
        self.artifacts = root / "artifacts"
        self.logs = root / "logs"
        for folder in (self.artifacts, self.logs, self.remote):
            folder.mkdir(parents=True)
        git(self.remote, "init", "-q", "--bare", "-b", "main")

    # --- the repository -------------------------------------------------------------------
    def start(self, source: Path, edits: list[tuple[str, str, str]]) -> str:
        """main = the source's working tree with each edit (file, old, new) applied; an empty
        gh-pages as docs/github.md's set-up creates it. Returns main's commit."""
        self.work.mkdir()
        git(self.work, "init", "-q", "-b", "main")
        copy_tree(source, self.work)
        for name, old, new in edits:
            path = self.work / name
            text = path.read_text()
            if old not in text:
                raise RuntimeError(f"{name}: cannot narrow the run, '{old}' is not in it")
            path.write_text(text.replace(old, new, 1))
        git(self.work, "add", "-A")
        git(self.work, "commit", "-q", "-m", "The tree under test")
        git(self.work, "remote", "add", "origin", str(self.remote))
        git(self.work, "push", "-q", "origin", "main")
        git(self.work, "switch", "-q", "--orphan", "gh-pages")
        git(self.work, "commit", "-q", "--allow-empty", "-m", "Start gh-pages")
        git(self.work, "push", "-q", "origin", "gh-pages")
        git(self.work, "switch", "-q", "-f", "main")
        return git(self.work, "rev-parse", "HEAD")

    def commit(self, branch: str, path: str, text: str, message: str) -> str:
        """One commit on `branch` (created from main when new) writing `path`; pushed."""
        existing = git(self.work, "branch", "--list", branch)
        git(self.work, "switch", "-q", branch) if existing else git(
            self.work, "switch", "-q", "-c", branch, "main"
        )
        target = self.work / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
        git(self.work, "add", path)
        git(self.work, "commit", "-q", "-m", message)
        git(self.work, "push", "-q", "origin", branch)
        return git(self.work, "rev-parse", "HEAD")

    def head_commit(self, sha: str) -> dict[str, Any]:
        """A push event's head_commit, from the remote."""
        fields = git(self.remote, "log", "-1", "--format=%s%n%cI%n%an%n%ae%n%T", sha).split("\n")
        person = {"name": fields[2], "email": fields[3], "username": "runner"}
        return {
            "id": sha,
            "message": fields[0],
            "timestamp": fields[1],
            "tree_id": fields[4],
            "distinct": True,
            "author": person,
            "committer": person,
            "url": f"{self.api.url}/{self.repository}/commit/{sha}",
        }

    def gh_pages(self, path: str) -> str | None:
        """A file of the remote's gh-pages, or None."""
        done = subprocess.run(
            ["git", "show", f"gh-pages:{path}"], cwd=self.remote, capture_output=True, text=True
        )
        return done.stdout if done.returncode == 0 else None

    def put_gh_pages(self, path: str, text: str, message: str) -> None:
        """One commit on the remote's gh-pages writing `path` (a history the test plants)."""
        git(self.work, "fetch", "-q", "origin", "gh-pages")
        git(self.work, "switch", "-q", "-C", "gh-pages", "FETCH_HEAD")
        target = self.work / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
        git(self.work, "add", path)
        git(self.work, "commit", "-q", "-m", message)
        git(self.work, "push", "-q", "origin", "gh-pages")
        git(self.work, "switch", "-q", "main")

    def gh_pages_files(self) -> list[str]:
        return git(self.remote, "ls-tree", "-r", "--name-only", "gh-pages").splitlines()

    def repository_payload(self) -> dict[str, Any]:
        return {
            "id": 1,
            "full_name": self.repository,
            "name": self.repository.split("/")[1],
            "owner": {"login": self.repository.split("/")[0]},
            "html_url": f"{self.api.url}/{self.repository}",
            "default_branch": "main",
        }

    def add_repository(self, repository: str, source: Path) -> str:
        """Another repository the jobs can fetch (benchwatch, for a user's caller), holding the
        source's working tree on main; its workflows can be called at the returned commit."""
        remote = self.root / "remotes" / f"{repository}.git"
        remote.mkdir(parents=True)
        git(remote, "init", "-q", "--bare", "-b", "main")
        work = self.root / f"work-{repository.replace('/', '-')}"
        work.mkdir()
        git(work, "init", "-q", "-b", "main")
        copy_tree(source, work)
        git(work, "add", "-A")
        git(work, "commit", "-q", "-m", f"{repository} as the test found it")
        git(work, "push", "-q", str(remote), "main")
        sha = git(work, "rev-parse", "HEAD")
        self.remotes[repository] = remote
        self.workflow_sources[(repository, sha)] = work
        return sha

    # --- act ----------------------------------------------------------------------------
    def git_rewrites(self) -> dict[str, str]:
        """GIT_CONFIG_* turning every URL a job uses for a repository into its bare remote."""
        host = self.api.url.split("://", 1)[1]
        pairs = []
        for repository, remote in self.remotes.items():
            for prefix in (
                f"{self.api.url}/{repository}.git",
                f"{self.api.url}/{repository}",
                f"http://x-access-token:{TOKEN}@{host}/{repository}.git",  # record_push.sh's remote
            ):
                pairs.append((f"url.{remote}.insteadOf", prefix))
        env = {"GIT_CONFIG_COUNT": str(len(pairs))}
        for i, (key, value) in enumerate(pairs):
            env[f"GIT_CONFIG_KEY_{i}"] = key
            env[f"GIT_CONFIG_VALUE_{i}"] = value
        return env

    def act(
        self,
        event: str,
        workflow: str,
        payload: dict[str, Any],
        sha: str,
        run_id: int,
        extra_env: dict[str, str] | None = None,
        timeout: float = 1200,
        secrets: dict[str, str] | None = None,
    ) -> subprocess.CompletedProcess:
        """Run `workflow` for `event` at commit `sha` (the workflows are read from that commit).
        `secrets`: the repository's secrets (besides GITHUB_TOKEN), as a user creates them.
        The log goes to logs/<run_id>-<workflow>.log."""
        binary = act_binary()
        if binary is None:
            raise RuntimeError("act is not installed: go install github.com/nektos/act@v0.2.89")
        workdir = self.root / f"run-{run_id}"
        git(self.root, "clone", "-q", str(self.remote), str(workdir))
        git(workdir, "checkout", "-q", "--detach", sha)
        pinned = pinned_actions(workdir).union(
            *(pinned_actions(d) for d in self.workflow_sources.values())
        ) - set(
            self.workflow_sources
        )  # a caller's reusable workflows are no actions: their folder serves them
        missing = sorted(f"{name}@{ref}" for name, ref in pinned if name not in STANDIN_FOR)
        if missing:
            raise RuntimeError(
                f"no stand-in for the pinned action(s) {', '.join(missing)} (tests/runner/actions)"
            )
        event_file = self.root / f"event-{run_id}.json"
        event_file.write_text(json.dumps(payload))
        argv = [
            binary,
            event,
            "-W",
            f".github/workflows/{workflow}",
            "-e",
            str(event_file),
            "-P",
            "ubuntu-24.04=-self-hosted",
            "--no-skip-checkout",
            "--action-offline-mode",
            "--no-cache-server",
            "--concurrent-jobs",
            "1",
            "--action-cache-path",
            str(self.root / "act-cache"),
            "--secret",
            f"GITHUB_TOKEN={TOKEN}",
        ]
        for name, value in (secrets or {}).items():
            argv += ["--secret", f"{name}={value}"]
        for name, ref in sorted(pinned):
            argv += ["--local-repository", f"{name}@{ref}={STANDINS / STANDIN_FOR[name]}"]
        for (name, ref), folder in self.workflow_sources.items():
            argv += [
                "--local-repository",
                f"{name}@{ref}={folder}",
            ]  # `uses: owner/repo/.github/workflows/…@sha`
        job_env = {
            "GITHUB_RUN_ID": str(run_id),
            "GITHUB_REPOSITORY": self.repository,
            "GITHUB_SERVER_URL": self.api.url,
            "GITHUB_API_URL": self.api.url,
            "BENCHWATCH_RUNNER_ARTIFACTS": str(self.artifacts),
            **(extra_env or {}),
        }
        if event != "pull_request":
            # act's github.sha; a pull request's stays the workdir's HEAD, its head commit
            job_env["SHA_REF"] = sha
        for key, value in job_env.items():
            argv += ["--env", f"{key}={value}"]
        # the outer runner's own GITHUB_*/RUNNER_*/ACTIONS_* (in CI) must not leak into the jobs under test
        own = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("GITHUB_", "RUNNER_", "ACTIONS_"))
        }
        env = {**own, **GIT_IDENTITY, **self.git_rewrites(), **(extra_env or {})}
        log = self.logs / f"{run_id}-{workflow}.log"
        with log.open("w") as out:
            done = run_in_own_group(argv, cwd=workdir, env=env, out=out, timeout=timeout)
        done.stdout = log.read_text()
        return done


def run_in_own_group(
    argv: list[str],
    *,
    cwd: Path,
    env: dict[str, str],
    out: IO[str],
    timeout: float,
    grace: float = 30.0,
) -> subprocess.CompletedProcess:
    """Run argv (act) in a process group of its own, its output to `out`. However this ends (act
    exits, the timeout, an exception such as pytest-timeout's or ^C), everything act started is
    ended before this returns or raises (end_group). TimeoutExpired as subprocess.run raises it."""
    process = subprocess.Popen(
        argv, cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
    )
    seen: dict[int, float] = {}  # every descendant seen while it ran: pid -> its start time
    deadline = time.monotonic() + timeout
    try:
        while (code := exit_code(process)) is None:
            remember_descendants(process.pid, seen)
            if time.monotonic() >= deadline:
                raise subprocess.TimeoutExpired(argv, timeout)
            time.sleep(0.25)
    finally:
        end_group(process, grace, seen)
    return subprocess.CompletedProcess(argv, code)


def exit_code(process: subprocess.Popen) -> int | None:
    """The leader's exit code once it has exited (-N: killed by signal N), None while it runs. It
    is not reaped (WNOWAIT): until end_group reaps it, its pid, the group's id, cannot be reused."""
    info = os.waitid(os.P_PID, process.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
    if info is None:
        return None
    return info.si_status if info.si_code == os.CLD_EXITED else -info.si_status


def remember_descendants(pid: int, seen: dict[int, float]) -> None:
    try:
        children = psutil.Process(pid).children(recursive=True)
    except psutil.Error:
        return
    for child in children:
        try:
            seen.setdefault(child.pid, child.create_time())
        except psutil.Error:
            continue


def end_group(
    process: subprocess.Popen, grace: float = 30.0, seen: dict[int, float] | None = None
) -> None:
    """SIGTERM to the whole process group of `process` (its leader), SIGKILL to whatever is left
    of it after `grace` seconds, then reap the leader. SIGTERM first: on it benchwatch stops the
    servers it started in sessions of their own, and its PostgreSQL cluster. Then any descendant
    seen while it ran (`seen`, and those found now) that left the group and is still running is
    killed: a server whose benchwatch died first."""
    seen = dict(seen or {})
    remember_descendants(process.pid, seen)
    pgid = process.pid  # start_new_session: the leader's pid is the group's id
    for sig, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, 10.0)):
        try:
            os.killpg(pgid, sig)
        except ProcessLookupError:
            break  # no process left in the group
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            if not group_members(pgid):  # an exited leader (not reaped yet) does not count
                break
            time.sleep(0.1)
        else:
            continue
        break
    killed = []
    for pid, started in seen.items():
        try:
            child = psutil.Process(pid)
            if child.create_time() == started and running(child):
                child.kill()  # the same process (not a reused pid), still running
                killed.append(child)
        except psutil.Error:
            continue
    deadline = time.monotonic() + 10.0
    while any(running(child) for child in killed) and time.monotonic() < deadline:
        time.sleep(0.05)  # a signal is delivered, not done: wait until each is gone
    process.wait()  # reap the leader: only now may its pid (the group's id) be reused


def running(process: psutil.Process) -> bool:
    try:
        return process.is_running() and process.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def group_members(pgid: int) -> list[int]:
    """The live processes (not zombies) of process group `pgid`."""
    found = []
    for each in psutil.process_iter(["status"]):
        try:
            if os.getpgid(each.pid) == pgid and each.info["status"] != psutil.STATUS_ZOMBIE:
                found.append(each.pid)
        except (ProcessLookupError, psutil.Error):
            continue
    return found


def tail(text: str, lines: int = 80) -> str:
    return "\n".join(text.splitlines()[-lines:])
