"""No planted secret reaches a file or a line benchwatch writes (issue 39, item 5).

tests/fixtures/planted_secrets is an app that gives back every secret it is given: a `${NAME}` its
settings read, the login's BENCHWATCH_USER / BENCHWATCH_PASSWORD, the token its login issues (a
set-up value), an inherited app-env style variable (named by BENCHWATCH_SECRET_NAMES, as
scripts/app_env.sh names the workflows' app-env lines) and a long `${NAME}` that pydantic cuts
short. It logs them at boot, quotes them in a 500's body (as they are, URL-encoded, JSON-escaped),
in a traceback under load, and in a settings validation error at boot (pydantic's `input_value=`).

`verify`, `run` (run.json, report.md/.html, the gab files, the local history), `report`, `site`
and a `compare` (compare.json, comment.md, each side's run) are run on it; every file under their
output folders and every line they printed is searched for each secret in every form it is
quoted in. Every secret holds the word `Planted`, so a form or piece not listed that keeps the
letters is caught too. The redacted names must be there: the app did quote them."""

from __future__ import annotations

import html
import json
from pathlib import Path
from urllib.parse import quote, quote_plus

import pytest
from conftest import REPO, benchwatch, make_project, uvicorn_processes

# no timing asserted, only its own servers looked for: it may run beside another test
pytestmark = [pytest.mark.slow, pytest.mark.load_independent]

PLANTED = REPO / "tests" / "fixtures" / "planted_secrets"
SECRETS = {
    "PLANTED_TOKEN": "tok/en+Planted=Q1x9z",  # its URL encodings differ from it
    "BENCHWATCH_USER": "planted.user+Planted@example.com",
    "BENCHWATCH_PASSWORD": 'pw"é\\Planted-77x',  # its JSON, HTML and repr forms differ from it
    "APP_SIGNING_KEY": "sk-Planted-5e4d3c2b1a",  # no ${NAME} reads it: the server inherits it
    "PLANTED_LONG": "Long-Planted-Secret-"
    + "a1b2c3d4" * 5,  # pydantic shows it cut: 'Long-Plan...c3d4'
}
TOKEN = "tok-Planted-3c2b1a-issued"  # what the login answers (main.py's issued()): {setup.token}
ENVIRON = {**SECRETS, "BENCHWATCH_SECRET_NAMES": "APP_SIGNING_KEY"}


def _forms(value: str) -> set[str]:
    return {
        value,
        quote(value, safe=""),
        quote_plus(value),
        json.dumps(value)[1:-1],
        json.dumps(value, ensure_ascii=False)[1:-1],
        html.escape(value),
        html.escape(value, quote=False),
        repr(value)[1:-1],
    }


FORBIDDEN = sorted(
    {form for value in [*SECRETS.values(), TOKEN] for form in _forms(value)}
    | {"Planted", SECRETS["PLANTED_LONG"][:7], SECRETS["PLANTED_LONG"][-12:]}
)


def _leaks(texts: dict[str, str]) -> list[str]:
    return [
        f"{where}: {form!r}" for where, text in texts.items() for form in FORBIDDEN if form in text
    ]


def test_no_planted_secret_reaches_a_file_or_a_line_benchwatch_writes(tmp_path: Path) -> None:
    project = make_project(tmp_path / "project", [PLANTED])  # the app runs on its one stack, latest
    run, history, site, compared = (
        tmp_path / "run",
        tmp_path / "history",
        tmp_path / "site",
        tmp_path / "compare",
    )
    printed: dict[str, str] = {}
    commands = {
        "verify": ("verify", "-k", "planted*"),
        "run": (
            "run",
            "--quick",
            "--no-micro",
            "--aa",
            "none",
            "-k",
            "planted*",
            "--history",
            str(history),
            "--out",
            str(run),
        ),
        "report": ("report", str(run)),
        "site": ("site", "--out", str(site), "--run", str(run), "--data", str(history)),
        "compare": (
            "compare",
            "--base",
            "latest",
            "--head",
            "latest",
            "-k",
            "planted*",
            "--quick",
            "--no-micro",
            "--no-counts",
            "--rounds",
            "2",
            "--no-confirm",
            "--out",
            str(compared),
        ),
    }
    for name, argv in commands.items():
        done = benchwatch(*argv, root=project, env=ENVIRON)
        # verify, run and compare meet the failing variants: not measured (compare's timings, two
        # rounds, give no verdict, and only a busy machine could make one a regression)
        expected = {"report": (0,), "site": (0,), "compare": (1, 2)}.get(name, (2,))
        assert done.returncode in expected, f"{name}: {done.stdout}{done.stderr}"
        printed[f"{name}: stdout"], printed[f"{name}: stderr"] = done.stdout, done.stderr
    written = {
        str(p.relative_to(tmp_path)): p.read_text(errors="replace")
        for folder in (run, history, site, compared)
        for p in folder.rglob("*")
        if p.is_file()
    }
    assert {
        "run/run.json",
        "run/report.md",
        "run/report.html",
        "history/data.js",
        "site/index.html",
        "compare/compare.json",
        "compare/comment.md",
    } <= set(written)
    assert _leaks({**written, **printed}) == []

    # every path reached benchwatch, and is there by name: a 500's body and a boot's settings error
    # (verify), the server's traceback under load (run's and compare's problems)
    problems = json.loads(written["run/run.json"])["problems"]
    said = {
        p["variant"]: "\n".join(
            q["reason"] + "\n" + (q.get("detail") or "")
            for q in problems
            if q["variant"] == p["variant"]
        )
        for p in problems
    }
    assert (
        "${PLANTED_TOKEN} ${APP_SIGNING_KEY} ${BENCHWATCH_USER} ${BENCHWATCH_PASSWORD} Bearer {setup.token}"
        in said["planted-quoting@latest"]
    )
    assert "input_value='${PLANTED_LONG}...${PLANTED_LONG}'" in said["planted-boot@latest"]
    assert (
        "input_value={'SECRET_KEY': '${PLANTED_LONG}...': '${BENCHWATCH_PASSWORD}'}"
        in said["planted-boot@latest"]
    )
    assert (
        "the server said: RuntimeError: out of patience: ('${PLANTED_TOKEN}', '${APP_SIGNING_KEY}'"
        in (said["planted@latest"])
    )
    assert (
        "${BENCHWATCH_PASSWORD}" in written["run/report.md"]
        and "{setup.token}" in written["compare/comment.md"]
    )
    assert "    | planted: issued {setup.token} to ${BENCHWATCH_USER}" in printed["verify: stderr"]
    assert uvicorn_processes(str(PLANTED)) == []
