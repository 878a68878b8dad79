"""`benchwatch mechanism`: the nightly-regression issue's section, on a saved compare (the
rehearsal's push that regressed `tiny GET /hi`) given the functions of two saved callgrind dumps
(tests/fixtures/counts: hello@latest, head with a loop per request) and a system call that moved."""

from __future__ import annotations

import re
from pathlib import Path

from conftest import REPO
from test_counts import BASE_PHASE, HEAD_PHASE, PHASE_REQUESTS, unpacked

from benchwatch.cli import main
from benchwatch.counts.breakdown import breakdown, by_object
from benchwatch.judge.verdict import Comparison
from benchwatch.publish.regression_mechanism import regressed_endpoints, render
from benchwatch.trend.relative import read_comparison

SAVED = REPO / "tests" / "fixtures" / "rehearsal" / "pushes" / "ebafef83f46f" / "compare"
KEY = "tiny GET /hi seq"
INSTRUCTIONS = f"{KEY} instructions_per_request"
SYSCALLS = f"{KEY} syscalls_per_request"


def _regressed(tmp_path: Path) -> tuple[Comparison, list]:
    """The saved compare, its instructions broken down by the saved dumps, and `newfstatat`
    0 → 300 per request in its (now regressed) system calls."""
    comparison = read_comparison(SAVED)
    found = breakdown(
        [unpacked(tmp_path, BASE_PHASE)], [unpacked(tmp_path, HEAD_PHASE)], PHASE_REQUESTS
    )
    comparison.extra.counts.by_object[INSTRUCTIONS] = by_object(found)
    (calls,) = [r for r in comparison.rows if r.label == SYSCALLS]
    calls.verdict = "regression"
    calls.detail = {**calls.detail, "newfstatat": [0.0, 300.0]}
    return comparison, found.functions


def test_the_functions_that_moved_are_kept_as_data_largest_change_first(tmp_path):
    comparison, functions = _regressed(tmp_path)
    kept = comparison.extra.counts.by_object[INSTRUCTIONS].functions
    moved = [f for f in functions if round(f.change) != 0][:5]
    assert [f.name for f in kept] == [f.name for f in moved] and len(kept) == 5
    assert kept[0].head > kept[0].base and kept[0].name.endswith("(libpython)")
    assert (kept[0].base, kept[0].head) == (round(moved[0].base, 1), round(moved[0].head, 1))


def test_a_regressed_endpoint_says_its_system_calls_and_functions_once(tmp_path):
    comparison, functions = _regressed(tmp_path)
    # three gating rows regressed (two timings and the counts), all of one endpoint
    assert regressed_endpoints(comparison) == [
        "tiny GET /hi c=10",
        "tiny GET /hi rate=50%",
        KEY,
    ]
    text = render(comparison)
    assert text.startswith("### Mechanism: what moved per request, e336f7f9b79e → ebafef83f46f\n")
    assert text.count(f"**`{KEY}`**") == 1
    went = comparison.extra.counts.by_object[INSTRUCTIONS]
    assert f"instructions {went.base:,.0f} → {went.head:,.0f}" in text
    # the request's own calls that moved; futex (scheduling, not in the cost) is left out
    assert "- system calls: `newfstatat` 0.00 → 300.00\n" in text
    rows = re.findall(r"^\| `(.+)` \| ([0-9,]+) \| ([0-9,]+) \| ([+-][0-9,]+) \|$", text, re.M)
    assert [name for name, *_ in rows] == [f.name for f in went.functions]
    top = went.functions[0]  # the breakdown's largest change, per request (rounded to 0.1)
    assert top.name == functions[0].name
    assert rows[0][1:] == (f"{top.base:,.0f}", f"{top.head:,.0f}", f"{top.head - top.base:+,.0f}")
    assert rows[0][3].startswith("+") and int(rows[0][3][1:].replace(",", "")) > 1000


def test_a_compare_without_the_functions_says_so_and_one_without_a_regression_says_nothing(
    tmp_path,
):
    saved = read_comparison(SAVED)  # written before the functions were kept: no breakdown
    assert "- functions: not broken down (their callgrind files were not kept)" in render(saved)
    comparison, _ = _regressed(tmp_path)
    went = comparison.extra.counts.by_object[INSTRUCTIONS]
    comparison.extra.counts.by_object[INSTRUCTIONS] = went.model_copy(update={"functions": []})
    assert "- functions: not recorded by this compare (only the shared objects)" in render(
        comparison
    )
    for row in comparison.rows:
        row.verdict = "unchanged" if row.verdict == "regression" else row.verdict
    assert render(comparison) == ""


def test_the_command_writes_the_section_from_a_compare_directory(tmp_path, capsys):
    comparison, _ = _regressed(tmp_path)
    directory = tmp_path / "compare"
    directory.mkdir()
    (directory / "compare.json").write_text(comparison.model_dump_json())
    out = tmp_path / "mechanism.md"
    assert main(["mechanism", str(directory), "--out", str(out)]) == 0
    assert out.read_text() == render(comparison)
    assert main(["mechanism", str(tmp_path / "missing")]) == 3
    assert "cannot read the comparison" in capsys.readouterr().err
