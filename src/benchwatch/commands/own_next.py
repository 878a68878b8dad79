from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # annotations only: the command imports its library when it runs
    from benchwatch.environments.own_next import MovedLock

HELP = "What moves on each app's own lock when the watched packages go to their newest releases"

DESCRIPTION = """\
For every app that declares its own requirements (a uv.lock, pyproject.toml or requirements file):
its resolution with the watched packages (benchwatch.toml `watch`, default fastapi, pydantic,
pydantic-core, starlette, uvicorn) at their newest releases and everything else as locked, the
stack `own-next` (`benchwatch compare --base own --head own-next`). Lists the versions that move
and each newest release the app's other pins refuse, with uv's reason. The index is uv's
(UV_DEFAULT_INDEX, UV_FIND_LINKS), the one the environments are then installed from.
With --state: `changed` is whether the moved versions differ from the state's (the last night
measured); `changed=true|false` also goes to $GITHUB_OUTPUT when that variable is set.
Exit code: 0 whether or not anything moved; 3 when a lock cannot be read or resolved at all.
"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = DESCRIPTION
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.add_argument("-k", metavar="PATTERNS", help="glob patterns over `<app>@own-next` ids")
    parser.add_argument(
        "--pre", action="store_true", help="pre-releases too (also benchwatch.toml `watch_pre`)"
    )
    parser.add_argument("--json", metavar="FILE", help="write the moves and the held releases")
    parser.add_argument("--markdown", metavar="FILE", help="write them as markdown")
    parser.add_argument("--state", metavar="FILE", help="JSON of the moves last measured")
    parser.add_argument(
        "--write-state", action="store_true", help="record tonight's moves in --state"
    )
    parser.add_argument(
        "--moved-packages",
        action="store_true",
        help="print only the watched packages that move on some app's lock, one a line (the "
        "nightly compares `own` with `own-next+PACKAGE` for each)",
    )


def run(args: argparse.Namespace) -> int:
    import json
    import os

    from benchwatch.environments import own_next
    from benchwatch.environments.uv_tool import cache_dir
    from benchwatch.errors import UserError
    from benchwatch.project.apps import OWN_NEXT_STACK
    from benchwatch.project.loading import load_project
    from benchwatch.whole_files import write_text_whole

    if args.write_state and not args.state:
        raise UserError("--write-state needs --state FILE")
    project = load_project()
    if OWN_NEXT_STACK not in project.own_stacks:
        raise UserError("no app here declares its own requirements (`requirements` in its toml)")
    watch = project.settings.watch
    pre = args.pre or project.settings.watch_pre
    results: dict[str, own_next.MovedLock] = {}
    for variant in project.select(args.k, [OWN_NEXT_STACK]):
        if variant.stack.name != OWN_NEXT_STACK or variant.app.name in results:
            continue
        declared = variant.app.file(variant.app.declaration.requirements or "")
        exports = cache_dir().parent / "exports"
        results[variant.app.name] = own_next.move(
            declared, watch, pre, exports, variant.stack.python
        )
    tonight = {app: {n: m for n, (_, m) in r.changes().items()} for app, r in results.items()}
    previous = _read_state(Path(args.state)) if args.state else None
    moved = any(tonight.values())
    changed = moved and tonight != previous
    if args.moved_packages:
        moving = {n for r in results.values() for n in r.changes() if n in r.newest}
        print("\n".join(sorted(moving)))
        return 0
    print(_text(results, watch, pre))
    if args.state:
        print("changed since the state: " + ("yes" if changed else "no"))
    if args.markdown:
        write_text_whole(Path(args.markdown), _markdown(results, pre))
    if args.json:
        document = {
            "watch": list(watch),
            "pre": pre,
            "changed": changed,
            "apps": {a: r.as_json() for a, r in results.items()},
        }
        write_text_whole(Path(args.json), json.dumps(document, indent=1) + "\n")
    if args.write_state and changed:
        write_text_whole(Path(args.state), json.dumps(tonight, indent=1, sort_keys=True) + "\n")
    github_output = os.environ.get("GITHUB_OUTPUT")
    if github_output:
        with open(github_output, "a", encoding="utf-8") as handle:
            handle.write(f"changed={'true' if changed else 'false'}\n")
    return 0


def _read_state(path: Path) -> dict | None:
    import json

    from benchwatch.errors import UserError

    if not path.is_file():
        return None
    try:
        state = json.loads(path.read_text())
    except ValueError as exc:
        raise UserError(f"--state {path}: not JSON ({exc}); remove it to start again") from None
    if not isinstance(state, dict):
        raise UserError(f"--state {path}: not a JSON object of app → package → version")
    return state


def _moves(result: MovedLock) -> str:
    changes = result.changes()
    return ", ".join(f"{n} {a or '(new)'} → {b or '(gone)'}" for n, (a, b) in changes.items())


def _text(results: dict[str, MovedLock], watch: Sequence[str], pre: bool) -> str:
    kind = "newest releases (pre-releases too)" if pre else "newest stable releases"
    lines = [f"own-next: {', '.join(watch)} at their {kind}, everything else as locked"]
    for app, result in results.items():
        lines.append(
            f"{app}@own-next ({result.seconds:.1f} s): {_moves(result) or 'nothing moves'}"
        )
        lines += [f"  held: {h.line()}" for h in result.held]
        if result.not_locked:
            lines.append(f"  not in the lock: {', '.join(result.not_locked)}")
    return "\n".join(lines)


def _markdown(results: dict[str, MovedLock], pre: bool) -> str:
    kind = "newest releases, pre-releases included" if pre else "newest stable releases"
    out = [f"### The watched packages at their {kind}, on each app's own lock\n"]
    for app, result in results.items():
        out.append(f"**{app}**: " + (_moves(result) or "nothing moves") + "\n")
        out += [f"- held back: {h.line()}" for h in result.held]
        out.append("")
    return "\n".join(out)
