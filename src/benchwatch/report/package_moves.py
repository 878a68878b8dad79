"""The comment's lines on the dependencies that moved between base and head and, on a gating
regression, which package to suspect and the command (or the steps) that splits the change by
package."""

from __future__ import annotations

from benchwatch.judge.moved import MovedPackages
from benchwatch.judge.verdict import Comparison


def moved_lines(comparison: Comparison) -> list[str]:
    """The comment's lines on what moved: one line per pair of environments, and on a gating
    regression the candidate packages with the command that splits the change by package."""
    moved = comparison.extra.moved
    if not moved:
        return []
    out = [f"Dependencies changed between base and head: {m.text(code=True)}." for m in moved] + [
        ""
    ]
    regressed = {r.scenario for r in comparison.gating_regressions()}
    if not regressed:
        return out
    suspects = [m for m in moved if regressed & set(m.scenarios)] or list(moved)
    names = list(dict.fromkeys(p for m in suspects for p in m.packages()))
    out.append(
        f"**Which package?** The regression came with these packages' moves: {', '.join(names)}."
    )
    if comparison.base.kind == "stack":
        scenarios = ",".join(f"{s}@*" for s in sorted(regressed))
        out += [
            f"`benchwatch attribute --base {comparison.base.spec} --head {comparison.head.spec} -k '{scenarios}'` "
            "moves one package at a time (or the smallest group the resolver demands) and measures each step "
            "against base.",
            "",
        ]
        return out
    out.append(
        "`benchwatch attribute` splits a change by package between two stacks of `stacks.toml` only, not yet "
        "between two commits' own locks. To try one package today: on base, move only it, commit, and "
        f"`benchwatch compare --base {comparison.base.spec} --head <that commit>`:"
    )
    out += [""] + [f"- {line}" for m in suspects for line in _one_package_moves(m)] + [""]
    return out


def _one_package_moves(moved: MovedPackages) -> list[str]:
    """How to move one package of base's lock to head's version, per package that changed."""
    lock = moved.lock or "its requirements"
    if lock.endswith(("uv.lock", "pyproject.toml")):
        return [
            f"`uv lock --upgrade-package {p}=={h}` beside app {moved.app}'s `{lock}`"
            for p, (_, h) in moved.changed.items()
        ]
    return [f"`{p}=={h}` in app {moved.app}'s `{lock}`" for p, (_, h) in moved.changed.items()]
