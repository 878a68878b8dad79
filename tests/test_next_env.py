"""M1 (docs/security.md): the nightly's `next` environment runs brand-new releases in a job whose
cache scope main reads. It takes a pre-release only where a requirement names one (the four
watched packages, pinned exactly), nothing published after it is resolved, and no source build.
Planted here: a pre-release and an sdist-only release of a dependency, in a local wheel folder,
resolved by the real uv with the very flags the environment is built with."""

from __future__ import annotations

import subprocess
import tarfile
import zipfile
from pathlib import Path

from benchwatch.declarations.stacks import Stack
from benchwatch.environments.envs import resolution_flags
from benchwatch.environments.uv_tool import uv_executable


def wheel(folder: Path, name: str, version: str, requires: tuple[str, ...] = ()) -> None:
    info = f"{name}-{version}.dist-info"
    files = {
        f"{name}/__init__.py": "",
        f"{info}/METADATA": "Metadata-Version: 2.1\nName: {}\nVersion: {}\n{}".format(
            name, version, "".join(f"Requires-Dist: {r}\n" for r in requires)
        ),
        f"{info}/WHEEL": "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    files[f"{info}/RECORD"] = "".join(f"{path},,\n" for path in files) + f"{info}/RECORD,,\n"
    with zipfile.ZipFile(folder / f"{name}-{version}-py3-none-any.whl", "w") as archive:
        for path, text in files.items():
            archive.writestr(path, text)


def sdist(folder: Path, name: str, version: str) -> None:
    """A source release whose build would run its setup.py (here: one that writes a file)."""
    root = folder / f"{name}-{version}"
    root.mkdir()
    (root / "setup.py").write_text(
        f"open({str(folder / 'BUILT')!r}, 'w').write('ran')\n"
        f"from setuptools import setup\nsetup(name={name!r}, version={version!r})\n"
    )
    (root / "PKG-INFO").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
    with tarfile.open(folder / f"{name}-{version}.tar.gz", "w:gz") as archive:
        archive.add(root, arcname=root.name)


def resolve(folder: Path, flags: list[str], requirement: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [
            uv_executable(),
            "pip",
            "compile",
            "-",
            "--quiet",
            "--no-header",
            "--no-index",
            "--find-links",
            str(folder),
            "--python-version",
            "3.11",
            "--no-cache",
            *flags,
        ],
        input=requirement + "\n",
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_next_takes_a_pre_release_only_where_pinned_and_builds_nothing(tmp_path):
    wheels = tmp_path / "index"
    wheels.mkdir()
    wheel(wheels, "watched", "2.0b1", requires=("helper",))  # the watched package's new pre-release
    wheel(wheels, "helper", "1.0")
    wheel(wheels, "helper", "1.1a1")  # planted: a pre-release of a dependency nobody asked for
    next_stack = Stack(name="next", resolved_at_run_time=True, requires=["watched==2.0b1"])
    flags = resolution_flags(next_stack)
    assert flags[flags.index("--exclude-newer") + 1].endswith("Z")  # a moment, not a day

    done = resolve(wheels, flags, "watched==2.0b1")
    assert done.returncode == 0, done.stderr
    assert "watched==2.0b1" in done.stdout and "helper==1.0" in done.stdout
    before = resolve(
        wheels, ["--prerelease", "allow"], "watched==2.0b1"
    )  # what the nightly used to do
    assert "helper==1.1a1" in before.stdout

    sdist(wheels, "helper", "1.2")  # planted: a newer release that exists only as source
    done = resolve(wheels, flags, "watched==2.0b1")
    assert done.returncode == 0, done.stderr
    assert "helper==1.0" in done.stdout and not (wheels / "BUILT").exists()


def test_pinned_stacks_keep_their_day():
    from conftest import REPO

    from benchwatch.project.stacks import load_stacks

    stacks = load_stacks(REPO)
    pinned = next(s for s in stacks.values() if not s.resolved_at_run_time and s.exclude_newer)
    assert resolution_flags(pinned) == ["--exclude-newer", str(pinned.exclude_newer)]
