"""One exit-code table for every command (errors.EXIT_CODES): each code from a real invocation.

Here, in-process and fast: 0, 1 (`changes` on a step up), 2 (`relative` on a compare that measured
nothing), 3 (bad options, bad declarations). On real servers: 1 in test_compare's injected
regression, 2 in test_compare's head that fails to boot and test_verify's broken variants, 130 in
test_verify's and test_load's Ctrl-C."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from conftest import REPO, make_project
from test_changes import _acks, _clean, _history
from test_relative import CPU_NAME, row, write_compare

from benchwatch.cli import COMMANDS
from benchwatch.errors import (
    EXIT_BAD_INPUT,
    EXIT_CODES,
    EXIT_OK,
    EXIT_REGRESSION,
    EXIT_UNMEASURED,
)

APP = "from fastapi import FastAPI\n\napp = FastAPI()\n\n\n@app.get('/hi')\ndef hi() -> dict:\n    return {}\n"


def _project(tmp_path: Path, declaration: str) -> Path:
    app = tmp_path / "apps" / "tiny"
    app.mkdir(parents=True)
    (app / "app.py").write_text(APP)
    (app / "benchwatch-app.toml").write_text(declaration)
    return make_project(tmp_path / "project", [app])


GOOD = 'name = "tiny"\napp = "app:app"\nstacks = ["latest"]\n[[endpoints]]\nname = "hi"\npath = "/hi"\n'


def test_help_ends_with_the_table(cli) -> None:
    done = cli("--help")
    assert done.returncode == EXIT_OK
    table = done.stdout.split("exit codes (every command; docs/exit-codes.md):\n", 1)[1]
    assert dict(re.findall(r"^  (\d+) +(.+)$", table, re.M)) == {
        str(c): m for c, m in EXIT_CODES.items()
    }


def test_the_docs_page_holds_the_same_table() -> None:
    text = (REPO / "docs" / "exit-codes.md").read_text()
    rows = dict(re.findall(r"^\| (\d+) \| ([^|]+?) \|$", text, re.M))
    assert rows == {str(code): meaning for code, meaning in EXIT_CODES.items()}


@pytest.mark.parametrize("command", COMMANDS)
def test_a_bad_option_is_bad_input_in_every_command(cli, command: str) -> None:
    done = cli(command, "--no-such-option")
    assert done.returncode == EXIT_BAD_INPUT
    lines = done.stderr.strip().splitlines()
    assert lines[0].startswith("usage: benchwatch") and lines[-1].startswith("ERROR: benchwatch")
    assert sum(line.startswith("ERROR") for line in lines) == 1 and "Traceback" not in done.stderr


def test_a_missing_required_option_is_bad_input(cli) -> None:
    done = cli("compare", "--base", "latest")
    assert done.returncode == EXIT_BAD_INPUT
    assert done.stderr.strip().splitlines()[-1] == (
        "ERROR: benchwatch compare: the following arguments are required: --head"
    )


@pytest.mark.parametrize(
    "argv",
    [
        ("list",),
        ("verify",),
        ("compare", "--base", "seed-v1", "--head", "latest", "--no-micro"),
        ("run", "--quick", "--no-micro"),
        ("calibrate", "--no-micro"),
    ],
)
def test_a_broken_app_declaration_is_bad_input_and_nothing_is_written(
    tmp_path: Path, cli, argv
) -> None:
    root = _project(
        tmp_path, GOOD.replace('stacks = ["latest"]', 'stacks = ["latest"]\nquick = ["nope"]')
    )
    out = tmp_path / "out"
    writes = argv[0] in ("compare", "run", "calibrate")
    done = cli(*argv, *(("--out", str(out)) if writes else ()), root=root)
    assert done.returncode == EXIT_BAD_INPUT, done.stderr
    assert done.stderr.strip().splitlines() == [
        f"ERROR: {tmp_path / 'apps' / 'tiny' / 'benchwatch-app.toml'}: top level: quick names unknown endpoint 'nope'"
    ]
    assert not out.exists() and not (root / ".benchwatch").exists()


def test_an_unknown_stack_in_a_declaration_is_bad_input(tmp_path: Path, cli) -> None:
    root = _project(tmp_path, GOOD.replace('"latest"', '"v9"'))
    done = cli("verify", root=root)
    assert done.returncode == EXIT_BAD_INPUT
    assert done.stderr.strip().endswith("stacks: unknown stack 'v9'")


def test_ok_regression_and_not_measured_from_real_commands(tmp_path: Path, cli) -> None:
    assert cli("list", root=_project(tmp_path / "p", GOOD)).returncode == EXIT_OK
    _history(tmp_path / "h", _clean(step_at=25, factor=1.10))
    done = cli("changes", "--data", str(tmp_path / "h"), "--acks", str(_acks(tmp_path / "h", "")))
    assert done.returncode == EXIT_REGRESSION and "1.10x slower" in done.stdout
    failed = write_compare(
        tmp_path / "c",
        [
            row(
                CPU_NAME,
                "cpu_us_per_request",
                None,
                None,
                None,
                gating=True,
                verdict="no verdict",
                reason="head did not boot",
            )
        ],
    )
    done = cli("relative", str(failed), "--out", str(tmp_path / "gab.json"))
    assert done.returncode == EXIT_UNMEASURED and not (tmp_path / "gab.json").exists()
