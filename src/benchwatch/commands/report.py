from __future__ import annotations

import argparse
from pathlib import Path

HELP = "Write report.md and report.html from a run directory's run.json"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "directory", type=Path, metavar="DIR", help="a run directory (holds run.json)"
    )
    parser.add_argument(
        "--reference",
        metavar="STACK",
        help="stack every ratio is taken against, one of the run's (default: benchwatch.toml's "
        "reference_stack; none: no ratios)",
    )


def run(args: argparse.Namespace) -> int:
    from benchwatch.project.loading import project_defaults
    from benchwatch.report.markdown import REPORT_HTML, REPORT_MD
    from benchwatch.report.tables import require_reference
    from benchwatch.report.write import write_report
    from benchwatch.results.files import read_run

    record = read_run(args.directory)
    require_reference(record, args.reference)
    reference, stacks = project_defaults(args.reference)
    out = args.directory if args.directory.is_dir() else args.directory.parent
    write_report(out, record, reference, stacks)
    print(f"{out / REPORT_MD}\n{out / REPORT_HTML}")
    return 0
