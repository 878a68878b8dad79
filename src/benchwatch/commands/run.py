from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from benchwatch.commands.load import add_load_options
from benchwatch.errors import EXIT_OK, EXIT_UNMEASURED

if TYPE_CHECKING:  # annotations only: a command imports what it runs when it runs (start-up time)
    from benchwatch.declarations.project_file import Question
    from benchwatch.project.variants import Project, Variant
    from benchwatch.results.schema import Run

HELP = "Verify, load-test, micro-benchmark, report and record the run in the local history"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_load_options(parser)
    parser.add_argument(
        "--history",
        type=Path,
        metavar="DIR",
        help="local trend history directory (default .benchwatch/history in the project)",
    )
    parser.add_argument("--no-micro", action="store_true", help="skip the asv micro-benchmarks")
    parser.add_argument(
        "--no-questions",
        "--no-findings",
        dest="no_questions",
        action="store_true",
        help="skip the side-by-side rounds of benchwatch.toml's [[questions]] "
        "(the report then says 'not run')",
    )
    parser.add_argument(
        "--aa",
        metavar="VARIANT",
        help="variant measured twice for the A/A noise (default: the run's first variant; "
        "'none' to skip)",
    )


def run(args: argparse.Namespace) -> int:
    from benchwatch.commands import load as load_command
    from benchwatch.commands import stack_names
    from benchwatch.measure import preflight
    from benchwatch.measure.load import say
    from benchwatch.measure.load_plan import shard
    from benchwatch.measure.session import open_session
    from benchwatch.project.loading import load_project
    from benchwatch.report.tables import usable_reference
    from benchwatch.report.write import write_report
    from benchwatch.results.files import write_run
    from benchwatch.trend import history

    project = load_project()
    history_dir = args.history or project.root / history.DEFAULT_DIR
    history.read(history_dir / history.DATA_FILE)  # a corrupt history stops us before any work
    everything = project.select(args.patterns, stack_names(args))
    selected = shard(everything, args.shard)
    aa = aa_variant(args.aa, [v.id for v in selected], [v.id for v in everything])
    preflight.check(everything)
    session = open_session(project.root, args.out, load_tests=True)
    if session.oha is None:  # load_tests=True finds (or installs) oha, or stops with a UserError
        raise ValueError("run needs a session opened with load_tests=True")
    record, out = load_command.execute(args, aa, project, selected, session)
    if project.questions and (args.shard is None or args.shard.startswith("1/")):
        _questions(args, project.questions, everything, record, session.oha)
        write_run(out, record)
    if not args.no_micro:
        _micro(args, project, selected, record, out)
        write_run(out, record)
    reference, said = usable_reference(record, project.reference_stack)
    if project.reference_stack and reference is None:
        say(said, args.quiet)
    write_report(out, record)
    path = history.append(history_dir, record, project.root)
    entries = sum(len(v) for v in history.read(path)["entries"].values())
    say(f"history: {path} ({entries} entries)", args.quiet)
    return EXIT_UNMEASURED if record.problems else EXIT_OK


def aa_variant(chosen: str | None, selected: list[str], everything: list[str]) -> str | None:
    """The variant measured twice: the one asked for ('none': no A/A copy), by default the run's
    first variant. One asked for that the run does not select is bad input; one in another shard
    of the run is measured there, not here."""
    from benchwatch.errors import UserError

    if chosen == "none":
        return None
    if chosen is None:
        return selected[0] if selected else None
    if chosen not in everything:
        raise UserError(
            f"--aa {chosen}: not a variant of this run (see `benchwatch list`; 'none' for no A/A copy)"
        )
    return chosen if chosen in selected else None


def _questions(
    args: argparse.Namespace,
    questions: Sequence[Question],
    selected: Sequence[Variant],
    record: Run,
    oha: str,
) -> None:
    """benchwatch.toml's questions, each with its lanes side by side (shard 1 of N measures them all)."""
    from benchwatch.compare.findings_rounds import measure_questions
    from benchwatch.measure.load import say
    from benchwatch.results.schema import SideBySideInfo

    if args.no_questions:
        reason = "skipped (run --no-questions)"
        record.extra.side_by_side = SideBySideInfo(
            questions=list(questions), not_run={q.name: reason for q in questions}
        )
        return
    say(f"questions: {len(questions)} declared, each question's servers side by side", args.quiet)
    info = measure_questions(questions, selected, oha=oha, quick=args.quick, quiet=args.quiet)
    record.extra.side_by_side = info
    record.problems += [
        p.model_copy(update={"reason": f"questions side by side: {p.reason}"})
        for p in info.problems
    ]
    ran = len({r.group for r in info.ratios})
    say(
        f"questions: {ran} of {len(questions)} answered side by side in {info.seconds:.0f} s "
        f"({info.plan.rounds if info.plan else 0} rounds)",
        args.quiet,
    )


def _micro(
    args: argparse.Namespace, project: Project, selected: Sequence[Variant], record: Run, out: Path
) -> None:
    from benchwatch.micro.asv import has_benchmarks, run_micro
    from benchwatch.project.apps import OWN_REQUIREMENTS_STACK

    if not has_benchmarks(project.root):
        print(f"micro: skipped (no asv benchmarks/ folder in {project.root})", file=sys.stderr)
        return
    names = list(
        dict.fromkeys(v.stack.name for v in selected if v.stack.name != OWN_REQUIREMENTS_STACK)
    )
    if not names:
        return
    figures, problems = run_micro(
        [project.stack(n) for n in names],
        None,
        args.quick,
        out,
        root=project.root,
        log=None if not args.quiet else (lambda line: None),
    )
    record.figures += figures
    record.problems += problems
