from __future__ import annotations

import argparse

HELP = "Print the stacks, or write asv.conf.json from stacks.toml"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--write-asv",
        action="store_true",
        help="regenerate asv.conf.json (one exact-pin matrix entry per pinned stack)",
    )
    parser.add_argument(
        "--check-asv",
        action="store_true",
        help="exit 3 if asv.conf.json differs from what stacks.toml generates",
    )


def run(args: argparse.Namespace) -> int:
    from benchwatch.errors import UserError
    from benchwatch.micro import asv_conf
    from benchwatch.project.files import find_root
    from benchwatch.project.stacks import load_stacks

    root = find_root()
    stacks = load_stacks(root)
    if args.write_asv:
        print(f"wrote {asv_conf.write(root, stacks)}")
        return 0
    if args.check_asv:
        path = root / asv_conf.ASV_CONF_FILE
        current = path.read_text() if path.is_file() else ""
        if current != asv_conf.render(stacks):
            raise UserError(f"{path} is out of date: run `benchwatch stacks --write-asv`")
        print(f"{path} agrees with stacks.toml")
        return 0
    for stack in stacks.values():
        if stack.resolved_at_run_time:
            pins = "resolved at run time: " + ", ".join(stack.requires)
        else:
            pins = ", ".join(f"{p}=={v}" for p, v in stack.pins.items())
        print(f"{stack.name:<12} python {stack.python}  {stack.description}\n  {pins}")
    return 0
