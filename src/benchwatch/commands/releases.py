from __future__ import annotations

import argparse

HELP = "Resolve the newest releases"

DESCRIPTION = """\
Look up the newest releases of fastapi, pydantic, starlette and uvicorn in the package
index JSON API ({index}/pypi/<name>/json; index: --index-url, else $BENCHWATCH_INDEX_URL,
else https://pypi.org) and list what changed since the state file.
Exit code: 0 on success whether or not anything changed (read `changed` from --json, or
`changed=true|false` written to $GITHUB_OUTPUT when that variable is set); 3 when the index
cannot be read or the state file is corrupt (it is then left untouched).
"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = DESCRIPTION
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.add_argument("--pre", action="store_true", help="include pre-releases")
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    parser.add_argument("--state", metavar="FILE", help="JSON state file to diff against")
    parser.add_argument(
        "--write-state", action="store_true", help="record the resolved versions in --state"
    )
    parser.add_argument(
        "--index-url",
        metavar="URL",
        help="package index base URL serving /pypi/<name>/json (env: BENCHWATCH_INDEX_URL)",
    )
    parser.add_argument(
        "--markdown", metavar="FILE", help="also write the list of changes as markdown to FILE"
    )
    parser.add_argument(
        "--pin-next",
        metavar="STACKS_TOML",
        help="pin the resolved versions into the `next` stack's requires in this stacks.toml, so "
        "`next` is built from exactly what was resolved",
    )
    parser.add_argument(
        "--python",
        action="store_true",
        help="no package lookup: for each CPython version the stacks ask for, the build this machine "
        "runs and the newest release uv can install here (with --markdown FILE, --json; "
        "`python_new=true|false` to $GITHUB_OUTPUT)",
    )
    parser.add_argument(
        "--record-measured",
        metavar="RUN_DIR",
        help="no lookup: add every package of the `next` environment measured in RUN_DIR/run.json "
        "to --state (as `measured`)",
    )


def run(args: argparse.Namespace) -> int:
    import json
    import os
    from pathlib import Path

    from benchwatch.environments import releases
    from benchwatch.errors import UserError

    if args.python:
        return _python(args)
    if args.write_state and not args.state:
        raise UserError("--write-state needs --state FILE")
    if args.record_measured and not args.state:
        raise UserError("--record-measured needs --state FILE")
    if args.record_measured:
        from benchwatch.results.files import read_run

        measured = read_run(Path(args.record_measured)).environment.stacks.get("next")
        if not measured:
            raise UserError(
                f"{args.record_measured}/run.json holds no `next` environment: give compare's head directory"
            )
        if not Path(args.state).is_file():
            raise UserError(
                f"--state {args.state}: no state file to add to (run with --write-state first)"
            )
        releases.record_measured(Path(args.state), measured)
        print(f"recorded {len(measured)} packages of next in {args.state}")
        return 0
    try:
        index_url = releases.resolve_index_url(args.index_url)
        state_path = Path(args.state) if args.state else None
        previous = releases.read_state(state_path) if state_path else None
        resolution = releases.resolve(index_url, pre=args.pre)
        changes = resolution.changes_since(previous or {})
        if args.write_state and state_path and changes:
            releases.write_state(state_path, resolution)
        if args.pin_next:
            releases.pin_stack_file(Path(args.pin_next), "next", resolution.versions)
    except releases.ReleaseError as error:
        raise UserError(str(error)) from None

    if args.markdown:
        Path(args.markdown).write_text(
            releases.changes_markdown(changes, args.pre), encoding="utf-8"
        )
    github_output = os.environ.get("GITHUB_OUTPUT")
    if github_output:
        with open(github_output, "a", encoding="utf-8") as handle:
            handle.write(f"changed={'true' if changes else 'false'}\n")

    if args.json:
        print(
            json.dumps(
                {
                    "index_url": resolution.index_url,
                    "pre": resolution.pre,
                    "changed": bool(changes),
                    "versions": resolution.versions,
                    "changes": [
                        {"package": c.package, "old": c.old, "new": c.new} for c in changes
                    ],
                    "rejected": {name: len(t) for name, t in resolution.rejected.items()},
                },
                indent=2,
            )
        )
        return 0

    for name, version in resolution.versions.items():
        print(f"{name:<10} {version}")
    for change in changes:
        print(f"changed: {change.package} {change.old or '(none)'} -> {change.new}")
    if not changes:
        print("changed: nothing")
    for name, texts in resolution.rejected.items():
        print(f"ignored {len(texts)} invalid version string(s) of {name}")
    return 0


def _python(args: argparse.Namespace) -> int:
    import json
    import os
    from pathlib import Path

    from benchwatch.environments import python_releases
    from benchwatch.errors import UserError
    from benchwatch.project.files import find_root
    from benchwatch.project.stacks import default_stacks_file, load_stacks

    if args.state or args.write_state or args.pin_next or args.record_measured:
        raise UserError(
            "--python reports CPython releases only: give it without --state, --pin-next or --record-measured"
        )
    try:
        stacks = load_stacks(find_root())
    except UserError:  # outside a project: the stacks every installation carries
        stacks = load_stacks(default_stacks_file().parent)
    minors = sorted(
        {".".join(s.python.split(".")[:2]) for s in stacks.values()},
        key=lambda m: int(m.split(".")[1]),
    )
    found = python_releases.status(minors)
    new = [r for r in found if r.new]
    if args.markdown:
        lines = [f"- {r.line()}" for r in found]
        Path(args.markdown).write_text(
            "CPython releases uv can install here:\n\n" + "\n".join(lines) + "\n", encoding="utf-8"
        )
    github_output = os.environ.get("GITHUB_OUTPUT")
    if github_output:
        with open(github_output, "a", encoding="utf-8") as handle:
            handle.write(f"python_new={'true' if new else 'false'}\n")
    if args.json:
        print(
            json.dumps(
                {
                    "python": [
                        {
                            "minor": r.minor,
                            "installed": r.installed,
                            "newest": r.newest,
                            "new": r.new,
                        }
                        for r in found
                    ]
                },
                indent=2,
            )
        )
        return 0
    for release in found:
        print(release.line())
    return 0
