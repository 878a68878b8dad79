"""`{unique}`: a value fresh for every request sent, of constant length; counted, never load-tested (fast)."""

from __future__ import annotations

import dataclasses
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from conftest import REPO, make_project, variant
from test_coverage import made

from benchwatch.counts.client import Client, Request
from benchwatch.declarations import placeholders
from benchwatch.declarations.apps import AppDeclaration
from benchwatch.declarations.placeholders import UNIQUE_LENGTH, Context, Ref, refs, resolve
from benchwatch.declarations.requests import PER_REQUEST_WHY, Endpoint
from benchwatch.errors import UserError
from benchwatch.judge.coverage import coverage
from benchwatch.measure.request import prepare
from benchwatch.project.apps import App
from benchwatch.project.loading import load_project

SIGNUP = Endpoint(
    name="signup", method="POST", path="/users", json={"email": "u{unique}@example.com", "n": 1}
)
HI = Endpoint(name="hi", path="/hi")


def test_every_resolution_is_fresh_and_of_constant_length():
    assert refs("u{unique}@x.org {{unique}}") == [Ref("unique")]
    values = [resolve("{unique}", Context(environ={})) for _ in range(50)]
    assert len(set(values)) == 50 and {len(v) for v in values} == {UNIQUE_LENGTH}
    assert all(v == v.lower() and int(v, 16) >= 0 for v in values)
    two = resolve("{unique}-{unique}", Context(environ={}))
    assert two[:UNIQUE_LENGTH] != two[UNIQUE_LENGTH + 1 :]  # each occurrence its own
    assert resolve("{{unique}}", Context(environ={})) == "{unique}"  # the escape is the text
    assert resolve(placeholders.escape("a {unique} b"), Context(environ={})) == "a {unique} b"


def test_each_request_prepared_holds_its_own_value_and_the_same_number_of_bytes():
    app = App(AppDeclaration(name="a", app="main:app", endpoints=[SIGNUP]), REPO)
    bodies = [prepare(app, SIGNUP, Context(environ={})).body for _ in range(20)]
    assert len(set(bodies)) == 20 and len({len(b or b"") for b in bodies}) == 1
    assert SIGNUP.per_request and not HI.per_request


def test_a_value_per_request_belongs_in_a_request_only():
    with pytest.raises(
        ValueError, match=r"\{unique\}: a value fresh per request goes in a request only"
    ):
        AppDeclaration(name="a", app="main:app", endpoints=[HI], env={"X": "{unique}"})


def _project(tmp_path: Path, quick: str) -> Path:
    app = tmp_path / "apps" / "tiny"
    app.mkdir(parents=True)
    (app / "app.py").write_text("")
    (app / "benchwatch-app.toml").write_text(
        f'name = "tiny"\napp = "app:app"\nstacks = ["latest"]\n{quick}'
        '[[endpoints]]\nname = "signup"\nmethod = "POST"\npath = "/users"\njson = { email = "u{unique}@example.com" }\n'
        '[[endpoints]]\nname = "hi"\npath = "/hi"\n'
    )
    return make_project(tmp_path / "project", [app])


def test_quick_naming_an_endpoint_with_a_value_per_request_is_one_error_line_exit_3(tmp_path, cli):
    root = _project(tmp_path, 'quick = ["signup"]\n')
    done = cli("list", root=root)
    assert done.returncode == 3, done.stderr
    (line,) = done.stderr.strip().splitlines()
    assert (
        line.startswith("ERROR: ")
        and "quick names endpoint 'signup', whose request holds {unique}" in line
    )
    assert PER_REQUEST_WHY in line and "take it out of quick" in line


def test_it_is_counted_not_timed_and_the_default_quick_skips_it(tmp_path, cli):
    root = _project(tmp_path / "p", "")
    listed = cli("list", root=root).stdout
    assert "signup                       POST /users (counted only: {unique})" in listed
    assert "hi                           GET /hi (quick)" in listed
    (v,) = load_project(root).variants(["latest"])
    assert [e.name for e in v.quick_endpoints] == ["hi"]  # the first endpoint holds {unique}
    assert [e.name for e in v.timed_endpoints(quick=False)] == ["hi"]
    assert [e.name for e in v.selected_endpoints(quick=False)] == [
        "signup",
        "hi",
    ]  # counts send both


def test_coverage_says_why_it_has_no_timings_even_without_quick():
    base, head = (
        dataclasses.replace(variant("api", s), endpoints=(SIGNUP, HI), quick_endpoints=(HI,))
        for s in ("v1", "v2")
    )
    figures = {
        role: [
            made(v, "POST /users", counted=True),
            made(v, "GET /hi", counted=True),
            made(v, "GET /hi", counted=False),
        ]
        for role, v in (("base", base), ("head", head))
    }
    for quick in (True, False):
        found = coverage(
            [(base, head)],
            figures,
            [],
            quick=quick,
            load=True,
            counts=True,
            counts_unavailable=None,
        )
        (item,) = found.not_measured
        assert (item.endpoint, item.missing, item.why) == (
            "POST /users",
            "timings",
            PER_REQUEST_WHY,
        )


class _Srv:
    """What Request.of reads of a booted server."""

    def __init__(self) -> None:
        self.variant = variant("api")
        self.context = Context(environ={})


def test_the_counting_client_resolves_it_again_for_every_request_on_its_one_connection():
    seen: list[bytes] = []
    connections: set[int] = set()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:
            seen.append(self.rfile.read(int(self.headers["content-length"])))
            connections.add(self.client_address[1])
            self.send_response(200)
            self.send_header("content-length", "2")
            self.end_headers()
            self.wfile.write(b"{}")

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        request = Request.of(_Srv(), SIGNUP)
        fixed = Request.of(_Srv(), HI)
        assert fixed.fresh() is fixed  # nothing per request: the same bytes every time
        client = Client("127.0.0.1", server.server_address[1], timeout=10)
        client.send(request, 5)
        client.close()
    finally:
        server.shutdown()
        server.server_close()
    emails = [json.loads(body)["email"] for body in seen]
    assert len(seen) == 5 and len(set(emails)) == 5 and len({len(b) for b in seen}) == 1
    assert len(connections) == 1


def test_a_broken_declaration_is_a_user_error_naming_the_file(tmp_path):
    with pytest.raises(UserError, match="benchwatch-app.toml.*quick names endpoint 'signup'"):
        load_project(_project(tmp_path, 'quick = ["signup"]\n'))
