"""New CPython releases this machine can install: uv's own list of the builds it downloads for this
platform (shipped inside uv, so it needs no network to read), against the build a command would
choose here (`interpreters`). The nightly notices a CPython patch release the way it notices a
FastAPI one."""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass

from packaging.version import InvalidVersion, Version

from benchwatch.environments import interpreters
from benchwatch.errors import UserError

__all__ = ["PythonRelease", "installable", "status"]


@dataclass(frozen=True)
class PythonRelease:
    minor: str  # "3.13"
    installed: str | None  # the build a command would choose here, None: not installed
    newest: str | None  # the newest stable release uv can install for this platform

    @property
    def new(self) -> bool:
        return self.newest is not None and (
            self.installed is None or Version(self.newest) > Version(self.installed)
        )

    def line(self) -> str:
        here = f"this machine runs {self.installed}" if self.installed else "not installed here"
        if not self.newest:
            return f"CPython {self.minor}: {here}; uv knows no download of it"
        if not self.new:
            return f"CPython {self.minor}: {here}, the newest release"
        return f"CPython {self.minor}: {here}; {self.newest} is out (`uv python install {self.newest}`)"


def installable(listing: str) -> dict[str, str]:
    """The newest stable CPython release per minor version in `uv python list --all-versions
    --only-downloads --output-format json` (the default build, not free-threaded or debug)."""
    try:
        entries = json.loads(listing)
    except ValueError:
        raise UserError("`uv python list` did not answer JSON: is uv older than 0.5?") from None
    newest: dict[str, Version] = {}
    for entry in entries if isinstance(entries, list) else []:
        if entry.get("implementation") != "cpython" or entry.get("variant", "default") != "default":
            continue
        try:
            version = Version(str(entry.get("version")))
        except InvalidVersion:
            continue
        if version.is_prerelease or version.major != 3:
            continue
        minor = f"3.{version.minor}"
        if minor not in newest or version > newest[minor]:
            newest[minor] = version
    return {minor: str(version) for minor, version in newest.items()}


def _uv_listing() -> str:
    from benchwatch.environments.uv_tool import uv_environ, uv_executable

    done = subprocess.run(
        [
            uv_executable(),
            "python",
            "list",
            "--all-versions",
            "--only-downloads",
            "--output-format",
            "json",
        ],
        capture_output=True,
        text=True,
        timeout=60,
        env=uv_environ(),
    )
    if done.returncode != 0:
        raise UserError(f"`uv python list` failed: {done.stderr.strip()[-200:]}")
    return done.stdout


def status(minors: list[str], listing: str | None = None) -> list[PythonRelease]:
    """For each CPython minor version (the stacks' Pythons): the build here and the newest release."""
    newest = installable(listing if listing is not None else _uv_listing())
    found = []
    for minor in sorted(set(minors), key=lambda m: int(m.split(".")[1])):
        builds = interpreters.find_installed(minor)
        found.append(PythonRelease(minor, builds[0].version if builds else None, newest.get(minor)))
    return found
