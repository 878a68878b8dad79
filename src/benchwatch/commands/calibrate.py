from __future__ import annotations

import argparse
import os
from pathlib import Path

HELP = "Measure each metric's noise floor with A/A runs and store it in calibration.json"

DEFAULT_STACK = "latest"
DEFAULT_ROUNDS = 16


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("-k", dest="patterns", metavar="PATTERNS",
                        help=f"variants to run against themselves (default '*@{DEFAULT_STACK}')")  # fmt: skip
    parser.add_argument("--rounds", type=int, default=DEFAULT_ROUNDS, metavar="N",
                        help=f"A/A rounds per variant (default {DEFAULT_ROUNDS})")  # fmt: skip
    parser.add_argument("--out", metavar="DIR", help="where the A/A runs go (default results/calibrate-<time>)")
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress lines")
    parser.add_argument("--from", dest="from_dir", metavar="DIR",
                        help="measure nothing: recompute the floors from the A/A runs an earlier calibrate wrote in DIR")  # fmt: skip
    parser.add_argument("--print-threshold", action="store_true",
                        help="measure nothing: print github-action-benchmark's alert-threshold from calibration.json")  # fmt: skip
    parser.add_argument("--github-output", action="store_true",
                        help="measure nothing: append alert-threshold=N%% to $GITHUB_OUTPUT")  # fmt: skip


def run(args: argparse.Namespace) -> int:
    from benchwatch.compare.calibrate import alert_threshold, load_calibration
    from benchwatch.config import find_root
    from benchwatch.errors import UserError

    if args.print_threshold or args.github_output:
        calibration = load_calibration(find_root())
        line = f"alert-threshold={alert_threshold(calibration)}%"
        if args.github_output:
            target = os.environ.get("GITHUB_OUTPUT")
            if not target:
                raise UserError("--github-output: GITHUB_OUTPUT is not set (use --print-threshold outside Actions)")
            with open(target, "a") as handle:
                handle.write(line + "\n")
        print(line if args.github_output else f"{alert_threshold(calibration)}%")
        return 0
    if args.from_dir:
        return recompute(Path(args.from_dir))
    if args.rounds < 4:
        raise UserError("--rounds: an A/A calibration needs at least 4 rounds")
    return measure(args)


def aa_pairs(base_run, head_run) -> list:
    """(A, A') figure pairs of one side-by-side A/A run: the same figure on both lanes."""
    heads = {f.name: f for f in head_run.figures}
    return [(f, heads[f.name]) for f in base_run.figures if f.name in heads]


def recompute(directory: Path) -> int:
    from benchwatch.config import find_root
    from benchwatch.errors import UserError
    from benchwatch.results import RUN_FILE, read_run

    found = sorted(directory.glob(f"*/base-load/{RUN_FILE}"))
    if not found:
        raise UserError(f"--from {directory}: no <variant>/base-load/run.json there "
                        "(a `benchwatch calibrate --out` directory)")  # fmt: skip
    runs = [(read_run(path.parent), read_run(path.parent.parent / "head-load")) for path in found]
    rounds = max((len(f.samples) for base, _ in runs for f in base.figures), default=0)
    pairs = [pair for base, head in runs for pair in aa_pairs(base, head)]
    variants = sorted({f.variant for base, _ in runs for f in base.figures})
    return _write(find_root(), pairs, rounds, variants, runs[0][0].environment)


def measure(args: argparse.Namespace) -> int:
    import datetime as dt

    from benchwatch import fingerprint
    from benchwatch.compare.rounds import compare_plan, measure_load
    from benchwatch.compare.sides import Side
    from benchwatch.config import load_project
    from benchwatch.measure import loadgen
    from benchwatch.measure.server import install_cleanup
    from benchwatch.results import ensure_writable

    project = load_project()
    variants = project.select(args.patterns or f"*@{DEFAULT_STACK}")
    stamp = dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    out = Path(args.out) if args.out else project.root / "results" / f"calibrate-{stamp}"
    ensure_writable(out)
    oha = loadgen.ensure_oha()
    install_cleanup()
    environment = fingerprint.collect(project.root, loadgen.oha_version(oha))
    plan = compare_plan(quick=True, rounds=args.rounds)
    pairs = []
    for variant in variants:  # exactly what a quick compare measures, with both sides the same
        sides = [Side(role, variant.stack.name, "stack", project, [variant]) for role in ("base", "head")]
        base_run, head_run = measure_load(sides[0], sides[1], plan, out / variant.id, environment, args.quiet)
        for problem in base_run.problems + head_run.problems:
            print(f"FAIL {problem.line()}")
        pairs += aa_pairs(base_run, head_run)
    return _write(project.root, pairs, args.rounds, [v.id for v in variants], environment)


def _write(root: Path, pairs: list, rounds: int, variants: list[str], environment: dict) -> int:
    from benchwatch.compare.calibrate import (
        alert_threshold,
        floor_key,
        floors_from_aa,
        write_calibration,
    )
    from benchwatch.compare.rounds import COMPARE_QUICK_ROUNDS
    from benchwatch.errors import UserError

    floors, detail = floors_from_aa(pairs, COMPARE_QUICK_ROUNDS)
    if not floors:
        raise UserError("calibrate: no valid A/A measurement; see the failures above", exit_code=2)
    between_runs, _ = floors_from_aa(pairs, COMPARE_QUICK_ROUNDS, paired=False)
    calibration = write_calibration(
        root, floors, detail, rounds=rounds, compare_rounds=COMPARE_QUICK_ROUNDS,
        variants=variants, environment=environment, between_runs=between_runs,
    )  # fmt: skip
    for key, floor in calibration.floors.items():
        own = sorted(detail.get(key, {}).values())
        print(f"{key:<22} largest {floor:.1%}, per figure {own[0]:.1%} to {own[-1]:.1%} ({len(own)} figures)")
    unused = sorted({floor_key(a) for a, _ in pairs} - set(floors))
    if unused:
        print(f"no floor measured for {', '.join(unused)}: compare uses the defaults")
    print(f"wrote {root / 'calibration.json'}; alert-threshold: {alert_threshold(calibration)}%")
    return 0

