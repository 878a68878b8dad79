"""A compare's list of the installed versions that moved between base and head (judge/moved.py):
made from the two sides' version maps, rendered in the comment's header, with a hint on a regression."""

import json
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from conftest import REPO, benchwatch, make_project

from benchwatch.environments import interpreters
from benchwatch.judge.moved import moved_packages, terminal_lines
from benchwatch.judge.verdict import (
    EXIT_OK,
    EXIT_REGRESSION,
    CompareExtra,
    Comparison,
    SideInfo,
    compare_figures,
)
from benchwatch.project.loading import load_project
from benchwatch.report.comment import render
from benchwatch.results.schema import Figure

APP = "from fastapi import FastAPI\napp = FastAPI()\n"
BASE = {
    "anyio": "4.9.0",
    "fastapi": "0.115.0",
    "pydantic": "2.11.7",
    "sniffio": "1.3.1",
    "starlette": "0.41.3",
}
HEAD = {
    "anyio": "4.9.0",
    "fastapi": "0.116.1",
    "pydantic": "2.11.7",
    "starlette": "0.46.0",
    "typing-inspection": "0.4.1",
}


def own_project(root: Path, requirements: str, names: tuple[str, ...] = ("backend",)) -> Path:
    """A project of apps pinned by their own requirements (no environment is built: env keys only)."""
    for name in names:
        (root / name).mkdir(parents=True)
        (root / name / "main.py").write_text(APP)
        (root / name / "requirements.txt").write_text(requirements)
        (root / name / "benchwatch-app.toml").write_text(
            f'name = "{name}"\napp = "main:app"\nrequirements = "requirements.txt"\n'
            '[[endpoints]]\nname = "root"\npath = "/"\n'
        )
    (root / "benchwatch.toml").write_text(
        "[benchwatch]\napps = [" + ", ".join(f'"{n}"' for n in names) + "]\n"
    )
    return root


def ref_pairs(tmp_path: Path, names: tuple[str, ...] = ("backend",)) -> list:
    """Base's and head's variants as a ref compare pairs them: the same app, head's lock moved."""
    base = load_project(own_project(tmp_path / "base", "fastapi==0.115.0\n", names)).variants()
    head = load_project(own_project(tmp_path / "head", "fastapi==0.116.1\n", names)).variants()
    return list(zip(base, head, strict=True))


def cpu_figure(scenario: str, stack: str, samples) -> Figure:
    return Figure(
        name=f"{scenario}@{stack} GET / c=64 cpu_us_per_request",
        kind="load",
        variant=f"{scenario}@{stack}",
        scenario=scenario,
        stack=stack,
        metric="cpu_us_per_request",
        unit="us",
        bigger_is_better=False,
        samples=list(samples),
        value=float(np.median(samples)),
        endpoint="GET /",
        params={"mode": "closed", "concurrency": 64},
    )


def rows(scenario: str, slower: bool):
    rng = np.random.default_rng(3)
    base = rng.normal(100, 2, 8)
    head = base * 1.3 if slower else base[::-1]
    found, _ = compare_figures(
        [cpu_figure(scenario, "own", base)], [cpu_figure(scenario, "own", head)], None
    )
    return found


def comparison(moved, found, kind="ref", specs=("main", "renovate/fastapi")) -> Comparison:
    sides = [
        SideInfo(role=role, spec=spec, kind=kind)
        for role, spec in zip(("base", "head"), specs, strict=True)
    ]
    return Comparison(
        base=sides[0],
        head=sides[1],
        rounds=8,
        quick=True,
        rows=found,
        extra=CompareExtra(moved=moved),
    )


def test_changed_added_and_removed_packages_in_a_stable_order(tmp_path):
    pairs = ref_pairs(tmp_path)
    ((base, head),) = pairs
    assert base.env_key != head.env_key  # the two locks: two environments
    moved = moved_packages("ref", pairs, {base.env_key: BASE}, {head.env_key: HEAD})
    assert len(moved) == 1
    assert moved[0].changed == {
        "fastapi": ("0.115.0", "0.116.1"),
        "starlette": ("0.41.3", "0.46.0"),
    }
    assert moved[0].added == {"typing-inspection": "0.4.1"} and moved[0].removed == {
        "sniffio": "1.3.1"
    }
    assert moved[0].text() == (
        "fastapi 0.115.0 → 0.116.1, starlette 0.41.3 → 0.46.0, typing-inspection 0.4.1 added, "
        "sniffio 1.3.1 removed (backend@own)"
    )
    # the same list whatever order the environments listed their packages in
    shuffled = moved_packages(
        "ref",
        pairs,
        {base.env_key: dict(reversed(BASE.items()))},
        {head.env_key: dict(reversed(HEAD.items()))},
    )
    assert shuffled == moved
    assert terminal_lines(moved) == [
        f"dependencies changed between base and head: {moved[0].text()}"
    ]


def test_nothing_when_the_environments_agree_or_one_was_not_recorded(tmp_path):
    pairs = ref_pairs(tmp_path)
    ((base, head),) = pairs
    assert moved_packages("ref", pairs, {base.env_key: BASE}, {head.env_key: dict(BASE)}) == []
    assert (
        moved_packages("ref", pairs, {base.env_key: BASE}, {}) == []
    )  # head's failed to build: nothing guessed
    text = render(comparison([], rows("backend", slower=False)))
    assert "Dependencies changed" not in text and "Which package" not in text


def test_the_comment_header_lists_what_moved_without_a_hint_when_nothing_regressed(tmp_path):
    pairs = ref_pairs(tmp_path)
    ((base, head),) = pairs
    moved = moved_packages("ref", pairs, {base.env_key: BASE}, {head.env_key: HEAD})
    found = comparison(moved, rows("backend", slower=False))
    assert found.exit_code() == EXIT_OK
    text = render(found)
    line = (
        "Dependencies changed between base and head: fastapi 0.115.0 → 0.116.1, starlette 0.41.3 → 0.46.0, "
        "typing-inspection 0.4.1 added, sniffio 1.3.1 removed (`backend@own`)."
    )
    assert line in text.splitlines()
    assert text.index(line) < text.index("How this is judged")  # in the header, before the tables
    assert "Which package" not in text


def test_a_regression_names_the_candidates_and_what_to_run_between_two_refs(tmp_path):
    pairs = ref_pairs(tmp_path, names=("backend", "worker"))
    versions = ({b.env_key: BASE for b, _ in pairs}, {h.env_key: HEAD for _, h in pairs})
    versions[1][pairs[1][1].env_key] = {
        **BASE,
        "sniffio": "1.3.2",
    }  # worker's lock moved something else
    moved = moved_packages("ref", pairs, *versions)
    assert [m.where for m in moved] == ["backend@own", "worker@own"]
    found = comparison(moved, rows("backend", slower=True))
    assert found.exit_code() == EXIT_REGRESSION
    text = render(found)
    assert (
        "**Which package?** The regression came with these packages' moves: fastapi, starlette, "
        "typing-inspection, sniffio."
    ) in text  # backend's moves only: worker did not regress
    assert "between two stacks of `stacks.toml` only" in text
    assert "`benchwatch compare --base main --head <that commit>`" in text
    assert "- `fastapi==0.116.1` in app backend's `requirements.txt`" in text
    assert "- `starlette==0.46.0` in app backend's `requirements.txt`" in text
    assert "sniffio==1.3.2" not in text
    locked = found.model_copy(deep=True)
    locked.extra.moved[0].lock = "../uv.lock"  # an app pinned by its uv.lock: uv moves one package
    assert (
        "- `uv lock --upgrade-package fastapi==0.116.1` beside app backend's `../uv.lock`"
        in render(locked)
    )


def test_a_regression_between_two_stacks_gives_the_attribute_command(tmp_path):
    project = load_project(make_project(tmp_path / "p", [REPO / "apps" / "hello"]))
    chosen = {v.stack.name: v for v in project.variants(list(project.stacks))}
    pair = (chosen["v2-pre-rust"], chosen["latest"])
    moved = moved_packages("stack", [pair], {"v2-pre-rust": BASE}, {"latest": HEAD})
    assert [m.where for m in moved] == ["v2-pre-rust → latest"] and moved[0].lock is None
    scenario = pair[0].scenario
    text = render(
        comparison(
            moved, rows(scenario, slower=True), kind="stack", specs=("v2-pre-rust", "latest")
        )
    )
    assert f"`benchwatch attribute --base v2-pre-rust --head latest -k '{scenario}@*'`" in text
    assert "<that commit>" not in text


LOCKED = REPO / "tests" / "fixtures" / "locked_app"
# the fixture's uv.lock after `uv lock --exclude-newer 2026-11-21T00:00:00Z --upgrade-package anyio==4.9.0`
ANYIO_MOVED = REPO / "tests" / "fixtures" / "locked_app_anyio_moved.uv.lock"


@pytest.mark.slow
@pytest.mark.load_independent
def test_a_lock_only_commit_says_what_moved_from_the_environments_measured(tmp_path):
    """A team's app pinned by its uv.lock; head's commit moves anyio (and so adds sniffio): the real
    compare of the two commits lists it in the comment, compare.json and the terminal (two load
    rounds: too few for a timing verdict, exit 2; the header is what this test is about)."""
    if not interpreters.find_installed("3.12"):
        pytest.skip("no CPython 3.12 here (`uv python install 3.12`)")
    repo = tmp_path / "repo"
    shutil.copytree(LOCKED, repo)
    git = ["git", "-C", str(repo), "-c", "user.email=t@example.com", "-c", "user.name=t"]
    subprocess.run([*git[:3], "init", "-q"], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "base"], check=True)
    shutil.copy(ANYIO_MOVED, repo / "backend" / "uv.lock")
    subprocess.run([*git, "commit", "-qam", "anyio 4.9.0"], check=True)
    out = tmp_path / "out"
    done = benchwatch(
        "compare",
        "--base",
        "HEAD~1",
        "--head",
        "HEAD",
        "--quick",
        "--rounds",
        "2",
        "--no-micro",
        "--no-counts",
        "--out",
        str(out),
        root=repo,
        timeout=300,
    )
    assert done.returncode == 2, done.stderr[-2000:]
    said = "anyio 4.16.0 → 4.9.0, sniffio 1.3.1 added"
    assert (
        f"dependencies changed between base and head: {said} (locked@own)"
        in done.stdout.splitlines()
    )
    assert (
        f"Dependencies changed between base and head: {said} (`locked@own`)."
        in (out / "comment.md").read_text()
    )
    (moved,) = json.loads((out / "compare.json").read_text())["extra"]["moved"]
    assert moved["changed"] == {"anyio": ["4.16.0", "4.9.0"]} and moved["added"] == {
        "sniffio": "1.3.1"
    }
    assert moved["removed"] == {} and moved["base_env"] != moved["head_env"]
