from __future__ import annotations

import argparse
import sys
from pathlib import Path

HELP = "Set up benchwatch in this repository: declarations, golden bodies and workflows"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("app", nargs="?", metavar="APP_IMPORT_STRING",
                        help="the FastAPI app as uvicorn names it, e.g. mypkg.main:app (default: found by a scan)")  # fmt: skip
    parser.add_argument("--force", action="store_true", help="replace files that already exist")
    parser.add_argument("--python", metavar="X.Y", help="the Python the app's environment uses (e.g. 3.12)")
    parser.add_argument("--workflows-from", metavar="OWNER/REPO@TAG",
                        help="where the reusable workflows live (default: this benchwatch's release tag)")  # fmt: skip


def run(args: argparse.Namespace) -> int:
    from benchwatch.errors import EXIT_BAD_INPUT, UserError
    from benchwatch.scaffold.init import init
    from benchwatch.scaffold.workflows import DEFAULT_SOURCE

    if args.python is not None and not (args.python.startswith("3.") and args.python[2:].isdigit()):
        raise UserError(f"--python {args.python!r}: give a version like 3.12")
    outcome = init(Path.cwd(), args.app, force=args.force, python=args.python,
                   workflows_from=args.workflows_from or DEFAULT_SOURCE)  # fmt: skip
    for path in outcome.written:
        print(f"wrote {path.relative_to(Path.cwd().resolve())}")
    if outcome.declared == 0:
        print("ERROR: the OpenAPI schema has no GET endpoint without parameters: fill in one of the "
              "commented [[endpoints]] in benchwatch/benchwatch-app.toml, then run `benchwatch verify`",
              file=sys.stderr)  # fmt: skip
        return EXIT_BAD_INPUT  # a declaration without an endpoint: the user completes it
    print(f"next: benchwatch verify && benchwatch run --quick -k '{outcome.variant}'; commit the files")
    return 0
