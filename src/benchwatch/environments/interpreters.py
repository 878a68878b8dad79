"""The Python interpreters on this machine, named by their build, and the one a command uses.

Two CPython builds of one version (Debian's 3.11.2 and pyenv's 3.11.7, say) are two different
servers: their instruction counts and timings differ by several percent, so an environment is
keyed by the interpreter it was built on (`Interpreter.identity`), and a command chooses one
interpreter per requested version, once, and says which (`choose`).

Where interpreters are looked for, in this order: `BENCHWATCH_PYTHONS` (a `:`-separated list of
executables: only these), else uv's own Python installs, pyenv's versions folder, GitHub's tool
cache and every folder on PATH (pyenv's shims are not interpreters and are skipped). Among the
builds of a requested version the newest patch release wins, then one that carries a symbol
table (function names in the counts' tables), then the order above.

A version that is not installed is one error naming `uv python install X`, unless
`BENCHWATCH_INSTALL_PYTHON=1` (the reusable workflows set it: a runner holds only its own
Pythons), which installs it with uv and goes on (`install_missing`).
"""

from __future__ import annotations

import glob
import hashlib
import json
import os
import re
import struct
import subprocess
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from benchwatch.errors import UserError

__all__ = ["Interpreter", "choose", "find_installed", "installed", "parse_spec", "reset"]

SPEC = re.compile(r"^3\.(\d+)(?:\.(\d+))?$")
_NAME = re.compile(r"^python3(?:\.\d+)?$")
_QUERY = r"""
import json, os, platform, sys, sysconfig
maps = []
try:
    with open("/proc/self/maps") as f:
        maps = [line.split()[-1] for line in f if "/libpython" in line]
except OSError:
    pass
print(json.dumps({
    "version": platform.python_version(),
    "implementation": sys.implementation.name,
    "executable": os.path.realpath(sys.executable),
    "sys_version": sys.version,
    "libpython": maps[0] if maps else None,
    "free_threaded": bool(sysconfig.get_config_var("Py_GIL_DISABLED")),
    "config_args": sysconfig.get_config_var("CONFIG_ARGS") or "",
    "markers": {
        "implementation_name": sys.implementation.name,
        "implementation_version": platform.python_version(),
        "os_name": os.name,
        "platform_machine": platform.machine(),
        "platform_python_implementation": platform.python_implementation(),
        "platform_release": platform.release(),
        "platform_system": platform.system(),
        "platform_version": platform.version(),
        "python_full_version": platform.python_version(),
        "python_version": ".".join(platform.python_version_tuple()[:2]),
        "sys_platform": sys.platform,
    },
}))
"""


@dataclass(frozen=True)
class Interpreter:
    path: Path  # the executable, symlinks resolved
    version: str  # "3.11.7"
    implementation: str  # "cpython"
    build: str  # a digest of the executable and its libpython: two builds never share one
    symbols: bool  # the interpreter's code carries a symbol table (static functions have names)
    libpython: Path | None = None  # the shared library the executable loads, if any
    free_threaded: bool = False
    markers: tuple[tuple[str, str], ...] = ()  # PEP 508 marker values of this interpreter
    # "PGO+LTO", "PGO", "LTO" when its ./configure asked for them; "" says nothing (a distribution
    # may optimize through its own build rules: Debian's CONFIG_ARGS do not show it)
    optimizations: str = ""

    @property
    def minor(self) -> str:
        return ".".join(self.version.split(".")[:2])

    @property
    def label(self) -> str:
        name = {"cpython": "CPython"}.get(self.implementation, self.implementation)
        return f"{name} {self.version}{' (free-threaded)' if self.free_threaded else ''}"

    def identity(self) -> dict[str, str]:
        """What an environment built on this interpreter is keyed by."""
        return {
            "implementation": self.implementation,
            "version": self.version,
            "build": self.build,
            "path": str(self.path),
        }

    def describe(self) -> str:
        facts = (
            [f"build {self.build}"]
            + ([f"configured with {self.optimizations}"] if self.optimizations else [])
            + ([] if self.symbols else ["no symbol table"])
        )
        return f"{self.label} at {self.path} ({', '.join(facts)})"

    def marker_environment(self) -> dict[str, str]:
        return dict(self.markers)


def parse_spec(spec: str) -> tuple[int, int | None]:
    """`3.12` → (12, None), `3.12.1` → (12, 1); anything else is bad input."""
    found = SPEC.fullmatch(spec.strip())
    if not found:
        raise UserError(f"python {spec!r}: give a CPython version like 3.12 or 3.12.1")
    return int(found.group(1)), int(found.group(2)) if found.group(2) is not None else None


def _matches(interpreter: Interpreter, spec: str) -> bool:
    minor, patch = parse_spec(spec)
    parts = [int(p) for p in re.findall(r"\d+", interpreter.version)[:3]]
    return parts[:2] == [3, minor] and (patch is None or parts[2:3] == [patch])


def _candidates() -> Iterator[Path]:
    """Executables that may be interpreters, in the order of preference (see the module's doc)."""
    listed = os.environ.get("BENCHWATCH_PYTHONS")
    if listed:
        yield from (Path(p) for p in listed.split(":") if p)
        return
    uv_dir = os.environ.get("UV_PYTHON_INSTALL_DIR") or str(
        Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share") / "uv" / "python"
    )
    yield from (Path(p) for p in sorted(glob.glob(f"{uv_dir}/cpython-*/bin/python3.*")))
    pyenv = os.environ.get("PYENV_ROOT") or str(Path.home() / ".pyenv")
    yield from (Path(p) for p in sorted(glob.glob(f"{pyenv}/versions/*/bin/python3.*")))
    tool_cache = os.environ.get("RUNNER_TOOL_CACHE")
    if tool_cache:
        yield from (Path(p) for p in sorted(glob.glob(f"{tool_cache}/Python/*/*/bin/python3*")))
    for folder in os.environ.get("PATH", "").split(os.pathsep):
        if not folder or Path(folder).name == "shims":
            continue
        yield from (Path(p) for p in sorted(glob.glob(f"{folder}/python3*")))


def _executables(paths: Iterable[Path]) -> list[Path]:
    seen: set[Path] = set()
    found: list[Path] = []
    for path in paths:
        if not _NAME.fullmatch(path.name) or not os.access(path, os.X_OK) or path.is_dir():
            continue
        real = path.resolve()
        if real in seen or not real.is_file():
            continue
        seen.add(real)
        found.append(real)
    return found


_known: dict[Path, Interpreter | None] = {}


def _inspect(executable: Path) -> Interpreter | None:
    if executable in _known:
        return _known[executable]
    try:
        done = subprocess.run(
            [str(executable), "-I", "-S", "-c", _QUERY], capture_output=True, text=True, timeout=20
        )
        facts = json.loads(done.stdout) if done.returncode == 0 else None
    except (OSError, subprocess.TimeoutExpired, ValueError):
        facts = None
    found = None
    if facts:
        library = Path(facts["libpython"]) if facts.get("libpython") else None
        code = library or executable
        found = Interpreter(
            path=executable,
            version=facts["version"],
            implementation=facts["implementation"],
            build=_digest([executable, *([library] if library else [])]),
            symbols=has_symbol_table(code),
            libpython=library,
            free_threaded=facts["free_threaded"],
            markers=tuple(sorted(facts["markers"].items())),
            optimizations=_optimizations(facts.get("config_args", "")),
        )
    _known[executable] = found
    return found


def _optimizations(config_args: str) -> str:
    """What ./configure was asked to optimize: profile-guided and link-time optimization change a
    build's instructions per request by several percent, so the fingerprint says which it has."""
    flags = [
        name
        for flag, name in (("--enable-optimizations", "PGO"), ("--with-lto", "LTO"))
        if flag in config_args
    ]
    return "+".join(flags)


def _digest(files: list[Path]) -> str:
    digest = hashlib.sha256()
    for path in files:
        with open(path, "rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
    return digest.hexdigest()[:12]


def has_symbol_table(path: Path) -> bool:
    """Whether an ELF file keeps its `.symtab` (a stripped one has only the exported `.dynsym`)."""
    try:
        with open(path, "rb") as handle:
            header = handle.read(64)
            if header[:4] != b"\x7fELF" or header[4] != 2:  # 64-bit ELF only
                return False
            order = "<" if header[5] == 1 else ">"
            (shoff,) = struct.unpack_from(order + "Q", header, 0x28)
            shentsize, shnum, shstrndx = struct.unpack_from(order + "HHH", header, 0x3A)
            handle.seek(shoff)
            table = handle.read(shentsize * shnum)
            types = [
                struct.unpack_from(order + "I", table, i * shentsize + 4)[0] for i in range(shnum)
            ]
            return 2 in types  # SHT_SYMTAB
    except (OSError, struct.error, IndexError):
        return False


def installed(minor: int | None = None) -> list[Interpreter]:
    """Every interpreter found (of 3.`minor` only, when given; an executable named for another
    version is not even asked), in the order of preference of `_candidates`."""
    paths = [
        p
        for p in _executables(_candidates())
        if minor is None or p.name in ("python3", f"python3.{minor}")
    ]
    return [i for i in (_inspect(p) for p in paths) if i is not None]


def find_installed(spec: str) -> list[Interpreter]:
    """The CPython builds of `spec` (3.12 or 3.12.1) on this machine, the preferred first."""
    minor, _ = parse_spec(spec)
    wanted = [
        i
        for i in installed(minor)
        if i.implementation == "cpython" and not i.free_threaded and _matches(i, spec)
    ]

    def rank(item: tuple[int, Interpreter]) -> tuple:
        order, interpreter = item
        patch = [int(p) for p in re.findall(r"\d+", interpreter.version)[:3]]
        return (-patch[2] if len(patch) > 2 else 0, not interpreter.symbols, order)

    return [i for _, i in sorted(enumerate(wanted), key=rank)]


_chosen: dict[str, Interpreter] = {}


def choose(spec: str, *, say: bool = True) -> Interpreter:
    """The interpreter of `spec` for this command: chosen once, the same for every stack and side
    that asks for this version, and printed the first time. Missing: one error naming the install."""
    key = spec.strip()
    if key in _chosen:
        return _chosen[key]
    found = find_installed(key) or install_missing(key)
    if not found:
        looked = (
            "BENCHWATCH_PYTHONS"
            if os.environ.get("BENCHWATCH_PYTHONS")
            else "uv's Python installs, pyenv's versions, PATH"
        )
        raise UserError(
            f"Python {key} is not installed here (looked in {looked}): install it with "
            f"`uv python install {key}`, then run again"
        )
    _chosen[key] = found[0]
    if say:
        others = (
            f"; also found {', '.join(str(i.path) for i in found[1:])}" if len(found) > 1 else ""
        )
        print(f"python {key}: {found[0].describe()}{others}", file=sys.stderr, flush=True)
    return found[0]


def reset() -> None:
    """Forget the choices and the inspected interpreters (tests; a long-lived process)."""
    _chosen.clear()
    _known.clear()


INSTALL_ENV = "BENCHWATCH_INSTALL_PYTHON"


def install_missing(spec: str) -> list[Interpreter]:
    """With BENCHWATCH_INSTALL_PYTHON=1: `uv python install SPEC` (uv's own folder, where
    `find_installed` looks first) and the builds of SPEC found then; otherwise none, and the caller
    names the install command."""
    if os.environ.get(INSTALL_ENV) != "1":
        return []
    from benchwatch.environments.uv_tool import uv_environ, uv_executable

    print(
        f"python {spec}: not installed here; {INSTALL_ENV}=1: uv python install {spec}",
        file=sys.stderr,
        flush=True,
    )
    try:
        done = subprocess.run(
            [uv_executable(), "python", "install", spec],
            capture_output=True,
            text=True,
            timeout=900,
            env=uv_environ(may_download=True),
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise UserError(f"uv python install {spec} failed ({exc})") from None
    if done.returncode != 0:
        raise UserError(
            f"uv python install {spec} failed: {(done.stderr or done.stdout).strip()[-300:]}"
        )
    return find_installed(spec)
