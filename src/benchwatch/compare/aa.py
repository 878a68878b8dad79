"""`benchwatch calibrate`: A/A compares (each variant against a second server of itself, side
by side as compare runs them) -> the noise floors in calibration.json."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from benchwatch.compare.calibrate import Calibration, floors_from_aa, write_calibration
from benchwatch.config import Project
from benchwatch.errors import UserError
from benchwatch.results import RUN_FILE, Environment, Figure, Run, ensure_writable, read_run

DEFAULT_STACK = "latest"
DEFAULT_ROUNDS = 16
MIN_ROUNDS = 4


def calibrate(
    project: Project, *, patterns: str | None = None, rounds: int = DEFAULT_ROUNDS, out: Path | None = None,
    quiet: bool = False,
) -> tuple[Calibration, list[tuple[Figure, Figure]], list[str]]:  # fmt: skip
    """Measure, write calibration.json; (calibration, A/A pairs, problem lines)."""
    from benchwatch import fingerprint
    from benchwatch.compare.rounds import compare_plan, measure_load
    from benchwatch.compare.sides import Side
    from benchwatch.measure import loadgen
    from benchwatch.measure.rounds import build_rig
    from benchwatch.measure.server import install_cleanup

    if rounds < MIN_ROUNDS:
        raise UserError(f"--rounds: an A/A calibration needs at least {MIN_ROUNDS} rounds")
    variants = project.select(patterns or f"*@{DEFAULT_STACK}")
    out = out or project.root / "results" / f"calibrate-{dt.datetime.now().strftime('%Y%m%d-%H%M%S')}"
    ensure_writable(out)
    oha = loadgen.ensure_oha()
    install_cleanup()
    environment = fingerprint.collect(project.root, loadgen.oha_version(oha))
    plan = compare_plan(quick=True, rounds=rounds)
    rig, failed = build_rig(oha, plan, variants)
    pairs: list[tuple[Figure, Figure]] = []
    problems: list[str] = []
    for variant in variants:  # exactly what a quick compare measures, with both sides the same
        base, head = (Side(role, variant.stack.name, "stack", project, [variant]) for role in ("base", "head"))
        base_run, head_run = measure_load(rig, base, head, out / variant.id, environment,
                                          failed_stacks=failed, quiet=quiet)  # fmt: skip
        problems += [p.line() for p in base_run.problems + head_run.problems]
        pairs += aa_pairs(base_run, head_run)
    calibration = _write(project.root, pairs, rounds, [v.id for v in variants], environment)
    return calibration, pairs, problems


def recompute(root: Path, directory: Path) -> tuple[Calibration, list[tuple[Figure, Figure]]]:
    """The floors from the A/A runs an earlier `calibrate --out DIR` left in `directory`."""
    found = sorted(directory.glob(f"*/base-load/{RUN_FILE}"))
    if not found:
        raise UserError(f"--from {directory}: no <variant>/base-load/run.json there "
                        "(a `benchwatch calibrate --out` directory)")  # fmt: skip
    runs = [(read_run(path.parent), read_run(path.parent.parent / "head-load")) for path in found]
    rounds = max((len(f.samples) for base, _ in runs for f in base.figures), default=0)
    pairs = [pair for base, head in runs for pair in aa_pairs(base, head)]
    variants = sorted({f.variant for base, _ in runs for f in base.figures})
    return _write(root, pairs, rounds, variants, runs[0][0].environment), pairs


def aa_pairs(base_run: Run, head_run: Run) -> list[tuple[Figure, Figure]]:
    """(A, A') figure pairs of one side-by-side A/A run: the same figure on both lanes."""
    heads = {f.name: f for f in head_run.figures}
    return [(f, heads[f.name]) for f in base_run.figures if f.name in heads]


def _write(root: Path, pairs: list[tuple[Figure, Figure]], rounds: int, variants: list[str],
           environment: Environment) -> Calibration:  # fmt: skip
    from benchwatch.compare.rounds import COMPARE_QUICK_ROUNDS

    floors, detail = floors_from_aa(pairs, COMPARE_QUICK_ROUNDS)
    if not floors:
        raise UserError("calibrate: no valid A/A measurement; see the failures above", exit_code=2)
    between_runs, _ = floors_from_aa(pairs, COMPARE_QUICK_ROUNDS, paired=False)
    return write_calibration(
        root, floors, detail, rounds=rounds, compare_rounds=COMPARE_QUICK_ROUNDS,
        variants=variants, environment=environment, between_runs=between_runs,
    )  # fmt: skip
