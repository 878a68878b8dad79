"""`benchwatch <command>`: one module per subcommand in benchwatch.commands."""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import traceback
from typing import NoReturn

from benchwatch import __version__
from benchwatch.declarations.redaction import RedactedStream, remember_environment
from benchwatch.errors import (
    EXIT_BAD_INPUT,
    EXIT_CODES,
    EXIT_INTERRUPTED,
    EXIT_UNMEASURED,
    UserError,
)

COMMANDS = [
    "list",
    "verify",
    "load",
    "micro",
    "run",
    "merge",
    "compare",
    "compare-merge",
    "compare-shards",
    "calibrate",
    "report",
    "site",
    "releases",
    "own-next",
    "stacks",
    "changes",
    "instructions",
    "attribute",
    "bisect",
    "relative",
    "mechanism",
    "trend-add",
    "init",
    "counts",
]


class Parser(argparse.ArgumentParser):
    """A bad option or argument is bad input: one `ERROR: ...` line after the usage, exit 3
    (argparse's own code, 2, means "not measured" here). Subcommand parsers are of this class too."""

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        self.exit(EXIT_BAD_INPUT, f"ERROR: {self.prog}: {message}\n")


def exit_codes_text() -> str:
    """The exit-code table, from errors.EXIT_CODES, as `benchwatch --help` ends."""
    rows = "\n".join(f"  {code:<4} {meaning}" for code, meaning in EXIT_CODES.items())
    return f"exit codes (every command; docs/exit-codes.md):\n{rows}"


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="benchwatch",
        description="Continuous benchmarks for FastAPI + Pydantic services",
        epilog=exit_codes_text(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"benchwatch {__version__}")
    parser.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        default=os.environ.get("BENCHWATCH_VERBOSE") == "1",
        help="show tracebacks and more detail (env BENCHWATCH_VERBOSE=1)",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name in COMMANDS:
        module = importlib.import_module(f"benchwatch.commands.{name.replace('-', '_')}")
        command = sub.add_parser(name, help=module.HELP, description=module.HELP)
        module.add_arguments(command)
        command.set_defaults(_run=module.run)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    # every line this command prints passes the secrets' redaction, as every file it writes does
    # (results.write_json_atomic / write_text_atomic): what a terminal or a CI log keeps
    remember_environment()
    streams = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = RedactedStream(sys.stdout), RedactedStream(sys.stderr)
    try:
        return _run(args)
    finally:
        sys.stdout, sys.stderr = streams


def _run(args: argparse.Namespace) -> int:
    try:
        return int(args._run(args) or 0)
    except UserError as exc:
        if args.verbose:
            traceback.print_exc()
        print(f"ERROR: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("ERROR: interrupted; servers stopped", file=sys.stderr)
        return EXIT_INTERRUPTED
    except Exception as exc:  # a bug of ours: never exit 1, which says "regression"
        traceback.print_exc()
        print(
            f"ERROR: benchwatch itself failed ({type(exc).__name__}: {exc}); nothing is decided: "
            "please report it with the traceback above",
            file=sys.stderr,
        )
        return EXIT_UNMEASURED


if __name__ == "__main__":
    sys.exit(main())
