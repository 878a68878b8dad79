"""A project read from its files: benchwatch.toml's settings and questions, the stacks, the apps,
each checked against the others."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import ValidationError

from benchwatch.declarations.project_file import ProjectSettings, Question
from benchwatch.errors import UserError
from benchwatch.project.apps import App, load_app
from benchwatch.project.files import APP_FILE, PROJECT_FILE, explain, find_root, read_toml
from benchwatch.project.stacks import load_stacks
from benchwatch.project.variants import Project


def load_project(root: Path | None = None) -> Project:
    root = root or find_root()
    path = root / PROJECT_FILE
    document = read_toml(path)
    unknown = sorted(set(document) - {"benchwatch", "questions"})
    if unknown:
        raise UserError(f"{path}: unknown table {unknown[0]!r}; known: [benchwatch], [[questions]]")
    try:
        settings = ProjectSettings(**document.get("benchwatch", {}))
    except ValidationError as exc:
        raise explain(path, exc, "benchwatch") from None
    questions = _questions_in(path, document.get("questions", []))
    stacks = load_stacks(root)
    for name in (settings.default_stacks or []) + [settings.reference_stack or ""]:
        if name and name not in stacks:
            raise UserError(
                f"{path}: benchwatch: unknown stack {name!r}; known: {', '.join(stacks)}"
            )
    apps: list[App] = []
    for relative in settings.apps:
        directory = root / relative
        if not (directory / APP_FILE).is_file():
            raise UserError(f"{path}: benchwatch.apps: {relative!r} has no {APP_FILE}")
        app = load_app(directory)
        for stack_name in (app.declaration.stacks or []) + [
            s for f in app.declaration.flavors.values() for s in (f.stacks or [])
        ]:
            if stack_name not in stacks:
                raise UserError(f"{directory / APP_FILE}: stacks: unknown stack {stack_name!r}")
        apps.append(app)
    names = [a.name for a in apps]
    if len(set(names)) != len(names):
        raise UserError(f"{path}: two apps share a name: {sorted(names)}")
    project = Project(
        root=root, settings=settings, stacks=stacks, apps=tuple(apps), questions=questions
    )
    _check_lanes(path, project)
    return project


def _questions_in(path: Path, table: Any) -> tuple[Question, ...]:
    if not isinstance(table, list):
        raise UserError(f"{path}: questions: write each question as a [[questions]] table")
    questions = []
    for index, body in enumerate(table):
        try:
            questions.append(Question.model_validate(body))
        except ValidationError as exc:
            name = body.get("name") if isinstance(body, dict) else None
            raise explain(
                path, exc, f"questions[{index}]" + (f" ({name})" if name else "")
            ) from None
    names = [q.name for q in questions]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise UserError(f"{path}: questions: two questions are called {twice[0]!r}")
    return tuple(questions)


def _check_lanes(path: Path, project: Project) -> None:
    """Every lane names a declared variant (on any known stack) and endpoints it serves."""
    if not project.questions:
        return
    every = {v.id: v for v in project.variants(list(project.stacks))}
    for index, question in enumerate(project.questions):
        where = f"{path}: questions[{index}] ({question.name})"
        for lane in question.lanes:
            variant = every.get(lane.variant)
            if variant is None:
                raise UserError(
                    f"{where}: lane {lane.label!r}: {lane.variant!r} names no variant (see `benchwatch list`)"
                )
            served = [e.name for e in variant.endpoints]
            for name in question.lane_endpoints(lane):
                if name not in served:
                    raise UserError(
                        f"{where}: lane {lane.label!r}: {lane.variant} has no endpoint {name!r}; "
                        f"its endpoints: {', '.join(served)}"
                    )


def project_defaults(reference: str | None) -> tuple[str | None, tuple[str, ...]]:
    """(reference stack, stack order) of the project around the working directory, for
    commands that also work on files alone (report, site): none when there is no project;
    a project whose declarations are broken is an error, never silently ignored."""
    try:
        root = find_root()
    except UserError:
        return reference, ()
    project = load_project(root)
    return reference or project.reference_stack, tuple(project.stacks)
