"""Whether a folder is benchwatch's own git checkout, and which commit it is: the one check both
`init` (scaffold/workflows.release_commit) and the wheel's build hook (hatch_build.py, which loads
this file by its path: standard library only) make, so that neither takes the HEAD of another
repository benchwatch merely sits in (a user's, around their .venv or a vendored copy)."""

from __future__ import annotations

import os
import re
import subprocess
import tomllib
from pathlib import Path

_COMMIT = re.compile(r"[0-9a-f]{40}")


def git_environ() -> dict[str, str]:
    """This process's environment without its GIT_* variables (none steers git elsewhere)."""
    return {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}


def git(where: Path, *argv: str) -> str | None:
    """git's answer in `where` (no GIT_* variable of ours steers it elsewhere); None when it fails."""
    try:
        done = subprocess.run(
            ["git", "-C", str(where), *argv],
            capture_output=True,
            text=True,
            timeout=30,
            env=git_environ(),
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def is_benchwatch_checkout(top: Path, package: Path) -> bool:
    """The work tree `top` is benchwatch's own: its pyproject.toml names the project benchwatch and
    the package is its src/benchwatch."""
    try:
        name = tomllib.loads((top / "pyproject.toml").read_text()).get("project", {}).get("name")
        return name == "benchwatch" and package.resolve() == (top / "src" / "benchwatch").resolve()
    except (OSError, tomllib.TOMLDecodeError):
        return False


def checkout_commit(package: Path, *, clean: bool = False) -> str | None:
    """HEAD of the benchwatch checkout `package` (its src/benchwatch) is in; None when it is in no
    git repository, in another one, or (`clean`) its work tree has changes or untracked files: a
    build of such a tree is no commit's."""
    top = git(package, "rev-parse", "--show-toplevel")
    if top is None or not is_benchwatch_checkout(Path(top), package):
        return None
    if clean and git(package, "status", "--porcelain") != "":
        return None
    head = git(package, "rev-parse", "HEAD") or ""
    return head if _COMMIT.fullmatch(head) else None
