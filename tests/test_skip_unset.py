"""`compare --skip-unset` (a fork's pull request: GitHub gives it no secrets): what needs a
`${NAME}` not set here is left out at the level it is needed (the whole variant for its boot, a
set-up request and everything that uses its values, an endpoint), the rest is measured, and the
comment lists each left-out endpoint with why."""

from __future__ import annotations

import json
import os
import textwrap
from pathlib import Path

import pytest
from conftest import make_project

from benchwatch.judge.coverage import Coverage, add_left_out
from benchwatch.measure.preflight import pairs_without_unset, without_unset
from benchwatch.project.loading import load_project
from benchwatch.report.comment import render

LOGIN = {"BENCHWATCH_USER": "admin@example.com", "BENCHWATCH_PASSWORD": "pw-1234"}
APP = """\
name = "shop"
app = "main:app"
stacks = ["latest"]
{env}
quick = ["items", "health"]

[[setup.requests]]
name = "login"
method = "POST"
path = "/login"
form = {{ username = "${{BENCHWATCH_USER}}", password = "${{BENCHWATCH_PASSWORD}}" }}
save = {{ token = "access_token" }}

[[setup.requests]]
name = "first_item"
path = "/items/"
headers = {{ Authorization = "Bearer {{setup.token}}" }}
save = {{ item_id = "data.0.id" }}

[[setup.requests]]
name = "version"
path = "/version"
save = {{ version = "version" }}

[[endpoints]]
name = "health"
path = "/health"

[[endpoints]]
name = "items"
path = "/items/"
headers = {{ Authorization = "Bearer {{setup.token}}" }}

[[endpoints]]
name = "item"
path = "/items/{{id}}"
path_params = {{ id = "{{setup.item_id}}" }}
headers = {{ Authorization = "Bearer {{setup.token}}" }}

[[endpoints]]
name = "settings"
path = "/settings"
headers = {{ X-Token = "${{API_TOKEN}}" }}

[[endpoints]]
name = "about"
path = "/about/{{v}}"
path_params = {{ v = "{{setup.version}}" }}
"""


def _variant(tmp_path: Path, env: str = ""):
    app = tmp_path / "shop"
    app.mkdir(parents=True, exist_ok=True)
    (app / "benchwatch-app.toml").write_text(APP.format(env=env))
    project = load_project(make_project(tmp_path / "project", [app]))
    (variant,) = project.select("shop@latest")
    return variant


def test_a_login_that_cannot_be_sent_leaves_out_only_what_uses_its_token(tmp_path: Path) -> None:
    variant = _variant(tmp_path)
    kept, skipped = without_unset(variant, environ={})
    assert kept is not None
    assert [e.name for e in kept.endpoints] == [
        "health",
        "about",
    ]  # neither the login's nor API_TOKEN's
    assert [e.name for e in kept.quick_endpoints] == ["health"]
    assert [r.name for r in kept.app.declaration.setup.requests] == [
        "version"
    ]  # its value is still used
    assert (
        variant.app.declaration.setup is not None
        and len(variant.app.declaration.setup.requests) == 3
    )  # untouched
    by_label = {label: s.why for s in skipped for label in s.endpoints}
    assert by_label.keys() == {"GET /items/", "GET /items/{id}", "GET /settings"}
    assert by_label["GET /items/"].startswith(
        "needs {setup.token} from the set-up request login, which needs "
        "${BENCHWATCH_USER} (shop/benchwatch-app.toml: setup.requests.login.form.username), "
        "not set here"
    )
    assert by_label["GET /items/{id}"].startswith(
        "needs {setup.item_id} from the set-up request first_item, "
        "which needs {setup.token} from the set-up request login"
    )
    assert (
        by_label["GET /settings"]
        == "needs ${API_TOKEN} (shop/benchwatch-app.toml: endpoints.settings.headers.X-Token), not set here"
    )

    everything, none = without_unset(variant, environ={**LOGIN, "API_TOKEN": "t"})
    assert everything == variant and none == []


def test_a_boot_that_needs_an_unset_name_leaves_out_the_whole_variant_and_the_comment_lists_it(
    tmp_path: Path,
) -> None:
    variant = _variant(tmp_path, env='env = { SECRET_KEY = "${APP_SECRET_KEY}" }')
    kept, skipped = without_unset(variant, environ=LOGIN)
    assert kept is None
    (only,) = skipped
    assert only.endpoints == tuple(e.label for e in variant.endpoints)
    assert (
        only.why
        == "needs ${APP_SECRET_KEY} (shop/benchwatch-app.toml: env.SECRET_KEY), not set here"
    )
    pairs, left_out = pairs_without_unset([(variant, variant)])
    assert pairs == [] and left_out == skipped
    found = add_left_out(Coverage(), left_out)
    assert found.endpoints == 5 and found.timed == 0
    assert {n.why for n in found.not_measured} == {f"left out: {only.why}"}


def test_a_pair_leaves_out_on_both_sides_what_either_side_cannot_send(
    tmp_path: Path, monkeypatch
) -> None:
    """Base and head measure the same requests: an endpoint the head may send but the base (its
    own declaration) cannot is left out of both."""
    for name in ("BENCHWATCH_USER", "BENCHWATCH_PASSWORD", "API_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    head = _variant(tmp_path / "head")
    base = _variant(tmp_path / "base", env="")
    base_text = (tmp_path / "base" / "shop" / "benchwatch-app.toml").read_text()
    (tmp_path / "base" / "shop" / "benchwatch-app.toml").write_text(
        base_text.replace(
            'path = "/about/{v}"', 'path = "/about/{v}"\nheaders = { X-Other = "${OTHER}" }'
        )
    )
    base = load_project(tmp_path / "base" / "project").select("shop@latest")[0]
    pairs, skipped = pairs_without_unset([(base, head)])
    ((kept_base, kept_head),) = pairs
    assert (
        [e.name for e in kept_base.endpoints] == [e.name for e in kept_head.endpoints] == ["health"]
    )
    by_label = {label: s.why for s in skipped for label in s.endpoints}
    assert by_label["GET /about/{v}"].startswith("needs ${OTHER}")
    assert {s.variant for s in skipped} == {"shop@latest"}
    rendered = json.dumps([s.why for s in skipped])
    assert "admin@example.com" not in rendered


def test_the_comment_says_what_was_left_out_and_why() -> None:
    from benchwatch.judge.verdict import CompareExtra, Comparison, SideInfo
    from benchwatch.measure.preflight import Skipped
    from benchwatch.results.schema import Environment

    skipped = [
        Skipped(
            "shop@own",
            ("GET /items/", "GET /items/{id}"),
            "needs {setup.token} from the set-up request "
            "login, which needs ${BENCHWATCH_USER} (benchwatch/benchwatch-app.toml: setup.requests.login."
            "form.username), not set here",
        )
    ]
    side = {"spec": "x", "kind": "ref", "variants": [], "environment": Environment()}
    comparison = Comparison(
        base=SideInfo(role="base", **side),
        head=SideInfo(role="head", **side),
        rounds=6,
        quick=True,
        rows=[],
        problems=[],
        unpaired=[],
        calibration=None,
        extra=CompareExtra(coverage=add_left_out(Coverage(), skipped)),
    )
    text = render(comparison)
    assert (
        textwrap.dedent("""\
        - no timings and counts: left out: needs {setup.token} from the set-up request login, which needs \
${BENCHWATCH_USER}""")
        in text
    )
    assert "`shop@own` `GET /items/`, `shop@own` `GET /items/{id}`" in text
    assert comparison.exit_code() == 2  # nothing measured at all: not measured, never ok


def test_compare_with_nothing_left_says_what_it_left_out_and_exits_not_measured(
    tmp_path: Path, cli, monkeypatch
) -> None:
    """`compare --skip-unset` when every variant needs an unset `${NAME}` to boot: nothing boots,
    the comment and compare.json list each endpoint left out with why, exit 2 (not measured);
    without the option, the same compare is the usual one-line exit 3."""
    from benchwatch.errors import EXIT_BAD_INPUT, EXIT_UNMEASURED

    for name in ("SIGNING_KEY", "API_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    app = tmp_path / "secret"
    app.mkdir()
    (app / "benchwatch-app.toml").write_text(
        textwrap.dedent("""\
        name = "secret"
        app = "main:app"
        stacks = ["latest"]
        env = { KEY = "${SIGNING_KEY}" }
        [[endpoints]]
        name = "health"
        path = "/health"
        """)
    )
    project = make_project(tmp_path / "project", [app])
    compare = [
        "compare",
        "--base",
        "latest",
        "--head",
        "latest",
        "--quick",
        "--no-micro",
        "-k",
        "secret@*",
    ]
    refused = cli(*compare, root=project)
    assert (
        refused.returncode == EXIT_BAD_INPUT
        and "${SIGNING_KEY} is not set in the environment" in refused.stderr
    )
    out = tmp_path / "out"
    done = cli(*compare, "--skip-unset", "--out", str(out), root=project)
    assert done.returncode == EXIT_UNMEASURED, done.stdout + done.stderr
    why = "left out: needs ${SIGNING_KEY} (secret/benchwatch-app.toml: env.KEY), not set here"
    comment = (out / "comment.md").read_text()
    assert f"- no timings and counts: {why}: `secret@latest` `GET /health`" in comment
    assert "1 declared endpoint left out (--skip-unset)" in comment
    summary = json.loads((out / "compare.json").read_text())
    assert summary["summary"]["exit_code"] == EXIT_UNMEASURED
    assert summary["extra"]["coverage"]["not_measured"] == [
        {
            "variant": "secret@latest",
            "endpoint": "GET /health",
            "missing": "timings and counts",
            "why": why,
        }
    ]


SHOP_APP = """\
from fastapi import FastAPI, Header, HTTPException

app = FastAPI()


@app.get("/health")
def health() -> dict:
    return {"ok": True}


@app.post("/login")
def login(x_key: str = Header()) -> dict:
    return {"access_token": "token-for-" + x_key}


@app.get("/private")
def private(authorization: str = Header()) -> dict:
    if not authorization.startswith("Bearer token-for-"):
        raise HTTPException(401)
    return {"private": True}
"""
SHOP_DECLARATION = """\
name = "shop"
app = "main:app"
stacks = ["latest"]
quick = ["health", "private"]

[[setup.requests]]
name = "login"
method = "POST"
path = "/login"
headers = { X-Key = "${SHOP_KEY}" }
save = { token = "access_token" }

[[endpoints]]
name = "health"
path = "/health"

[[endpoints]]
name = "private"
path = "/private"
headers = { Authorization = "Bearer {setup.token}" }
"""


@pytest.mark.slow
def test_a_real_compare_measures_what_needs_no_secret_and_lists_the_rest(
    tmp_path: Path, monkeypatch
) -> None:
    """Two real servers, their login's key unset: the login is not sent, `/private` (its token) is
    listed as left out, `/health` is load-tested on both sides. One round: no verdict, so exit 2;
    what is asserted is what was measured and what the comment lists."""
    from conftest import benchwatch

    app = tmp_path / "shop"
    app.mkdir()
    (app / "main.py").write_text(SHOP_APP)
    (app / "benchwatch-app.toml").write_text(SHOP_DECLARATION)
    project = make_project(tmp_path / "project", [app])
    out = tmp_path / "out"
    environ = {k: v for k, v in os.environ.items() if k != "SHOP_KEY"}
    monkeypatch.delenv("SHOP_KEY", raising=False)
    done = benchwatch(
        "compare",
        "--base",
        "latest",
        "--head",
        "latest",
        "-k",
        "shop@latest",
        "--quick",
        "--rounds",
        "1",
        "--no-micro",
        "--no-counts",
        "--skip-unset",
        "--out",
        str(out),
        root=project,
        env=environ,
    )
    assert done.returncode in (0, 2), done.stdout + done.stderr
    compared = json.loads((out / "compare.json").read_text())
    assert compared["problems"] == []  # nothing failed: the login was never sent
    coverage = compared["extra"]["coverage"]
    assert (coverage["endpoints"], coverage["timed"]) == (2, 1)
    (left_out,) = [n for n in coverage["not_measured"] if n["why"] != "--no-counts"]
    assert left_out["endpoint"] == "GET /private" and left_out["missing"] == "timings and counts"
    assert left_out["why"].startswith(
        "left out: needs {setup.token} from the set-up request login, which needs "
        "${SHOP_KEY} (shop/benchwatch-app.toml: setup.requests.login.headers.X-Key)"
    )
    assert {r["endpoint"] for r in compared["rows"] if r["endpoint"]} == {"GET /health"}
    assert "1 declared endpoint left out (--skip-unset)" in (out / "comment.md").read_text()
