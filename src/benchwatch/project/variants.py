"""The variants a project's apps and stacks make (`<app>[-<flavor>]@<stack>`), and picking them
(and figures) by `-k` patterns."""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchwatch.declarations.apps import Flavor
from benchwatch.declarations.project_file import WATCHED_PACKAGES, ProjectSettings, Question
from benchwatch.declarations.requests import Endpoint
from benchwatch.declarations.stacks import Stack
from benchwatch.environments import own_next
from benchwatch.environments.envs import digest
from benchwatch.environments.uv_tool import cache_dir
from benchwatch.errors import UserError
from benchwatch.figures.figure_key import variant_id
from benchwatch.project.apps import OWN_REQUIREMENTS_STACK, OWN_STACKS, App, is_own_stack, own_stack


@dataclass(frozen=True)
class Variant:
    app: App
    flavor: str | None
    stack: Stack
    import_string: str
    endpoints: tuple[Endpoint, ...]
    quick_endpoints: tuple[Endpoint, ...]
    env: dict[str, str]
    # an app's own pins as a requirements file (apps.own_stack: the declared file or uv's export of
    # its lock); None on a stack's variant
    requirements_file: Path | None = None
    watch: tuple[str, ...] = ()  # own-next: the packages moved, and whether to pre-releases
    watch_pre: bool = False

    @property
    def scenario(self) -> str:
        return self.app.name if self.flavor is None else f"{self.app.name}-{self.flavor}"

    @property
    def id(self) -> str:
        return variant_id(self.scenario, self.stack.name)

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
        `{unique}` (counted only: requests.PER_REQUEST_WHY)."""
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
        stack_list: list[tuple[Stack, Path | None]]
        if decl.requirements is not None:
            own, requirements_file = own_stack(app, root)
            stack_list = [(own, requirements_file)]
            for name in (s for s in allowed if own_next.is_own_next(s)):
                moved = own_next.stack_from(own, name)
                stack_list.append((moved, _moved_requirements(app, moved, settings)))
        else:
            declared = flavor.stacks if flavor.stacks is not None else decl.stacks
            names = [
                s for s in allowed if not is_own_stack(s) and (declared is None or s in declared)
            ]
            stack_list = [(_with_python(stacks[s], decl.python), None) for s in names]
        for stack, requirements in stack_list:
            yield Variant(
                app=app,
                flavor=flavor_name,
                stack=stack,
                import_string=flavor.app or decl.app,
                endpoints=endpoints,
                quick_endpoints=quick,
                env={**decl.env, **flavor.env},
                requirements_file=requirements,
                watch=_watched(stack.name, settings),
                watch_pre=bool(settings and settings.watch_pre),
            )


def _watched(stack_name: str, settings: ProjectSettings | None) -> tuple[str, ...]:
    """What an own-next stack moves: its one package, else benchwatch.toml's `watch`."""
    if not own_next.is_own_next(stack_name):
        return ()
    only = own_next.only_moving(stack_name)
    return (only,) if only else tuple(settings.watch if settings else WATCHED_PACKAGES)


def _moved_requirements(app: App, stack: Stack, settings: ProjectSettings | None) -> Path:
    """An own-next stack's requirements: the app's lock with the watched packages moved
    (environments/own_next.move, once per command)."""
    declared = app.file(app.declaration.requirements or "")
    watched, pre = _watched(stack.name, settings), bool(settings and settings.watch_pre)
    return own_next.move(
        declared, watched, pre, cache_dir().parent / "exports", stack.python
    ).requirements


def _with_python(stack: Stack, python: str | None) -> Stack:
    return stack if python is None else stack.model_copy(update={"python": python})


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
