"""Finding a FastAPI app in a repository, and what it reads from its environment."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from benchwatch.errors import UserError

SKIPPED_FOLDERS = {
    ".git",
    ".venv",
    "venv",
    "env",
    "node_modules",
    "site-packages",
    "__pycache__",
    "build",
    "dist",
    ".tox",
    ".nox",
    "tests",
    "test",
    ".benchwatch",
    "benchwatch",
}
_ASSIGNED = re.compile(r"^([A-Za-z_]\w*)\s*(?::[^=\n]*)?=\s*(?:fastapi\.)?FastAPI\(", re.M)
_IMPORT_STRING = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_]\w*$")
_ENV_READ = re.compile(
    r"""(?:os\.environ\.get|os\.getenv|os\.environ\[)\(?\s*["']([A-Z][A-Z0-9_]*)["']"""
)
NAME_IT = "name it: benchwatch init package.module:app"


@dataclass(frozen=True)
class FoundApp:
    import_string: str  # as uvicorn takes it, from `import_root`
    import_root: Path  # relative to the repository root: "." or "src"
    source: Path


_IMPORTS = re.compile(r"^\s*(?:from|import)\s+([A-Za-z_]\w*)", re.M)


def _module_of(relative: Path, text: str = "", scanned: Path | None = None) -> tuple[str, Path]:
    """The module name and the folder it is imported from (relative to the scanned folder): the
    nearest folder above the file holding a top-level package the file imports (`backend/` for
    backend/app/main.py doing `from app.api import …`), else the scanned folder, or its `src/`."""
    parts = list(relative.with_suffix("").parts)
    root = Path()
    own = set(_IMPORTS.findall(text)) if scanned is not None else set()
    for depth in range(len(parts) - 1, 0, -1):
        folder = scanned / Path(*parts[:depth]) if scanned is not None else None
        if folder is not None and any(
            (folder / n).is_dir() or (folder / f"{n}.py").is_file() for n in own
        ):
            return ".".join(parts[depth:]).removesuffix(".__init__"), Path(*parts[:depth])
    if parts[0] == "src" and len(parts) > 1:
        parts, root = parts[1:], Path("src")
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts), root


def candidates(root: Path) -> list[FoundApp]:
    found = []
    for path in sorted(root.rglob("*.py")):
        relative = path.relative_to(root)
        if any(part in SKIPPED_FOLDERS or part.startswith(".") for part in relative.parts[:-1]):
            continue
        try:
            text = path.read_text(errors="replace")
        except OSError:
            continue
        module, import_root = _module_of(relative, text, root)
        if not module or not all(p.isidentifier() for p in module.split(".")):
            continue
        for match in _ASSIGNED.finditer(text):
            found.append(FoundApp(f"{module}:{match.group(1)}", import_root, path))
    return found


def find_app(root: Path, given: str | None) -> FoundApp:
    if given is not None:
        if not _IMPORT_STRING.fullmatch(given):
            raise UserError(f"{given!r} is not an import string like package.module:app; {NAME_IT}")
        module = given.split(":")[0].replace(".", "/")
        for import_root in (Path(), Path("src")):
            for candidate in (
                root / import_root / f"{module}.py",
                root / import_root / module / "__init__.py",
            ):
                if candidate.is_file():
                    return FoundApp(given, import_root, candidate)
        raise UserError(f"{given}: no module {module}.py under {root} (or its src/); {NAME_IT}")
    found = candidates(root)
    if not found:
        raise UserError(f"no FastAPI app found under {root} (no `app = FastAPI(...)`); {NAME_IT}")
    if len(found) > 1:
        names = ", ".join(f.import_string for f in found)
        raise UserError(
            f"several FastAPI apps under {root}: {names}; name one: benchwatch init {found[0].import_string}"
        )
    return found[0]


def env_names(app: FoundApp) -> list[str]:
    """Environment variables the app's module (and its package) reads: settings init cannot guess."""
    files = [app.source] + sorted(app.source.parent.glob("*.py"))
    names: set[str] = set()
    for path in dict.fromkeys(files):
        names.update(_ENV_READ.findall(path.read_text(errors="replace")))
    return sorted(names)
