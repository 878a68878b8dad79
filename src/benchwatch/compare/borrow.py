"""The first pull request that adds benchwatch: its base has no declarations, so the base
checkout borrows the head's (project file, stacks, app declarations and the files they name)."""

from __future__ import annotations

import shutil
from pathlib import Path

from benchwatch.project.files import APP_FILE, PROJECT_FILE, STACKS_FILE
from benchwatch.project.loading import load_project


def borrow_declarations(source_root: Path, target_root: Path) -> list[Path]:
    """Copy what the declarations consist of from `source_root` into `target_root`; a file the
    target already has (an app's own requirements at that ref) is the target's code and is kept.
    Returns the files copied."""
    project = load_project(source_root)
    wanted = [PROJECT_FILE, STACKS_FILE]
    for app in project.apps:
        folder = app.directory.relative_to(source_root.resolve())
        declaration = app.declaration
        named = [APP_FILE, declaration.requirements or ""]
        named += [e.body_file or "" for e in declaration.endpoints]
        named += [e.expect.json_file or "" for e in declaration.endpoints]
        wanted += [str(folder / name) for name in named if name]
    copied = []
    for relative in dict.fromkeys(wanted):
        source, target = source_root / relative, target_root / relative
        if not source.is_file():
            continue
        if (
            relative.endswith(APP_FILE)
            or relative in (PROJECT_FILE, STACKS_FILE)
            or not target.exists()
        ):
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, target)
            copied.append(target)
    return copied
