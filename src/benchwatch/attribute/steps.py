"""The intermediate stacks between a base and a head stack: one package moved at a time (or
the smallest group the resolver demands), plus one step that moves only what nobody pins.

A step's stack pins everything base's environment holds (the versions read back from it),
with the moved packages at head's versions, resolved at head's `exclude_newer` date so the new
releases exist; whatever else moves is a package the moved ones newly need. When the resolver
refuses a step, the packages its error names (and that differ between base and head) join the
group, and the step is tried again."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from benchwatch.declarations.stacks import Stack, normalize_package
from benchwatch.environments.versions import differing

TRANSITIVE = "transitive"
Resolve = Callable[[Stack], "str | None"]  # None: the stack resolves; else the resolver's error
StepKind = Literal["package", "group", "transitive"]


@dataclass
class Step:
    name: str  # the intermediate stack's name, e.g. "v2-pre-rust+fastapi"
    kind: StepKind
    requested: str  # the package asked to move ("transitive" for the unpinned ones)
    group: tuple[str, ...]  # the packages moved from base's pin to head's
    stack: Stack | None  # None: it could not be resolved
    note: str = ""
    error: str | None = None
    moved: dict[str, tuple[str | None, str | None]] = field(
        default_factory=dict
    )  # read back from the env


def declared_names(*stacks: Stack) -> list[str]:
    """The packages the stacks name (pins, or a run-time stack's requirements), in order."""
    names: list[str] = []
    for stack in stacks:
        names += list(stack.pinned_versions())
        names += [
            normalize_package(re.split(r"[\[<>=!~; ]", r, maxsplit=1)[0]) for r in stack.requires
        ]
    return list(dict.fromkeys(names))


def mentioned(package: str, text: str) -> bool:
    """Whether a resolver's message names the package (not merely a longer name containing it)."""
    spelled = r"[-_.]".join(re.escape(part) for part in package.split("-"))
    return re.search(rf"(?<![\w.-]){spelled}(?![\w-]|\.\w)", text, re.IGNORECASE) is not None


def step_stack(
    base: Stack,
    head: Stack,
    base_versions: Mapping[str, str],
    moves: Mapping[str, tuple[str | None, str | None]],
    group: Sequence[str],
    name: str,
) -> Stack:
    pins = dict(base_versions)
    for package in group:
        new = moves[package][1]
        if new is None:
            pins.pop(package, None)
        else:
            pins[package] = new
    return Stack(
        name=name,
        description=f"{base.name} with {', '.join(group)} as in {head.name}",
        python=base.python,
        exclude_newer=head.exclude_newer,
        pins=pins,
    )


def transitive_stack(base: Stack, head: Stack) -> Stack:
    """Base's own pins at head's date: only what nobody pins moves."""
    return Stack(
        name=f"{base.name}+{TRANSITIVE}",
        description=f"{base.name}'s pins resolved as of {head.name}'s date",
        python=base.python,
        exclude_newer=head.exclude_newer,
        pins=dict(base.pins),
    )


def plan_steps(
    base: Stack,
    head: Stack,
    base_versions: Mapping[str, str],
    head_versions: Mapping[str, str],
    resolve: Resolve,
) -> list[Step]:
    """One step per package base or head names that moved (widened to the group the resolver
    demands), then the transitive step. Steps whose group equals an earlier one are merged."""
    moves = differing(base_versions, head_versions)
    declared = [p for p in declared_names(base, head) if p in moves]
    steps: list[Step] = []
    covered: set[str] = set()
    for package in declared:
        if package in covered:
            continue
        step = _widen(base, head, base_versions, moves, package, resolve)
        if set(declared) <= set(step.group) and len(declared) > 1:
            step.note = (
                f"{package} cannot be moved alone: its group is everything that moved "
                f"({', '.join(step.group)})"
            )
        covered |= set(step.group)
        steps.append(step)
    if base.exclude_newer != head.exclude_newer or any(p not in declared for p in moves):
        stack = transitive_stack(base, head)
        error = resolve(stack)
        steps.append(
            Step(
                stack.name,
                "transitive",
                TRANSITIVE,
                tuple(p for p in moves if p not in declared),
                None if error else stack,
                error=_tail(error) if error else None,
                note=f"unpinned dependencies as of {head.exclude_newer or 'today'}",
            )
        )
    return steps


def _widen(
    base: Stack,
    head: Stack,
    base_versions: Mapping[str, str],
    moves: Mapping[str, tuple[str | None, str | None]],
    package: str,
    resolve: Resolve,
) -> Step:
    group = [package]
    notes: list[str] = []
    while True:
        name = f"{base.name}+{'+'.join(group)}"
        stack = step_stack(base, head, base_versions, moves, group, name)
        error = resolve(stack)
        if error is None:
            kind: StepKind = "package" if len(group) == 1 else "group"
            return Step(name, kind, package, tuple(group), stack, note="; ".join(notes))
        named = [p for p in moves if p not in group and mentioned(p, error)]
        if not named:
            return Step(
                name,
                "package" if len(group) == 1 else "group",
                package,
                tuple(group),
                None,
                note="; ".join(notes),
                error=_tail(error),
            )
        notes.append(f"the resolver demands {', '.join(named)} with {', '.join(group)}")
        group += named


def _tail(error: str, limit: int = 400) -> str:
    lines = [line.strip() for line in error.strip().splitlines() if line.strip()]
    text = " ".join(lines)
    return text if len(text) <= limit else "…" + text[-limit:]
