"""Statements, retained memory and database buffers per request in the trends: a series of zeros
is a flat, quiet series (not "no verdict"), 0 → N is a change point sized in the figure's own unit,
in `benchwatch changes`' JSON and markdown, on the site's charts and in the change-point issue."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import REPO
from test_changes import SMALLER, _series, _write

from benchwatch.cli import main
from benchwatch.publish.site_changes import change_table, marks
from benchwatch.publish.trends import mark_size
from benchwatch.trend.changes import analyse, params_for

STATEMENTS = "blog@latest GET /posts seq statements/req"
RETAINED = "blog@latest GET /posts seq retained/req"
BUFFERS = "blog@latest GET /items/{id} seq db buffers/req"


def test_an_endpoint_that_sends_no_statement_is_a_quiet_series() -> None:
    for name in (STATEMENTS, RETAINED):
        result = analyse(_series(name, [0.0] * 12))
        assert (result.verdict, result.changes, params_for(name).mode) == (
            "no change",
            [],
            "difference",
        )


def test_a_first_statement_and_an_n_plus_one_are_change_points_by_their_difference() -> None:
    result = analyse(_series(STATEMENTS, [0.0, 0.0, 0.0, 1.0, 1.0, 101.0, 101.0]))
    found = [(c.index, c.kind, c.difference) for c in result.changes]
    assert found == [(3, "regression", 1.0), (5, "regression", 100.0)]
    assert str(result.changes[0].ratio) == "nan" and result.changes[1].ratio == 101.0
    # a statement every few requests (a pool's ping: 0.25 per request) stays under the 0.5 floor
    assert analyse(_series(STATEMENTS, [2.0, 2.25, 2.0, 2.0])).verdict == "no change"
    fewer = analyse(_series(STATEMENTS, [21.0, 21.0, 2.0]))
    assert [(c.kind, c.difference) for c in fewer.changes] == [("improvement", -19.0)]


def test_a_leak_is_a_change_point_of_retained_memory_and_a_negative_segment_is_a_value() -> None:
    result = analyse(_series(RETAINED, [0.0, -0.02, 0.0, 0.0, 1.0, 1.0]))
    assert [(c.index, c.kind, c.difference) for c in result.changes] == [(4, "regression", 1.0)]


def test_database_buffers_are_judged_point_to_point_against_their_ten_percent_floor() -> None:
    """Above 0 by their ratio floor (3 → 3.2 is within 10 %), from 0 by more than one page."""
    assert params_for(BUFFERS).mode == "difference"
    result = analyse(_series(BUFFERS, [3.0, 3.0, 3.2, 147.0, 147.0]))
    assert [(c.index, c.kind) for c in result.changes] == [(3, "regression")]
    from_zero = analyse(_series(BUFFERS, [0.0, 0.0, 0.5, 3.0]))
    assert [(c.index, c.kind) for c in from_zero.changes] == [(3, "regression")]


def test_changes_says_the_difference_in_its_json_markdown_and_on_the_site(
    tmp_path: Path, capsys
) -> None:
    data = tmp_path / "dev" / "bench" / "data.js"
    zeros = "blog@latest GET /health seq statements/req"
    _write(data, {"counts": (SMALLER, {STATEMENTS: [1.0, 1.0, 101.0], zeros: [0.0, 0.0, 0.0]})})
    out = tmp_path / "changes.json"
    code = main(["changes", "--data", str(tmp_path), "--json-file", str(out)])
    assert code == 1  # a gating regression: statements gate
    document = json.loads(out.read_text())
    by_name = {s["name"]: s for s in document["series"]}
    assert by_name[zeros]["verdict"] == "no change" and document["summary"]["no_verdict"] == 0
    [change] = by_name[STATEMENTS]["changes"]
    assert change["difference"] == 100.0 and change["ratio"] == 101.0 and change["low"] is None
    text = capsys.readouterr().out
    assert "1 → 101 us per request (+100.00)" in text  # _write stores every bench in "us"
    assert "No verdict" not in text
    [mark] = marks(document)
    assert mark_size(mark) == "+100 us/req (1 → 101)"
    assert "+100 us/req (1 → 101)" in change_table([mark])


def test_a_count_with_a_ratio_keeps_its_json_without_a_difference_key(tmp_path: Path) -> None:
    name = "blog@latest GET /posts seq instr/req"
    _write(tmp_path / "data.js", {"counts": (SMALLER, {name: [1e6, 1e6, 1.1e6]})})
    out = tmp_path / "changes.json"
    main(["changes", "--data", str(tmp_path), "--json-file", str(out)])
    [change] = json.loads(out.read_text())["series"][0]["changes"]
    assert "difference" not in change and change["ratio"] == pytest.approx(1.1)


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_the_change_point_issue_names_a_statements_change_in_its_unit(tmp_path: Path) -> None:
    document = {
        "series": [
            {
                "name": STATEMENTS,
                "suite": "counts",
                "unit": "statements",
                "mode": "difference",
                "points": 3,
                "alert": True,
                "changes": [
                    {
                        "kind": "regression",
                        "before": {"commit": "a" * 40, "url": ""},
                        "after": {"commit": "b" * 40, "url": ""},
                        "ratio": 101.0,
                        "low": None,
                        "high": None,
                        "p_value": 0.0,
                        "n_before": 2,
                        "n_after": 1,
                        "difference": 100.0,
                    }
                ],
            }
        ]
    }
    (tmp_path / "changes.json").write_text(json.dumps(document))
    script = f"""
const run = require({json.dumps(str(REPO / ".github/scripts/change-points.js"))});
const created = [];
const github = {{ paginate: async () => [], rest: {{ issues: {{
  listForRepo: () => {{}}, create: async (x) => created.push(x), update: async () => {{}},
  createComment: async () => {{}} }} }} }};
const core = {{ warning: () => {{}}, summary: {{ addRaw: () => ({{ write: async () => {{}} }}) }} }};
const context = {{ serverUrl: 'https://github.com', repo: {{ owner: 'o', repo: 'r' }}, runId: 1 }};
run({{ github, context, core, dir: {json.dumps(str(tmp_path))}, source: 'publish' }})
  .then(() => console.log(JSON.stringify(created)));
"""
    done = subprocess.run(["node", "-e", script], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    [issue] = json.loads(done.stdout)
    assert "+100.00 statements/req" in issue["body"]
