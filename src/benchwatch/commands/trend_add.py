from __future__ import annotations

import argparse
from pathlib import Path

HELP = "Append a gab file's points to a data.js as github-action-benchmark would (one entry)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "data_js", type=Path, metavar="DATA_JS", help="the data.js to extend (created if missing)"
    )
    parser.add_argument(
        "--gab", type=Path, required=True, metavar="FILE", help="gab file whose points to add"
    )
    parser.add_argument(
        "--suite",
        required=True,
        metavar="NAME",
        help="the benchmark `name:` the workflow publishes it under",
    )
    parser.add_argument(
        "--bigger",
        action="store_true",
        help="customBiggerIsBetter (default: customSmallerIsBetter)",
    )
    parser.add_argument(
        "--commit", required=True, metavar="SHA", help="the commit the points belong to"
    )
    parser.add_argument("--message", default="", help="its commit message (first line)")
    parser.add_argument("--timestamp", default="", metavar="ISO", help="its commit time (ISO 8601)")
    parser.add_argument("--url", default="", help="link to the commit")


def trend_add(
    data_js: Path,
    gab: Path,
    suite: str,
    bigger: bool,
    commit: str,
    message: str = "",
    timestamp: str = "",
    url: str = "",
) -> int:
    import re

    from benchwatch.errors import UserError
    from benchwatch.trend import history

    if not re.fullmatch(r"[0-9a-fA-F]{7,40}", commit):
        raise UserError(f"--commit {commit!r}: give 7 to 40 hex digits")
    benches = history.read_gab(gab)
    if not benches:
        raise UserError(f"{gab}: no points to add")
    found = {"id": commit, "message": message or commit[:12], "timestamp": timestamp}
    if url:
        found["url"] = url
    tool = "customBiggerIsBetter" if bigger else "customSmallerIsBetter"
    history.append_entry(data_js, suite, tool, benches, {k: v for k, v in found.items() if v})
    return len(benches)


def run(args: argparse.Namespace) -> int:
    count = trend_add(
        args.data_js,
        args.gab,
        args.suite,
        args.bigger,
        args.commit,
        args.message,
        args.timestamp,
        args.url,
    )
    print(f"{count} points of {args.commit[:12]} added to {args.suite!r} in {args.data_js}")
    return 0
