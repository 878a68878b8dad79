"""benchwatch.toml's [[questions]]: how they are declared and checked, how `run` measures them
side by side and how the report shows them; the A/A variant `run` picks from its own variants."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import FIXTURE_APPS, benchwatch, make_project, uvicorn_processes

from benchwatch.commands.run import aa_variant
from benchwatch.compare.questions import group_of
from benchwatch.errors import UserError
from benchwatch.figures.metrics import CPU, RSS_IDLE
from benchwatch.project.loading import load_project
from benchwatch.results.files import read_run

GOOD = FIXTURE_APPS / "good"
ITEMS_VS_ECHO = """
[[questions]]
name = "items_vs_echo"
steps = ["call"]
lanes = [
    { name = "items", variant = "good@latest", endpoints = ["items"] },
    { name = "echo", variant = "good@latest", endpoints = ["echo"] },
]
"""


def project_with(tmp_path: Path, questions: str) -> Path:
    project = make_project(tmp_path / "project", [GOOD])
    path = project / "benchwatch.toml"
    path.write_text(path.read_text() + questions)
    return project


def test_a_question_declares_lanes_steps_and_pairs_with_defaults(tmp_path: Path) -> None:
    project = load_project(
        project_with(
            tmp_path,
            ITEMS_VS_ECHO
            + """
[[questions]]
name = "stacks"
steps = ["items"]
metrics = ["cpu_us_per_request", "rss_idle_mb"]
lanes = [{ variant = "good@latest" }, { variant = "good@latest", name = "again" }]
""",
        )
    )
    endpoints, stacks = map(group_of, project.questions)
    assert [(lane.name, lane.endpoints) for lane in endpoints.lanes] == [
        ("items", ("items",)),
        ("echo", ("echo",)),
    ]
    assert endpoints.metrics == (CPU,) and not endpoints.boot_every_round  # servers booted once
    # a lane's endpoints default to the steps, its name to its variant; pairs to every lane against the first
    assert [(b.name, h.name) for b, h in stacks.ratios()] == [("good@latest", "again")]
    assert stacks.lanes[1].endpoints == ("items",)
    assert (
        stacks.metrics == (CPU, RSS_IDLE) and stacks.boot_every_round
    )  # memory after boot: a fresh boot per round


LANES = 'lanes = [{ variant = "good@latest", endpoints = ["items"] }, { variant = "good@latest", name = "b", endpoints = ["echo"] }]'


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (
            '[[question]]\nname = "x"\n',
            "unknown table 'question'; known: [benchwatch], [[questions]]",
        ),
        (
            "questions = 3\n",
            "benchwatch.questions: Extra inputs are not permitted",
        ),  # a key of [benchwatch]
        (
            '[[questions]]\nname = "x"\nlanes = [{ variant = "good@latest" }]\nsteps = ["items"]\n',
            "questions[0] (x).lanes: List should have at least 2 items",
        ),
        (
            f'[[questions]]\nname = "x"\n{LANES}\nlane = 1\n',
            "questions[0] (x).lane: Extra inputs are not permitted",
        ),
        (
            f'[[questions]]\nname = "x"\nmetrics = ["cpu"]\n{LANES}\n',
            "questions[0] (x).metrics: metric 'cpu' is not one a question measures; choose from cpu_us_per_request, rps",
        ),
        (
            '[[questions]]\nname = "x"\nlanes = [{ variant = "good@latest" }, { variant = "good@seed-v1" }]\n',
            "questions[0] (x): give `steps` (endpoint names) or the lanes' `endpoints`",
        ),
        (
            f'[[questions]]\nname = "x"\npairs = [["good@latest", "c"]]\n{LANES}\n',
            "questions[0] (x): pairs: no lane called 'c'; lanes: good@latest, b",
        ),
        (
            f'[[questions]]\nname = "x"\n{LANES}\n[[questions.published]]\nwho = "w"\nwhat = "w"\nfigure = "2x"\nheads = ["good@latest"]\n',
            "questions[0] (x): published[0]: heads: 'good@latest' is the head of no pair; heads: b",
        ),
        (
            '[[questions]]\nname = "x"\nsteps = ["items"]\nlanes = [{ variant = "good@latest" }, { variant = "good@nowhere" }]\n',
            "questions[0] (x): lane 'good@nowhere': 'good@nowhere' names no variant (see `benchwatch list`)",
        ),
        (
            '[[questions]]\nname = "x"\nsteps = ["nope"]\nlanes = [{ variant = "good@latest" }, { variant = "good@seed-v1" }]\n',
            "questions[0] (x): lane 'good@latest': good@latest has no endpoint 'nope'; its endpoints: items, echo",
        ),
        (ITEMS_VS_ECHO + ITEMS_VS_ECHO, "questions: two questions are called 'items_vs_echo'"),
        (
            f'[[questions]]\nname = "x"\npairs = [["b", "b"]]\n{LANES}\n',
            "questions[0] (x): pairs: ['b', 'b'] pairs a lane with itself",
        ),
    ],
)
def test_a_bad_question_is_one_error_line_naming_it_exit_3(
    tmp_path: Path, cli, body: str, message: str
) -> None:
    project = project_with(tmp_path, "\n" + body)
    done = cli("list", root=project)
    assert done.returncode == 3, done.stderr
    assert done.stderr.startswith(f"ERROR: {project / 'benchwatch.toml'}: ")
    assert message in done.stderr and done.stderr.count("\n") == 1
    assert done.stdout == ""


def test_the_aa_copy_is_one_of_the_runs_own_variants() -> None:
    selected, everything = ["api@own", "web@own"], ["api@own", "web@own", "other@own"]
    assert (
        aa_variant(None, selected, everything) == "api@own"
    )  # by default: the run's first variant
    assert aa_variant("none", selected, everything) is None
    assert aa_variant("web@own", selected, everything) == "web@own"
    assert aa_variant("other@own", selected, everything) is None  # in another shard: measured there
    assert aa_variant(None, [], everything) is None
    with pytest.raises(UserError, match=r"--aa services@latest: not a variant of this run"):
        aa_variant("services@latest", selected, everything)


@pytest.mark.slow
def test_run_answers_the_declared_questions_side_by_side_and_sets_published_figures_beside(
    tmp_path: Path,
) -> None:
    project = project_with(
        tmp_path,
        ITEMS_VS_ECHO
        + """
[[questions.published]]
who = "a colleague"
what = "POST /echo against GET /items"
figure = "echo costs about the same"
source = "docs/bench-notes.md"
""",
    )
    out = tmp_path / "out"
    done = benchwatch(
        "run",
        "--quick",
        "--no-micro",
        "-k",
        "good@latest",
        "--out",
        str(out),
        "--history",
        str(tmp_path / "history"),
        root=project,
    )
    assert done.returncode == 0, done.stderr
    assert "questions: 1 of 1 answered side by side" in done.stderr
    info = read_run(out).extra.side_by_side
    assert info is not None and [q.name for q in info.questions] == ["items_vs_echo"]
    [ratio] = info.ratios
    assert (ratio.group, ratio.base, ratio.head, ratio.step) == (
        "items_vs_echo",
        "items",
        "echo",
        "call",
    )
    assert (ratio.base_endpoint, ratio.head_endpoint) == ("GET /items", "POST /echo")
    assert ratio.pairs == 6 and ratio.low <= ratio.ratio <= ratio.high  # type: ignore[operator]
    report = (out / "report.md").read_text()
    study = next(
        line
        for line in report.splitlines()
        if line.startswith("| a colleague (docs/bench-notes.md) |")
    )
    assert "echo costs about the same" in study and "echo / items call: cpu/req" in study
    assert "seed" not in report.lower()
    json.loads(
        (out / "gab-smaller.json").read_text()
    )  # the published history files are still written
    assert uvicorn_processes(str(GOOD)) == []
