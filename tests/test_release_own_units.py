"""A release that changes SQL statements, database buffers or retained memory per request is named
with the figure's own unit: in attribution.md (the nightly issue's text) and on the releases page,
as instructions and system calls are. The attributions are made the way attribute's counts path
makes them (judged_rows, then attributed_ratios), from CONSTRUCTED figures (not one run)."""

from __future__ import annotations

import re

from test_cost import counts
from test_gate import WEIGHTS, load_figure

from benchwatch.attribute.outcomes import StepOutcome
from benchwatch.attribute.table import Attribution, attributed_ratios, build_lines, markdown
from benchwatch.figures.metrics import DB_BUFFERS, RETAINED, STATEMENTS, Counted
from benchwatch.judge.judged import judged_rows
from benchwatch.publish.release_mechanisms import mechanism_table
from benchwatch.publish.site import render_releases_page

ENDPOINT = "GET /posts"
N_PLUS_ONE = "SQL statements 1 → 101 statements per request (+100)"
SCAN = "database buffers 3 → 147 buffers per request (+144)"
LEAK = "retained memory 0 → 1 blocks per request (+1)"


def side(statements: float, buffers: float, retained: float) -> list:
    """One endpoint's counts as a side of a step counts them (three phases each)."""
    return [
        *counts(ENDPOINT, [400_000.0, 400_100.0, 400_200.0], {"read": 1.0, "write": 2.0}),
        load_figure(ENDPOINT, STATEMENTS, [statements] * 3, Counted()),
        load_figure(ENDPOINT, DB_BUFFERS, [buffers] * 3, Counted()),
        load_figure(ENDPOINT, RETAINED, [retained] * 3, Counted()),
    ]


def outcome(name: str, package: str, moved: tuple[str, str], figures: list) -> StepOutcome:
    rows, _ = judged_rows(side(1.0, 3.0, 0.0), figures, None, WEIGHTS)
    return StepOutcome(
        step=name,
        kind="package",
        requested=package,
        group=[package],
        moved={package: moved},
        ratios={label: r for label, (_, r) in attributed_ratios(rows).items()},
    )


def attribution() -> Attribution:
    steps = [
        outcome("base+sqlalchemy", "sqlalchemy", ("2.0.30", "2.0.31"), side(101.0, 147.0, 0.0)),
        outcome("base+fastapi", "fastapi", ("0.129.2", "0.130.0"), side(1.0, 3.0, 1.0)),
        outcome("base+uvicorn", "uvicorn", ("0.41.0", "0.42.0"), side(1.0, 3.0, 0.0)),
    ]
    direct = outcome("direct", "all", ("", ""), side(101.0, 147.0, 1.0))
    scenario_of = {label: "hello" for step in steps for label in step.ratios}
    return Attribution(
        base="latest",
        head="next",
        scenarios=["hello"],
        quick=True,
        rounds=None,
        steps=steps,
        direct=direct,
        lines=build_lines(steps, direct, scenario_of),
        mechanisms=True,
        method="counts",
        repeats=2,
    )


def test_the_attribution_text_names_the_release_that_changed_statements_buffers_and_memory() -> (
    None
):
    text = markdown(attribution())
    responsible = next(line for line in text.splitlines() if line.startswith("**Responsible:**"))
    assert f"base+sqlalchemy (sqlalchemy) {N_PLUS_ONE} on hello GET /posts seq" in responsible
    assert f"base+sqlalchemy (sqlalchemy) {SCAN}" in responsible
    assert f"base+fastapi (fastapi) {LEAK} on" in responsible
    assert "uvicorn" not in responsible
    # each step's row in its own unit; the steps' sum is not a product of ratios
    assert f"| base+sqlalchemy | sqlalchemy 2.0.30→2.0.31 | {N_PLUS_ONE}; 101.000" in text
    assert (
        "| base+uvicorn | uvicorn 0.41.0→0.42.0 | SQL statements 1 → 1 statements per request; 1.000"
        in text
    )
    assert "not multiplied: a count in its own unit adds up over the steps" in text
    assert "the steps interact" not in text


def test_the_releases_page_names_the_release_with_the_figures_own_unit() -> None:
    result = attribution()
    rows = {row[0].text: row for row in mechanism_table(result.base, result.head, [result]).rows}
    assert set(rows) == {"sqlalchemy 2.0.30 → 2.0.31", "fastapi 0.129.2 → 0.130.0"}
    sqlalchemy = rows["sqlalchemy 2.0.30 → 2.0.31"]
    assert sqlalchemy[3].text == "GET /posts"
    assert f"{SCAN}: more" in sqlalchemy[4].text and f"{N_PLUS_ONE}: more" in sqlalchemy[4].text
    assert sqlalchemy[4].tone == "worse"
    # its estimated cost weighs the buffers in (counts/cost.py): higher, said first
    assert sqlalchemy[4].text.split(";")[0].endswith("higher")
    assert f"{LEAK}: more kept" in rows["fastapi 0.129.2 → 0.130.0"][4].text
    page = render_releases_page([("attribution.json", result)], None)
    every = page.split("Every figure of every step")[1]
    assert f"{N_PLUS_ONE}: more" in every
    assert "SQL statements 1 → 1 statements per request: no significant change" in every
    assert re.search(r'<td class="worse">[^<]*' + re.escape(f"{N_PLUS_ONE}: more"), page)


def test_an_attribution_without_these_figures_reads_as_before() -> None:
    """The figures of an app without a database or statements: no own-unit words anywhere."""
    rows, _ = judged_rows(
        counts(ENDPOINT, [1e5, 1e5, 1e5], {"read": 1.0}),
        counts(ENDPOINT, [2e5, 2e5, 2e5], {"read": 1.0}),
        None,
        WEIGHTS,
    )
    ratios = {label: r for label, (_, r) in attributed_ratios(rows).items()}
    assert all("per request" not in r.text for r in ratios.values())
    assert not any("statements" in label or "buffers" in label for label in ratios)
