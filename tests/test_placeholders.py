"""Requests as data: the declaration's new keys, placeholders, path templating, secrets (fast)."""

from __future__ import annotations

import json
import textwrap
import tomllib
from pathlib import Path

import pytest
from conftest import make_project

from benchwatch.declarations import redaction
from benchwatch.declarations.apps import AppDeclaration
from benchwatch.declarations.placeholders import (
    Context,
    PlaceholderError,
    Ref,
    Unresolved,
    refs,
    resolve,
)
from benchwatch.declarations.requests import Endpoint
from benchwatch.errors import UserError
from benchwatch.measure.request import prepare
from benchwatch.project.apps import App, load_app
from benchwatch.project.loading import load_project


@pytest.fixture(autouse=True)
def _no_secrets():
    redaction.forget_all()
    yield
    redaction.forget_all()


def test_only_the_exact_brace_forms_are_placeholders_and_escapes_write_them_as_text():
    text = '{"a": {"b": 1}} ${TOKEN} {tmp}/x {setup.item_id} {database_url} $${NOT} {{setup.nope}} {other}'
    assert refs(text) == [
        Ref("env", "TOKEN"),
        Ref("tmp"),
        Ref("setup", "item_id"),
        Ref("database", "url"),
    ]
    context = Context(
        environ={"TOKEN": "t0k"},
        tmp="/tmp/b",
        setup={"item_id": "7"},
        database={"url": "postgresql://u@127.0.0.1:1/d"},
    )
    assert resolve(text, context) == (
        '{"a": {"b": 1}} t0k /tmp/b/x 7 postgresql://u@127.0.0.1:1/d ${NOT} {setup.nope} {other}'
    )


@pytest.mark.parametrize(
    "text, said",
    [
        ("${API TOKEN}", "is not a placeholder"),
        ("Bearer ${TOKEN", "without its closing"),
        ("{database_uri}", "the database's are {database_url}"),
        ("{setup.item-id}", "a set-up value's name"),
    ],
)
def test_a_malformed_placeholder_is_said_as_such(text, said):
    with pytest.raises(PlaceholderError, match=said.replace("{", r"\{").replace("}", r"\}")):
        refs(text)


def test_a_value_missing_at_run_time_names_the_placeholder():
    with pytest.raises(Unresolved, match=r"\$\{API_TOKEN\} is not set in the environment"):
        resolve("Bearer ${API_TOKEN}", Context(environ={}))
    with pytest.raises(
        Unresolved, match=r"\{setup.token\} was not given by the set-up \(it gave: item_id\)"
    ):
        resolve("Bearer {setup.token}", Context(environ={}, setup={"item_id": "1"}))


def _declaration(body: str) -> AppDeclaration:
    return AppDeclaration(**tomllib.loads(textwrap.dedent(body)))


def test_a_request_declared_as_data_is_sent_filled_and_encoded():
    decl = _declaration("""
        name = "api"
        app = "main:app"
        setup = { command = ["python", "seed.py"] }
        [[endpoints]]
        name = "item"
        method = "PUT"
        path = "/api/v1/items/{item_id}/tags/{tag}"
        path_params = { item_id = "{setup.item_id}", tag = "a b/c" }
        query = { fields = ["id", "title"], verbose = true, q = "${SEARCH}" }
        headers = { Authorization = "Bearer {setup.token}", X-Trace = "bench" }
        json = { title = "x", owner = { name = "${BENCH_USER}" }, tags = ["{setup.item_id}", 2] }
    """)
    endpoint = decl.endpoints[0]
    # the label (and so every figure name) keeps the template: ids and secrets never enter it
    assert (
        endpoint.label
        == "PUT /api/v1/items/{item_id}/tags/{tag}?fields=id&fields=title&verbose=true&q=${SEARCH}"
    )
    context = Context(
        environ={"SEARCH": "a&b", "BENCH_USER": "ann"}, setup={"item_id": "42", "token": "t.k"}
    )
    sent = prepare(App(decl, Path(".")), endpoint, context)
    assert sent.method == "PUT"
    assert (
        sent.target == "/api/v1/items/42/tags/a%20b%2Fc?fields=id&fields=title&verbose=true&q=a%26b"
    )
    assert sent.header_dict() == {
        "Authorization": "Bearer t.k",
        "X-Trace": "bench",
        "content-type": "application/json",
    }
    assert json.loads(sent.body) == {"title": "x", "owner": {"name": "ann"}, "tags": ["42", 2]}


def test_a_form_body_and_a_raw_query_with_a_placeholder():
    decl = _declaration("""
        name = "api"
        app = "main:app"
        [[endpoints]]
        name = "login"
        method = "POST"
        path = "/login"
        query = "next=%2F&key=${KEY}"
        form = { username = "${U}", password = "${P}", remember = true }
    """)
    sent = prepare(
        App(decl, Path(".")),
        decl.endpoints[0],
        Context(environ={"U": "ann", "P": "p&ss word", "KEY": "k/1"}),
    )
    assert sent.target == "/login?next=%2F&key=k%2F1"
    assert sent.content_type == "application/x-www-form-urlencoded"
    assert sent.body == b"username=ann&password=p%26ss+word&remember=true"


def test_existing_declarations_keep_their_labels_and_bodies():
    endpoint = Endpoint(
        name="write",
        method="POST",
        path="/posts",
        query="per_page=100",
        body='{"title": "{tmp} is text here"}',
        content_type="application/json",
    )
    assert endpoint.label == "POST /posts?per_page=100"
    sent = prepare(
        App(
            _declaration('name = "p"\napp = "m:app"\n[[endpoints]]\nname = "r"\npath = "/"'),
            Path("."),
        ),
        endpoint,
        Context(environ={}, tmp="/t"),
    )
    assert sent.body == b'{"title": "/t is text here"}' and sent.target == "/posts?per_page=100"
    labels = {e.label for app in load_project().apps for e in app.declaration.endpoints}
    assert {
        "GET /posts?per_page=100&page=0&order=desc",
        "POST /posts",
        "GET /",
        "GET /services?offset=0",
    } <= labels


@pytest.mark.parametrize(
    "body, message",
    [
        (
            'path = "/items/{id}"',
            "endpoints.0: Value error, path /items/{id}: give `path_params` a value for id",
        ),
        (
            'path = "/items"\npath_params = { id = "1" }',
            "path_params: id is in no `{...}` of path /items",
        ),
        (
            'path = "/items"\njson = { a = 1 }\nbody = "x"',
            "give one body at most, not `json` and `body`",
        ),
        ('path = "/items"\njson = { when = 2026-11-25 }', "json.when: a date has no JSON form"),
        (
            'path = "/items"\nheaders = { Content-Type = "text/plain" }',
            "benchwatch sets this header",
        ),
        (
            'path = "/items"\nheaders = { Authorization = "Bearer {setup.token}" }',
            "endpoints.x.headers.Authorization: {setup.token}: no set-up request before it saves 'token'",
        ),
        (
            'path = "/items"\nheaders = { Authorization = "Bearer ${API TOKEN}" }',
            "endpoints.x.headers.Authorization: `${API TOKEN}` is not a placeholder",
        ),
    ],
)
def test_bad_request_keys_are_one_line_naming_the_key(tmp_path, body, message):
    (tmp_path / "benchwatch-app.toml").write_text(
        f'name = "api"\napp = "main:app"\n[[endpoints]]\nname = "x"\n{body}\n'
    )
    with pytest.raises(UserError) as caught:
        load_app(tmp_path)
    said = str(caught.value).replace("Value error, ", "")
    assert message.replace("Value error, ", "") in said, said
    assert said.startswith(str(tmp_path / "benchwatch-app.toml") + ": ")


@pytest.mark.parametrize(
    "extra, message",
    [
        (
            'env = { X = "{setup.token}" }',
            "env.X: {setup.token}: set-up values exist only after the server booted",
        ),
        ('env = { X = "{database_url}" }', 'env.X: {database_url} needs `database = "postgresql"`'),
        (
            'pre_start = ["python", "m.py", "{setup.a}"]',
            "pre_start[2]: {setup.a}: set-up values exist only after",
        ),
    ],
)
def test_placeholders_that_cannot_have_a_value_where_they_stand_are_refused(
    tmp_path, extra, message
):
    (tmp_path / "benchwatch-app.toml").write_text(
        f'name = "api"\napp = "main:app"\n{extra}\n[[endpoints]]\nname = "x"\npath = "/"\n'
    )
    with pytest.raises(
        UserError, match="^" + str(tmp_path / "benchwatch-app.toml").replace("/", "/") + ": "
    ):
        load_app(tmp_path)
    with pytest.raises(UserError) as caught:
        load_app(tmp_path)
    assert message in str(caught.value)


def test_a_set_up_value_is_usable_once_a_step_before_saves_it_or_a_command_may_give_it():
    ordered = """
        name = "api"
        app = "main:app"
        [[setup.requests]]
        name = "login"
        method = "POST"
        path = "/login"
        form = { username = "${U}", password = "${P}" }
        save = { token = "access_token" }
        [[setup.requests]]
        name = "item"
        method = "POST"
        path = "/items"
        headers = { Authorization = "Bearer {setup.token}" }
        json = { title = "x" }
        save = { item_id = "id" }
        [[endpoints]]
        name = "item"
        path = "/items/{id}"
        path_params = { id = "{setup.item_id}" }
    """
    _declaration(ordered)
    swapped = ordered.replace(
        'headers = { Authorization = "Bearer {setup.token}" }',
        'headers = { Authorization = "Bearer {setup.later}" }',
    )
    with pytest.raises(
        ValueError, match=r"setup.requests.item.headers.Authorization: \{setup.later\}"
    ):
        _declaration(swapped)
    _declaration(
        swapped.replace(
            '[[setup.requests]]\n        name = "login"',
            'setup.command = ["python", "seed.py"]\n        [[setup.requests]]\n        name = "login"',
        )
    )


def test_two_endpoints_with_one_label_are_refused():
    with pytest.raises(ValueError, match="endpoints mine and theirs are both 'GET /items/{id}'"):
        _declaration("""
            name = "api"
            app = "main:app"
            [[endpoints]]
            name = "mine"
            path = "/items/{id}"
            path_params = { id = "1" }
            [[endpoints]]
            name = "theirs"
            path = "/items/{id}"
            path_params = { id = "2" }
        """)


SECRET_APP = """
name = "secret"
app = "main:app"
stacks = ["latest"]
env = {{ KEY = "${{SIGNING_KEY}}" }}
[[endpoints]]
name = "item"
path = "/items/{{id}}"
path_params = {{ id = "1" }}
headers = {{ Authorization = "Bearer ${{API_TOKEN}}" }}
"""


@pytest.mark.parametrize(
    "command",
    [
        ["verify"],
        ["run", "--quick", "--no-micro"],
        ["counts", "--quick"],
        ["compare", "--base", "latest", "--head", "latest", "--quick", "--no-micro"],
    ],
)
def test_a_missing_variable_is_one_error_line_naming_it_before_anything_boots(
    tmp_path, cli, command
):
    app = tmp_path / "secret"
    app.mkdir()
    (app / "benchwatch-app.toml").write_text(SECRET_APP.format())
    project = make_project(tmp_path / "project", [app])
    done = cli(
        *command, "-k", "secret@*", root=project, env={"SIGNING_KEY": "k3y-value-for-signing"}
    )
    assert done.returncode == 3, done.stderr
    assert done.stderr.strip().splitlines()[-1] == (
        f"ERROR: {app / 'benchwatch-app.toml'}: endpoints.item.headers.Authorization: ${{API_TOKEN}} is not set "
        "in the environment"
    )
    assert not (project / "results").exists()  # nothing written, nothing booted


def test_secrets_are_redacted_as_whole_words_in_every_form_they_are_quoted():
    redaction.remember("BENCH_USER", "bench")
    redaction.remember("BENCH_PASSWORD", "p&ss word/1")
    redaction.remember("SHORT", "abc")  # too short to redact: it would garble everything
    text = (
        'benchwatch: login as bench failed: {"password": "p&ss word/1"} form password=p%26ss+word%2F1 '
        "url p%26ss%20word%2F1 abc"
    )
    assert redaction.redact(text) == (
        'benchwatch: login as ${BENCH_USER} failed: {"password": "${BENCH_PASSWORD}"} form '
        "password=${BENCH_PASSWORD} url ${BENCH_PASSWORD} abc"
    )


def test_the_database_url_is_checked_and_its_password_is_a_secret(monkeypatch):
    from benchwatch.measure import database

    cluster = database.parse_url("postgresql+psycopg://bench:s%40cret-pw@127.0.0.1:5433/postgres")
    assert (cluster.host, cluster.port, cluster.user, cluster.password, cluster.admin_database) == (
        "127.0.0.1",
        5433,
        "bench",
        "s@cret-pw",
        "postgres",
    )
    assert redaction.redact("password s@cret-pw") == "password ${BENCHWATCH_POSTGRES_URL}"
    boot = database.BootDatabase(cluster, "benchwatch_1_ab")
    assert boot.parts["url"] == "postgresql://bench:s%40cret-pw@127.0.0.1:5433/benchwatch_1_ab"
    with pytest.raises(UserError, match="must be on loopback"):
        database.parse_url("postgresql://u@db.example.com/postgres")
    monkeypatch.delenv(database.URL_ENV, raising=False)
    monkeypatch.setattr(database, "server_bin", lambda: None)
    with pytest.raises(
        UserError,
        match=r"^app.toml: database = \"postgresql\" needs PostgreSQL's server \(initdb, "
        r"pg_ctl\): install it with `sudo apt-get install postgresql`",
    ):
        database.require('app.toml: database = "postgresql"')


def test_an_app_never_gets_the_runners_variables_not_even_by_name(tmp_path, cli, monkeypatch):
    """N4: a pull request's app runs as benchwatch's server. GITHUB_OUTPUT / GITHUB_ENV would let
    it rewrite the job's outputs; `${GITHUB_OUTPUT}` in its declaration is as unset as it is absent."""
    monkeypatch.setenv("GITHUB_OUTPUT", str(tmp_path / "output"))
    monkeypatch.setenv("ACTIONS_RUNTIME_TOKEN", "runtime-token")
    monkeypatch.setenv("RUNNER_TEMP", str(tmp_path))
    monkeypatch.setenv("BENCH_USER", "alice")
    environ = Context().environ
    assert "BENCH_USER" in environ and not [
        k for k in environ if k.startswith(("GITHUB_", "ACTIONS_", "RUNNER_"))
    ]
    app = tmp_path / "secret"
    app.mkdir()
    (app / "benchwatch-app.toml").write_text(
        SECRET_APP.format().replace("${SIGNING_KEY}", "${GITHUB_OUTPUT}")
    )
    project = make_project(tmp_path / "project", [app])
    done = cli(
        "verify",
        "-k",
        "secret@*",
        root=project,
        env={"API_TOKEN": "t0ken-value", "GITHUB_OUTPUT": str(tmp_path / "o")},
    )
    assert done.returncode == 3, done.stderr
    assert done.stderr.strip().splitlines()[-1] == (
        f"ERROR: {app / 'benchwatch-app.toml'}: env.KEY: ${{GITHUB_OUTPUT}} is not set in the environment"
    )


def test_the_writers_redact_every_string_and_leave_figures_and_bytes_alone(tmp_path):
    """write_json_atomic / write_text_atomic are the doors results, reports, the comment and the
    site leave by: with no secret remembered they write exactly what they were given; with one,
    every string form of it is its name, and numbers (figures, a numeric secret) stay as they are."""
    from benchwatch.results.files import write_json_atomic, write_text_atomic

    data = {
        "figures": [
            {"name": "api@latest/GET /items/p50", "value": 1234.0, "samples": [1234, 1234.5]}
        ],
        "problems": [{"reason": 'said: pw"é\\x 1234 true', "detail": "token t0k-3n/+x"}],
        "valid": True,
    }
    text = '<td>pw&quot;é\\x</td> | pw"é\\\\x | 1234 | t0k-3n%2F%2Bx | true\n'
    write_json_atomic(tmp_path / "before.json", data)
    write_text_atomic(tmp_path / "before.md", text)
    assert (tmp_path / "before.json").read_text() == json.dumps(data, indent=1) + "\n"
    assert (tmp_path / "before.md").read_text() == text

    redaction.remember("PASSWORD", 'pw"é\\x')
    redaction.remember("PIN", "1234")  # a number: redacted in quoted text only
    redaction.remember("DEBUG", "true")
    redaction.remember_setup({"token": "t0k-3n/+x", "item_id": "1234567", "admin": "false"})
    write_json_atomic(tmp_path / "after.json", data)
    write_text_atomic(tmp_path / "after.md", text)
    assert json.loads((tmp_path / "after.json").read_text()) == {
        "figures": [
            {"name": "api@latest/GET /items/p50", "value": 1234.0, "samples": [1234, 1234.5]}
        ],
        "problems": [{"reason": "said: ${PASSWORD} 1234 true", "detail": "token {setup.token}"}],
        "valid": True,
    }
    assert (
        tmp_path / "after.md"
    ).read_text() == "<td>${PASSWORD}</td> | ${PASSWORD} | 1234 | {setup.token} | true\n"
    assert (
        redaction.redact("pin 1234, debug true, id 1234567")
        == "pin ${PIN}, debug ${DEBUG}, id 1234567"
    )


def test_the_pieces_of_a_value_pydantic_cut_short_are_redacted():
    """pydantic quotes a long input as its first 24 and last 23 characters, and a settings dict cut
    anywhere (`{'SECRET_KEY': 'Long-Plan...`): a piece of 6 characters or more beside the cut goes."""
    from pydantic import BaseModel, ValidationError, model_validator

    class Port(BaseModel):
        port: int

    class Settings(BaseModel):
        SECRET_KEY: str
        PROJECT: str

        @model_validator(mode="after")
        def _never(self) -> Settings:
            raise ValueError("change the secrets")

    secret = "Long-secret-value-" + "q9w8e7r6" * 6
    redaction.remember("SECRET_KEY", secret)
    said = []
    for attempt in (lambda: Port(port=secret), lambda: Settings(SECRET_KEY=secret, PROJECT="shop")):
        with pytest.raises(ValidationError) as caught:
            attempt()
        said.append(redaction.redact(str(caught.value)))
    assert "input_value='${SECRET_KEY}...${SECRET_KEY}'" in said[0]
    assert (
        "input_value={'SECRET_KEY': '${SECRET_KEY}...7r6', 'PROJECT': 'shop'}" in said[1]
    )  # 3 left: too few
    assert not [s for s in said if "Long-se" in s or "e7r6" in s]
    # a word that only begins like the value, and a piece too short to tell anything, stay
    assert redaction.redact("Long-... Long-secretive... Long-secret-v…x ...r6q9w8e7r6") == (
        "Long-... Long-secretive... ${SECRET_KEY}…x ...${SECRET_KEY}"
    )


def test_the_login_and_the_named_variables_are_secrets_for_the_whole_command(capsys):
    """A server inherits benchwatch's environment: BENCHWATCH_USER / BENCHWATCH_PASSWORD and the
    variables BENCHWATCH_SECRET_NAMES lists (the workflows' app-env lines) are kept out of every
    line the command prints, whether a `${NAME}` reads them or not."""
    import sys

    redaction.remember_environment(
        {
            "BENCHWATCH_USER": "admin@example.com",
            "BENCHWATCH_PASSWORD": "",
            "BENCHWATCH_SECRET_NAMES": "SIGNING_KEY, SMTP_PASSWORD UNSET",
            "SIGNING_KEY": "sk-9f8e7d",
            "SMTP_PASSWORD": "smtp-pw-1",
            "OTHER": "visible",
        }
    )
    stream = redaction.RedactedStream(sys.stdout)
    print(
        "login admin@example.com signed with sk-9f8e7d, mail smtp-pw-1, other visible",
        file=stream,
        flush=True,
    )
    assert capsys.readouterr().out == (
        "login ${BENCHWATCH_USER} signed with ${SIGNING_KEY}, mail ${SMTP_PASSWORD}, other visible\n"
    )


def test_an_error_answer_init_comments_on_quotes_no_secret():
    """init writes a left-out endpoint's error answer into the committed declaration as a comment."""
    import httpx

    from benchwatch.scaffold.probe import _detail

    redaction.remember("API_TOKEN", "tk-" + "9" * 300)
    said = _detail(httpx.Response(401, json={"detail": f"token {'tk-' + '9' * 300} expired"}))
    assert said == '"token ${API_TOKEN} expired"'
    assert (
        _detail(httpx.Response(400, text="x" * 290 + " tk-" + "9" * 300))
        == "x" * 290 + " ${API_TOK"
    )
