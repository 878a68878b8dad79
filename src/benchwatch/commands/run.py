from __future__ import annotations

import argparse
import sys
from pathlib import Path

from benchwatch.commands.load import add_load_options
from benchwatch.errors import EXIT_OK, EXIT_UNMEASURED

HELP = "Verify, load-test, micro-benchmark, report and record the run in the local history"
DEFAULT_AA_VARIANT = "services@latest"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_load_options(parser)
    parser.add_argument("--history", type=Path, metavar="DIR",
                        help="local trend history directory (default .benchwatch/history in the project)")  # fmt: skip
    parser.add_argument("--no-micro", action="store_true", help="skip the asv micro-benchmarks")
    parser.add_argument("--no-findings", action="store_true",
                        help="skip the findings' side-by-side rounds (the report then says 'not run')")  # fmt: skip
    parser.add_argument("--aa", metavar="VARIANT", default=DEFAULT_AA_VARIANT,
                        help=f"variant measured twice for the A/A noise (default {DEFAULT_AA_VARIANT}; "
                             "'none' to skip; the first selected variant when it is not selected)")  # fmt: skip


def run(args: argparse.Namespace) -> int:
    from benchwatch.commands import load as load_command
    from benchwatch.commands import stack_names
    from benchwatch.config import load_project
    from benchwatch.measure.load import say
    from benchwatch.measure.plan import shard
    from benchwatch.report.write import write_report
    from benchwatch.results import write_run
    from benchwatch.trend import history

    project = load_project()
    history_dir = args.history or project.root / history.DEFAULT_DIR
    history.read(history_dir / history.DATA_FILE)  # a corrupt history stops us before any work
    everything = project.select(args.patterns, stack_names(args))
    selected = shard(everything, args.shard)
    record, out = load_command.execute(args, aa_variant(args.aa, [v.id for v in selected]), project, selected)
    if not args.no_findings and (args.shard is None or args.shard.startswith("1/")):
        _findings(args, everything, record)
        write_run(out, record)
    if not args.no_micro:
        _micro(args, project, selected, record, out)
        write_run(out, record)
    write_report(out, record)
    path = history.append(history_dir, record, project.root)
    entries = sum(len(v) for v in history.read(path)["entries"].values())
    say(f"history: {path} ({entries} entries)", args.quiet)
    return EXIT_UNMEASURED if record.problems else EXIT_OK


def aa_variant(chosen: str, selected: list[str]) -> str | None:
    """The variant measured twice: the one asked for when selected; by default the first
    selected one when the default is not; 'none' for no A/A copy."""
    if chosen == "none":
        return None
    if chosen in selected:
        return chosen
    return selected[0] if selected and chosen == DEFAULT_AA_VARIANT else None


def _findings(args: argparse.Namespace, selected, record) -> None:
    """The seeds' questions, each with its variants side by side (shard 1 of N measures them all)."""
    from benchwatch.compare.findings_rounds import measure_questions
    from benchwatch.measure import loadgen
    from benchwatch.measure.load import say

    say("findings: the seeds' questions, each question's servers side by side", args.quiet)
    info = measure_questions(selected, oha=loadgen.ensure_oha(), quick=args.quick, quiet=args.quiet)
    record.extra.side_by_side = info
    record.problems += [p.model_copy(update={"reason": f"findings side by side: {p.reason}"}) for p in info.problems]
    ran = len({r.group for r in info.ratios})
    say(f"findings: {ran} question groups side by side in {info.seconds:.0f} s ({info.plan.rounds} rounds)", args.quiet)


def _micro(args: argparse.Namespace, project, selected, record, out: Path) -> None:
    from benchwatch.config import OWN_REQUIREMENTS_STACK
    from benchwatch.measure.micro import has_benchmarks, run_micro

    if not has_benchmarks(project.root):
        print(f"micro: skipped (no asv benchmarks/ folder in {project.root})", file=sys.stderr)
        return
    names = list(dict.fromkeys(v.stack.name for v in selected if v.stack.name != OWN_REQUIREMENTS_STACK))
    if not names:
        return
    figures, problems = run_micro([project.stack(n) for n in names], None, args.quick, out, root=project.root,
                                  log=None if not args.quiet else (lambda line: None))  # fmt: skip
    record.figures += figures
    record.problems += problems
