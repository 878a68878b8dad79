"""What moved between base and head: the installed versions that differ between the environments
each pair of variants ran in. Read from the sides' fingerprints (`Environment.stacks`, the
versions read back from every environment built, envs.Env.versions), so it is what ran, never a
lock re-parsed. Made once by compare (`CompareExtra.moved`); the comment, the terminal and
compare.json all show that one list."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from pydantic import BaseModel

from benchwatch.attribute.steps import differing
from benchwatch.config import Variant

if TYPE_CHECKING:
    from benchwatch.compare.verdict import Comparison


class MovedPackages(BaseModel):
    """One pair of environments (base's, head's) whose installed versions differ."""

    where: str  # what ran in them: the variant ids (`backend@own`), or `latest → next` for stacks
    scenarios: list[str]  # the scenarios measured in them (a regression's row names its scenario)
    base_env: str  # env keys (Variant.env_key)
    head_env: str
    app: str = ""  # the app of the first pair
    lock: str | None = None  # the app's own lock or requirements file, as its declaration names it (None: a stack)
    changed: dict[str, tuple[str, str]] = {}  # package -> (base version, head version)
    added: dict[str, str] = {}  # only in head's environment
    removed: dict[str, str] = {}  # only in base's

    def packages(self) -> list[str]:
        return [*self.changed, *self.added, *self.removed]

    def text(self, code: bool = False) -> str:
        """'fastapi 0.115.0 → 0.116.1, anyio 4.9.0 added, sniffio 1.3.1 removed (backend@own)'."""
        items = [f"{p} {b} → {h}" for p, (b, h) in self.changed.items()]
        items += [f"{p} {v} added" for p, v in self.added.items()]
        items += [f"{p} {v} removed" for p, v in self.removed.items()]
        where = f"`{self.where}`" if code else self.where  # a code span keeps `@own` from mentioning anyone
        return f"{', '.join(items)} ({where})"


def moved_packages(kind: str, pairs: Sequence[tuple[Variant, Variant]], base_stacks: Mapping[str, Mapping[str, str]],
                   head_stacks: Mapping[str, Mapping[str, str]]) -> list[MovedPackages]:  # fmt: skip
    """Every pair of environments the matched variants ran in whose versions differ, in the pairs'
    order; packages in name order within changed, added, removed. An environment whose versions
    were not recorded (it failed to build) is left out: nothing is guessed."""
    grouped: dict[tuple[str, str], list[tuple[Variant, Variant]]] = {}
    for base, head in pairs:
        grouped.setdefault((base.env_key, head.env_key), []).append((base, head))
    found = []
    for (base_env, head_env), members in grouped.items():
        if base_env not in base_stacks or head_env not in head_stacks:
            continue
        moves = differing(base_stacks[base_env], head_stacks[head_env])
        if not moves:
            continue
        if kind == "stack":
            where = f"{base_env} → {head_env}"
        else:
            ids = list(dict.fromkeys(b.id if b.id == h.id else f"{b.id} → {h.id}" for b, h in members))
            where = ", ".join(ids)
        app = members[0][0].app
        found.append(MovedPackages(
            where=where, scenarios=list(dict.fromkeys(b.scenario for b, _ in members)), base_env=base_env,
            head_env=head_env, app=app.name, lock=app.declaration.requirements or None,
            changed={p: (b, h) for p, (b, h) in moves.items() if b is not None and h is not None},
            added={p: h for p, (b, h) in moves.items() if b is None and h is not None},
            removed={p: b for p, (b, h) in moves.items() if h is None and b is not None},
        ))  # fmt: skip
    return found


def terminal_lines(moved: Sequence[MovedPackages]) -> list[str]:
    return [f"dependencies changed between base and head: {m.text()}" for m in moved]


def comment_lines(comparison: Comparison) -> list[str]:
    """The comment's lines on what moved: one line per pair of environments, and on a gating
    regression the candidate packages with the command that splits the change by package."""
    moved = comparison.extra.moved
    if not moved:
        return []
    out = [f"Dependencies changed between base and head: {m.text(code=True)}." for m in moved] + [""]
    regressed = {r.scenario for r in comparison.gating_regressions()}
    if not regressed:
        return out
    suspects = [m for m in moved if regressed & set(m.scenarios)] or list(moved)
    names = list(dict.fromkeys(p for m in suspects for p in m.packages()))
    out.append(f"**Which package?** The regression came with these packages' moves: {', '.join(names)}.")
    if comparison.base.kind == "stack":
        scenarios = ",".join(f"{s}@*" for s in sorted(regressed))
        out += [f"`benchwatch attribute --base {comparison.base.spec} --head {comparison.head.spec} -k '{scenarios}'` "
                "moves one package at a time (or the smallest group the resolver demands) and measures each step "
                "against base.", ""]  # fmt: skip
        return out
    out.append("`benchwatch attribute` splits a change by package between two stacks of `stacks.toml` only, not yet "
               "between two commits' own locks. To try one package today: on base, move only it, commit, and "
               f"`benchwatch compare --base {comparison.base.spec} --head <that commit>`:")  # fmt: skip
    out += [""] + [f"- {line}" for m in suspects for line in _one_package_moves(m)] + [""]
    return out


def _one_package_moves(moved: MovedPackages) -> list[str]:
    """How to move one package of base's lock to head's version, per package that changed."""
    lock = moved.lock or "its requirements"
    if lock.endswith(("uv.lock", "pyproject.toml")):
        return [f"`uv lock --upgrade-package {p}=={h}` beside app {moved.app}'s `{lock}`" for p, (_, h) in moved.changed.items()]
    return [f"`{p}=={h}` in app {moved.app}'s `{lock}`" for p, (_, h) in moved.changed.items()]
