from __future__ import annotations

import argparse
import sys
from pathlib import Path

HELP = "Set up benchwatch in this repository: declarations, golden bodies and workflows"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "targets",
        nargs="*",
        metavar="FOLDER|APP_IMPORT_STRING",
        help="the app folder, where its imports resolve from (default: the working directory), "
        "and/or the FastAPI app as uvicorn names it from there, e.g. main:app "
        "(default: found by a scan)",
    )
    parser.add_argument("--force", action="store_true", help="replace files that already exist")
    parser.add_argument(
        "--python", metavar="X.Y", help="the Python the app's environment uses (e.g. 3.12)"
    )
    parser.add_argument(
        "--env",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a setting the app needs to boot (e.g. SECRET_KEY=...), written into its "
        'declaration as KEY = "${KEY}", read from the environment on every run '
        "(VALUE is never written down); repeatable",
    )
    parser.add_argument(
        "--env-literal",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a setting that is no secret (e.g. ENVIRONMENT=local), written into the "
        "declaration as it is; repeatable",
    )
    parser.add_argument(
        "--migrate",
        action="store_true",
        help="run `alembic upgrade head` (alembic.ini in the app folder) before each boot, "
        "init's included",
    )
    parser.add_argument(
        "--pre-start",
        metavar="COMMAND",
        help="a command run before each boot, init's included, with the app's Python first on PATH, "
        'e.g. "bash scripts/prestart.sh" (migrations, then a first user)',
    )
    parser.add_argument(
        "--workflows-from",
        metavar="OWNER/REPO@TAG",
        help="where the reusable workflows live; the workflows pin the tag's commit, resolved "
        "with git ls-remote, or give OWNER/REPO@COMMIT (default: the commit this benchwatch was built from)",
    )


def split_targets(targets: list[str]) -> tuple[str | None, str | None]:
    """(folder, import string) from the positional arguments: an import string holds a colon."""
    from benchwatch.errors import UserError

    apps = [t for t in targets if ":" in t]
    folders = [t for t in targets if ":" not in t]
    if len(apps) > 1 or len(folders) > 1:
        raise UserError(
            f"init {' '.join(targets)}: give at most one folder and one import string (module:app)"
        )
    return (folders[0] if folders else None), (apps[0] if apps else None)


def run(args: argparse.Namespace) -> int:
    from benchwatch.declarations import app_env
    from benchwatch.errors import EXIT_BAD_INPUT, UserError
    from benchwatch.scaffold.boot_settings import parse_env
    from benchwatch.scaffold.init import init
    from benchwatch.scaffold.layout import layout
    from benchwatch.scaffold.workflows import default_source, placeholder_said

    if args.python is not None and not (args.python.startswith("3.") and args.python[2:].isdigit()):
        raise UserError(f"--python {args.python!r}: give a version like 3.12")
    folder, app = split_targets(args.targets)
    env = parse_env(args.env)
    literal_env = parse_env(args.env_literal, "--env-literal")
    where = layout(Path.cwd(), folder)
    source = args.workflows_from or default_source()
    outcome = init(
        where,
        app,
        force=args.force,
        python=args.python,
        env=env,
        migrate=args.migrate,
        pre_start=args.pre_start,
        workflows_from=source,
        literal_env=literal_env,
    )
    where = outcome.where or where
    for path in outcome.written:
        print(f"wrote {path.relative_to(where.root)}")
    for path in outcome.kept:
        print(f"kept {path.relative_to(where.root)} (exists; --force replaces it)")
    app_file = (where.app_dir / "benchwatch-app.toml").relative_to(where.root)
    print(
        f"init: declared {outcome.declared}, left out {outcome.left_out} (each says what it needs in {app_file})"
    )
    if outcome.referenced:
        print(
            f"init: {', '.join(outcome.referenced)} from --env are written as ${{NAME}}, never their values: set them "
            "in the environment benchwatch runs in (--env-literal writes a value that is no secret)"
        )
    for line in app_env.instruction(outcome.secrets):
        print(line)
    placeholder = placeholder_said(source)
    if placeholder is not None:
        print(placeholder)
    if outcome.declared == 0:
        print(
            f"ERROR: no endpoint answered 2xx at init: fill in one of the commented "
            f"[[endpoints]] in {app_file}, then run `benchwatch verify`",
            file=sys.stderr,
        )
        return EXIT_BAD_INPUT  # a declaration without an endpoint: the user completes it
    print(
        f"next: benchwatch verify -k '{outcome.variant}' && benchwatch run --quick -k '{outcome.variant}'; "
        "commit the files"
    )
    return 0
