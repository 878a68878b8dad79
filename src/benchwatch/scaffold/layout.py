"""Where init's files go in a real repository: the root comes from git, the app folder may be
anywhere below it. benchwatch.toml and the workflows live at the root (GitHub reads workflows only
there); the app's declaration lives in its folder's benchwatch/."""

from __future__ import annotations

import json
import os
import re
import subprocess
import tomllib
from dataclasses import dataclass
from pathlib import Path

from benchwatch.errors import UserError
from benchwatch.whole_files import write_text_whole

APP_DIR = "benchwatch"


@dataclass(frozen=True)
class Layout:
    root: Path  # the repository root: benchwatch.toml, .github/workflows
    folder: Path  # the app folder: its imports resolve from here

    @property
    def app_dir(self) -> Path:
        return self.folder / APP_DIR

    def listed(self) -> str:
        """The app's entry in benchwatch.toml's `apps`: its declaration folder, relative to the root."""
        return self.app_dir.relative_to(self.root).as_posix()

    def from_app_dir(self, path: Path) -> str:
        """`path` as the app file names it (relative to the app file's folder)."""
        return Path(os.path.relpath(path, self.app_dir)).as_posix()


def repository_root(folder: Path) -> Path:
    """The git work tree's top level around `folder`; the folder itself outside git."""
    try:
        done = subprocess.run(
            ["git", "-C", str(folder), "rev-parse", "--show-toplevel"],
            capture_output=True,
            text=True,
            timeout=30,
        )
    except (OSError, subprocess.TimeoutExpired):
        return folder
    return (
        Path(done.stdout.strip()).resolve()
        if done.returncode == 0 and done.stdout.strip()
        else folder
    )


def layout(cwd: Path, folder: str | None) -> Layout:
    """The app folder (given, relative to the working directory, or the working directory) and
    the repository root around it."""
    path = (cwd / folder).resolve() if folder else cwd.resolve()
    if not path.is_dir():
        raise UserError(
            f"{folder}: no such folder; give the app folder (where its imports resolve from)"
        )
    root = repository_root(path)
    if path != root and root not in path.parents:
        raise UserError(f"{path} is not inside the repository {root}")
    return Layout(root=root, folder=path)


_APPS = re.compile(r"^apps\s*=\s*\[[^\]]*\]", re.M)


def project_with_app(text: str, path: Path, entry: str) -> str | None:
    """benchwatch.toml's text with `entry` added to `apps`; None when it is listed already."""
    try:
        apps = tomllib.loads(text).get("benchwatch", {}).get("apps", [])
    except tomllib.TOMLDecodeError as exc:
        raise UserError(f"{path}: not valid TOML: {exc}") from None
    if entry in apps:
        return None
    match = _APPS.search(text)
    if match is None:
        raise UserError(f"{path}: no `apps = [...]` to add {entry!r} to; add it by hand")
    listed = ", ".join(json.dumps(app) for app in [*apps, entry])
    return f"{text[: match.start()]}apps = [{listed}]{text[match.end() :]}"


IGNORED = ("results/", ".benchwatch/")  # run outputs and the local history


def ignore_outputs(root: Path) -> Path | None:
    """Add benchwatch's outputs to the repository's .gitignore (created if absent; a line that
    ignores them already, `results` or `/results/`, is not added twice). The file, if changed."""
    path = root / ".gitignore"
    text = path.read_text() if path.is_file() else ""
    present = {line.strip().strip("/") for line in text.splitlines()}
    missing = [entry for entry in IGNORED if entry.strip("/") not in present]
    if not missing:
        return None
    lead = "" if not text or text.endswith("\n") else "\n"
    added = "# benchwatch: run outputs and the local history\n" + "\n".join(missing) + "\n"
    write_text_whole(path, text + lead + added)
    return path
