"""`benchwatch calibrate`: A/A compares (each variant against a second server of itself, side
by side as compare runs them) -> the noise floors in calibration.json."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Sequence
from pathlib import Path

from benchwatch.errors import EXIT_UNMEASURED, UserError
from benchwatch.figures.metrics import COUNT_KEYS
from benchwatch.judge.calibrate import (
    CALIBRATION_FILE,
    Calibration,
    floors_from_aa,
    load_calibration,
    write_calibration,
)
from benchwatch.measure.session import now, open_session
from benchwatch.project.variants import Project
from benchwatch.results.files import read_run, write_json_atomic, write_run
from benchwatch.results.schema import RUN_FILE, Environment, Figure, Run

DEFAULT_STACK = "latest"
DEFAULT_ROUNDS = 16
MICRO_AA_ROUNDS = (
    36  # paired rounds; a quick compare uses 20, floors resample 20 of these (with replacement)
)
MIN_ROUNDS = 4


def calibrate(
    project: Project,
    *,
    patterns: str | None = None,
    rounds: int = DEFAULT_ROUNDS,
    out: Path | None = None,
    quiet: bool = False,
    micro: bool = True,
    micro_rounds: int = MICRO_AA_ROUNDS,
    load: bool = True,
) -> tuple[Calibration, list[tuple[Figure, Figure]], list[str]]:
    """Measure, write calibration.json; (calibration, A/A pairs, problem lines). The load
    figures as a quick compare measures them; with `micro`, the micro-benchmarks of the selected
    scenarios as compare measures them too (paired rounds of alternating batches, instruction counts)."""
    from benchwatch.compare.rounds import compare_plan, measure_base_and_head
    from benchwatch.compare.sides import Side
    from benchwatch.measure import preflight
    from benchwatch.measure.rig import build_rig

    if rounds < MIN_ROUNDS:
        raise UserError(f"--rounds: an A/A calibration needs at least {MIN_ROUNDS} rounds")
    if not load and not micro:
        raise UserError("--no-load and --no-micro together leave nothing to calibrate")
    variants = project.select(patterns or f"*@{DEFAULT_STACK}")
    preflight.check(variants)
    session = open_session(project.root, out, name="calibrate", load_tests=load)
    out, environment = session.out, session.environment
    pairs: list[tuple[Figure, Figure]] = []
    problems: list[str] = []
    if session.oha is not None:
        plan = compare_plan(quick=True, rounds=rounds)
        rig, failed = build_rig(session.oha, plan, variants)
        for variant in variants:  # exactly what a quick compare measures, with both sides the same
            base, head = (
                Side(role, variant.stack.name, "stack", project, [variant])
                for role in ("base", "head")
            )
            base_run, head_run = measure_base_and_head(
                rig, base, head, out / variant.id, environment, failed_stacks=failed, quiet=quiet
            )
            problems += [p.line() for p in base_run.problems + head_run.problems]
            pairs += aa_pairs(base_run, head_run)
    micro_pairs: list[tuple[Figure, Figure]] = []
    if micro:
        micro_pairs, trouble = _micro_aa(project, variants, micro_rounds, out, environment)
        problems += trouble
    ids = [v.id for v in variants]
    if load:
        calibration = _write(
            project.root, pairs, rounds, ids, environment, micro_pairs, micro_rounds
        )
    else:
        calibration = _write_micro_only(project.root, micro_pairs, micro_rounds, ids)
    return calibration, pairs + micro_pairs, problems


def _micro_aa(
    project: Project, variants: list, rounds: int, out: Path, environment: Environment
) -> tuple[list[tuple[Figure, Figure]], list[str]]:
    """Each stack's micro-benchmarks against themselves, as compare runs them; each side kept
    as a run directory (`micro-<stack>/base`, `head`) so `--from` can recompute."""
    from benchwatch.compare.rounds import measure_micro
    from benchwatch.compare.sides import Side

    pairs: list[tuple[Figure, Figure]] = []
    problems: list[str] = []
    for stack in dict.fromkeys(v.stack.name for v in variants):
        chosen = [v for v in variants if v.stack.name == stack]
        base, head = (Side(role, stack, "stack", project, chosen) for role in ("base", "head"))
        patterns = ",".join(v.id for v in chosen)
        found = measure_micro(base, head, True, rounds, patterns, out / f"micro-{stack}")
        problems += [p.line() for p in found.problems]
        if found.instructions_unavailable:
            problems.append(
                f"micro@{stack}: no instruction counts: {found.instructions_unavailable}"
            )
        for role, figures in (("base", found.base), ("head", found.head)):
            write_run(
                out / f"micro-{stack}" / role,
                Run(
                    started_at=now(),
                    complete=True,
                    environment=environment,
                    command=["benchwatch", "calibrate", "micro", role],
                    figures=figures,
                ),
            )
        heads = {f.name: f for f in found.head}
        pairs += [(f, heads[f.name]) for f in found.base if f.name in heads]
    return pairs, problems


def recompute(root: Path, directory: Path) -> tuple[Calibration, list[tuple[Figure, Figure]]]:
    """The floors from the A/A runs an earlier `calibrate --out DIR` left in `directory`."""
    found = sorted(directory.glob(f"*/base-load/{RUN_FILE}"))
    micro = [
        (read_run(path.parent), read_run(path.parent.parent / "head"))
        for path in sorted(directory.glob(f"micro-*/base/{RUN_FILE}"))
    ]
    if not found:
        raise UserError(
            f"--from {directory}: no <variant>/base-load/run.json there "
            "(a `benchwatch calibrate --out` directory)"
        )
    runs = [(read_run(path.parent), read_run(path.parent.parent / "head-load")) for path in found]
    rounds = max((len(f.samples) for base, _ in runs for f in base.figures), default=0)
    pairs = [pair for base, head in runs for pair in aa_pairs(base, head)]
    variants = sorted({f.variant for base, _ in runs for f in base.figures})
    micro_pairs = [pair for base, head in micro for pair in aa_pairs(base, head)]
    return _write(
        root, pairs, rounds, variants, runs[0][0].environment, micro_pairs
    ), pairs + micro_pairs


def aa_pairs(base_run: Run, head_run: Run) -> list[tuple[Figure, Figure]]:
    """(A, A') figure pairs of one side-by-side A/A run: the same figure on both lanes."""
    heads = {f.name: f for f in head_run.figures}
    return [(f, heads[f.name]) for f in base_run.figures if f.name in heads]


def _micro_method(
    micro_pairs: list[tuple[Figure, Figure]], rounds: int | None, variants: list[str]
) -> dict:
    from benchwatch.compare.rounds import MICRO_ROUNDS

    if not micro_pairs:
        return {}
    return {
        "method": f"A/A: each stack's quick micro-benchmark cases against themselves in paired rounds of "
        f"alternating batches ({rounds or 'as stored'} rounds), floors over resamples (with "
        f"replacement) of {MICRO_ROUNDS} paired rounds; instruction counts (cachegrind) A/A, "
        "at least 0.5 %",
        "rounds": rounds,
        "variants": variants,
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
    }


def _write_micro_only(
    root: Path, micro_pairs: list[tuple[Figure, Figure]], rounds: int, variants: list[str]
) -> Calibration:
    """New micro floors merged into the committed calibration.json; its load floors are kept."""
    from benchwatch.compare.rounds import MICRO_ROUNDS

    existing = load_calibration(root)
    if existing is None:
        raise UserError(
            "calibrate --no-load: no calibration.json to add micro floors to; run calibrate with load first"
        )
    floors, detail = floors_from_aa(micro_pairs, MICRO_ROUNDS)
    if not floors:
        raise UserError(
            "calibrate: no valid micro A/A measurement; see the failures above", EXIT_UNMEASURED
        )
    merged_floors = {k: v for k, v in existing.floors.items() if k not in floors} | floors
    merged_detail = {k: v for k, v in existing.detail.items() if k not in detail} | detail
    calibration = existing.model_copy(
        update={
            "floors": dict(sorted(merged_floors.items())),
            "detail": merged_detail,
            "micro": _micro_method(micro_pairs, rounds, variants),
        }
    )
    write_json_atomic(root / CALIBRATION_FILE, json.loads(calibration.model_dump_json()))
    return calibration


def _write(
    root: Path,
    pairs: list[tuple[Figure, Figure]],
    rounds: int,
    variants: list[str],
    environment: Environment,
    micro_pairs: Sequence[tuple[Figure, Figure]] = (),
    micro_rounds: int | None = None,
) -> Calibration:
    from benchwatch.compare.rounds import COMPARE_QUICK_ROUNDS, MICRO_ROUNDS

    floors, detail = floors_from_aa(pairs, COMPARE_QUICK_ROUNDS)
    if not floors:
        raise UserError(
            "calibrate: no valid A/A measurement; see the failures above", EXIT_UNMEASURED
        )
    existing = load_calibration(root)  # what this A/A does not measure is kept from it
    if micro_pairs:
        micro_floors, micro_detail = floors_from_aa(list(micro_pairs), MICRO_ROUNDS)
        micro = _micro_method(list(micro_pairs), micro_rounds, variants)
    else:  # no micro A/A (--no-micro, --from a load-only run, or every one failed, said): the micro floors stay
        micro_floors, micro_detail, micro = _kept_micro(existing)
    floors.update(micro_floors)
    detail.update(micro_detail)
    count_floors, count_detail, counts = _kept_counts(
        existing
    )  # measured by calibrate --counts-from alone
    floors.update(count_floors)
    detail.update(count_detail)
    between_runs, _ = floors_from_aa(pairs, COMPARE_QUICK_ROUNDS, paired=False)
    return write_calibration(
        root,
        floors,
        detail,
        rounds=rounds,
        compare_rounds=COMPARE_QUICK_ROUNDS,
        variants=variants,
        environment=environment,
        between_runs=between_runs,
        micro=micro,
        counts=counts,
    )


def _kept_micro(
    existing: Calibration | None,
) -> tuple[dict[str, float], dict[str, dict[str, float]], dict]:
    """The micro floors, per-figure floors and their method of an existing calibration."""
    from benchwatch.figures.metrics import MICRO_INSTRUCTIONS, MICRO_PEAKMEM, MICRO_TIME

    return *_kept(
        existing, {MICRO_TIME.key, MICRO_PEAKMEM.key, MICRO_INSTRUCTIONS.key}
    ), existing.micro if existing else {}


def _kept_counts(
    existing: Calibration | None,
) -> tuple[dict[str, float], dict[str, dict[str, float]], dict]:
    """The floors of the counts per request and their method of an existing calibration: a load
    A/A measures none of them, so a new load calibration must not drop them."""
    return *_kept(existing, set(COUNT_KEYS)), existing.counts if existing else {}


def _kept(
    existing: Calibration | None, keys: set[str]
) -> tuple[dict[str, float], dict[str, dict[str, float]]]:
    if existing is None:
        return {}, {}
    return (
        {k: v for k, v in existing.floors.items() if k in keys},
        {k: v for k, v in existing.detail.items() if k in keys},
    )
