from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import TYPE_CHECKING

from benchwatch.commands import add_shared_options

if TYPE_CHECKING:  # annotations only: a command imports what it runs when it runs (start-up time)
    from benchwatch.judge.verdict import Comparison

HELP = "Measure each metric's noise floor with A/A runs and store it in calibration.json"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from benchwatch.compare.aa import DEFAULT_ROUNDS, DEFAULT_STACK

    add_shared_options(
        parser,
        variants=f"'*@{DEFAULT_STACK}', each run against itself",
        rounds=f"the A/A rounds of each variant (default {DEFAULT_ROUNDS})",
        out="calibrate-<time>",
    )
    parser.add_argument(
        "--no-micro",
        action="store_true",
        help="load-test floors only (no asv, no instruction counts)",
    )
    parser.add_argument(
        "--no-load",
        action="store_true",
        help="micro floors only, merged into the existing calibration.json (its load floors are kept)",
    )
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress lines")
    parser.add_argument(
        "--from",
        dest="from_dir",
        type=Path,
        metavar="DIR",
        help="measure nothing: recompute the floors from the A/A runs an earlier calibrate wrote in DIR",
    )
    parser.add_argument(
        "--counts-from",
        type=Path,
        nargs="+",
        metavar="COMPARE_DIR",
        help="measure nothing: the count floors (instructions, system calls per request) from A/A "
        "compares' compare.json, e.g. of `compare --base latest --head latest --no-load --no-micro` "
        "(several: per figure the largest), merged into calibration.json",
    )
    parser.add_argument(
        "--print-threshold",
        action="store_true",
        help="measure nothing: print github-action-benchmark's alert-threshold from calibration.json",
    )
    parser.add_argument(
        "--github-output",
        action="store_true",
        help="measure nothing: append alert-threshold=N%% to $GITHUB_OUTPUT",
    )


def run(args: argparse.Namespace) -> int:
    from benchwatch.compare.aa import DEFAULT_ROUNDS, calibrate, recompute
    from benchwatch.errors import UserError
    from benchwatch.judge.calibrate import alert_threshold, floor_key, load_calibration
    from benchwatch.project.files import find_root
    from benchwatch.project.loading import load_project

    if args.print_threshold or args.github_output:
        threshold = alert_threshold(load_calibration(find_root()))
        if args.github_output:
            target = os.environ.get("GITHUB_OUTPUT")
            if not target:
                raise UserError(
                    "--github-output: GITHUB_OUTPUT is not set (use --print-threshold outside Actions)"
                )
            with open(target, "a") as handle:
                handle.write(f"alert-threshold={threshold}%\n")
            print(f"alert-threshold={threshold}%")
        else:
            print(f"{threshold}%")
        return 0
    if args.counts_from:
        return _counts_from(args.counts_from)
    if args.from_dir:
        root = find_root()
        calibration, pairs = recompute(root, args.from_dir)
    else:
        project = load_project()
        root = project.root
        calibration, pairs, problems = calibrate(
            project,
            patterns=args.patterns,
            rounds=args.rounds or DEFAULT_ROUNDS,
            out=args.out,
            quiet=args.quiet,
            micro=not args.no_micro,
            load=not args.no_load,
        )
        for line in problems:
            print(f"FAIL {line}")
    for key, floor in calibration.floors.items():
        own = sorted(calibration.detail.get(key, {}).values())
        each = f", per figure {own[0]:.1%} to {own[-1]:.1%} ({len(own)} figures)" if own else ""
        print(f"{key:<22} largest {floor:.1%}{each}")
    unused = sorted({floor_key(a) for a, _ in pairs} - set(calibration.floors))
    if unused:
        print(f"no floor measured for {', '.join(unused)}: compare uses the defaults")
    print(f"wrote {root / 'calibration.json'}; alert-threshold: {alert_threshold(calibration)}%")
    return 0


def _counts_from(directories: list[Path]) -> int:
    """Count floors from one or more A/A compares: per figure, the largest any of them gives
    (more A/A compares see more of the boot-to-boot spread)."""
    from benchwatch.errors import UserError
    from benchwatch.judge.calibrate import count_floors, merge_count_floors
    from benchwatch.project.files import find_root

    floors: dict[str, dict[str, float]] = {}
    rows = 0
    comparisons = [_aa_compare(directory) for directory in directories]
    for directory, comparison in zip(directories, comparisons, strict=True):
        found = count_floors(comparison.rows)
        if not found:
            raise UserError(f"--counts-from {directory}: no counts per request in that compare")
        for key, per_figure in found.items():
            mine = floors.setdefault(key, {})
            for label, floor in per_figure.items():
                mine[label] = max(floor, mine.get(label, 0.0))
            rows += len(per_figure)
    root = find_root()
    specs = sorted({comparison.base.spec for comparison in comparisons})
    merge_count_floors(
        root, floors, f"{len(directories)} A/A compare(s) of {', '.join(specs)} ({rows} count rows)"
    )
    for key, per_figure in floors.items():
        values = sorted(per_figure.values())
        print(f"{key:<26} {values[0]:.2%} to {values[-1]:.2%} ({len(values)} figures)")
    print(f"wrote {root / 'calibration.json'}")
    return 0


def _aa_compare(directory: Path) -> Comparison:
    """The compare.json in `directory`, which must be an A/A compare (one spec, nothing injected)."""
    from benchwatch.errors import UserError
    from benchwatch.judge.verdict import COMPARE_FILE, Comparison

    path = directory / COMPARE_FILE
    try:
        comparison = Comparison.model_validate_json(path.read_text())
    except (OSError, ValueError) as exc:
        raise UserError(f"--counts-from: cannot read {path} ({str(exc).splitlines()[0]})") from None
    if (
        comparison.base.spec != comparison.head.spec
        or comparison.base.inject_cpu_us
        or comparison.head.inject_cpu_us
    ):
        raise UserError(
            f"--counts-from {directory}: not an A/A compare ({comparison.base.spec} vs {comparison.head.spec})"
        )
    if comparison.extra.injected:
        raise UserError(f"--counts-from {directory}: head was injected; give an A/A compare")
    return comparison
