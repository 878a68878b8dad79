"""Declarations: the project file, the stacks, the apps and the variants derived from them."""

from __future__ import annotations

import fnmatch
import os
import tomllib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from benchwatch.declarations.apps import (
    WATCHED_PACKAGES,
    AppDeclaration,
    DeclarationError,
    Endpoint,
    Flavor,
    ProjectSettings,
    Question,
    Stack,
)
from benchwatch.environments import own_next, own_requirements
from benchwatch.environments.envs import digest
from benchwatch.environments.uv_tool import cache_dir
from benchwatch.errors import UserError

PROJECT_FILE = "benchwatch.toml"
STACKS_FILE = "stacks.toml"
DEFAULT_STACKS_FILE = "default_stacks.toml"
APP_FILE = "benchwatch-app.toml"
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

    @property
    def requirements_file(self) -> Path | None:
        """The app's own pins as a requirements file: the declared one, or what uv exports of the
        declared `uv.lock` / `pyproject.toml` (own_requirements.export)."""
        own = self.declaration.requirements
        if not own:
            return None
        return own_requirements.export(self.file(own), cache_dir().parent / "exports")


@dataclass(frozen=True)
class Variant:
    app: App
    flavor: str | None
    stack: Stack
    import_string: str
    endpoints: tuple[Endpoint, ...]
    quick_endpoints: tuple[Endpoint, ...]
    env: dict[str, str]
    watch: tuple[str, ...] = ()  # own-next: the packages moved, and whether to pre-releases
    watch_pre: bool = False

    @property
    def scenario(self) -> str:
        return self.app.name if self.flavor is None else f"{self.app.name}-{self.flavor}"

    @property
    def id(self) -> str:
        return f"{self.scenario}@{self.stack.name}"

    @property
    def env_key(self) -> str:
        """The environment this variant runs in, one per distinct recipe: the stack's name
        (`latest:py3.12` when the app asks for another Python), or for an app's own requirements
        `own:<app>:<digest of the file and Python>`, so two apps (or base and head of a compare)
        never share an environment by accident."""
        if self.requirements_file is not None:
            recipe = [self.requirements_file.read_text(), self.stack.python]
            return f"{OWN_REQUIREMENTS_STACK}:{self.app.name}:{digest(recipe)[:8]}"
        python = self.app.declaration.python
        return self.stack.name if python is None else f"{self.stack.name}:py{python}"

    @property
    def requirements_file(self) -> Path | None:
        if own_next.is_own_next(self.stack.name):
            declared = self.app.file(self.app.declaration.requirements or "")
            python, exports = self.stack.python, cache_dir().parent / "exports"
            return own_next.move(declared, self.watch, self.watch_pre, exports, python).requirements
        return self.app.requirements_file

    @property
    def ready_endpoint(self) -> str:
        """The path polled until the server answers: `ready_path`, else the first GET endpoint
        whose URL needs no value (no path parameter, no placeholder in its query), else `/`."""
        if self.app.declaration.ready_path:
            return self.app.declaration.ready_path
        plain = next((e for e in self.endpoints if e.method == "GET" and not e.path_params), None)
        if plain is None:
            return "/"
        query = plain.query if isinstance(plain.query, str) else ""
        return (
            f"{plain.path}?{query}"
            if query and "{" not in query and "$" not in query
            else plain.path
        )

    def selected_endpoints(self, quick: bool) -> tuple[Endpoint, ...]:
        return self.quick_endpoints if quick else self.endpoints

    def timed_endpoints(self, quick: bool) -> tuple[Endpoint, ...]:
        """Those the load tests send: the selected ones but an endpoint whose request holds
        `{unique}` (counted only: declarations.PER_REQUEST_WHY)."""
        return tuple(e for e in self.selected_endpoints(quick) if not e.per_request)


@dataclass(frozen=True)
class Project:
    root: Path
    settings: ProjectSettings
    stacks: dict[str, Stack]
    apps: tuple[App, ...]
    questions: tuple[Question, ...] = ()

    @property
    def default_stacks(self) -> list[str]:
        chosen = self.settings.default_stacks
        return (
            chosen
            if chosen is not None
            else [
                name
                for name, stack in self.stacks.items()
                if name != "next" and stack.extends is None
            ]
        )

    @property
    def reference_stack(self) -> str | None:
        """The stack report ratios are taken against; None (no ratios) unless benchwatch.toml names one."""
        return self.settings.reference_stack

    def variants(self, stacks: Sequence[str] | None = None) -> list[Variant]:
        allowed = list(stacks) if stacks is not None else self.default_stacks
        for name in allowed:
            if not (self.own_stacks and is_own_stack(name)):
                self.stack(name)
        return [
            v
            for app in self.apps
            for v in _variants_of(app, self.stacks, allowed, self.root, self.settings)
        ]

    @property
    def own_stacks(self) -> tuple[str, ...]:
        """`own` and `own-next` when an app declares its own requirements, else none."""
        return OWN_STACKS if any(a.declaration.requirements for a in self.apps) else ()

    def stack(self, name: str) -> Stack:
        try:
            return self.stacks[name]
        except KeyError:
            known = ", ".join(self.stacks)
            raise UserError(f"unknown stack {name!r}; known stacks: {known}") from None

    def select(self, patterns: str | None, stacks: Sequence[str] | None = None) -> list[Variant]:
        return select_variants(self.variants(stacks), patterns)


def _variants_of(
    app: App,
    stacks: dict[str, Stack],
    allowed: Sequence[str],
    root: Path,
    settings: ProjectSettings | None = None,
) -> Iterable[Variant]:
    decl = app.declaration
    by_name = {e.name: e for e in decl.endpoints}
    flavors: list[tuple[str | None, Flavor]] = [(None, Flavor())] + list(decl.flavors.items())
    for flavor_name, flavor in flavors:
        endpoints = (
            tuple(by_name[n] for n in flavor.endpoints)
            if flavor.endpoints
            else tuple(decl.endpoints)
        )
        timed = [e for e in endpoints if not e.per_request]
        quick_names = flavor.quick or decl.quick or [e.name for e in timed[:1]]
        quick = tuple(e for e in endpoints if e.name in quick_names) or tuple(timed[:1])
        if decl.requirements is not None:
            own = _own_stack(app, root)
            stack_list: list[Stack] = [own]
            stack_list += [own_next.stack_from(own, s) for s in allowed if own_next.is_own_next(s)]
        else:
            declared = flavor.stacks if flavor.stacks is not None else decl.stacks
            names = [
                s for s in allowed if not is_own_stack(s) and (declared is None or s in declared)
            ]
            stack_list = [_with_python(stacks[s], decl.python) for s in names]
        for stack in stack_list:
            yield Variant(
                app=app,
                flavor=flavor_name,
                stack=stack,
                import_string=flavor.app or decl.app,
                endpoints=endpoints,
                quick_endpoints=quick,
                env={**decl.env, **flavor.env},
                watch=_watched(stack.name, settings),
                watch_pre=bool(settings and settings.watch_pre),
            )


def _with_python(stack: Stack, python: str | None) -> Stack:
    return stack if python is None else stack.model_copy(update={"python": python})


def _own_stack(app: App, stop: Path | None = None) -> Stack:
    """The stack of an app's own requirements: its pins that hold everywhere (the ones behind an
    environment marker are checked against the interpreter once it is chosen, envs._check_pins),
    on the Python the app asks for (its declaration, `.python-version` or `requires-python`, looked
    up from its root to `stop`, the repository root)."""
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
    path = app.requirements_file or declared
    pins = {
        p.name: p.version
        for p in own_requirements.parse(path.read_text(), declared)
        if p.marker is None
    }
    python = app.declaration.python or own_requirements.python_of(app.root, stop or app.root, lock)
    return Stack(
        name=OWN_REQUIREMENTS_STACK,
        description=f"pinned by {declared.name}",
        pins=pins,
        **({"python": python} if python else {}),
    )


def is_own_stack(name: str) -> bool:
    """`own`, `own-next` or `own-next+PACKAGE`: made from an app's own requirements."""
    return name == OWN_REQUIREMENTS_STACK or own_next.is_own_next(name)


def _watched(stack_name: str, settings: ProjectSettings | None) -> tuple[str, ...]:
    """What an own-next stack moves: its one package, else benchwatch.toml's `watch`."""
    if not own_next.is_own_next(stack_name):
        return ()
    only = own_next.only_moving(stack_name)
    return (only,) if only else tuple(settings.watch if settings else WATCHED_PACKAGES)


def split_patterns(patterns: str) -> list[str]:
    wanted = [p.strip() for p in patterns.split(",") if p.strip()]
    if not wanted:
        raise UserError("-k: give at least one pattern, e.g. -k 'api@*'")
    return wanted


def matches(variant_id: str, wanted: Sequence[str]) -> bool:
    return any(fnmatch.fnmatchcase(variant_id, p) for p in wanted)


def select_figures(figures: list[Any], patterns: str | None) -> list[Any]:
    """The figures (of any kind) whose variant (`scenario@stack`) a -k pattern matches."""
    if not patterns:
        return figures
    wanted = split_patterns(patterns)
    return [f for f in figures if matches(f.variant, wanted)]


def select_variants(variants: list[Variant], patterns: str | None) -> list[Variant]:
    if not patterns:
        return variants
    wanted = split_patterns(patterns)
    unmatched = [p for p in wanted if not any(fnmatch.fnmatchcase(v.id, p) for v in variants)]
    if unmatched:
        raise UserError(
            f"-k: pattern {', '.join(map(repr, unmatched))} matches no variant "
            "(see `benchwatch list`)"
        )
    return [v for v in variants if matches(v.id, wanted)]


def find_root(start: Path | None = None) -> Path:
    configured = os.environ.get("BENCHWATCH_ROOT")
    if configured:
        root = Path(configured).resolve()
        if not (root / PROJECT_FILE).is_file():
            raise UserError(f"BENCHWATCH_ROOT={configured}: no {PROJECT_FILE} there")
        return root
    here = (start or Path.cwd()).resolve()
    for candidate in (here, *here.parents):
        if (candidate / PROJECT_FILE).is_file():
            return candidate
    raise UserError(f"no {PROJECT_FILE} in {here} or above; run inside a benchwatch project")


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


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(path.read_text())
    except FileNotFoundError:
        raise UserError(f"{path}: file not found") from None
    except tomllib.TOMLDecodeError as exc:
        raise UserError(f"{path}: not valid TOML: {exc}") from None


def _explain(path: Path, exc: ValidationError, prefix: str = "") -> UserError:
    first = exc.errors()[0]
    where = ".".join(str(part) for part in (*([prefix] if prefix else []), *first["loc"]))
    message = first["msg"].removeprefix("Value error, ")
    keyed = (first.get("ctx") or {}).get("error")
    if isinstance(keyed, DeclarationError):  # a check over the whole file names its key itself
        where = ".".join(part for part in (where, keyed.where) if part)
        message = keyed.message
    return UserError(f"{path}: {where or 'top level'}: {message}")


def default_stacks_file() -> Path:
    """The stacks every installation carries: the wheel holds this repository's stacks.toml as
    benchwatch/default_stacks.toml (pyproject's force-include); a source checkout reads it in place."""
    packaged = Path(__file__).parents[1] / DEFAULT_STACKS_FILE
    return packaged if packaged.is_file() else Path(__file__).resolve().parents[3] / STACKS_FILE


def load_stacks(root: Path) -> dict[str, Stack]:
    """The default stacks, then the repository's optional stacks.toml: it adds or overrides stacks.
    A stack that `extends` another takes its pins (and dates) and says only what differs, its
    Python most often: `[stacks.latest-py313]` follows every bump of `latest`."""
    tables = _stack_tables(default_stacks_file())
    own = root / STACKS_FILE
    if own.is_file() and own.resolve() != default_stacks_file().resolve():
        tables.update(_stack_tables(own))
    stacks: dict[str, Stack] = {}
    for name, (path, _) in tables.items():
        merged = _extended(name, tables)
        try:
            stacks[name] = Stack(name=name, **merged)
        except ValidationError as exc:
            raise _explain(path, exc, f"stacks.{name}") from None
    return stacks


def _stack_tables(path: Path) -> dict[str, tuple[Path, dict[str, Any]]]:
    table = _read_toml(path).get("stacks")
    if not isinstance(table, dict) or not table:
        raise UserError(f"{path}: needs at least one [stacks.<name>] table")
    for name, body in table.items():
        if not isinstance(body, dict):
            raise UserError(f"{path}: stacks.{name}: write it as a [stacks.{name}] table")
    return {name: (path, body) for name, body in table.items()}


_INHERITED = ("pins", "exclude_newer", "resolved_at_run_time", "requires", "python")


def _extended(name: str, tables: dict[str, tuple[Path, dict[str, Any]]]) -> dict[str, Any]:
    """A stack's table with what it `extends` filled in (one level: the base is a plain stack)."""
    path, body = tables[name]
    base_name = body.get("extends")
    if base_name is None:
        return body
    if base_name not in tables:
        raise UserError(
            f"{path}: stacks.{name}: extends unknown stack {base_name!r}; known: {', '.join(tables)}"
        )
    base = tables[base_name][1]
    if "extends" in base:
        raise UserError(
            f"{path}: stacks.{name}: extends {base_name!r}, which extends another stack: name a plain one"
        )
    return {**{key: base[key] for key in _INHERITED if key in base}, **body}


def load_app(directory: Path) -> App:
    path = directory / APP_FILE
    try:
        declaration = AppDeclaration(**_read_toml(path))
    except ValidationError as exc:
        raise _explain(path, exc) from None
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


def load_project(root: Path | None = None) -> Project:
    root = root or find_root()
    path = root / PROJECT_FILE
    document = _read_toml(path)
    unknown = sorted(set(document) - {"benchwatch", "questions"})
    if unknown:
        raise UserError(f"{path}: unknown table {unknown[0]!r}; known: [benchwatch], [[questions]]")
    try:
        settings = ProjectSettings(**document.get("benchwatch", {}))
    except ValidationError as exc:
        raise _explain(path, exc, "benchwatch") from None
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
            raise _explain(
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
