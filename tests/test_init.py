"""`benchwatch init` in a user's repository, and the first pull request that adds benchwatch."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from benchwatch.errors import UserError
from benchwatch.scaffold import discover, schema
from benchwatch.scaffold.boot_settings import parse_env
from benchwatch.scaffold.expectations import differing_keys, with_expectation
from benchwatch.scaffold.init import init
from benchwatch.scaffold.layout import Layout, layout, project_with_app
from benchwatch.scaffold.path_params import fill_path_params

APP = """from fastapi import FastAPI

app = FastAPI()


@app.get("/items/{item_id}")
def item(item_id: int) -> dict:
    return {"id": item_id}
"""
PINS = "fastapi==0.100.0\npydantic==2.0.3\nuvicorn==0.23.0\n"


def repository(root: Path, source: str = APP) -> Path:
    (root / "svc").mkdir(parents=True)
    (root / "svc" / "__init__.py").write_text("")
    (root / "svc" / "main.py").write_text(source)
    (root / "requirements.txt").write_text(PINS)
    return root


def git(root: Path, *args: str) -> str:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.com",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.com",
    }
    return subprocess.run(
        ["git", "-C", str(root), *args], check=True, capture_output=True, text=True, env=env
    ).stdout


def test_no_app_found_says_how_to_name_it(tmp_path: Path) -> None:
    (tmp_path / "tool.py").write_text("print('no app here')\n")
    with pytest.raises(
        UserError,
        match=r"no FastAPI app found under .*; name it: benchwatch init package.module:app",
    ):
        discover.find_app(tmp_path, None)


def test_apps_are_found_by_assignment_and_several_must_be_named(tmp_path: Path) -> None:
    repository(tmp_path)
    (tmp_path / "src" / "other").mkdir(parents=True)
    (tmp_path / "src" / "other" / "api.py").write_text(
        "import fastapi\napi: fastapi.FastAPI = fastapi.FastAPI()\n"
    )
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "conftest.py").write_text(
        "from fastapi import FastAPI\napp = FastAPI()\n"
    )
    found = {(f.import_string, str(f.import_root)) for f in discover.candidates(tmp_path)}
    assert found == {("svc.main:app", "."), ("other.api:api", "src")}
    with pytest.raises(UserError, match="several FastAPI apps .*name one: benchwatch init "):
        discover.find_app(tmp_path, None)
    assert discover.find_app(tmp_path, "other.api:api").import_root == Path("src")
    with pytest.raises(UserError, match="no module nothing/here.py"):
        discover.find_app(tmp_path, "nothing.here:app")


def test_init_never_overwrites_a_file(tmp_path: Path) -> None:
    repository(tmp_path)
    (tmp_path / "benchwatch").mkdir()
    (tmp_path / "benchwatch" / "benchwatch-app.toml").write_text("# mine\n")
    with pytest.raises(
        UserError, match=r"benchwatch-app.toml exists; init never overwrites a file \(use --force"
    ):
        init(Layout(tmp_path, tmp_path))
    assert (tmp_path / "benchwatch" / "benchwatch-app.toml").read_text() == "# mine\n"
    (tmp_path / "benchwatch" / "benchwatch-app.toml").unlink()
    (tmp_path / "benchwatch.toml").write_text("# mine\n")
    with pytest.raises(
        UserError,
        match=r"benchwatch.toml: no `apps = \[...\]` to add 'benchwatch' to; add it by hand",
    ):
        init(Layout(tmp_path, tmp_path))
    assert (tmp_path / "benchwatch.toml").read_text() == "# mine\n"


def test_the_root_comes_from_git_and_the_app_folder_may_be_anywhere(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    (root / "services" / "posts").mkdir(parents=True)
    git(root, "init", "-q")
    from_folder = layout(root / "services" / "posts", None)
    from_root = layout(root, "services/posts")
    assert (
        from_folder == from_root == Layout(root.resolve(), (root / "services" / "posts").resolve())
    )
    assert from_root.listed() == "services/posts/benchwatch"
    assert from_root.from_app_dir(root / "requirements.txt") == "../../../requirements.txt"
    outside = tmp_path / "plain"
    outside.mkdir()
    assert layout(outside, None).root == outside.resolve()  # no git: the folder is the root
    with pytest.raises(UserError, match="nope: no such folder"):
        layout(root, "nope")


def test_a_second_app_is_added_to_the_projects_list_and_the_rest_kept() -> None:
    text = '# mine\n[benchwatch]\napps = ["a/benchwatch"]\ndefault_stacks = ["latest"]\n'
    added = project_with_app(text, Path("benchwatch.toml"), "b/benchwatch")
    assert (
        added
        == '# mine\n[benchwatch]\napps = ["a/benchwatch", "b/benchwatch"]\ndefault_stacks = ["latest"]\n'
    )
    assert project_with_app(added, Path("benchwatch.toml"), "a/benchwatch") is None


def test_force_replaces_the_apps_files_but_keeps_the_other_apps(tmp_path: Path) -> None:
    from benchwatch.scaffold.init import _project_text

    path = tmp_path / "benchwatch.toml"
    path.write_text('[benchwatch]\napps = ["a/benchwatch"]\n')
    where = Layout(tmp_path, tmp_path / "b")
    assert (
        _project_text(where, path, force=True)
        == '[benchwatch]\napps = ["a/benchwatch", "b/benchwatch"]\n'
    )
    path.write_text("not toml [")
    with pytest.raises(UserError, match="not valid TOML"):
        _project_text(where, path, force=False)
    assert 'apps = ["b/benchwatch"]' in _project_text(where, path, force=True)


def test_settings_are_key_value_pairs() -> None:
    assert parse_env(["DATABASE_URL=postgresql://u@h/db?x=1", "EMPTY="]) == {
        "DATABASE_URL": "postgresql://u@h/db?x=1",
        "EMPTY": "",
    }
    for bad in ("NOVALUE", "1X=2", "=v"):
        with pytest.raises(UserError, match=rf"--env '{bad}': give KEY=VALUE"):
            parse_env([bad])


def test_bad_init_arguments_are_bad_input_and_write_nothing(tmp_path: Path, cli) -> None:
    root = repository(tmp_path / "repo")
    git(root, "init", "-q")
    for argv, message in [
        (("--migrate",), "ERROR: --migrate: no alembic.ini in"),
        (("--env", "X"), "ERROR: --env 'X': give KEY=VALUE"),
        (("--env-literal", "1X=2"), "ERROR: --env-literal '1X=2': give KEY=VALUE"),
        (
            ("--env", "MODE=a", "--env-literal", "MODE=b"),
            "ERROR: --env and --env-literal both give MODE: give it once",
        ),
        (("a", "b"), "ERROR: init a b: give at most one folder and one import string"),
        (("nowhere",), "ERROR: nowhere: no such folder"),
    ]:
        done = cli("init", *argv, root=root)
        assert done.returncode == 3 and done.stderr.startswith(message), done.stderr
    assert sorted(p.name for p in root.iterdir()) == [".git", "requirements.txt", "svc"]


def test_openapi_operations_names_and_volatile_keys() -> None:
    openapi = {
        "paths": {
            "/": {"get": {}},
            "/items": {
                "get": {"parameters": [{"name": "q", "in": "query", "required": False}]},
                "post": {"requestBody": {"required": True}},
            },
            "/items/{id}": {
                "get": {"parameters": [{"name": "id", "in": "path", "required": True}]}
            },
            "/search": {"get": {"parameters": [{"name": "q", "in": "query", "required": True}]}},
        }
    }
    found = schema.operations(openapi)
    assert [(o.method, o.path, o.ready) for o in found] == [
        ("GET", "/", True),
        ("GET", "/items", True),
        ("POST", "/items", False),
        ("GET", "/items/{id}", False),
        ("GET", "/search", False),
    ]
    assert found[4].needs == ["query parameter q"]
    assert schema.endpoint_names([(o.method, o.path) for o in found]) == [
        "root",
        "items",
        "post_items",
        "items_id",
        "search",
    ]
    first = {"a": 1, "at": "10:00", "rows": [{"id": 1, "seen": 5}]}
    second = {"a": 1, "at": "10:01", "rows": [{"id": 1, "seen": 6}]}
    assert differing_keys(first, second) == {"at", "seen"}


@pytest.mark.slow
def test_an_app_without_a_parameter_free_get_gets_commented_examples(tmp_path: Path) -> None:
    # the path parameter's value made from the schema (1) names no record: nothing answers 2xx
    root = repository(
        tmp_path / "repo",
        APP.replace(
            "from fastapi import FastAPI", "from fastapi import FastAPI, HTTPException"
        ).replace('    return {"id": item_id}', '    raise HTTPException(404, "no such item")'),
    )
    pinned = (
        "--workflows-from=someone/benchwatch@0123456789abcdef0123456789abcdef01234567"  # no network
    )
    done = subprocess.run(
        [sys.executable, "-m", "benchwatch", "init", pinned],
        cwd=root,
        capture_output=True,
        text=True,
        env={k: v for k, v in os.environ.items() if k != "BENCHWATCH_ROOT"},
        timeout=600,
    )
    assert done.returncode == 3, done.stderr
    assert (
        done.stderr.strip().splitlines()[-1].startswith("ERROR: no endpoint answered 2xx at init")
    )
    text = (root / "benchwatch" / "benchwatch-app.toml").read_text()
    assert (
        '# [[endpoints]]   # GET /items/{item_id}: answered 404 at init: "no such item" (path parameter item_id = '
        "'1', made from the schema: there is no GET /items, no list's records hold it, and there is no POST "
        "/items)"
    ) in text
    assert 'requirements = "../requirements.txt"' in text
    assert (root / ".github" / "workflows" / "benchwatch-pr.yml").is_file()


def test_the_pull_request_that_adds_benchwatch_borrows_heads_declarations(tmp_path: Path) -> None:
    from benchwatch.compare.sides import resolve
    from benchwatch.project.loading import load_project

    root = repository(
        tmp_path / "repo", APP + '\n\n@app.get("/")\ndef root() -> dict:\n    return {}\n'
    )
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "app")
    (root / "benchwatch").mkdir()
    (root / "benchwatch" / "benchwatch-app.toml").write_text(
        'name = "svc"\nroot = ".."\napp = "svc.main:app"\nrequirements = "../requirements.txt"\n'
        '[[endpoints]]\nname = "root"\npath = "/"\n[endpoints.expect]\njson = "expected/root.json"\n'
    )
    (root / "benchwatch" / "expected").mkdir()
    (root / "benchwatch" / "expected" / "root.json").write_text("{}\n")
    (root / "benchwatch.toml").write_text('[benchwatch]\napps = ["benchwatch"]\n')
    git(root, "add", "-A")
    git(root, "commit", "-qm", "benchwatch")
    with resolve(load_project(root), "HEAD~1", "HEAD", None) as (base, head):
        assert (base.declarations_from, head.declarations_from) == ("HEAD", None)
        assert [v.id for v in base.variants] == [v.id for v in head.variants] == ["svc@own"]
        assert base.project.root != head.project.root
        assert (base.project.root / "benchwatch" / "expected" / "root.json").is_file()
        assert (
            base.variants[0].env_key == head.variants[0].env_key
        )  # same requirements: one environment
    assert "benchwatch.toml" not in git(root, "status", "--porcelain")  # the checkout was a copy


def test_a_requirements_line_that_is_not_a_pin_is_named_and_the_latest_stack_used(
    tmp_path: Path,
) -> None:
    from benchwatch.scaffold.boot_settings import pinned_requirements

    said: list[str] = []
    where = Layout(tmp_path, tmp_path)
    (tmp_path / "requirements.txt").write_text("fastapi==0.100.0\npydantic>=2  # loose\n")
    assert pinned_requirements(where, said.append) is None
    assert said == [
        "init: requirements.txt: 'pydantic>=2' is not an exact pin (name==version), so the app "
        "runs on the `latest` stack; pin every line and set requirements = ... to use the file"
    ]
    (tmp_path / "requirements.txt").write_text(
        "fastapi==0.100.0\n--index-url https://example.org\n"
    )
    assert pinned_requirements(where, said.append) == "../requirements.txt"


FOLDER_APP = """import os

from fastapi import FastAPI

from api.routes import router  # relative to the app folder, as the team runs it

GREETING = os.environ["GREETING"]  # no default: the app does not boot without it
app = FastAPI()
app.include_router(router)


@app.get("/hello")
def hello() -> dict:
    return {"greeting": GREETING}


@app.get("/zz_crash")
def crash() -> dict:
    os._exit(3)  # the server dies: no answer, never a traceback of init's
"""
ROUTES = """from fastapi import APIRouter

router = APIRouter()


@router.get("/posts")
def posts() -> list:
    raise RuntimeError("relation posts does not exist")
"""


def _folder_app(root: Path, folder: str) -> Path:
    (root / folder / "api").mkdir(parents=True)
    (root / folder / "main.py").write_text(FOLDER_APP)
    (root / folder / "api" / "__init__.py").write_text("")
    (root / folder / "api" / "routes.py").write_text(ROUTES)
    return root / folder


@pytest.mark.slow
def test_init_from_an_app_folder_and_from_the_root_writes_the_shared_files_at_the_root(
    tmp_path: Path,
) -> None:
    from conftest import uvicorn_processes

    root = tmp_path / "repo"
    first, second = _folder_app(root, "blog"), _folder_app(root, "services/shop")
    git(root, "init", "-q")
    environ = {k: v for k, v in os.environ.items() if k not in ("BENCHWATCH_ROOT", "GREETING")}

    def bw(*args: str, cwd: Path) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "-m", "benchwatch", *args],
            cwd=cwd,
            capture_output=True,
            text=True,
            env=environ,
            timeout=600,
        )

    failed = bw("init", cwd=first)  # GREETING is missing: the app's own error, then one ERROR line
    assert (
        failed.returncode == 3
        and "Traceback (most recent call last)" not in failed.stderr.split("    | ")[0]
    )
    lines = failed.stderr.strip().splitlines()
    assert any(line.startswith("    | KeyError: 'GREETING'") for line in lines), failed.stderr
    assert (
        lines[-1].startswith("ERROR: main:app did not boot: server exited with code")
        and "--env" in lines[-1]
    )
    assert not (first / "benchwatch").exists() and not (root / "benchwatch.toml").exists()

    done = bw("init", "--env", "GREETING=hi", cwd=first)
    assert done.returncode == 0, (
        done.stderr + (first / "benchwatch" / "benchwatch-app.toml").read_text()
    )
    assert not (first / "benchwatch.toml").exists() and not (first / ".github").exists()
    assert (
        sorted(p.name for p in (root / ".github" / "workflows").iterdir())[0]
        == "benchwatch-comment.yml"
    )
    text = (first / "benchwatch" / "benchwatch-app.toml").read_text()
    # the value is read from the environment on every run, never written down
    assert (
        'root = ".."' in text
        and 'app = "main:app"' in text
        and 'env = { GREETING = "${GREETING}" }' in text
    )
    assert (
        "init: GREETING from --env are written as ${NAME}, never their values: set them in the environment"
        in done.stdout
    )
    assert "with one NAME=value line for each of GREETING" in done.stdout
    assert (
        "# [[endpoints]]   # GET /posts: answered 500 at init: RuntimeError: relation posts does not exist"
        in text
    )
    assert (
        "# [[endpoints]]   # GET /zz_crash: no answer at init: the server exited (code 3)" in text
    )
    assert json.loads((first / "benchwatch" / "expected" / "hello.json").read_text()) == {
        "greeting": "hi"
    }

    again = bw("init", "services/shop", "main:app", "--env-literal", "GREETING=hey", cwd=root)
    assert again.returncode == 0, again.stderr
    assert (
        'env = { GREETING = "hey" }' in (second / "benchwatch" / "benchwatch-app.toml").read_text()
    )
    assert "kept .github/workflows/benchwatch-pr.yml (exists; --force replaces it)" in again.stdout
    assert (
        'apps = ["blog/benchwatch", "services/shop/benchwatch"]'
        in (root / "benchwatch.toml").read_text()
    )
    assert 'root = ".."' in (second / "benchwatch" / "benchwatch-app.toml").read_text()
    listed = bw("list", "--json", cwd=second)  # any folder below finds the root's benchwatch.toml
    assert [v["id"] for v in json.loads(listed.stdout)["variants"]] == [
        "blog@latest",
        "shop@latest",
    ]
    assert uvicorn_processes(str(root)) == []


def test_the_servers_error_is_the_exception_line_of_its_traceback() -> None:
    from benchwatch.scaffold.probe import server_error as _server_error

    class Logged:
        def __init__(self, text: str) -> None:
            self.text = text

        def stderr_tail(self, lines: int = 12) -> str:
            return "\n".join(self.text.splitlines()[-lines:])

    log = Logged(
        "booted\nERROR:    Exception in ASGI application\nTraceback (most recent call last):\n"
        '  File "x.py", line 3, in f\npsycopg.errors.UndefinedTable: relation "p" does not exist\n\n'
        "The above exception was the direct cause of the following exception:\n\n"
        'sqlalchemy.exc.ProgrammingError: (psycopg.errors.UndefinedTable) relation "p" does not exist\n'
        "LINE 2: FROM p\n[SQL: SELECT p.id FROM p]\n(Background on this error at: https://sqlalche.me/e/20/f405)\n"
    )
    assert (
        _server_error(log, 1)
        == 'sqlalchemy.exc.ProgrammingError: (psycopg.errors.UndefinedTable) relation "p" does not exist'
    )
    assert _server_error(Logged("booted\nsomething odd\n"), 1) == "something odd"
    assert _server_error(Logged("booted\n"), 1) == ""


TEMPLATE_SCHEMA = {
    "paths": {
        "/api/v1/login/access-token": {
            "post": {
                "requestBody": {
                    "required": True,
                    "content": {
                        "application/x-www-form-urlencoded": {
                            "schema": {"$ref": "#/components/schemas/Login"}
                        }
                    },
                }
            }
        },
        "/api/v1/items/": {
            "get": {"security": [{"OAuth2PasswordBearer": []}]},
            "post": {
                "security": [{"OAuth2PasswordBearer": []}],
                "requestBody": {
                    "required": True,
                    "content": {
                        "application/json": {"schema": {"$ref": "#/components/schemas/ItemCreate"}}
                    },
                },
                "responses": {
                    "200": {
                        "content": {
                            "application/json": {"schema": {"$ref": "#/components/schemas/Item"}}
                        }
                    }
                },
            },
        },
        "/api/v1/items/{id}": {
            "get": {
                "security": [{"OAuth2PasswordBearer": []}],
                "parameters": [{"name": "id", "in": "path", "required": True}],
            },
            "delete": {
                "security": [{"OAuth2PasswordBearer": []}],
                "parameters": [{"name": "id", "in": "path", "required": True}],
            },
            "put": {
                "security": [{"OAuth2PasswordBearer": []}],
                "parameters": [{"name": "id", "in": "path", "required": True}],
                "requestBody": {
                    "required": True,
                    "content": {"application/json": {"schema": {"type": "object"}}},
                },
            },
        },
        "/api/v1/users/": {
            "post": {
                "requestBody": {
                    "required": True,
                    "content": {
                        "application/json": {"schema": {"$ref": "#/components/schemas/UserCreate"}}
                    },
                }
            }
        },
        "/api/v1/utils/health-check/": {"get": {}},
    },
    "components": {
        "securitySchemes": {
            "OAuth2PasswordBearer": {
                "type": "oauth2",
                "flows": {"password": {"tokenUrl": "/api/v1/login/access-token", "scopes": {}}},
            }
        },
        "schemas": {
            "Login": {
                "type": "object",
                "properties": {"username": {"type": "string"}},
                "required": ["username"],
            },
            "ItemCreate": {
                "type": "object",
                "required": ["title"],
                "properties": {
                    "title": {"type": "string", "examples": ["Groceries"]},
                    "description": {"anyOf": [{"type": "string"}, {"type": "null"}]},
                    "size": {"type": "integer", "default": 3},
                },
            },
            "Item": {
                "type": "object",
                "properties": {"id": {"type": "string"}, "title": {"type": "string"}},
            },
            "UserCreate": {
                "type": "object",
                "required": ["email", "password"],
                "properties": {
                    "email": {"type": "string"},
                    "password": {"type": "string", "default": "x"},
                },
            },
        },
    },
}


def test_a_template_schema_gives_a_login_path_parameters_from_a_created_record_and_bodies_from_examples() -> (
    None
):
    from benchwatch.scaffold import declared_requests as plan

    assert schema.password_login(TEMPLATE_SCHEMA) == "/api/v1/login/access-token"
    assert (
        schema.password_login(
            {
                "components": {
                    "securitySchemes": {
                        "o": {"type": "oauth2", "flows": {"password": {"tokenUrl": "login"}}}
                    }
                }
            }
        )
        == "/login"
    )
    found = plan.plan(TEMPLATE_SCHEMA, can_login=True)
    by_name = {c.name: c for c in found.candidates}
    assert sorted(by_name) == [
        "delete_items_id",
        "items",
        "items_id",
        "post_items",
        "post_login_access_token",
        "post_users",
        "put_items_id",
        "utils_health_check",
    ]  # no shared /api/v1 in names
    assert by_name["post_items"].endpoint.json_body == {"title": "Groceries", "size": 3}
    assert by_name["post_items"].endpoint.headers == plan.BEARER
    assert by_name["post_users"].endpoint.json_body == {
        "email": "post_users_email@example.com",
        "password": "x",
    }
    assert by_name["post_login_access_token"].why == plan.LOGIN_WHY
    assert by_name["delete_items_id"].why.startswith("a DELETE removes what it is sent to")
    assert by_name["utils_health_check"].endpoint.headers == {}
    fill_path_params(
        found, {"/api/v1/items/": {"data": [], "count": 0}}
    )  # an empty list: a record is made
    item = by_name["items_id"]
    assert item.declared and item.endpoint.path_params == {"id": "{setup.items_id}"}
    assert item.steps == ("login", "new_items")
    put = by_name["put_items_id"]  # a record of its own: what it writes is not what items_id reads
    assert put.declared and put.endpoint.path_params == {"id": "{setup.items_for_put_items_id_id}"}
    assert put.endpoint.json_body == {}
    assert [r.name for r in found.setup_requests] == [
        "login",
        "new_items",
        "new_items_for_put_items_id",
    ]
    assert found.sources[0].json_body == {"title": "Groceries", "size": 3} and found.sources[
        0
    ].save == {"items_id": "id"}
    listed = plan.plan(TEMPLATE_SCHEMA, can_login=True)
    fill_path_params(listed, {"/api/v1/items/": {"data": [{"id": "a1", "title": "t"}], "count": 1}})
    assert listed.sources[0].name == "first_items" and listed.sources[0].save == {
        "items_id": "data.0.id"
    }


def test_without_the_credentials_the_endpoints_behind_the_login_say_what_they_need() -> None:
    from benchwatch.scaffold import declare
    from benchwatch.scaffold import declared_requests as plan

    found = plan.plan(TEMPLATE_SCHEMA, can_login=False)
    needs = {c.name: c.why for c in found.candidates}
    assert needs["items"] == (
        "needs the login: set BENCHWATCH_USER and BENCHWATCH_PASSWORD (a user of the app) "
        "and run init again"
    )
    assert found.setup_requests == []
    text = declare.app_text(
        declare.AppText(
            name="backend",
            import_string="app.main:app",
            root="..",
            requirements="../uv.lock",
            python=None,
            declared=[],
            left_out=found.candidates,
            env_names=[],
            migrations=[],
            login=found.login,
        )
    )
    assert "# [setup]" in text and '# path = "/api/v1/login/access-token"' in text
    assert "\n[setup]" not in text


def test_quick_is_the_lists_behind_the_login_with_its_reason() -> None:
    from benchwatch.scaffold import declared_requests as plan

    found = plan.plan(TEMPLATE_SCHEMA, can_login=True)
    fill_path_params(found, {})
    declared = [c for c in found.candidates if c.declared]
    items = next(c for c in declared if c.name == "items")
    items.endpoint = with_expectation(
        items.endpoint, 200, "application/json", "expected/items.json", []
    )
    quick, why = plan.quick_choice(
        declared, {"expected/items.json": {"data": [{"id": "a"}], "count": 1}}
    )
    assert (quick, why) == (["items"], "the GET lists behind the login")
    quick, why = plan.quick_choice(declared, {"expected/items.json": {"data": [], "count": 0}})
    assert why == "the GETs behind the login"  # an empty list is no list to load-test
    assert [c.operation.method for c in plan.in_order(declared)] == [
        "GET",
        "GET",
        "GET",
        "POST",
        "PUT",
        "POST",
    ]


def test_gitignore_gets_the_outputs_once(tmp_path: Path) -> None:
    from benchwatch.scaffold.layout import ignore_outputs

    assert ignore_outputs(tmp_path) == tmp_path / ".gitignore"
    assert (tmp_path / ".gitignore").read_text().splitlines()[1:] == ["results/", ".benchwatch/"]
    assert ignore_outputs(tmp_path) is None
    (tmp_path / ".gitignore").write_text(
        "node_modules\n/results"
    )  # no newline at the end, one already there
    ignore_outputs(tmp_path)
    assert (tmp_path / ".gitignore").read_text().splitlines() == [
        "node_modules",
        "/results",
        "# benchwatch: run outputs and the local history",
        ".benchwatch/",
    ]


def test_callers_pass_the_database_and_the_app_env_secret_only_when_asked() -> None:
    from benchwatch.scaffold.workflows import caller_workflows

    source = "someone/benchwatch@0123456789abcdef0123456789abcdef01234567"
    plain = caller_workflows(source)
    assert not any("database:" in t or "app-env" in t for t in plain.values())
    asked = caller_workflows(source, database="postgresql", app_env=True)
    for name in ("benchwatch-pr.yml", "benchwatch-publish.yml", "benchwatch-nightly.yml"):
        assert "      database: postgresql" in asked[name]
        assert "    secrets:\n      app-env: ${{ secrets.BENCHWATCH_APP_ENV }}" in asked[name]
    assert asked["benchwatch-comment.yml"] == plain["benchwatch-comment.yml"]


def test_the_own_lock_nightly_also_opens_the_nightly_regression_issue() -> None:
    import yaml

    from benchwatch.scaffold.workflows import caller_workflows

    source = "someone/benchwatch@0123456789abcdef0123456789abcdef01234567"
    jobs = yaml.safe_load(caller_workflows(source, own=True)["benchwatch-nightly.yml"])["jobs"]
    assert jobs["nightly"]["with"]["releases"] is True
    issues = jobs["issues"]
    assert issues["needs"] == ["nightly"]
    assert issues["uses"] == f"{source.replace('@', '/.github/workflows/reusable-issues.yml@')}"
    assert issues["permissions"] == {"contents": "read", "issues": "write"}
    assert issues["with"]["kind"] == "nightly"
    assert issues["with"]["nightly-regression"] == (
        "${{ needs.nightly.outputs.regression == 'true' }}"
    )
    plain = yaml.safe_load(caller_workflows(source)["benchwatch-nightly.yml"])["jobs"]
    assert list(plain) == ["nightly"]  # stacks "latest": no releases, no issue


def test_env_values_are_written_as_references_and_given_to_inits_own_boots_only(
    monkeypatch,
) -> None:
    """`--env KEY=VALUE` may be a secret: the declaration reads `${KEY}`, init's boots get VALUE
    from its environment, which is as it was once init ends; `--env-literal` and values that
    are placeholders (or empty, or a PostgreSQL server's URL, which per_boot_database replaces) stay."""
    from benchwatch.scaffold.boot_settings import env_references

    monkeypatch.setenv("SMTP_PASSWORD", "the-shells-own")
    monkeypatch.delenv("FIRST_SUPERUSER", raising=False)
    given = {
        "SMTP_PASSWORD": "literal-pw-4d3c",
        "FIRST_SUPERUSER": "admin@example.com",
        "SMTP_HOST": "",
        "POSTGRES_SERVER": "{database_host}",
        "SECRET_KEY": "${APP_SECRET_KEY}",
        "DATABASE_URL": "postgresql://u:pw@127.0.0.1:5432/app",
    }
    with env_references(given, {"ENVIRONMENT": "local"}) as (env, referenced):
        assert env == {
            "SMTP_PASSWORD": "${SMTP_PASSWORD}",
            "FIRST_SUPERUSER": "${FIRST_SUPERUSER}",
            "SMTP_HOST": "",
            "POSTGRES_SERVER": "{database_host}",
            "SECRET_KEY": "${APP_SECRET_KEY}",
            "DATABASE_URL": "postgresql://u:pw@127.0.0.1:5432/app",
            "ENVIRONMENT": "local",
        }
        assert referenced == ["FIRST_SUPERUSER", "SMTP_PASSWORD"]
        assert (os.environ["SMTP_PASSWORD"], os.environ["FIRST_SUPERUSER"]) == (
            "literal-pw-4d3c",
            "admin@example.com",
        )
    assert os.environ["SMTP_PASSWORD"] == "the-shells-own" and "FIRST_SUPERUSER" not in os.environ


def test_a_postgresql_setting_becomes_the_per_boot_database() -> None:
    from benchwatch.scaffold.boot_settings import per_boot_database

    said: list[str] = []
    env, database = per_boot_database(
        {"DATABASE_URL": "postgresql+psycopg://u:pw@127.0.0.1:55433/app", "X": "1"}, said.append
    )
    assert database == "postgresql" and env["X"] == "1"
    assert env["DATABASE_URL"] == (
        "postgresql+psycopg://{database_user}:{database_password}@{database_host}:"
        "{database_port}/{database_name}"
    )
    assert per_boot_database({"DB": "postgres://u@h/app"}, said.append) == (
        {"DB": "{database_url}"},
        "postgresql",
    )
    assert per_boot_database({"POSTGRES_DB": "{database_name}"}, said.append)[1] == "postgresql"
    assert per_boot_database({"DATABASE_URL": "sqlite:///{tmp}/a.db"}, said.append)[1] == ""


def test_an_app_found_from_the_root_is_imported_from_the_folder_its_imports_resolve_from(
    tmp_path: Path,
) -> None:
    (tmp_path / "backend" / "app" / "api").mkdir(parents=True)
    for name in ("app/__init__.py", "app/api/__init__.py", "app/api/main.py"):
        (tmp_path / "backend" / name).write_text("")
    (tmp_path / "backend" / "app" / "main.py").write_text(
        "from fastapi import FastAPI\n\nfrom app.api.main import api_router\n\napp = FastAPI()\n"
    )
    (found,) = discover.candidates(tmp_path)
    assert (found.import_string, found.import_root) == ("app.main:app", Path("backend"))


BROKEN = """from fastapi import FastAPI

app = FastAPI()


@app.get("/posts")
def posts() -> list:
    raise RuntimeError('relation "posts" does not exist')


@app.get("/authors")
def authors() -> list:
    raise RuntimeError('relation "authors" does not exist')
"""


@pytest.mark.slow
def test_when_every_endpoint_fails_init_shows_the_servers_error_and_writes_nothing(
    tmp_path: Path,
) -> None:
    root = tmp_path / "repo"
    (root / "blog").mkdir(parents=True)
    (root / "blog" / "main.py").write_text(BROKEN)
    git(root, "init", "-q")
    pinned = "--workflows-from=someone/benchwatch@0123456789abcdef0123456789abcdef01234567"
    done = subprocess.run(
        [sys.executable, "-m", "benchwatch", "init", pinned],
        cwd=root / "blog",
        capture_output=True,
        text=True,
        env={k: v for k, v in os.environ.items() if k != "BENCHWATCH_ROOT"},
        timeout=600,
    )
    assert done.returncode == 3, done.stdout + done.stderr
    assert "    | RuntimeError: relation" in done.stderr  # the server's own lines
    assert (
        done.stderr.strip()
        .splitlines()[-1]
        .startswith(
            'ERROR: every request init sent failed (2: RuntimeError: relation "authors" does not exist and 1 other '
            "errors): the app or its settings are broken, so nothing is written"
        )
    )
    assert sorted(p.name for p in root.iterdir()) == [".git", "blog"]
    assert sorted(p.name for p in (root / "blog").iterdir()) == ["main.py"]


def test_goldens_of_endpoints_no_longer_declared_are_removed(tmp_path: Path) -> None:
    from benchwatch.scaffold.init import _remove_stale_goldens

    where = Layout(tmp_path, tmp_path)
    (where.app_dir / "expected").mkdir(parents=True)
    for name in ("posts.json", "authors.json"):
        (where.app_dir / "expected" / name).write_text("[]\n")
    _remove_stale_goldens(where, {where.app_dir / "expected" / "authors.json"})
    assert [p.name for p in (where.app_dir / "expected").iterdir()] == ["authors.json"]
