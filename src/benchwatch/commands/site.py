from __future__ import annotations

import argparse
import os
from pathlib import Path

HELP = "Build the gh-pages landing page (index.html + assets, works offline)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--out", type=Path, required=True, metavar="DIR", help="site root to write")
    parser.add_argument("--data", type=Path, action="append", metavar="DIR",
                        help="a directory holding github-action-benchmark data.js files (dev/bench/data.js, "
                             "nightly/data.js, or .benchwatch/history); repeatable; default: --out itself")  # fmt: skip
    parser.add_argument("--run", type=Path, metavar="DIR",
                        default=os.environ.get("BENCHWATCH_RUN") or None,
                        help="run directory whose run.json gives the latest results (env BENCHWATCH_RUN)")  # fmt: skip
    parser.add_argument("--changes", type=Path, metavar="FILE",
                        help="changes.json from `benchwatch changes --json-file`: change points drawn on the trends")  # fmt: skip
    parser.add_argument("--reference", metavar="STACK",
                        help="stack ratios are taken against (default: benchwatch.toml's reference_stack)")  # fmt: skip


def run(args: argparse.Namespace) -> int:
    from benchwatch.config import project_defaults
    from benchwatch.errors import UserError
    from benchwatch.report.site import build_site
    from benchwatch.report.site_changes import marks, read_changes
    from benchwatch.results import ensure_writable, read_run

    for data_dir in args.data or []:
        if not data_dir.is_dir():
            raise UserError(f"--data {data_dir}: not a directory")
    record = read_run(Path(args.run)) if args.run else None
    changes = marks(read_changes(args.changes)) if args.changes else None
    reference, stacks = project_defaults(args.reference)
    ensure_writable(args.out)
    index = build_site(args.out, run=record, data_dirs=args.data or (), reference_stack=reference, stacks=stacks,
                       changes=changes)  # fmt: skip
    print(index)
    return 0
