from __future__ import annotations

import argparse
import os
from pathlib import Path

HELP = "Build the gh-pages site: overview, trends and releases pages (works offline)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--out", type=Path, required=True, metavar="DIR", help="site root to write")
    parser.add_argument(
        "--data",
        type=Path,
        action="append",
        metavar="DIR",
        help="a directory holding github-action-benchmark data.js files (dev/bench/data.js, "
        "nightly/data.js, or .benchwatch/history); repeatable; default: --out itself",
    )
    parser.add_argument(
        "--run",
        type=Path,
        metavar="DIR",
        default=os.environ.get("BENCHWATCH_RUN") or None,
        help="run directory whose run.json gives the latest results (env BENCHWATCH_RUN)",
    )
    parser.add_argument(
        "--changes",
        type=Path,
        metavar="FILE",
        help="changes.json from `benchwatch changes --json-file`: change points drawn on the trends "
        "(default: found here from the --data files and benchwatch-acks.toml)",
    )
    parser.add_argument(
        "--attribution",
        type=Path,
        action="extend",
        nargs="+",
        metavar="FILE",
        help="attribution.json files from `benchwatch attribute` (the nightly's): releases.html "
        "lists each release's effect",
    )
    parser.add_argument(
        "--attributions",
        type=Path,
        metavar="DIR",
        help="a folder of published attribution files (gh-pages nightly/attribution): every "
        "*.json in it; one that is not a benchwatch attribution is skipped with a warning",
    )
    parser.add_argument(
        "--no-copy",
        action="store_true",
        help="read the --data files for the trends but do not copy them into the site "
        "(on gh-pages, github-action-benchmark owns dev/bench and nightly)",
    )
    parser.add_argument(
        "--reference",
        metavar="STACK",
        help="stack ratios are taken against, one of the --run's (default: benchwatch.toml's "
        "reference_stack; none: no ratios)",
    )


def run(args: argparse.Namespace) -> int:
    from benchwatch.commands.changes import _default_acks
    from benchwatch.commands.changes import changes as find_changes
    from benchwatch.errors import UserError
    from benchwatch.project.loading import project_defaults
    from benchwatch.publish.attribution_read import read_attribution, read_published_attributions
    from benchwatch.publish.site import build_site, find_trend_files
    from benchwatch.publish.site_changes import marks, read_changes
    from benchwatch.report.tables import require_reference
    from benchwatch.results.files import ensure_writable, read_run
    from benchwatch.trend.histories import series_of

    files = []
    for data_dir in args.data or []:
        if not data_dir.is_dir():
            raise UserError(f"--data {data_dir}: not a directory")
        files += list(find_trend_files(data_dir).values())
    for path in files:  # a damaged data.js: one line naming it, before anything is written
        series_of(path)
    record = read_run(Path(args.run)) if args.run else None
    if record is not None:
        require_reference(record, args.reference)
    attributions = [
        (
            path.name if path.name != "attribution.json" else path.parent.name or path.name,
            read_attribution(path),
        )
        for path in args.attribution or []
    ]
    if args.attributions is not None:
        attributions += read_published_attributions(args.attributions)
    if args.changes:
        changes = marks(read_changes(args.changes))
    elif files:
        changes = marks(find_changes(files, acks_file=_default_acks())[0])
    else:
        changes = None
    reference, stacks = project_defaults(args.reference)
    ensure_writable(args.out)
    index = build_site(
        args.out,
        run=record,
        data_dirs=args.data or (),
        reference_stack=reference,
        stacks=stacks,
        changes=changes,
        attributions=attributions,
        copy_data=not args.no_copy,
    )
    print(index)
    return 0
