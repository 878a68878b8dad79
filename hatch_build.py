"""Wheel build hook: the wheel carries the commit it was built from (benchwatch/build_commit.txt),
so `benchwatch init` pins the reusable workflows to that commit, never to a movable tag
(docs/security.md, M3). Only from benchwatch's own checkout, unchanged (src/benchwatch/environments/own_checkout.py,
the check init makes too): built from an sdist, from a copy inside another repository, or from a
tree with changes, no file, and init resolves the tag."""

from __future__ import annotations

import importlib.util
import tempfile
from pathlib import Path

from hatchling.builders.hooks.plugin.interface import BuildHookInterface


class CustomBuildHook(BuildHookInterface):
    def initialize(self, version: str, build_data: dict) -> None:
        package = Path(self.root) / "src" / "benchwatch"
        spec = importlib.util.spec_from_file_location(
            "benchwatch_own_checkout", package / "environments" / "own_checkout.py"
        )
        if spec is None or spec.loader is None:
            return
        own_checkout = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(own_checkout)
        commit = own_checkout.checkout_commit(package, clean=True)
        if commit is None:
            return
        path = Path(tempfile.mkdtemp()) / "build_commit.txt"
        path.write_text(commit + "\n")
        build_data["force_include"][str(path)] = "benchwatch/build_commit.txt"
