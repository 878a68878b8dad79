"""One module per subcommand: HELP, add_arguments(parser), run(args) -> exit code."""

from __future__ import annotations

import argparse


def add_selection(parser: argparse.ArgumentParser) -> None:
    """The options every variant-selecting command shares."""
    parser.add_argument(
        "-k", dest="patterns", metavar="PATTERNS",
        help="comma-separated glob patterns over variant ids, e.g. 'services@*,hello-*@latest'",
    )  # fmt: skip
    parser.add_argument(
        "--stacks", metavar="NAMES",
        help="comma-separated stack names (default: benchwatch.toml's default_stacks)",
    )  # fmt: skip


def stack_names(args: argparse.Namespace) -> list[str] | None:
    return [s.strip() for s in args.stacks.split(",") if s.strip()] if args.stacks else None
