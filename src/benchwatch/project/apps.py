"""An app of the project: its declaration and the directory it was found in, and for an app that
pins its own requirements, the stack they make and the requirements file they are installed from."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from benchwatch.declarations.apps import AppDeclaration
from benchwatch.declarations.stacks import Stack
from benchwatch.environments import own_next, own_requirements
from benchwatch.errors import UserError
from benchwatch.project.files import APP_FILE, explain, read_toml

OWN_REQUIREMENTS_STACK = "own"
OWN_NEXT_STACK = own_next.OWN_NEXT_STACK  # the app's lock, the watched packages moved to the newest
OWN_STACKS = (OWN_REQUIREMENTS_STACK, OWN_NEXT_STACK)


@dataclass(frozen=True)
class App:
    declaration: AppDeclaration
    directory: Path

    @property
    def name(self) -> str:
        return self.declaration.name

    @property
    def root(self) -> Path:
        return (self.directory / self.declaration.root).resolve()

    def file(self, relative: str) -> Path:
        return self.directory / relative


def load_app(directory: Path) -> App:
    path = directory / APP_FILE
    try:
        declaration = AppDeclaration(**read_toml(path))
    except ValidationError as exc:
        raise explain(path, exc) from None
    app = App(declaration=declaration, directory=directory.resolve())
    for endpoint in declaration.endpoints:
        for relative in (endpoint.body_file, endpoint.expect.json_file):
            if relative and not app.file(relative).is_file():
                raise UserError(f"{path}: endpoints.{endpoint.name}: file {relative!r} not found")
    for request in declaration.setup.requests if declaration.setup else []:
        if request.body_file and not app.file(request.body_file).is_file():
            raise UserError(
                f"{path}: setup.requests.{request.name}: file {request.body_file!r} not found"
            )
    if declaration.requirements and not app.file(declaration.requirements).is_file():
        raise UserError(f"{path}: requirements file {declaration.requirements!r} not found")
    return app


def own_stack(app: App, stop: Path | None = None) -> tuple[Stack, Path]:
    """The stack of an app's own requirements, and the requirements file of exact pins they are
    installed from (the declared file, or what uv exports of a declared `uv.lock` /
    `pyproject.toml`: own_requirements.exported). The stack holds the pins that hold everywhere
    (the ones behind an environment marker are checked against the interpreter once it is chosen,
    envs._check_pins), on the Python the app asks for (its declaration, `.python-version` or
    `requires-python`, looked up from its root to `stop`, the repository root)."""
    declared = app.file(app.declaration.requirements or "")
    lock = declared if declared.name in own_requirements.LOCK_FILES else None
    if app.declaration.python:  # before the lock is exported
        own_requirements.check_python(
            app.declaration.python,
            f"{app.directory / APP_FILE}: python = {app.declaration.python!r}",
            app.root,
            stop or app.root,
            lock,
        )
    requirements_file = own_requirements.exported(declared)
    pins = {
        p.name: p.version
        for p in own_requirements.parse(requirements_file.read_text(), declared)
        if p.marker is None
    }
    python = app.declaration.python or own_requirements.python_of(app.root, stop or app.root, lock)
    stack = Stack(
        name=OWN_REQUIREMENTS_STACK,
        description=f"pinned by {declared.name}",
        pins=pins,
        **({"python": python} if python else {}),
    )
    return stack, requirements_file


def is_own_stack(name: str) -> bool:
    """`own`, `own-next` or `own-next+PACKAGE`: made from an app's own requirements."""
    return name == OWN_REQUIREMENTS_STACK or own_next.is_own_next(name)
