"""The caller workflows init writes into a user's repository: a few lines each, calling
benchwatch's reusable workflows at a pinned tag (see docs/github.md, "In your repository")."""

from __future__ import annotations

import re
from pathlib import Path

from benchwatch import __version__
from benchwatch.declarations import app_env
from benchwatch.environments.own_checkout import checkout_commit, git_environ
from benchwatch.errors import UserError

DEFAULT_SOURCE = f"benchwatch/benchwatch@v{__version__}"
_SOURCE = re.compile(r"^([A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+)@([A-Za-z0-9_.-]+(?:/[A-Za-z0-9_.-]+)*)$")
_COMMIT = re.compile(r"^[0-9a-f]{40}$")

_PR = """\
name: benchwatch-pr

# Written by `benchwatch init`. Compares the pull request with its merge base on one runner:
{secrets}{note}on:
  pull_request:

permissions: {{}}

concurrency:
  group: benchwatch-pr-${{{{ github.event.pull_request.number }}}}
  cancel-in-progress: true

jobs:
  compare:
    permissions:
      contents: read
    uses: {repo}/.github/workflows/reusable-pr.yml@{sha} # {label}
    with:
      benchwatch-repository: {repo}
      benchwatch-ref: {sha} # {label}
      scenarios: "" # -k patterns over variant ids; empty: every app
      python-version: "3.12" # the Python benchwatch itself runs on
{extra}"""

_COMMENT = """\
name: benchwatch-comment

# Written by `benchwatch init`. Posts the artifact benchwatch-pr left; never checks out or runs
# the pull request's code.
{note}on:
  workflow_run: # zizmor: ignore[dangerous-triggers] no PR code is checked out or run
    workflows: [benchwatch-pr]
    types: [completed]

permissions: {{}}

concurrency:
  # one commenter at a time per pull request (its head repository and branch), so two runs never
  # both create the sticky comment
  group: benchwatch-comment-${{{{ github.event.workflow_run.head_repository.id }}}}-${{{{ github.event.workflow_run.head_branch }}}}
  cancel-in-progress: false

jobs:
  comment:
    if: github.event.workflow_run.event == 'pull_request' && github.event.workflow_run.conclusion != 'cancelled'
    permissions:
      actions: read
      contents: read
      pull-requests: write
    uses: {repo}/.github/workflows/reusable-comment.yml@{sha} # {label}
    with:
      benchwatch-repository: {repo}
      benchwatch-ref: {sha} # {label}
"""

_PUBLISH = """\
name: benchwatch-publish

# Written by `benchwatch init`. Measures every push to main (read-only job) and records the
# trend on gh-pages (a job that runs only git and github-action-benchmark).
{note}on:
  push:
    branches: [main]

permissions: {{}}

concurrency:
  group: benchwatch-publish-${{{{ github.sha }}}}
  cancel-in-progress: false

jobs:
  publish:
    permissions:
      contents: write
    uses: {repo}/.github/workflows/reusable-publish.yml@{sha} # {label}
    with:
      benchwatch-repository: {repo}
      benchwatch-ref: {sha} # {label}
      scenarios: ""
      stacks: ""
      python-version: "3.12"
{extra}"""

_NIGHTLY = """\
name: benchwatch-nightly

# Written by `benchwatch init`. Every night: the apps on the given stacks (default `latest`,
# the newest FastAPI/Pydantic releases as pinned in the benchwatch release), recorded as a
# separate `nightly` trend on gh-pages; an app with its own lock (`stacks: "own"`): on the nights
# a watched package has a new release, that lock against it with those releases (own-next).
{note}on:
  schedule:
    - cron: "17 3 * * *"
  workflow_dispatch: # runs only on main: another branch's numbers would enter main's nightly trend

permissions: {{}}

concurrency:
  group: benchwatch-nightly
  cancel-in-progress: false

jobs:
  nightly:
    if: github.ref == 'refs/heads/main'
    permissions:
      contents: write
    uses: {repo}/.github/workflows/reusable-nightly.yml@{sha} # {label}
    with:
      benchwatch-repository: {repo}
      benchwatch-ref: {sha} # {label}
      scenarios: ""
{nightly_stacks}      python-version: "3.12"
{extra}{nightly_issues}"""
_NIGHTLY_STACKS = '      stacks: "latest"\n'
_NIGHTLY_OWN = (
    '      stacks: "own" # the app\'s own lock\n'
    "      releases: true # a night with a new release of a watched package: own against own-next\n"
)

# with releases: the nightly-regression issue (the release, its endpoints and what moved) and one
# issue per series with a new change point, from the nightly's artifact
_NIGHTLY_ISSUES = """
  issues:
    needs: [nightly]
    if: github.ref == 'refs/heads/main' && needs.nightly.outputs.changed == 'true'
    permissions:
      contents: read
      issues: write # the nightly-regression issue and one per series with a new change point
    uses: {repo}/.github/workflows/reusable-issues.yml@{sha} # {label}
    with:
      benchwatch-repository: {repo}
      benchwatch-ref: {sha} # {label}
      kind: nightly
      nightly-regression: ${{{{ needs.nightly.outputs.regression == 'true' }}}}
"""

PLACEHOLDER = DEFAULT_SOURCE.split("@")[0]  # benchwatch's name until it has a public repository
NO_SECRETS = (
    "# read-only token, no secrets; benchwatch-comment.yml posts the result as a sticky comment.\n"
)
APP_ENV_TO_COMPARE = f"""\
# read-only token; the secret {app_env.SECRET} (the apps' ${{NAME}}s) goes to the compare step
# alone, and a pull request from a fork gets no secrets: compare then measures what needs none
# and the comment lists what it left out and why. benchwatch-comment.yml posts the comment.
"""
APP_ENV_SECRET = app_env.SECRET  # the repository secret: lines of NAME=value for the apps' ${NAME}s
_MEASURING = ("benchwatch-pr.yml", "benchwatch-publish.yml", "benchwatch-nightly.yml")

TEMPLATES = {
    "benchwatch-pr.yml": _PR,
    "benchwatch-comment.yml": _COMMENT,
    "benchwatch-publish.yml": _PUBLISH,
    "benchwatch-nightly.yml": _NIGHTLY,
}


def release_commit(package: Path | None = None) -> str | None:
    """The commit this benchwatch was built from: the wheel's build_commit.txt (hatch_build.py), or
    HEAD of benchwatch's own git checkout when it runs from one; None when neither says. Only its
    own: a package installed in a user's .venv inside their repository is in *their* work tree,
    whose HEAD is no benchwatch commit."""
    from importlib.resources import files

    here = Path(str(files("benchwatch"))) if package is None else package
    try:
        text = (here / "build_commit.txt").read_text().strip()
    except OSError:
        return checkout_commit(here)
    return text if _COMMIT.fullmatch(text) else None


def default_source() -> str:
    """This benchwatch's own workflows at its build commit; UserError (exit 3) saying how to name
    one when that commit is unknown."""
    commit = release_commit()
    if commit is None:
        raise UserError(
            "cannot tell which benchwatch commit the workflows should call (this installed benchwatch "
            "has no build_commit.txt and is not a benchwatch git checkout): give --workflows-from "
            f"{DEFAULT_SOURCE.split('@')[0]}@<40-hex commit> (or @v{__version__}, resolved with git ls-remote)"
        )
    return f"{DEFAULT_SOURCE.split('@')[0]}@{commit}#v{__version__}"


def _extra(database: str, app_env: bool) -> str:
    """The lines a measuring caller adds for an app with a database or secrets (the reusable
    workflows' `database` input and `app-env` secret)."""
    lines = (
        [
            f"      database: {database} # the measuring job makes sure PostgreSQL's server is there\n"
        ]
        if database
        else []
    )
    if app_env:
        lines.append(
            f"    secrets:\n      app-env: ${{{{ secrets.{APP_ENV_SECRET} }}}} # NAME=value lines: the apps' ${{NAME}}s\n"
        )
    return "".join(lines)


def caller_workflows(
    source: str = DEFAULT_SOURCE,
    git_url: str | None = None,
    *,
    database: str = "",
    app_env: bool = False,
    own: bool = False,
) -> dict[str, str]:
    """{file name: text} for .github/workflows/, calling `source` (OWNER/REPO@TAG or OWNER/REPO@COMMIT)
    at a commit: `uses:` and `benchwatch-ref` both name the 40-hex commit, with the tag as a comment,
    because whoever can move a tag would otherwise run code with every user's write token. A tag is
    resolved once, here, with `git ls-remote` (git_url, default the GitHub repository). `database`
    ("postgresql") and `app_env` (the apps read `${NAME}`s) add the reusable workflows' `database`
    input and `app-env` secret to the callers that measure; `own` (the app has its own lock) makes
    the nightly compare that lock with the newest releases of the watched packages."""
    source, _, label = source.partition("#")  # default_source's "OWNER/REPO@COMMIT#vX"
    match = _SOURCE.fullmatch(source)
    if not match or match.group(2).startswith("-") or not re.fullmatch(r"[A-Za-z0-9_.-]*", label):
        raise UserError(
            f"--workflows-from {source!r}: give OWNER/REPO@TAG or OWNER/REPO@COMMIT, e.g. {DEFAULT_SOURCE}"
        )
    repo, ref = match.groups()
    if _COMMIT.fullmatch(ref):
        sha, label = ref, label or "pinned commit"
    else:
        sha, label = resolve_tag(git_url or f"https://github.com/{repo}.git", ref, source), ref
    extra = _extra(database, app_env)
    note = "".join(f"# {line}\n" for line in placeholder_note(repo, sha))
    secrets = APP_ENV_TO_COMPARE if app_env else NO_SECRETS
    return {
        name: template.format(
            repo=repo,
            sha=sha,
            label=label,
            extra=extra if name in _MEASURING else "",
            note=note,
            secrets=secrets,
            nightly_stacks=_NIGHTLY_OWN if own else _NIGHTLY_STACKS,
            nightly_issues=_NIGHTLY_ISSUES.format(repo=repo, sha=sha, label=label) if own else "",
        )
        for name, template in TEMPLATES.items()
    }


def placeholder_said(source: str) -> str | None:
    """init's line when `source` (--workflows-from, or the default) names the placeholder."""
    repo, _, ref = source.partition("#")[0].partition("@")
    if repo != PLACEHOLDER:
        return None
    return (
        f"init: the workflows call {PLACEHOLDER}@{ref}, a placeholder until benchwatch has a public repository "
        f"(GitHub finds no workflow there): pin a copy of benchwatch that holds that commit with "
        f"`benchwatch init --workflows-from OWNER/REPO@{ref}`, or edit `uses:` and `benchwatch-repository` "
        "in .github/workflows/benchwatch-*.yml"
    )


def placeholder_note(repo: str, sha: str) -> list[str]:
    """What init says, and the callers say in their header, when they call benchwatch under its
    placeholder name: nothing is published there yet, so GitHub would find no such workflow."""
    if repo != PLACEHOLDER:
        return []
    return [
        f"NOTE: {PLACEHOLDER} is a placeholder until benchwatch has a public repository: GitHub",
        "finds no workflow there. Name a copy of benchwatch that holds this commit in `uses:` and",
        "`benchwatch-repository` below, or write these files with",
        f"`benchwatch init --workflows-from OWNER/REPO@{sha}`.",
    ]


def resolve_tag(url: str, tag: str, source: str) -> str:
    """The commit a tag names now (an annotated tag peeled), asked of the repository with git."""
    import subprocess

    fix = f"give OWNER/REPO@<40-hex commit> instead of {source!r}"
    try:
        done = subprocess.run(
            ["git", "ls-remote", "--tags", "--", url, f"refs/tags/{tag}", f"refs/tags/{tag}^{{}}"],
            capture_output=True,
            text=True,
            timeout=60,
            env={**git_environ(), "GIT_TERMINAL_PROMPT": "0"},
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise UserError(
            f"--workflows-from: cannot ask {url} for tag {tag} ({exc}); {fix}"
        ) from None
    if done.returncode != 0:
        raise UserError(
            f"--workflows-from: git ls-remote {url} failed ({done.stderr.strip()[-200:]}); {fix}"
        )
    refs: dict[str, str] = {}  # ref name -> commit, as `git ls-remote` prints them
    for line in done.stdout.splitlines():
        if "\t" in line:
            sha_of, name = line.split("\t", 1)
            refs[name] = sha_of
    sha = refs.get(f"refs/tags/{tag}^{{}}") or refs.get(f"refs/tags/{tag}")
    if sha is None or not _COMMIT.fullmatch(sha):
        raise UserError(f"--workflows-from: {url} has no tag {tag}; {fix}")
    return sha
