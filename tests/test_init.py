"""`benchwatch init` in a user's repository, and the first pull request that adds benchwatch."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from benchwatch.errors import UserError
from benchwatch.scaffold import discover, schema
from benchwatch.scaffold.init import init

APP = '''from fastapi import FastAPI

app = FastAPI()


@app.get("/items/{item_id}")
def item(item_id: int) -> dict:
    return {"id": item_id}
'''
PINS = "fastapi==0.100.0\npydantic==2.0.3\nuvicorn==0.23.0\n"


def repository(root: Path, source: str = APP) -> Path:
    (root / "svc").mkdir(parents=True)
    (root / "svc" / "__init__.py").write_text("")
    (root / "svc" / "main.py").write_text(source)
    (root / "requirements.txt").write_text(PINS)
    return root


def git(root: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"}  # fmt: skip
    return subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True, text=True, env=env).stdout


def test_no_app_found_says_how_to_name_it(tmp_path: Path) -> None:
    (tmp_path / "tool.py").write_text("print('no app here')\n")
    with pytest.raises(UserError, match=r"no FastAPI app found under .*; name it: benchwatch init package.module:app"):
        discover.find_app(tmp_path, None)


def test_apps_are_found_by_assignment_and_several_must_be_named(tmp_path: Path) -> None:
    repository(tmp_path)
    (tmp_path / "src" / "other").mkdir(parents=True)
    (tmp_path / "src" / "other" / "api.py").write_text("import fastapi\napi: fastapi.FastAPI = fastapi.FastAPI()\n")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "conftest.py").write_text("from fastapi import FastAPI\napp = FastAPI()\n")
    found = {(f.import_string, str(f.import_root)) for f in discover.candidates(tmp_path)}
    assert found == {("svc.main:app", "."), ("other.api:api", "src")}
    with pytest.raises(UserError, match="several FastAPI apps .*name one: benchwatch init "):
        discover.find_app(tmp_path, None)
    assert discover.find_app(tmp_path, "other.api:api").import_root == Path("src")
    with pytest.raises(UserError, match="no module nothing/here.py"):
        discover.find_app(tmp_path, "nothing.here:app")


def test_init_never_overwrites_a_file(tmp_path: Path) -> None:
    repository(tmp_path)
    (tmp_path / "benchwatch.toml").write_text("# mine\n")
    with pytest.raises(UserError, match=r"benchwatch.toml exists; init never overwrites a file \(use --force"):
        init(tmp_path)
    assert (tmp_path / "benchwatch.toml").read_text() == "# mine\n"


def test_openapi_operations_names_and_volatile_keys() -> None:
    openapi = {"paths": {
        "/": {"get": {}},
        "/items": {"get": {"parameters": [{"name": "q", "in": "query", "required": False}]},
                   "post": {"requestBody": {"required": True}}},
        "/items/{id}": {"get": {"parameters": [{"name": "id", "in": "path", "required": True}]}},
        "/search": {"get": {"parameters": [{"name": "q", "in": "query", "required": True}]}},
    }}  # fmt: skip
    found = schema.operations(openapi)
    assert [(o.method, o.path, o.ready) for o in found] == [
        ("GET", "/", True), ("GET", "/items", True), ("POST", "/items", False),
        ("GET", "/items/{id}", False), ("GET", "/search", False),
    ]  # fmt: skip
    assert found[4].needs == ["query parameter q"]
    assert schema.endpoint_names([(o.method, o.path) for o in found]) == ["root", "items", "post_items", "items_id", "search"]
    first = {"a": 1, "at": "10:00", "rows": [{"id": 1, "seen": 5}]}
    second = {"a": 1, "at": "10:01", "rows": [{"id": 1, "seen": 6}]}
    assert schema.differing_keys(first, second) == {"at", "seen"}


@pytest.mark.slow
def test_an_app_without_a_parameter_free_get_gets_commented_examples(tmp_path: Path) -> None:
    root = repository(tmp_path / "repo")
    done = subprocess.run([sys.executable, "-m", "benchwatch", "init"], cwd=root, capture_output=True, text=True,
                          env={k: v for k, v in os.environ.items() if k != "BENCHWATCH_ROOT"}, timeout=600)  # fmt: skip
    assert done.returncode == 3, done.stderr
    assert done.stderr.strip().splitlines()[-1].startswith("ERROR: the OpenAPI schema has no GET endpoint without parameters")
    text = (root / "benchwatch" / "benchwatch-app.toml").read_text()
    assert "# [[endpoints]]   # GET /items/{item_id}: needs path parameter item_id" in text
    assert 'requirements = "../requirements.txt"' in text
    assert (root / ".github" / "workflows" / "benchwatch-pr.yml").is_file()


def test_the_pull_request_that_adds_benchwatch_borrows_heads_declarations(tmp_path: Path) -> None:
    from benchwatch.compare.sides import resolve
    from benchwatch.config import load_project
    from benchwatch.measure.inject import NO_INJECTION

    root = repository(tmp_path / "repo", APP + '\n\n@app.get("/")\ndef root() -> dict:\n    return {}\n')
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
    with resolve(load_project(root), "HEAD~1", "HEAD", None, NO_INJECTION) as (base, head):
        assert (base.declarations_from, head.declarations_from) == ("HEAD", None)
        assert [v.id for v in base.variants] == [v.id for v in head.variants] == ["svc@own"]
        assert base.project.root != head.project.root
        assert (base.project.root / "benchwatch" / "expected" / "root.json").is_file()
        assert base.variants[0].env_key == head.variants[0].env_key  # same requirements: one environment
    assert "benchwatch.toml" not in git(root, "status", "--porcelain")  # the checkout was a copy


def test_a_requirements_line_that_is_not_a_pin_is_named_and_the_latest_stack_used(tmp_path: Path) -> None:
    from benchwatch.scaffold.init import _pinned_requirements

    said: list[str] = []
    (tmp_path / "requirements.txt").write_text("fastapi==0.100.0\npydantic>=2  # loose\n")
    assert _pinned_requirements(tmp_path, said.append) is None
    assert said == ["init: requirements.txt: 'pydantic>=2' is not an exact pin (name==version), so the app "
                    "runs on the `latest` stack; pin every line and set requirements = ... to use the file"]  # fmt: skip
    (tmp_path / "requirements.txt").write_text("fastapi==0.100.0\n--index-url https://example.org\n")
    assert _pinned_requirements(tmp_path, said.append) == "requirements.txt"
