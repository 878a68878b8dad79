"""uv environments per stack, cached by a hash of what goes in (the pins and the interpreter's
build), checked after install."""

from __future__ import annotations

import datetime as dt
import fcntl
import hashlib
import json
import shutil
import subprocess
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchwatch.declarations.stacks import Stack, normalize_package
from benchwatch.environments import interpreters, own_next, own_requirements
from benchwatch.environments.interpreters import Interpreter
from benchwatch.environments.uv_tool import cache_dir, uv_environ, uv_executable
from benchwatch.whole_files import write_text_whole

READY_MARKER = "benchwatch-env.json"
_LIST_VERSIONS = (
    "import importlib.metadata as m, json;"
    "print(json.dumps({d.metadata['Name']: d.version for d in m.distributions()}))"
)


class EnvError(Exception):
    """An environment could not be built or does not hold its pins."""


@dataclass(frozen=True)
class Env:
    stack_name: str
    path: Path
    versions: dict[str, str]
    interpreter: Interpreter | None = (
        None  # the build it was made on (None: built by a test's stand-in)
    )

    @property
    def python(self) -> Path:
        return self.path / "bin" / "python"

    def version(self, package: str) -> str | None:
        return self.versions.get(normalize_package(package))


def _recipe(
    stack: Stack, extras: Sequence[str], requirements_text: str | None, interpreter: Interpreter
) -> dict:
    recipe: dict = {
        "python": interpreter.identity(),
        "requirements": stack.requirements(),
        "extras": sorted(extras),
        "exclude_newer": str(stack.exclude_newer) if stack.exclude_newer else None,
        "own_requirements": requirements_text,
    }
    if stack.resolved_at_run_time:
        recipe["resolved_on"] = dt.date.today().isoformat()
    return recipe


def ensure(
    stack: Stack, extras: Sequence[str] = (), *, requirements_file: Path | None = None
) -> Env:
    """The stack's environment on the interpreter this command chose for its Python
    (`interpreters.choose`): built once per distinct recipe, reused after."""
    requirements_text = requirements_file.read_text() if requirements_file else None
    interpreter = interpreters.choose(stack.python)
    recipe = _recipe(stack, extras, requirements_text, interpreter)
    path = cache_dir() / f"{stack.name}-{digest(recipe)}"
    path.parent.mkdir(parents=True, exist_ok=True)
    with _locked(path.with_suffix(".lock")):
        marker = path / READY_MARKER
        if marker.is_file():
            try:
                versions = json.loads(marker.read_text())["versions"]
                return Env(stack.name, path, versions, interpreter)
            except (ValueError, KeyError):
                pass  # a damaged marker: rebuild below
        _build(path, stack, recipe, requirements_file, interpreter)
        versions = _installed_versions(path)
        _check_pins(stack, versions, path, _marked_pins(requirements_file, interpreter))
        write_text_whole(marker, json.dumps({"recipe": recipe, "versions": versions}, indent=1))
        return Env(stack.name, path, versions, interpreter)


@contextmanager
def _locked(lock_path: Path) -> Iterator[None]:
    with open(lock_path, "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def resolution_flags(stack: Stack) -> list[str]:
    """How uv may resolve a stack. A stack resolved at run time (the nightly's `next`) runs
    brand-new releases in a job whose cache scope main reads: pre-releases only where a
    requirement names one (the watched packages, pinned exactly by `releases --pin-next`), nothing
    published after this moment, and wheels only, so no package's build script runs."""
    cutoff = str(stack.exclude_newer) if stack.exclude_newer else None
    if own_next.is_own_next(stack.name):  # exact pins, some brand-new: no build script runs
        return ["--no-build"]
    if stack.resolved_at_run_time:
        now = dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        return ["--prerelease", "explicit", "--exclude-newer", cutoff or now, "--no-build"]
    return ["--exclude-newer", cutoff] if cutoff else []


def _build(
    path: Path, stack: Stack, recipe: dict, requirements_file: Path | None, interpreter: Interpreter
) -> None:
    shutil.rmtree(path, ignore_errors=True)
    uv = uv_executable()
    _uv([uv, "venv", "--quiet", "--python", str(interpreter.path), str(path)], stack)
    install = [
        uv,
        "pip",
        "install",
        "--quiet",
        "--compile-bytecode",
        "--python",
        str(path / "bin" / "python"),
    ]
    install += resolution_flags(stack)
    if requirements_file is not None:
        install += ["-r", str(requirements_file)]
    else:
        install += stack.requirements()
    install += list(recipe["extras"])
    try:
        _uv(install, stack)
    except EnvError:
        shutil.rmtree(path, ignore_errors=True)
        raise


def _uv(argv: list[str], stack: Stack) -> None:
    done = subprocess.run(argv, capture_output=True, text=True, timeout=900, env=uv_environ())
    if done.returncode != 0:
        tail = " | ".join(done.stderr.strip().splitlines()[-3:])
        raise EnvError(f"stack {stack.name}: `{' '.join(argv[1:3])}` failed: {tail}")


def _installed_versions(path: Path) -> dict[str, str]:
    done = subprocess.run(
        [str(path / "bin" / "python"), "-c", _LIST_VERSIONS], capture_output=True, text=True
    )
    if done.returncode != 0:
        raise EnvError(f"{path}: cannot list installed packages: {done.stderr.strip()[-300:]}")
    return {normalize_package(k): v for k, v in sorted(json.loads(done.stdout).items())}


def _marked_pins(requirements_file: Path | None, interpreter: Interpreter) -> dict[str, str]:
    """An own requirements file's pins behind environment markers that hold on this interpreter."""
    if requirements_file is None:
        return {}
    pins = own_requirements.parse(requirements_file.read_text(), requirements_file)
    return own_requirements.applying(
        [p for p in pins if p.marker], interpreter.marker_environment()
    )


def _check_pins(
    stack: Stack, versions: dict[str, str], path: Path, marked: dict[str, str] | None = None
) -> None:
    wanted_pins = {
        **stack.pinned_versions(),
        **{normalize_package(p): v for p, v in (marked or {}).items()},
    }
    wrong = [
        f"{package}=={wanted} (installed: {versions.get(package, 'nothing')})"
        for package, wanted in wanted_pins.items()
        if versions.get(package) != wanted
    ]
    if wrong:
        shutil.rmtree(path, ignore_errors=True)
        raise EnvError(f"stack {stack.name}: pins did not hold: {', '.join(wrong)}")


def prepare(
    variants: Sequence, extras: Sequence[str] = ()
) -> tuple[dict[str, Env], dict[str, str]]:
    """Build every environment the variants need once: ({env key: env}, {env key: error}),
    keyed by `Variant.env_key` (one per distinct recipe, never per stack name alone)."""
    ready: dict[str, Env] = {}
    failed: dict[str, str] = {}
    for variant in variants:
        key = variant.env_key
        if key in ready or key in failed:
            continue
        try:
            ready[key] = ensure(variant.stack, extras, requirements_file=variant.requirements_file)
        except EnvError as exc:
            failed[key] = str(exc)
    return ready, failed


def digest(data: Any) -> str:
    """A short, stable name for a recipe: the first 12 hex digits of its sorted JSON's SHA-256."""
    return hashlib.sha256(json.dumps(data, sort_keys=True, default=str).encode()).hexdigest()[:12]
