"""One session per command (benchwatch.measure.session): the output folder chosen and checked once, the
fingerprint, oha and the servers' cleanup set up once, handed down to a command's parts; and one
definition of the shared options (commands.add_shared_options) in every parser."""

from __future__ import annotations

import argparse
import subprocess
from pathlib import Path
from types import SimpleNamespace

import pytest
from conftest import make_project

from benchwatch import commands
from benchwatch.cli import build_parser
from benchwatch.errors import EXIT_BAD_INPUT, UserError
from benchwatch.measure import stopping
from benchwatch.measure.session import open_session
from benchwatch.results import fingerprint

APP = "from fastapi import FastAPI\n\napp = FastAPI()\n\n\n@app.get('/hi')\ndef hi() -> dict:\n    return {}\n"
DECLARATION = 'name = "tiny"\napp = "app:app"\n[[endpoints]]\nname = "hi"\npath = "/hi"\n'

# the commands that select variants, and which of the shared options each takes
SELECTING = [
    "list",
    "verify",
    "load",
    "run",
    "counts",
    "micro",
    "instructions",
    "compare",
    "calibrate",
    "attribute",
    "bisect",
]
WRITING = [
    "load",
    "run",
    "counts",
    "micro",
    "instructions",
    "compare",
    "calibrate",
    "attribute",
    "bisect",
]
QUICK = ["load", "run", "counts", "micro", "instructions", "compare", "attribute"]
ROUNDS = ["load", "run", "micro", "compare", "calibrate", "attribute", "bisect"]


def _tiny(tmp_path: Path) -> Path:
    app = tmp_path / "apps" / "tiny"
    app.mkdir(parents=True)
    (app / "app.py").write_text(APP)
    (app / "benchwatch-app.toml").write_text(DECLARATION)
    return make_project(tmp_path / "project", [app])


def _counting(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    calls = {"fingerprint": 0, "cleanup": 0}
    collect, install = fingerprint.collect, stopping.install_cleanup

    def counted_collect(*args, **kwargs):
        calls["fingerprint"] += 1
        return collect(*args, **kwargs)

    def counted_install() -> None:
        calls["cleanup"] += 1
        install()

    monkeypatch.setattr(fingerprint, "collect", counted_collect)
    monkeypatch.setattr(stopping, "install_cleanup", counted_install)
    return calls


def test_the_default_folder_is_results_name_time_in_the_project_created_once(tmp_path, monkeypatch):
    calls = _counting(monkeypatch)
    session = open_session(tmp_path, name="compare", command=["benchwatch", "compare"])
    assert session.out.parent == tmp_path / "results" and session.out.name.startswith("compare-")
    assert session.out.is_dir() and not list(session.out.iterdir())  # the probe file is gone
    assert session.oha is None and session.environment.oha_version is None
    assert calls == {"fingerprint": 1, "cleanup": 1}
    unnamed = open_session(tmp_path, tmp_path / "mine")
    assert unnamed.out == tmp_path / "mine" and unnamed.out.is_dir()
    assert open_session(tmp_path).out.parent == tmp_path / "results"


def test_a_part_of_a_command_reuses_its_session_and_only_gets_a_folder(tmp_path, monkeypatch):
    parent = open_session(tmp_path, name="attribute")
    calls = _counting(monkeypatch)
    part = open_session(tmp_path, parent.out / "steps" / "one", name="compare", within=parent)
    assert part.out == parent.out / "steps" / "one" and part.out.is_dir()
    assert part.environment is parent.environment and part.command == parent.command
    assert calls == {"fingerprint": 0, "cleanup": 0}


def test_each_run_gets_its_own_copy_of_the_fingerprint(tmp_path):
    session = open_session(tmp_path, command=["benchwatch", "micro"])
    run = session.start_run()
    run.environment.stacks["latest"] = {"fastapi": "1"}
    assert run.command == ["benchwatch", "micro"] and session.environment.stacks == {}
    assert session.start_run(["compare", "base"]).command == ["compare", "base"]


def test_a_folder_that_cannot_be_used_is_one_out_error(tmp_path):
    taken = tmp_path / "a-file"
    taken.write_text("")
    with pytest.raises(UserError) as caught:
        open_session(tmp_path, taken)
    assert str(caught.value) == f"--out {taken}: not writable (a file, not a folder)"
    assert caught.value.exit_code == EXIT_BAD_INPUT
    (tmp_path / "results").write_text("")  # the default folder's parent is a file
    with pytest.raises(
        UserError,
        match=r"^--out .*/results/load-\d+-\d+: not writable .*\(the default; give --out DIR\)$",
    ):
        open_session(tmp_path, name="load")


@pytest.mark.parametrize(
    "argv",
    [
        ("load", "--quick"),
        ("run", "--quick", "--no-micro"),
        ("counts",),
        ("micro", "--quick"),
        ("compare", "--base", "seed-v1", "--head", "latest", "--no-micro"),
        ("calibrate", "--no-micro"),
        ("attribute", "--base", "seed-v1", "--head", "latest"),
    ],
)
def test_a_bad_out_is_bad_input_in_one_line_before_anything_runs(tmp_path, cli, argv):
    root = _tiny(tmp_path)
    taken = tmp_path / "a-file"
    taken.write_text("")
    done = cli(*argv, "--out", str(taken), root=root)
    assert done.returncode == EXIT_BAD_INPUT, done.stderr
    assert done.stderr.splitlines() == [
        f"ERROR: --out {taken}: not writable (a file, not a folder)"
    ]
    assert not (root / "results").exists() and not (root / ".benchwatch").exists()


def test_benchwatch_out_is_the_default_of_out(tmp_path, cli):
    root = _tiny(tmp_path)
    taken = tmp_path / "a-file"
    taken.write_text("")
    done = cli("counts", root=root, env={"BENCHWATCH_OUT": str(taken)})
    assert done.returncode == EXIT_BAD_INPUT
    assert done.stderr.splitlines() == [
        f"ERROR: --out {taken}: not writable (a file, not a folder)"
    ]


def _git(root: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@t", *args],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()


def test_every_probe_of_bisect_is_a_compare_inside_its_one_session(tmp_path, monkeypatch):
    from benchwatch.attribute.bisect import bisect

    _git(tmp_path, "init", "-q")
    for number in range(4):
        (tmp_path / "f").write_text(str(number))
        _git(tmp_path, "add", "f")
        _git(tmp_path, "commit", "-qm", f"c{number}")
    calls = _counting(monkeypatch)
    seen: list[tuple[Path, object]] = []

    def compare_fn(project, base, head, options):
        seen.append((options.out, options.session))
        raise UserError("head: does not load")  # every probe skipped: only the sessions matter here

    with pytest.raises(UserError, match="could not be measured"):
        bisect(
            SimpleNamespace(root=tmp_path),
            "HEAD~3",
            "HEAD",
            "hello@latest",
            quiet=True,
            compare_fn=compare_fn,
        )
    folders = list((tmp_path / "results").iterdir())
    assert len(folders) == 1 and folders[0].name.startswith("bisect-")
    assert [out.parent for out, _ in seen] == [folders[0]] and seen[0][1].out == folders[0]
    assert calls == {"fingerprint": 1, "cleanup": 1}


def _options(command: str) -> dict[str, argparse.Action]:
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return {
        flag: action for action in sub.choices[command]._actions for flag in action.option_strings
    }


@pytest.mark.parametrize("command", SELECTING)
def test_every_selecting_command_has_the_shared_options_with_one_definition(command):
    options = _options(command)
    variants = options["-k"]
    assert (
        options["--variants"] is variants
        and variants.dest == "patterns"
        and variants.metavar == "PATTERNS"
    )
    assert variants.help.startswith(commands.VARIANTS_HELP + " (")
    assert variants.required == (command == "bisect")
    expected = {
        "--out": command in WRITING,
        "--quick": command in QUICK,
        "--rounds": command in ROUNDS,
    }
    assert {flag: flag in options for flag in expected} == expected
    if "--out" in options:
        out = options["--out"]
        assert out.help.startswith(commands.OUT_HELP + " (default results/") and out.help.endswith(
            f"in the project; env {commands.OUT_ENV})"
        )
        assert (out.metavar, out.type, out.default) == ("DIR", Path, None)
    if "--quick" in options:
        assert options["--quick"].help.startswith(commands.QUICK_HELP + ": ")
    if "--rounds" in options:
        rounds = options["--rounds"]
        assert (
            rounds.help.startswith(commands.ROUNDS_HELP + ": ")
            and rounds.type is commands.at_least_one
        )
        assert rounds.default is None and rounds.metavar == "N"
    if "--stacks" in options:
        assert options["--stacks"].help == commands.STACKS_HELP


@pytest.mark.parametrize("command", ROUNDS)
def test_rounds_below_one_are_bad_input_in_every_command(cli, command):
    required = {
        "compare": ("--base", "a", "--head", "b"),
        "attribute": ("--base", "a", "--head", "b"),
        "bisect": ("--good", "a", "--bad", "b", "-k", "x"),
    }.get(command, ())
    done = cli(command, *required, "--rounds", "0")
    assert done.returncode == EXIT_BAD_INPUT
    assert done.stderr.splitlines()[-1] == (
        f"ERROR: benchwatch {command}: argument --rounds: give a whole number of at least 1, not '0'"
    )


def test_a_failure_of_benchwatch_itself_is_not_measured_never_a_regression(monkeypatch, capsys):
    """An exception nobody caught (a bug) ends the command with exit 2 and its traceback, then one
    ERROR line: exit 1 would tell a PR check that a gating figure regressed."""
    from benchwatch import cli
    from benchwatch.commands import counts
    from benchwatch.errors import EXIT_UNMEASURED

    def broken(args):
        raise RuntimeError("a bug")

    monkeypatch.setattr(counts, "run", broken)
    assert cli.main(["counts"]) == EXIT_UNMEASURED
    err = capsys.readouterr().err
    assert "Traceback" in err and err.strip().splitlines()[-1].startswith(
        "ERROR: benchwatch itself failed (RuntimeError: a bug)"
    )
