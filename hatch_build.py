"""Wheel build hook: the wheel carries the commit it was built from (benchwatch/build_commit.txt),
so `benchwatch init` pins the reusable workflows to that commit, never to a movable tag
(docs/security.md, M3). Built outside a git checkout (from an sdist): no file, init resolves the tag."""

from __future__ import annotations

import re
import subprocess
import tempfile
from pathlib import Path

from hatchling.builders.hooks.plugin.interface import BuildHookInterface


class CustomBuildHook(BuildHookInterface):
    def initialize(self, version: str, build_data: dict) -> None:
        try:
            done = subprocess.run(["git", "-C", self.root, "rev-parse", "HEAD"], capture_output=True, text=True, timeout=30)
        except OSError:
            return
        commit = done.stdout.strip()
        if done.returncode != 0 or not re.fullmatch(r"[0-9a-f]{40}", commit):
            return
        path = Path(tempfile.mkdtemp()) / "build_commit.txt"
        path.write_text(commit + "\n")
        build_data["force_include"][str(path)] = "benchwatch/build_commit.txt"
