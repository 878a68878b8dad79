"""The caller workflows init writes into a user's repository: a few lines each, calling
benchwatch's reusable workflows at a pinned tag (see docs/github.md, "In your repository")."""

from __future__ import annotations

import re

from benchwatch import __version__
from benchwatch.errors import UserError

DEFAULT_SOURCE = f"benchwatch/benchwatch@v{__version__}"
_SOURCE = re.compile(r"^([A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+)@([A-Za-z0-9_./-]+)$")

_PR = """\
name: benchwatch-pr

# Written by `benchwatch init`. Compares the pull request with its merge base on one runner:
# read-only token, no secrets; benchwatch-comment.yml posts the result as a sticky comment.
on:
  pull_request:

permissions: {{}}

concurrency:
  group: benchwatch-pr-${{{{ github.event.pull_request.number }}}}
  cancel-in-progress: true

jobs:
  compare:
    permissions:
      contents: read
    uses: {repo}/.github/workflows/reusable-pr.yml@{ref}
    with:
      benchwatch-repository: {repo}
      benchwatch-ref: {ref}
      scenarios: "" # -k patterns over variant ids; empty: every app
      python-version: "3.12" # the Python benchwatch itself runs on
"""

_COMMENT = """\
name: benchwatch-comment

# Written by `benchwatch init`. Posts the artifact benchwatch-pr left; never checks out or runs
# the pull request's code.
on:
  workflow_run: # zizmor: ignore[dangerous-triggers] no PR code is checked out or run
    workflows: [benchwatch-pr]
    types: [completed]

permissions: {{}}

jobs:
  comment:
    if: github.event.workflow_run.event == 'pull_request' && github.event.workflow_run.conclusion != 'cancelled'
    permissions:
      actions: read
      pull-requests: write
    uses: {repo}/.github/workflows/reusable-comment.yml@{ref}
"""

_PUBLISH = """\
name: benchwatch-publish

# Written by `benchwatch init`. Measures every push to main (read-only job) and records the
# trend on gh-pages (a job that runs only git and github-action-benchmark).
on:
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
    uses: {repo}/.github/workflows/reusable-publish.yml@{ref}
    with:
      benchwatch-repository: {repo}
      benchwatch-ref: {ref}
      scenarios: ""
      stacks: ""
      python-version: "3.12"
"""

_NIGHTLY = """\
name: benchwatch-nightly

# Written by `benchwatch init`. Every night: the apps on the given stacks (default `latest`,
# the newest FastAPI/Pydantic releases as pinned in the benchwatch release), recorded as a
# separate `nightly` trend on gh-pages.
on:
  schedule:
    - cron: "17 3 * * *"
  workflow_dispatch:

permissions: {{}}

concurrency:
  group: benchwatch-nightly
  cancel-in-progress: false

jobs:
  nightly:
    permissions:
      contents: write
    uses: {repo}/.github/workflows/reusable-nightly.yml@{ref}
    with:
      benchwatch-repository: {repo}
      benchwatch-ref: {ref}
      scenarios: ""
      stacks: "latest"
      python-version: "3.12"
"""

TEMPLATES = {
    "benchwatch-pr.yml": _PR,
    "benchwatch-comment.yml": _COMMENT,
    "benchwatch-publish.yml": _PUBLISH,
    "benchwatch-nightly.yml": _NIGHTLY,
}


def caller_workflows(source: str = DEFAULT_SOURCE) -> dict[str, str]:
    """{file name: text} for .github/workflows/, calling `source` (OWNER/REPO@TAG)."""
    match = _SOURCE.fullmatch(source)
    if not match:
        raise UserError(f"--workflows-from {source!r}: give OWNER/REPO@TAG, e.g. {DEFAULT_SOURCE}")
    repo, ref = match.groups()
    return {name: template.format(repo=repo, ref=ref) for name, template in TEMPLATES.items()}
