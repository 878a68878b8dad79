"""One module per subcommand: HELP, add_arguments(parser), run(args) -> exit code.

The options several commands share are defined once, here (`add_shared_options`): the same
flags, type, default and help in every command; a command only says what the option means
for it (its default, what a quick pass or a round is there)."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

OUT_ENV = "BENCHWATCH_OUT"  # the default of --out in every command that writes
VARIANTS_HELP = "comma-separated glob patterns over variant ids, e.g. 'api@*,web-*@latest'"
STACKS_HELP = "comma-separated stack names (default: benchwatch.toml's default_stacks)"
QUICK_HELP = "a quick pass"
ROUNDS_HELP = "how many rounds"
OUT_HELP = "the results folder, created when missing"
EVERY_VARIANT = "every variant of the stacks"


def add_compare_path(parser: argparse.ArgumentParser) -> None:
    """COMPARE, the positional argument of the commands that read one compare's result."""
    parser.add_argument(
        "compare",
        type=Path,
        metavar="COMPARE",
        help="compare.json, or the compare's --out directory",
    )


def add_shared_options(
    parser: argparse.ArgumentParser,
    *,
    variants: str = EVERY_VARIANT,
    required: bool = False,
    stacks: bool = False,
    quick: str | None = None,
    rounds: str | None = None,
    out: str | None = None,
) -> None:
    """`-k/--variants` (always; `variants` names its default, or what it must name when `required`),
    and those of `--stacks`, `--quick`, `--rounds`, `--out` the command takes: `quick` is what a
    quick pass is there, `rounds` what a round is and its default, `out` the default folder's name
    (`results/<out>` in the project)."""
    parser.add_argument(
        "-k",
        "--variants",
        dest="patterns",
        metavar="PATTERNS",
        required=required,
        help=f"{VARIANTS_HELP} ({'required' if required else 'default'}: {variants})",
    )
    if stacks:
        parser.add_argument("--stacks", metavar="NAMES", help=STACKS_HELP)
    if quick is not None:
        parser.add_argument("--quick", action="store_true", help=f"{QUICK_HELP}: {quick}")
    if rounds is not None:
        parser.add_argument(
            "--rounds", type=at_least_one, metavar="N", help=f"{ROUNDS_HELP}: {rounds}"
        )
    if out is not None:
        parser.add_argument(
            "--out",
            type=Path,
            metavar="DIR",
            default=_out_from_environment(),
            help=f"{OUT_HELP} (default results/{out} in the project; env {OUT_ENV})",
        )


def at_least_one(text: str) -> int:
    """argparse type of a count: a bad one is bad input (exit 3) before anything runs."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"give a whole number of at least 1, not {text!r}")
    return value


def stack_names(args: argparse.Namespace) -> list[str] | None:
    return [s.strip() for s in args.stacks.split(",") if s.strip()] if args.stacks else None


def _out_from_environment() -> Path | None:
    value = os.environ.get(OUT_ENV)
    return Path(value) if value else None
