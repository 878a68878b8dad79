"""An app's own dependencies and Python, read the way its team wrote them.

`requirements` in a benchwatch-app.toml names a requirements file of exact pins (environment
markers allowed: `colorama==0.4.6 ; sys_platform == 'win32'`), or the app's `uv.lock` /
`pyproject.toml`, exported through uv to such a file. The app's Python, unless the declaration
says `python`: its `.python-version`, else the lowest installed CPython its `requires-python`
allows (`interpreters`)."""

from __future__ import annotations

import hashlib
import re
import subprocess
import tomllib
from dataclasses import dataclass
from pathlib import Path

from packaging.markers import InvalidMarker, Marker
from packaging.specifiers import InvalidSpecifier, SpecifierSet

from benchwatch.declarations.pins import exact_pin
from benchwatch.environments import interpreters
from benchwatch.environments.uv_tool import cache_dir, uv_environ, uv_executable
from benchwatch.errors import UserError
from benchwatch.whole_files import write_text_whole

__all__ = ["Pin", "applying", "check_python", "export", "exported", "parse", "python_of"]

LOCK_FILES = ("uv.lock", "pyproject.toml")
CPYTHON_MINORS = range(8, 16)  # 3.8 … 3.15: what `requires-python` is matched against


@dataclass(frozen=True)
class Pin:
    name: str
    version: str
    marker: str | None = None  # a PEP 508 marker: the pin holds only where it is true

    def applies(self, environment: dict[str, str]) -> bool:
        return self.marker is None or Marker(self.marker).evaluate(environment)


def parse(text: str, source: Path) -> list[Pin]:
    """Every requirement line as an exact pin; anything else is one error naming the line. No
    option either (uv reads the file itself): `-e ./pkg` or a path would run an in-tree build
    backend, `--index-url`, `--extra-index-url`, `-f` would fetch from elsewhere than the stack's
    index, `-r`/`-c` would read another file."""
    pins = []
    for raw in text.splitlines():
        line = raw.split(" #", 1)[0].strip() if not raw.lstrip().startswith("#") else ""
        if not line:
            continue
        if line.startswith("-"):
            raise UserError(
                f"{source}: {line!r}: an app's requirements are exact pins only (name==version), no "
                "option: no -e, path, index (--index-url, --extra-index-url, -f) or other file"
            )
        requirement, _, marker = (part.strip() for part in line.partition(";"))
        found = exact_pin(requirement)
        if not found:
            raise UserError(
                f"{source}: {line!r} is not an exact pin (name==version, a marker may follow `;`)"
            )
        if marker:
            try:
                Marker(marker)
            except InvalidMarker as exc:
                raise UserError(
                    f"{source}: {line!r}: not a valid environment marker ({exc})"
                ) from None
        pins.append(Pin(*found, marker or None))
    if not pins:
        raise UserError(f"{source}: no exact pins (name==version) in it")
    return pins


def applying(pins: list[Pin], environment: dict[str, str]) -> dict[str, str]:
    """The pins that hold for an interpreter (its marker environment), by package name."""
    return {p.name: p.version for p in pins if p.applies(environment)}


def exported(path: Path) -> Path:
    """The requirements file an app's own pins are installed from: `export` into benchwatch's
    cache, beside uv's (run when the project's variants are made, not when one is read)."""
    return export(path, cache_dir().parent / "exports")


def export(path: Path, cache: Path) -> Path:
    """A requirements file of exact pins for `path`: the file itself, or for a `uv.lock` /
    `pyproject.toml` what `uv export --frozen` makes of the lock beside it (the app's own
    dependencies, without dev groups and without the project itself, which runs from source)."""
    if path.name not in LOCK_FILES:
        return path
    project = path.parent
    lock = project / "uv.lock"
    if not (project / "pyproject.toml").is_file():
        raise UserError(f"{path}: uv export needs the pyproject.toml beside it")
    if not lock.is_file():
        raise UserError(
            f"{path}: no uv.lock beside it: run `uv lock` in {project} and commit the lock "
            "(benchwatch installs exactly what a lock says)"
        )
    key = hashlib.sha256(lock.read_bytes() + (project / "pyproject.toml").read_bytes()).hexdigest()[
        :12
    ]
    target = cache / f"{key}.txt"
    if target.is_file():
        return target

    argv = [
        uv_executable(),
        "export",
        "--frozen",
        "--no-dev",
        "--no-emit-project",
        "--no-emit-workspace",
        "--no-hashes",
        "--no-header",
        "--no-annotate",
        "--format",
        "requirements.txt",
        "--directory",
        str(project),
    ]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=300, env=uv_environ())
    if done.returncode != 0:
        tail = " | ".join(done.stderr.strip().splitlines()[-2:])
        raise UserError(f"{lock}: `uv export --frozen` failed: {tail}")
    write_text_whole(target, done.stdout)
    return target


def python_of(start: Path, stop: Path, requirements: Path | None) -> str | None:
    """The Python an app asks for, looked up from `start` (its import root) up to `stop` (the
    repository root): the nearest `.python-version`, else the nearest `requires-python` (from the
    pyproject.toml beside its requirements first). None: it says nothing."""
    folders = _upwards(start, stop)
    for folder in folders:
        pinned = folder / ".python-version"
        if pinned.is_file():
            return _python_version_file(pinned)
    for pyproject in _projects(folders, requirements):
        if pyproject.is_file():
            wanted = _requires_python(pyproject)
            if wanted is not None:
                return _lowest_installed(wanted, pyproject)
    return None


def check_python(
    python: str, given: str, start: Path, stop: Path, requirements: Path | None
) -> None:
    """`python` (3.13, given as `given`: `--python 3.13`, `python = "3.13"`) is one the app's
    nearest `requires-python` allows (looked up as `python_of` does); else one error naming the
    lowest it allows and how to get it, before anything is built."""
    for pyproject in _projects(_upwards(start, stop), requirements):
        wanted = _requires_python(pyproject) if pyproject.is_file() else None
        if wanted is None:
            continue
        if _allows(wanted, python):
            return
        possible = [f"3.{m}" for m in CPYTHON_MINORS if _allows(wanted, f"3.{m}")]
        if not possible:
            fix = ""
        elif interpreters.find_installed(possible[0]):
            fix = f"; the lowest it allows is {possible[0]}, installed here"
        else:
            fix = f"; the lowest it allows is {possible[0]}: install it with `uv python install {possible[0]}`"
        raise UserError(
            f"{given}: {pyproject}: requires-python {str(wanted)!r} excludes Python {python}{fix}"
        )


def _allows(wanted: SpecifierSet, python: str) -> bool:
    """Whether a version (3.13: any of its releases; 3.13.1: that one) meets `requires-python`."""
    if python.count(".") >= 2:
        return wanted.contains(python, prereleases=True)
    return any(wanted.contains(f"{python}.{patch}", prereleases=True) for patch in (0, 99))


def _projects(folders: list[Path], requirements: Path | None) -> list[Path]:
    """The pyproject.toml files whose `requires-python` speaks for the app, nearest first: the one
    beside its lock, then from its root up."""
    return list(
        dict.fromkeys(
            ([requirements.parent.resolve() / "pyproject.toml"] if requirements else [])
            + [f / "pyproject.toml" for f in folders]
        )
    )


def _upwards(start: Path, stop: Path) -> list[Path]:
    start, stop = start.resolve(), stop.resolve()
    folders = [start]
    if stop in start.parents:
        folders += [p for p in start.parents if p == stop or stop in p.parents]
    return folders


def _python_version_file(path: Path) -> str:
    lines = [
        line.strip()
        for line in path.read_text().splitlines()
        if line.strip() and not line.startswith("#")
    ]
    found = (
        re.fullmatch(r"(?:cpython-|python)?(3\.\d+(?:\.\d+)?)(?:[-+].*)?", lines[0])
        if lines
        else None
    )
    if not found:
        raise UserError(
            f"{path}: {lines[0] if lines else 'empty'!r} is not a CPython version like 3.12"
        )
    return found.group(1)


def _requires_python(pyproject: Path) -> SpecifierSet | None:
    try:
        text = tomllib.loads(pyproject.read_text()).get("project", {}).get("requires-python")
    except tomllib.TOMLDecodeError as exc:
        raise UserError(f"{pyproject}: not valid TOML: {exc}") from None
    if not text:
        return None
    try:
        return SpecifierSet(text)
    except InvalidSpecifier:
        raise UserError(
            f"{pyproject}: requires-python {text!r} is not a version specifier"
        ) from None


def _lowest_installed(wanted: SpecifierSet, pyproject: Path) -> str:
    """The lowest CPython minor version installed here that `requires-python` allows (the
    command's build of it when that one is allowed, else an exact allowed release)."""

    def allows(version: str) -> bool:
        return wanted.contains(version, prereleases=True)

    possible = [f"3.{m}" for m in CPYTHON_MINORS if _allows(wanted, f"3.{m}")]
    if not possible:
        raise UserError(
            f"{pyproject}: requires-python {str(wanted)!r} allows no CPython "
            f"3.{CPYTHON_MINORS[0]}–3.{CPYTHON_MINORS[-1]}"
        )
    for minor in possible:
        builds = [b for b in interpreters.find_installed(minor) if allows(b.version)]
        if builds:
            preferred = interpreters.find_installed(minor)[0]
            return minor if allows(preferred.version) else builds[0].version
    if any(allows(b.version) for b in interpreters.install_missing(possible[0])):
        return possible[0]  # BENCHWATCH_INSTALL_PYTHON=1 (the reusable workflows)
    raise UserError(
        f"{pyproject}: requires-python {str(wanted)!r}: no such Python is installed here: install one "
        f"with `uv python install {possible[0]}`, then run again"
    )
