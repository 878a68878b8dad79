"""One module per subcommand: HELP, add_arguments(parser), run(args) -> exit code.

`-k` means one thing everywhere: comma-separated glob patterns over variant ids."""

from __future__ import annotations

import argparse

VARIANTS_HELP = "comma-separated glob patterns over variant ids, e.g. 'api@*,web-*@latest'"


def add_variants(parser: argparse.ArgumentParser, help: str = VARIANTS_HELP) -> None:
    parser.add_argument("-k", dest="patterns", metavar="PATTERNS", help=help)


def add_selection(parser: argparse.ArgumentParser) -> None:
    """The options every variant-selecting command shares."""
    add_variants(parser)
    parser.add_argument(
        "--stacks", metavar="NAMES",
        help="comma-separated stack names (default: benchwatch.toml's default_stacks)",
    )  # fmt: skip


def stack_names(args: argparse.Namespace) -> list[str] | None:
    return [s.strip() for s in args.stacks.split(",") if s.strip()] if args.stacks else None
