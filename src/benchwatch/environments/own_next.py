"""An app's own resolution with the watched packages moved to their newest releases (`<app>@own-next`).

From the app's `uv.lock` (or a requirements file of exact pins), in a temporary copy of its
project: the watched packages' own specifiers in `dependencies` relaxed, `name>=newest` added to
`[tool.uv] constraint-dependencies` for each watched package the lock holds older than the index's
newest release, then `uv lock --upgrade-package <each watched>` (every other package keeps its
locked version: the lock is uv's preference) and `uv export --frozen`. A newest release that
cannot be resolved with the team's other pins is held back (its constraint dropped, the package
moved as far as the rest allows) and reported with uv's reason in one line. The index is uv's own
(`UV_DEFAULT_INDEX`, `UV_FIND_LINKS`, …), the same the environment is then installed from."""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import subprocess
import tempfile
import time
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from packaging.requirements import InvalidRequirement, Requirement

from benchwatch.declarations.stacks import Stack, normalize_package
from benchwatch.environments import interpreters, own_requirements
from benchwatch.environments.uv_tool import uv_environ, uv_executable
from benchwatch.errors import UserError
from benchwatch.whole_files import write_text_whole

__all__ = ["OWN_NEXT_STACK", "Held", "MovedLock", "is_own_next", "move", "only_moving"]

OWN_NEXT_STACK = "own-next"
_REASON_CHARS = 400


@dataclass(frozen=True)
class Held:
    """A watched package whose newest release the team's other pins do not allow."""

    name: str
    locked: str
    newest: str
    reached: str | None  # where it could move to instead (None: not in the moved lock)
    reason: str

    def line(self) -> str:
        reached = (
            "" if self.reached in (None, self.locked) else f"; moved to {self.reached} instead"
        )
        return (
            f"{self.name} {self.newest} cannot be resolved with your other pins "
            f"(your lock holds {self.locked}{reached}): {self.reason}"
        )


@dataclass(frozen=True)
class MovedLock:
    requirements: Path  # exact pins, as own_requirements.export writes them
    locked: dict[str, str]
    moved: dict[str, str]
    newest: dict[str, str]  # the watched packages' newest releases on the index
    held: tuple[Held, ...] = ()
    seconds: float = 0.0
    not_locked: tuple[str, ...] = field(default=())  # watched names the app does not depend on

    def changes(self) -> dict[str, tuple[str | None, str | None]]:
        """Every package whose version differs between the lock and the moved lock."""
        names = sorted(set(self.locked) | set(self.moved))
        return {
            n: (self.locked.get(n), self.moved.get(n))
            for n in names
            if self.locked.get(n) != self.moved.get(n)
        }

    def as_json(self) -> dict:
        return {
            "newest": self.newest,
            "changes": {n: {"locked": a, "moved": b} for n, (a, b) in self.changes().items()},
            "held": [h.__dict__ for h in self.held],
            "not_locked": list(self.not_locked),
            "seconds": round(self.seconds, 1),
        }


_MEMO: dict[str, MovedLock] = {}


def is_own_next(name: str) -> bool:
    """`own-next`, or `own-next+PACKAGE`: the lock with only that package moved (and what it needs),
    one step of an attribution by package."""
    return name == OWN_NEXT_STACK or name.startswith(f"{OWN_NEXT_STACK}+")


def only_moving(name: str) -> str | None:
    """The one package `own-next+PACKAGE` moves; None for `own-next` (every watched one)."""
    _, plus, package = name.partition("+")
    return normalize_package(package) if plus and package else None


def stack_from(own: Stack, name: str = OWN_NEXT_STACK) -> Stack:
    """The stack `own-next` (or `own-next+PACKAGE`) beside an app's `own`: installed from the moved
    requirements file (resolved only when an environment asks for it), so it pins nothing itself."""
    only = only_moving(name)
    moved = (
        f"{only} at its newest release" if only else "the watched packages at their newest releases"
    )
    update = {"name": name, "pins": {}, "description": f"{own.description}, {moved}"}
    return own.model_copy(update=update)


def move(
    declared: Path, watched: Sequence[str], pre: bool, cache: Path, python: str | None = None
) -> MovedLock:
    """The moved resolution of an app's declared `uv.lock` / `pyproject.toml` / requirements file
    (once per process for the same inputs: the environment's key and its build both ask)."""
    key = json.dumps([str(declared.resolve()), sorted(watched), pre, python])
    if key not in _MEMO:
        _MEMO[key] = _move(declared, [normalize_package(w) for w in watched], pre, cache, python)
    return _MEMO[key]


def _move(
    declared: Path, watched: list[str], pre: bool, cache: Path, python: str | None
) -> MovedLock:
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="benchwatch-own-next-") as scratch:
        work = Path(scratch) / "project"
        work.mkdir()
        document, original_lock = _project_copy(declared, work, python)
        floor = _python_floor(document)
        interpreter = str(interpreters.choose(python or floor, say=False).path)
        locked = _lock_versions(original_lock) if original_lock else {}
        if not original_lock:  # a requirements file: its pins are the lock
            failed = _lock(work, [], document, (), interpreter)
            if failed is not None:
                raise UserError(f"{declared}: its pins do not resolve with uv lock: {failed}")
            locked = _lock_versions((work / "uv.lock").read_text())
            original_lock = (work / "uv.lock").read_text()
        in_lock = [w for w in watched if w in locked]
        newest = _newest(in_lock, pre, floor)
        wanted = [w for w in in_lock if newest.get(w) and newest[w] != locked[w]]

        def attempt(constraints: list[str]) -> str | None:
            (work / "uv.lock").write_text(original_lock)
            return _lock(
                work, [f"{w}>={newest[w]}" for w in constraints], document, in_lock, interpreter
            )

        accepted, reasons = list(wanted), {}
        if wanted and attempt(accepted) is not None:
            accepted = []
            for name in wanted:  # one at a time: the ones the other pins allow stay
                reason = attempt([*accepted, name])
                if reason is None:
                    accepted.append(name)
                else:
                    reasons[name] = reason
            failed = attempt(accepted)
            if failed is not None:
                raise UserError(f"{declared}: uv lock failed on the moved copy: {failed}")
        elif not wanted:
            attempt([])
        moved = _lock_versions((work / "uv.lock").read_text())
        exported = _with_files_named(own_requirements.export(work / "uv.lock", cache), work)
    held = tuple(
        Held(n, locked[n], newest[n], moved.get(n), reasons[n]) for n in wanted if n in reasons
    )
    return MovedLock(
        requirements=exported,
        locked=locked,
        moved=moved,
        newest={n: newest[n] for n in in_lock if n in newest},
        held=held,
        seconds=time.monotonic() - started,
        not_locked=tuple(w for w in watched if w not in locked),
    )


def _with_files_named(exported: Path, work: Path) -> Path:
    """The exported pins headed by the moved lock's digest: the lock names each file's index and
    hash, so the same version served as another file (another index, a private mirror's own
    build) is another environment, not the one already built for that version."""
    files = hashlib.sha256((work / "uv.lock").read_bytes()).hexdigest()[:16]
    target = exported.with_name(f"{exported.stem}-own-next.txt")
    if not target.is_file():
        header = f"# own-next: the moved uv.lock {files} (its files' indexes and hashes)\n"
        write_text_whole(target, header + exported.read_text())
    return target


def _project_copy(declared: Path, work: Path, python: str | None) -> tuple[dict, str | None]:
    """The project's pyproject.toml as a document (a requirements file: a made-up project whose
    dependencies are its pins) and the original lock's text (None for a requirements file)."""
    if declared.name in own_requirements.LOCK_FILES:
        project = declared.parent
        own_requirements.export(declared, work.parent / "check")  # its errors, named for the user
        for extra in (".python-version",):
            if (project / extra).is_file():
                shutil.copy(project / extra, work / extra)
        try:
            document = tomllib.loads((project / "pyproject.toml").read_text())
        except tomllib.TOMLDecodeError as exc:
            raise UserError(f"{project / 'pyproject.toml'}: not valid TOML: {exc}") from None
        if document.get("tool", {}).get("uv", {}).get("workspace") or document.get("tool", {}).get(
            "uv", {}
        ).get("sources"):
            raise UserError(
                f"{project / 'pyproject.toml'}: own-next moves a single project's lock; "
                "a uv workspace or [tool.uv.sources] is not supported yet"
            )
        return document, (project / "uv.lock").read_text()
    pins = own_requirements.parse(declared.read_text(), declared)
    lines = [f"{p.name}=={p.version}" + (f" ; {p.marker}" if p.marker else "") for p in pins]
    floor = f">={python}" if python else ">=3.8"
    document = {
        "project": {
            "name": "benchwatch-own-next",
            "version": "0",
            "requires-python": floor,
            "dependencies": lines,
        },
        "tool": {"uv": {"package": False}},
    }
    return document, None


def _relaxed(document: dict, watched: Sequence[str], constraints: list[str]) -> dict:
    """The document with the watched packages' specifiers dropped from the dependencies and
    from the team's constraints, `constraints` added to `[tool.uv] constraint-dependencies`, and
    the watched packages exempt from the project's `exclude-newer` date (if it sets one)."""

    def relax(text: str) -> str | None:
        try:
            requirement = Requirement(text)
        except InvalidRequirement:
            return text
        if normalize_package(requirement.name) not in watched:
            return text
        requirement.specifier = type(requirement.specifier)()
        return str(requirement)

    project = dict(document.get("project", {}))
    project["dependencies"] = [relax(d) for d in project.get("dependencies", [])]
    tool = dict(document.get("tool", {}))
    uv = dict(tool.get("uv", {}))
    theirs = [
        c
        for c in uv.get("constraint-dependencies", [])
        if normalize_package(Requirement(c).name) not in watched
    ]
    uv["constraint-dependencies"] = theirs + constraints
    if uv.get("exclude-newer"):  # the team's cut-off date would hide tonight's releases
        exempt = dict(uv.get("exclude-newer-package") or {})
        uv["exclude-newer-package"] = {**exempt, **dict.fromkeys(watched, False)}
    tool["uv"] = uv
    return {**document, "project": project, "tool": tool}


def _lock(
    work: Path, constraints: list[str], document: dict, watched: Sequence[str], python: str
) -> str | None:
    """`uv lock` of the copy with the watched packages free to move; None, or uv's reason."""
    (work / "pyproject.toml").write_text(_toml(_relaxed(document, watched, constraints)))
    argv = [uv_executable(), "lock", "--quiet", "--directory", str(work), "--python", python]
    for name in watched:
        argv += ["--upgrade-package", name]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=600, env=uv_environ())
    return None if done.returncode == 0 else _reason(done.stderr)


def _reason(stderr: str) -> str:
    """uv's explanation in one line: from its first `Because …` to the end of that sentence."""
    text = " ".join(line.strip(" ╰─▶×│") for line in stderr.splitlines() if line.strip())
    text = re.sub(r"\s+", " ", text)
    found = re.search(r"Because .*?(?:, we can conclude|$)", text)
    reason = found.group(0).removesuffix(", we can conclude") if found else text
    return reason[:_REASON_CHARS]


def _newest(names: Sequence[str], pre: bool, python: str) -> dict[str, str]:
    """The newest release of each name on uv's index that installs on `python` (no dependency
    resolved: each on its own)."""
    if not names:
        return {}
    argv = [uv_executable(), "pip", "compile", "-", "--no-deps", "--universal", "--quiet"]
    argv += ["--no-header", "--no-annotate", "--python-version", python]
    argv += ["--prerelease", "allow" if pre else "if-necessary-or-explicit"]
    done = subprocess.run(
        argv, input="\n".join(names), capture_output=True, text=True, timeout=300, env=uv_environ()
    )
    if done.returncode != 0:
        raise UserError(
            f"cannot find the newest releases of {', '.join(names)}: {_reason(done.stderr)}"
        )
    pins = own_requirements.parse(done.stdout, Path("uv pip compile"))
    return {normalize_package(p.name): p.version for p in pins}


def _python_floor(document: dict) -> str:
    """The lowest Python minor the project's `requires-python` allows (3.8 when it says none)."""
    wanted = document.get("project", {}).get("requires-python") or ">=3.8"
    found = re.search(r">=?\s*(3\.\d+)", wanted)
    return found.group(1) if found else "3.8"


def _lock_versions(text: str) -> dict[str, str]:
    packages = tomllib.loads(text).get("package", [])
    return {
        normalize_package(p["name"]): p["version"]
        for p in packages
        if "version" in p
        and p.get("source", {}).get("virtual") is None
        and p.get("source", {}).get("editable") is None
    }


def _toml(document: dict, prefix: str = "") -> str:
    """A small TOML writer for a pyproject document: tables, strings, numbers, booleans, arrays and
    inline tables (keys and strings quoted as JSON, which TOML reads as basic strings)."""
    plain, tables = [], []
    for key, value in document.items():
        if isinstance(value, dict):
            tables.append((key, value))
        else:
            plain.append(f"{json.dumps(key)} = {_value(value)}")
    out = [f"[{prefix}]"] if prefix and plain else []
    out += plain
    text = "\n".join(out) + ("\n" if out else "")
    for key, value in tables:
        name = f"{prefix}.{json.dumps(key)}" if prefix else json.dumps(key)
        text += _toml(value, name)
    return text


def _value(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float, str)):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, list):
        return "[" + ", ".join(_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{json.dumps(k)} = {_value(v)}" for k, v in value.items()) + "}"
    raise UserError(f"pyproject.toml: a value benchwatch cannot copy: {value!r}")
