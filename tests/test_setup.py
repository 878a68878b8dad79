"""The set-up's steps against a small local HTTP server and real subprocesses (fast: no uvicorn)."""

from __future__ import annotations

import http.server
import json
import sys
import textwrap
import threading
import tomllib
from pathlib import Path
from urllib.parse import parse_qs

import pytest

from benchwatch.declarations.apps import AppDeclaration
from benchwatch.declarations.placeholders import Context
from benchwatch.declarations.stacks import Stack
from benchwatch.measure.setup import SetupError, run_setup
from benchwatch.project.apps import App
from benchwatch.project.variants import Variant


class _Api(http.server.BaseHTTPRequestHandler):
    """POST /login (a form) gives a token; POST /items (with it) gives an id; anything else 404."""

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("content-length", 0)))
        if self.path == "/login":
            form = {k: v[0] for k, v in parse_qs(body.decode()).items()}
            ok = form == {"username": "ann", "password": "s3cret-pass"}
            self._answer(
                200 if ok else 401,
                {"access_token": "tok-1", "user": {"id": 7}} if ok else {"detail": "no"},
            )
        elif self.path == "/items" and self.headers.get("authorization") == "Bearer tok-1":
            self._answer(201, {"id": 42, "title": json.loads(body)["title"]})
        else:
            self._answer(404, {"detail": "not found"})

    def _answer(self, status: int, data: dict) -> None:
        raw = json.dumps(data).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def api():
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Api)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


def _variant(root: Path, body: str) -> Variant:
    decl = AppDeclaration(**tomllib.loads(textwrap.dedent(body)))
    app = App(decl, root)
    return Variant(
        app=app,
        flavor=None,
        stack=Stack(name="latest", pins={"fastapi": "1"}),
        import_string=decl.app,
        endpoints=tuple(decl.endpoints),
        quick_endpoints=tuple(decl.endpoints),
        env={},
    )


SETUP = """
    name = "api"
    app = "main:app"
    [setup]
    {seed}
    [[setup.requests]]
    name = "login"
    method = "POST"
    path = "/login"
    form = {{ username = "${{U}}", password = "${{P}}" }}
    save = {{ token = "access_token", user_id = "user.id" }}
    [[setup.requests]]
    name = "item"
    method = "POST"
    path = "/items"
    headers = {{ Authorization = "Bearer {{setup.token}}" }}
    json = {{ title = "bench" }}
    expect_status = 201
    save = {{ item_id = "id" }}
    [[endpoints]]
    name = "item"
    path = "/items/{{id}}"
    path_params = {{ id = "{{setup.{wanted}}}" }}
"""
ENVIRON = {"U": "ann", "P": "s3cret-pass"}


def test_requests_log_in_create_and_save_values_then_a_command_adds_its_own(api, tmp_path):
    (tmp_path / "seed.py").write_text(
        textwrap.dedent("""
        import json, os
        print("seeding with", os.environ["BENCHWATCH_SETUP_TOKEN"], "at", os.environ["BENCHWATCH_BASE_URL"])
        print(json.dumps({"count": 3, "name": "x"}))
    """)
    )
    variant = _variant(
        tmp_path, SETUP.format(seed='command = ["python", "seed.py"]', wanted="item_id")
    )
    environ = {"PATH": str(Path(sys.executable).parent)}
    values = run_setup(variant, api, Context(environ=ENVIRON), environ, Path(sys.executable), 30)
    assert values == {"token": "tok-1", "user_id": "7", "item_id": "42", "count": "3", "name": "x"}


def test_a_callable_seed_is_imported_called_and_awaited(api, tmp_path):
    (tmp_path / "bench_seed.py").write_text("async def seed():\n    return {'first': 5}\n")
    variant = _variant(
        tmp_path,
        SETUP.format(seed='callable = "bench_seed:seed"\ncommand_first = true', wanted="first"),
    )
    values = run_setup(variant, api, Context(environ=ENVIRON), {}, Path(sys.executable), 30)
    assert values["first"] == "5" and values["item_id"] == "42"


def test_each_failing_step_is_named_with_its_status_or_exit(api, tmp_path):
    variant = _variant(tmp_path, SETUP.format(seed="", wanted="item_id"))
    with pytest.raises(SetupError) as caught:
        run_setup(
            variant,
            api,
            Context(environ={**ENVIRON, "P": "wrong-password"}),
            {},
            Path(sys.executable),
            30,
        )
    assert (
        str(caught.value)
        == 'set-up request \'login\': POST /login: status 401, want 2xx ({"detail": "no"})'
    )

    (tmp_path / "seed.py").write_text(
        "import sys\nprint('no database', file=sys.stderr)\nsys.exit(3)\n"
    )
    failing = _variant(
        tmp_path, SETUP.format(seed=f'command = ["{sys.executable}", "seed.py"]', wanted="item_id")
    )
    with pytest.raises(SetupError) as caught:
        run_setup(failing, api, Context(environ=ENVIRON), {}, Path(sys.executable), 30)
    assert (str(caught.value), caught.value.tail) == (
        "set-up command: exited with 3",
        "no database",
    )

    missing = _variant(
        tmp_path,
        SETUP.format(seed=f'command = ["{sys.executable}", "-c", "print(1)"]', wanted="later"),
    )
    with pytest.raises(
        SetupError, match=r"endpoints.item.path_params.id needs \{setup.later\}, which no step gave"
    ):
        run_setup(missing, api, Context(environ=ENVIRON), {}, Path(sys.executable), 30)

    wrong_path = _variant(
        tmp_path,
        SETUP.format(seed="", wanted="item_id").replace(
            'user_id = "user.id"', 'user_id = "user.name"'
        ),
    )
    with pytest.raises(
        SetupError,
        match=r"set-up request 'login': the answer has no 'user.name' to save \(at 'name': id\)",
    ):
        run_setup(wrong_path, api, Context(environ=ENVIRON), {}, Path(sys.executable), 30)
