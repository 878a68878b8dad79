"""A run's report files: report.md (the PR-comment-sized markdown) and a self-contained report.html."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from benchwatch.report.html import render_html
from benchwatch.report.markdown import REPORT_HTML, REPORT_MD, build, render_markdown
from benchwatch.report.palette import shared_flavors
from benchwatch.results.files import write_text_atomic
from benchwatch.results.schema import Run


def write_report(
    out_dir: Path, run: Run, reference_stack: str | None = None, stacks: Sequence[str] = ()
) -> None:
    """reference_stack defaults to run.extra.reference_stack; stacks is the preferred order."""
    with shared_flavors():  # a flavor keeps its pattern from chart to chart
        report = build(run, reference_stack, stacks)
        write_text_atomic(out_dir / REPORT_MD, render_markdown(report))
        write_text_atomic(out_dir / REPORT_HTML, render_html(report))
