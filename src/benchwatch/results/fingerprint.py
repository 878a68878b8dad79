"""The environment fingerprint stored with every run: machine, OS, tools, git state."""

from __future__ import annotations

import importlib.metadata
import os
import platform
import socket
import subprocess
from pathlib import Path

from benchwatch import __version__
from benchwatch.results.schema import Environment


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.lower().startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown"


def usable_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def git(root: Path, *args: str) -> str | None:
    try:
        done = subprocess.run(
            ["git", "-C", str(root), *args], capture_output=True, text=True, timeout=10
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def package_version(name: str) -> str | None:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


def collect(root: Path, oha_version: str | None = None) -> Environment:
    commit = git(root, "rev-parse", "HEAD")
    status = git(root, "status", "--porcelain", "--untracked-files=no")
    return Environment(
        cpu_model=cpu_model(),
        cores=usable_cores(),
        os=platform.platform(),
        python=platform.python_version(),
        git_commit=commit,
        git_dirty=bool(status) if status is not None else None,
        oha_version=oha_version,
        asv_version=package_version("asv"),
        benchwatch_version=__version__,
        hostname=socket.gethostname(),
    )
