"""Every output that can be made again without measuring, written into one folder, so that a change
meant to keep behaviour (a restructuring) can be diffed byte for byte: each command's --help, and
from saved results (folders holding compare.json or run.json) the PR comment, its headline and
terminal lines, compare.json as compare writes it, the trend entries, report.md/report.html, the
github-action-benchmark files and a site. Usage:
    .venv/bin/python scripts/outputs_snapshot.py OUT DIR [DIR ...]
then `diff -r OUT_BEFORE OUT_AFTER`."""

from __future__ import annotations

import contextlib
import io
import json
import sys
from pathlib import Path

from benchwatch.cli import main as cli_main


def _cli(argv: list[str]) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        try:
            code = cli_main(argv)
        except SystemExit as exit_:
            code = exit_.code
    return f"{out.getvalue()}(exit {code})\n"


def helps(out: Path) -> None:
    from benchwatch.cli import COMMANDS

    (out / "help").mkdir(parents=True)
    (out / "help" / "benchwatch.txt").write_text(_cli(["--help"]))
    for name in COMMANDS:
        (out / "help" / f"{name}.txt").write_text(_cli([name, "--help"]))


def compare_outputs(source: Path, out: Path) -> None:
    from benchwatch.judge.moved import terminal_lines
    from benchwatch.judge.verdict import Comparison
    from benchwatch.report.comment import render
    from benchwatch.report.headline import headline
    from benchwatch.trend.relative import relative_entries

    comparison = Comparison.model_validate_json((source / "compare.json").read_text())
    out.mkdir(parents=True)
    (out / "comment.md").write_text(render(comparison))
    data = comparison.model_dump(mode="json")
    data["summary"] = {**comparison.counts(), "exit_code": comparison.exit_code()}
    (out / "compare.json").write_text(json.dumps(data, indent=2, sort_keys=True))
    lines = terminal_lines(comparison.extra.moved) + [headline(comparison)]
    (out / "terminal.txt").write_text("\n".join(lines) + "\n")
    entries, skipped = relative_entries(comparison, every=True)
    (out / "relative.json").write_text(
        json.dumps(
            {"entries": entries, "skipped": [str(s) for s in skipped]}, indent=2, sort_keys=True
        )
    )


def run_outputs(source: Path, out: Path) -> None:
    from benchwatch.report.write import write_report
    from benchwatch.results.files import read_run
    from benchwatch.results.schema import gab_entries

    record = read_run(source)
    out.mkdir(parents=True)
    write_report(out, record)
    for name, bigger, counts in (
        ("bigger", True, False),
        ("smaller", False, False),
        ("counts", False, True),
    ):
        entries = gab_entries(record.figures, bigger, counts)
        (out / f"gab-{name}.json").write_text(json.dumps(entries, indent=2, sort_keys=True))
    printed = _cli(["site", "--run", str(source), "--out", str(out / "site")])
    (out / "site.txt").write_text(printed.replace(str(out), "OUT"))


def main(argv: list[str]) -> int:
    out = Path(argv[0])
    if out.exists():
        raise SystemExit(f"{out} exists: give a new folder")
    helps(out)
    for number, source in enumerate(Path(d) for d in argv[1:]):
        for found in sorted(source.rglob("compare.json")):
            compare_outputs(
                found.parent, out / f"{number}" / found.parent.relative_to(source) / "compare"
            )
        for found in sorted(source.rglob("run.json")):
            run_outputs(found.parent, out / f"{number}" / found.parent.relative_to(source) / "run")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
