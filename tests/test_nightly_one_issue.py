"""A regression night opens one issue: reusable-issues.yml's two github-script steps under node
on a saved record artifact (the shape a night with a slower FastAPI left: tonight's change points
on the nightly trend's count series, the releases, the mechanism, the compare's comment). The
nightly-regression issue lists tonight's change points and says through what the release moved;
the change-point step opens issues only for older change points, and on a night without a
regression (or a publish run) it opens one per series as before."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_workflows import GITHUB, _load, _run_script, _series

ISSUES = "reusable-issues.yml"
REGRESSION_STEP = "Open or update the nightly-regression issue"
CHANGES_STEP = "Change points, in the job summary and one issue per alerting series"
ENDPOINT = "backend@own-next GET /api/v1/items/ seq"
TONIGHT = [f"{ENDPOINT} {m}" for m in ("cost/req", "instr/req", "syscalls/req")]
OLDER = "backend@own-next GET /api/v1/users/me seq instr/req"
MECHANISM = (
    "### Mechanism: what moved per request, own → own-next\n\n"
    f"**`{ENDPOINT}`**: estimated cost 812.4 → 1460.0 µs\n\n"
    "- system calls: `newfstatat` 0.00 → 300.00\n"
)


def _night(tmp_path: Path) -> Path:
    """Night two's record: three count series changed at tonight's point (the second of two),
    one series with an older unacknowledged change point (point 4 of 10)."""
    tonight = []
    for name in TONIGHT:
        series = _series(name, True)
        series.update(suite="benchwatch nightly counts (per request)", points=2)
        series["changes"][0]["index"] = 1
        tonight.append(series)
    older = _series(OLDER, True)
    older["changes"][0]["index"] = 4
    record = tmp_path / "record"
    record.mkdir()
    (record / "changes.md").write_text("## Change points\n")
    (record / "changes.json").write_text(json.dumps({"series": [*tonight, older]}))
    (record / "releases.md").write_text("**backend**: fastapi 0.165.0 → 0.165.2\n")
    (record / "mechanism.md").write_text(MECHANISM)
    (record / "attribution.md").write_text("| fastapi | **regression** (exit 1): 1.8x slower |\n")
    (record / "comment.md").write_text("## benchwatch: 1.8x slower\n")
    return record


def _created(calls: list) -> list[dict]:
    return [args for kind, args in calls if kind == "create"]


def test_a_regression_night_opens_one_issue_that_lists_tonights_change_points(tmp_path):
    record = _night(tmp_path)
    env = {"RECORD_DIR": str(record)}
    (issue,) = _created(_run_script(ISSUES, tmp_path, {}, env, REGRESSION_STEP))
    assert issue["labels"] == ["nightly-regression"]
    body = issue["body"]
    # the release, then through what it moved, then which package, tonight's change points, the comment
    order = [
        "fastapi 0.165.0 → 0.165.2",
        "`newfstatat` 0.00 → 300.00",
        "| fastapi | **regression**",
        "Change points tonight on the nightly trend (3; here, not issues of their own)",
        "## benchwatch: 1.8x slower",
    ]
    assert [body.index(text) for text in order] == sorted(body.index(text) for text in order)
    for name in TONIGHT:  # each a row: name (mentions broken), tonight / last night, interval
        shown = name.replace("@", "@\u200b")
        assert f"| {shown} | 1.070 | [1.050, 1.090] |" in body
    assert "users/me" not in body  # an older change point is not tonight's

    calls = _run_script(ISSUES, tmp_path, {}, {**env, "FOLDED": "true"}, CHANGES_STEP)
    (older,) = _created(calls)  # only the older change point gets an issue of its own
    assert older["title"].startswith("Change point: backend@own-next GET /api/v1/users/me")
    said = [text for kind, text in calls if kind == "summary"]
    assert any(
        text.strip().startswith(
            "3 change point(s) at tonight's point are in the nightly-regression issue"
        )
        for text in said
    ), said


def test_without_a_regression_issue_each_alerting_series_gets_its_own(tmp_path):
    """A night whose compare found no regression, and every publish run: FOLDED is false."""
    record = _night(tmp_path)
    env = {"RECORD_DIR": str(record), "FOLDED": "false"}
    created = _created(_run_script(ISSUES, tmp_path, {}, env, CHANGES_STEP))
    assert len(created) == 4
    assert all(c["labels"] == ["change-point"] for c in created)


def test_an_older_series_with_a_change_tonight_too_keeps_its_issue_for_the_older_one(tmp_path):
    record = _night(tmp_path)
    document = json.loads((record / "changes.json").read_text())
    older = document["series"][-1]
    tonight = {**older["changes"][0], "index": 9}
    older["changes"].append(tonight)
    (record / "changes.json").write_text(json.dumps(document))
    env = {"RECORD_DIR": str(record), "FOLDED": "true"}
    (created,) = _created(_run_script(ISSUES, tmp_path, {}, env, CHANGES_STEP))
    assert created["body"].count("\n| [`aaaaaaaa`]") == 1  # the older change point's row alone
    (issue,) = _created(_run_script(ISSUES, tmp_path, {}, env, REGRESSION_STEP))
    assert "Change points tonight on the nightly trend (4;" in issue["body"]


def test_the_change_point_step_is_told_when_the_regression_issue_was_opened():
    (job,) = _load(GITHUB / "workflows" / ISSUES)["jobs"].values()
    steps = {s.get("name"): s for s in job["steps"]}
    assert steps[REGRESSION_STEP]["if"] == "inputs.kind == 'nightly' && inputs.nightly-regression"
    assert (
        steps[CHANGES_STEP]["env"]["FOLDED"]
        == "${{ inputs.kind == 'nightly' && inputs.nightly-regression }}"
    )
    assert "folded: process.env.FOLDED === 'true'" in steps[CHANGES_STEP]["with"]["script"]


@pytest.mark.parametrize(
    "rounds, code",
    [("12", 0), ("6", 0), ("5", 3), ("0", 3), ("", 3), ("6; id", 3), ("100", 3), ("06", 3)],
)
def test_the_nightly_s_rounds_input_is_a_number_of_load_rounds(rounds, code):
    """`rounds`: the releases compare's load rounds (the runner test gives 6, the fewest whose
    pairs give a 95 % interval), checked first."""
    from test_workflow_attacks import inputs, run_step, step

    check = step("reusable-nightly.yml", "measure", "Check the inputs")
    assert check["env"]["ROUNDS"] == "${{ inputs.rounds }}"
    done = run_step(check, {k: v for k, v in inputs(ROUNDS=rounds).items() if k in check["env"]})
    assert done.returncode == code, done.stdout + done.stderr
    if code:
        assert "::error::rounds: a number of load rounds" in done.stdout
    compare = step(
        "reusable-nightly.yml",
        "measure",
        "Compare latest (pinned baseline) with next on this runner",
    )
    assert (
        '--rounds "$ROUNDS"' in compare["run"]
        and compare["env"]["ROUNDS"] == "${{ inputs.rounds }}"
    )
