from __future__ import annotations

import argparse
import importlib.util
import sys
from pathlib import Path

from benchwatch.commands.load import add_load_options

HELP = "Verify, load-test, micro-benchmark, report and record the run in the local history"
DEFAULT_AA_VARIANT = "services@latest"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_load_options(parser)
    parser.add_argument("--history", metavar="DIR",
                        help="local trend history directory (default .benchwatch/history in the project)")  # fmt: skip
    parser.add_argument("--no-micro", action="store_true", help="skip the asv micro-benchmarks")
    parser.add_argument("--aa", metavar="VARIANT", default=DEFAULT_AA_VARIANT,
                        help=f"variant measured twice for the A/A noise (default {DEFAULT_AA_VARIANT}; "
                             "'none' to skip; the first selected variant when it is not selected)")  # fmt: skip


def run(args: argparse.Namespace) -> int:
    from benchwatch.commands import load as load_command
    from benchwatch.config import load_project
    from benchwatch.measure.load import say
    from benchwatch.results import write_run
    from benchwatch.trend import history

    project = load_project()
    history_dir = Path(args.history) if args.history else project.root / history.DEFAULT_DIR
    history.read(history_dir / history.DATA_FILE)  # a corrupt history stops us before any work
    record, out = load_command.execute(args, aa_variant=_aa_variant(args, project))
    if not args.no_micro:
        _micro(args, project, record, out)
        write_run(out, record)
    _report(out, record)
    path = history.append(history_dir, record, project.root)
    say(
        f"history: {path} ({sum(len(v) for v in history.read(path)['entries'].values())} entries)",
        args.quiet,
    )
    return 1 if record.problems else 0


def _aa_variant(args: argparse.Namespace, project) -> str | None:
    from benchwatch.commands import stack_names
    from benchwatch.measure.load import shard

    if args.aa == "none":
        return None
    selected = shard(project.select(args.patterns, stack_names(args)), args.shard)
    ids = [v.id for v in selected]
    if args.aa in ids:
        return args.aa
    return ids[0] if ids and args.aa == DEFAULT_AA_VARIANT else None


def _micro(args: argparse.Namespace, project, record, out: Path) -> None:
    from benchwatch.measure.load import say

    if importlib.util.find_spec("benchwatch.measure.micro") is None:
        say("micro: skipped (benchwatch.measure.micro is not available)", args.quiet)
        record.extra["micro"] = {"skipped": "benchwatch.measure.micro not available"}
        return
    from benchwatch.commands import stack_names
    from benchwatch.config import OWN_REQUIREMENTS_STACK
    from benchwatch.measure.load import shard
    from benchwatch.measure.micro import run_micro

    selected = shard(project.select(args.patterns, stack_names(args)), args.shard)
    names = list(
        dict.fromkeys(v.stack.name for v in selected if v.stack.name != OWN_REQUIREMENTS_STACK)
    )
    stacks = [project.stack(n) for n in names]
    if not stacks:
        return
    figures, problems = run_micro(stacks, None, args.quick, out, root=project.root,
                                  log=None if not args.quiet else (lambda line: None))  # fmt: skip
    record.figures += figures
    record.problems += problems


def _report(out: Path, record) -> None:
    if importlib.util.find_spec("benchwatch.report.markdown") is None:
        print("report: skipped (benchwatch.report.markdown is not available)", file=sys.stderr)
        return
    from benchwatch.report.markdown import write_report

    write_report(out, record)
