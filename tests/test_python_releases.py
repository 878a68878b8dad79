"""New CPython releases this machine can install, read from uv's own download list."""

from __future__ import annotations

import json

import pytest
from test_interpreters import fake_python

from benchwatch.environments import interpreters, python_releases

LISTING = json.dumps(
    [
        {"implementation": "cpython", "variant": "default", "version": "3.13.9"},
        {"implementation": "cpython", "variant": "default", "version": "3.13.10"},
        {"implementation": "cpython", "variant": "freethreaded", "version": "3.13.11"},
        {"implementation": "cpython", "variant": "default", "version": "3.14.0rc3"},
        {"implementation": "pypy", "variant": "default", "version": "3.11.13"},
        {"implementation": "cpython", "variant": "default", "version": "3.12.16"},
    ]
)


@pytest.fixture(autouse=True)
def fresh():
    interpreters.reset()
    yield
    interpreters.reset()


def test_the_newest_stable_default_build_per_minor_version():
    assert python_releases.installable(LISTING) == {"3.13": "3.13.10", "3.12": "3.12.16"}


def test_a_release_is_new_against_the_build_a_command_would_choose_here(tmp_path, monkeypatch):
    monkeypatch.setenv(
        "BENCHWATCH_PYTHONS",
        ":".join(str(fake_python(tmp_path / v, v, symbols=True)) for v in ("3.12.16", "3.13.0")),
    )
    found = {r.minor: r for r in python_releases.status(["3.13", "3.12", "3.11"], LISTING)}
    assert found["3.13"].new and found["3.13"].line() == (
        "CPython 3.13: this machine runs 3.13.0; 3.13.10 is out (`uv python install 3.13.10`)"
    )
    assert (
        not found["3.12"].new
        and found["3.12"].line() == "CPython 3.12: this machine runs 3.12.16, the newest release"
    )
    assert (
        found["3.11"].installed is None
        and found["3.11"].line() == "CPython 3.11: not installed here; uv knows no download of it"
    )


def test_the_command_lists_the_stacks_pythons(cli, tmp_path):
    done = cli("releases", "--python", "--json", "--markdown", str(tmp_path / "python.md"))
    assert done.returncode == 0, done.stderr
    minors = [r["minor"] for r in json.loads(done.stdout)["python"]]
    assert minors == ["3.11", "3.12", "3.13"]  # latest, latest-py312, latest-py313
    assert (tmp_path / "python.md").read_text().startswith("CPython releases uv can install here:")
    refused = cli("releases", "--python", "--state", str(tmp_path / "state.json"))
    assert refused.returncode == 3 and "--python reports CPython releases only" in refused.stderr
