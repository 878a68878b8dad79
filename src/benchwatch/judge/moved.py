"""What moved between base and head: the installed versions that differ between the environments
each pair of variants ran in. Read from the sides' fingerprints (`Environment.stacks`, the
versions read back from every environment built, envs.Env.versions), so it is what ran, never a
lock re-parsed. Made once by compare (`CompareExtra.moved`); the comment, the terminal and
compare.json all show that one list."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from pydantic import BaseModel

from benchwatch.environments.versions import differing
from benchwatch.project.variants import Variant


class MovedPackages(BaseModel):
    """One pair of environments (base's, head's) whose installed versions differ."""

    where: str  # what ran in them: the variant ids (`backend@own`), or `latest → next` for stacks
    scenarios: list[str]  # the scenarios measured in them (a regression's row names its scenario)
    base_env: str  # env keys (Variant.env_key)
    head_env: str
    app: str = ""  # the app of the first pair
    lock: str | None = (
        None  # the app's own lock or requirements file, as its declaration names it (None: a stack)
    )
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
        where = (
            f"`{self.where}`" if code else self.where
        )  # a code span keeps `@own` from mentioning anyone
        return f"{', '.join(items)} ({where})"


def moved_packages(
    kind: str,
    pairs: Sequence[tuple[Variant, Variant]],
    base_stacks: Mapping[str, Mapping[str, str]],
    head_stacks: Mapping[str, Mapping[str, str]],
) -> list[MovedPackages]:
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
            ids = list(
                dict.fromkeys(b.id if b.id == h.id else f"{b.id} → {h.id}" for b, h in members)
            )
            where = ", ".join(ids)
        app = members[0][0].app
        found.append(
            MovedPackages(
                where=where,
                scenarios=list(dict.fromkeys(b.scenario for b, _ in members)),
                base_env=base_env,
                head_env=head_env,
                app=app.name,
                lock=app.declaration.requirements or None,
                changed={
                    p: (b, h) for p, (b, h) in moves.items() if b is not None and h is not None
                },
                added={p: h for p, (b, h) in moves.items() if b is None and h is not None},
                removed={p: b for p, (b, h) in moves.items() if h is None and b is not None},
            )
        )
    return found


def terminal_lines(moved: Sequence[MovedPackages]) -> list[str]:
    return [f"dependencies changed between base and head: {m.text()}" for m in moved]
