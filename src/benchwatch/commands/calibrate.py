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
    from benchwatch.calibrate import alert_threshold, load_calibration
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


def aa_pairs(done) -> list:
    """(A, A') figure pairs of one A/A run, each with its own samples."""
    from benchwatch.load import AA_SUFFIX

    pairs = []
    for name, entry in done.extra.get("aa_noise", {}).get("figures", {}).items():
        original = next((f for f in done.figures if f.name == name), None)
        if original is None:
            continue
        twin = original.model_copy(update={"name": name + AA_SUFFIX, "samples": entry["a_prime"]})
        pairs.append((original.model_copy(update={"samples": entry["a"]}), twin))
    return pairs


def recompute(directory: Path) -> int:
    from benchwatch.config import find_root
    from benchwatch.errors import UserError
    from benchwatch.results import RUN_FILE, read_run

    runs = [read_run(path.parent) for path in sorted(directory.glob(f"*/{RUN_FILE}"))]
    if not runs:
        raise UserError(f"--from {directory}: no <variant>/run.json there (a `benchwatch calibrate --out` directory)")
    rounds = max(len(f.samples) for run in runs for f in run.figures) if runs[0].figures else 0
    pairs = [pair for run in runs for pair in aa_pairs(run)]
    variants = sorted({f.variant for run in runs for f in run.figures})
    return _write(find_root(), pairs, rounds, variants, runs[0].environment)


def measure(args: argparse.Namespace) -> int:
    import dataclasses
    import datetime as dt

    from benchwatch import fingerprint, loadgen
    from benchwatch.abrounds import QUICK_DURATION
    from benchwatch.config import load_project
    from benchwatch.load import QUICK, LoadStage, start_run
    from benchwatch.results import ensure_writable
    from benchwatch.server import install_cleanup

    project = load_project()
    variants = project.select(args.patterns or f"*@{DEFAULT_STACK}")
    stamp = dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    out = Path(args.out) if args.out else project.root / "results" / f"calibrate-{stamp}"
    ensure_writable(out)
    oha = loadgen.ensure_oha()
    install_cleanup()
    environment = fingerprint.collect(project.root, loadgen.oha_version(oha))
    plan = dataclasses.replace(QUICK, rounds=args.rounds, duration=QUICK_DURATION)
    pairs = []
    for variant in variants:
        record = start_run(["calibrate", variant.id], dict(environment))
        stage = LoadStage(project, [variant], plan, out / variant.id, run=record, aa_variant=variant.id,
                          quiet=args.quiet)  # fmt: skip
        done = stage.execute()
        for problem in done.problems:
            print(f"FAIL {problem.line()}")
        pairs += aa_pairs(done)
    return _write(project.root, pairs, args.rounds, [v.id for v in variants], environment)


def _write(root: Path, pairs: list, rounds: int, variants: list[str], environment: dict) -> int:
    from benchwatch.abrounds import COMPARE_QUICK_ROUNDS
    from benchwatch.calibrate import alert_threshold, floor_key, floors_from_aa, write_calibration
    from benchwatch.errors import UserError

    floors, detail = floors_from_aa(pairs, COMPARE_QUICK_ROUNDS)
    if not floors:
        raise UserError("calibrate: no valid A/A measurement; see the failures above", exit_code=2)
    calibration = write_calibration(
        root, floors, detail, rounds=rounds, compare_rounds=COMPARE_QUICK_ROUNDS,
        variants=variants, environment=environment,
    )  # fmt: skip
    for key, floor in calibration.floors.items():
        own = sorted(detail.get(key, {}).values())
        print(f"{key:<22} largest {floor:.1%}, per figure {own[0]:.1%} to {own[-1]:.1%} ({len(own)} figures)")
    unused = sorted({floor_key(a) for a, _ in pairs} - set(floors))
    if unused:
        print(f"no floor measured for {', '.join(unused)}: compare uses the defaults")
    print(f"wrote {root / 'calibration.json'}; alert-threshold: {alert_threshold(calibration)}%")
    return 0

