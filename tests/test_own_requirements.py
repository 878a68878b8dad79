"""An app's own dependencies and Python: requirements with environment markers, a uv.lock exported
through uv, `.python-version` and `requires-python` matched against the interpreters installed."""

from __future__ import annotations

import subprocess

import pytest
from conftest import REPO, benchwatch
from test_interpreters import fake_python

from benchwatch.environments import interpreters, own_requirements
from benchwatch.errors import UserError
from benchwatch.project.loading import load_project

LOCKED = REPO / "tests" / "fixtures" / "locked_app"
LINUX = {
    "sys_platform": "linux",
    "platform_python_implementation": "CPython",
    "python_version": "3.12",
}


@pytest.fixture(autouse=True)
def fresh():
    interpreters.reset()
    yield
    interpreters.reset()


def test_pins_behind_markers_hold_only_where_their_marker_is_true(tmp_path):
    text = (
        "# exported\nfastapi==0.121.0\nuvicorn[standard]==0.38.0  # the server\n"
        "colorama==0.4.6 ; sys_platform == 'win32'\n"
        "uvloop==0.23.0 ; platform_python_implementation != 'PyPy' and sys_platform != 'win32'\n"
    )
    pins = own_requirements.parse(text, tmp_path / "requirements.txt")
    assert [(p.name, p.version) for p in pins][:2] == [
        ("fastapi", "0.121.0"),
        ("uvicorn", "0.38.0"),
    ]
    assert own_requirements.applying(pins, LINUX) == {
        "fastapi": "0.121.0",
        "uvicorn": "0.38.0",
        "uvloop": "0.23.0",
    }
    assert "colorama" in own_requirements.applying(pins, {**LINUX, "sys_platform": "win32"})


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("fastapi>=0.100", "'fastapi>=0.100' is not an exact pin"),
        ("fastapi==0.1 ; sys_platform ==", "not a valid environment marker"),
        # F9: uv reads the file itself: a path or an editable runs an in-tree build backend, an index
        # option fetches from elsewhere, -r and -c read another file
        ("./pkg", "'./pkg' is not an exact pin"),
        ("pkg @ file:///tmp/pkg", "'pkg @ file:///tmp/pkg' is not an exact pin"),
        ("-e ./pkg", "'-e ./pkg': an app's requirements are exact pins only"),
        ("--editable=./pkg", "'--editable=./pkg': an app's requirements are exact pins only"),
        (
            "--index-url https://evil.example/simple",
            "'--index-url https://evil.example/simple': an app's requirements",
        ),
        ("--extra-index-url https://evil.example/simple", "exact pins only"),
        ("-i https://evil.example/simple", "exact pins only"),
        ("-f ./wheels", "'-f ./wheels': an app's requirements are exact pins only"),
        ("--find-links=https://evil.example", "exact pins only"),
        ("-r other.txt", "exact pins only"),
        ("-c constraints.txt", "exact pins only"),
    ],
)
def test_a_line_that_is_not_an_exact_pin_is_named(tmp_path, line, message):
    with pytest.raises(UserError, match=message):
        own_requirements.parse(f"uvicorn==0.38.0\n{line}\n", tmp_path / "requirements.txt")


def test_an_app_requiring_an_editable_path_is_refused_in_one_line_exit_3(tmp_path):
    """F9: `-e ./pkg` ran the package's own build backend, which saw the runner's GITHUB_OUTPUT."""
    app = tmp_path / "app"
    (app / "pkg").mkdir(parents=True)
    (app / "main.py").write_text("from fastapi import FastAPI\napp = FastAPI()\n")
    (app / "requirements.txt").write_text("fastapi==0.121.0\n-e ./pkg\n")
    (app / "benchwatch-app.toml").write_text(
        'name = "edit"\napp = "main:app"\nrequirements = "requirements.txt"\n'
        '[[endpoints]]\nname = "root"\npath = "/"\n'
    )
    (tmp_path / "benchwatch.toml").write_text('[benchwatch]\napps = ["app"]\n')
    done = benchwatch("list", root=tmp_path)
    assert done.returncode == 3, done.stderr
    [line] = [x for x in done.stderr.splitlines() if x.strip()]
    assert (
        line.startswith("ERROR: ")
        and "'-e ./pkg': an app's requirements are exact pins only" in line
    )


def test_every_uv_call_runs_without_the_runners_variables(monkeypatch):
    """F9: uv runs build backends; they get the environment the servers get (placeholders.app_environ)."""
    from benchwatch.declarations.placeholders import RUNNER_PREFIXES
    from benchwatch.environments.uv_tool import uv_environ

    for name in ("GITHUB_OUTPUT", "GITHUB_ENV", "ACTIONS_RUNTIME_TOKEN", "RUNNER_TEMP"):
        monkeypatch.setenv(name, "/runner/" + name)
    monkeypatch.setenv("UV_INDEX_URL", "https://pypi.example/simple")
    environ = uv_environ()
    assert not [k for k in environ if k.startswith(RUNNER_PREFIXES)]
    assert (
        environ["UV_INDEX_URL"] == "https://pypi.example/simple"
        and environ["UV_PYTHON_DOWNLOADS"] == "never"
    )


def test_no_uv_call_gets_an_environment_of_its_own_making():
    """Every subprocess running uv_executable() passes env=uv_environ() (one definition)."""
    import ast

    callers = []
    for path in (REPO / "src" / "benchwatch").rglob("*.py"):
        source = path.read_text()
        if "uv_executable()" not in source or path.name == "uv_tool.py":
            continue
        for node in ast.walk(ast.parse(source)):
            if (
                isinstance(node, ast.Call)
                and getattr(node.func, "attr", "") == "run"
                and node.args
                and (
                    ast.unparse(node.args[0]) == "argv"
                    or "uv_executable()" in ast.unparse(node.args[0])
                )
            ):
                env = next((k.value for k in node.keywords if k.arg == "env"), None)
                callers.append(
                    (path.name, node.lineno, ast.unparse(env) if env is not None else None)
                )
    assert {name for name, *_ in callers} >= {
        "envs.py",
        "own_requirements.py",
        "resolver.py",
        "python_releases.py",
    }
    assert [
        c for c in callers if c[2] not in ("uv_environ()", "uv_environ(may_download=True)")
    ] == []


def test_a_lock_file_without_its_lock_says_how_to_make_one(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\nversion = "0"\n')
    with pytest.raises(UserError, match=r"no uv.lock beside it: run `uv lock`"):
        own_requirements.export(tmp_path / "pyproject.toml", tmp_path / "cache")
    plain = tmp_path / "requirements.txt"
    assert (
        own_requirements.export(plain, tmp_path / "cache") == plain
    )  # a requirements file is itself


def test_the_nearest_python_version_file_wins_up_to_the_repository_root(tmp_path):
    app = tmp_path / "repo" / "backend" / "app"
    app.mkdir(parents=True)
    (tmp_path / ".python-version").write_text("3.9\n")  # above the repository: never read
    assert own_requirements.python_of(app, tmp_path / "repo", None) is None
    (tmp_path / "repo" / ".python-version").write_text("3.13\n")
    assert own_requirements.python_of(app, tmp_path / "repo", None) == "3.13"
    (tmp_path / "repo" / "backend" / ".python-version").write_text(
        "cpython-3.12.1-linux-x86_64-gnu\n"
    )
    assert own_requirements.python_of(app, tmp_path / "repo", None) == "3.12.1"
    (tmp_path / "repo" / "backend" / ".python-version").write_text("pypy\n")
    with pytest.raises(UserError, match="is not a CPython version like 3.12"):
        own_requirements.python_of(app, tmp_path / "repo", None)


def test_requires_python_takes_the_lowest_installed_version_it_allows(tmp_path, monkeypatch):
    pythons = [fake_python(tmp_path / v, v, symbols=True) for v in ("3.11.7", "3.12.1", "3.13.0")]
    monkeypatch.setenv("BENCHWATCH_PYTHONS", ":".join(map(str, pythons)))
    project = tmp_path / "backend"
    project.mkdir()

    def wanting(spec: str) -> str | None:
        (project / "pyproject.toml").write_text(
            f'[project]\nname = "app"\nrequires-python = "{spec}"\n'
        )
        return own_requirements.python_of(project, project, None)

    assert wanting(">=3.12,<4.0") == "3.12"
    assert wanting(">=3.10") == "3.11"
    assert wanting("~=3.13.0") == "3.13"
    with pytest.raises(
        UserError,
        match=r"no such Python is installed here: install one with `uv python install 3\.14`",
    ):
        wanting(">=3.14")
    with pytest.raises(UserError, match="is not a version specifier"):
        wanting("3.12+")


@pytest.mark.slow
def test_real_locked_app_installs_its_lock_on_the_python_it_asks_for(tmp_path):
    """The shape most teams start from: pyproject.toml + uv.lock, requires-python >= 3.12, a pin for
    Windows only: verified on CPython 3.12 with exactly the lock's versions."""
    if not interpreters.find_installed("3.12"):
        pytest.skip("no CPython 3.12 here (`uv python install 3.12`)")
    project = load_project(LOCKED)
    (variant,) = project.variants()
    assert variant.id == "locked@own" and variant.stack.python == "3.12"
    done = benchwatch("verify", root=LOCKED)
    assert done.returncode == 0, done.stderr
    assert "python 3.12: CPython 3.12" in done.stderr
    exported = own_requirements.parse(
        variant.requirements_file.read_text(), variant.requirements_file
    )
    from benchwatch.environments import envs

    env = envs.ensure(variant.stack, requirements_file=variant.requirements_file)
    assert env.interpreter is not None and env.interpreter.minor == "3.12"
    assert env.version("fastapi") == "0.121.0" and env.version("pydantic-settings") == "2.11.0"
    assert env.version("colorama") is None  # `; sys_platform == 'win32'`
    assert {p.name for p in exported} >= {"fastapi", "uvicorn", "uvloop", "colorama"}
    answered = subprocess.run(
        [str(env.python), "-c", "import sys; print(*sys.version_info[:2])"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert answered.stdout.split() == ["3", "12"]


def test_a_missing_python_is_installed_with_uv_when_the_workflows_ask(tmp_path, monkeypatch):
    """BENCHWATCH_INSTALL_PYTHON=1 (the reusable workflows): requires-python >=3.14 on a runner
    without it runs `uv python install 3.14` and uses what uv installed; without it, the error
    names that command and nothing is installed."""
    made = fake_python(tmp_path / "made", "3.14.2", symbols=True)
    uv_dir, log = tmp_path / "uv-pythons", tmp_path / "uv.log"
    uv = tmp_path / "uv"
    uv.write_text(
        f'#!/bin/sh\necho "$@" >> {log}\nmkdir -p {uv_dir}/cpython-3.14.2-linux/bin\n'
        f"cp {made} {uv_dir}/cpython-3.14.2-linux/bin/python3.14\n"
    )
    uv.chmod(0o755)
    monkeypatch.setattr("benchwatch.environments.uv_tool.uv_executable", lambda: str(uv))
    monkeypatch.delenv("BENCHWATCH_PYTHONS", raising=False)
    monkeypatch.setenv("UV_PYTHON_INSTALL_DIR", str(uv_dir))
    monkeypatch.setenv("PYENV_ROOT", str(tmp_path / "no-pyenv"))
    monkeypatch.delenv("RUNNER_TOOL_CACHE", raising=False)
    monkeypatch.setenv("PATH", "/usr/bin:/bin")  # no CPython 3.14 there
    project = tmp_path / "backend"
    project.mkdir()
    (project / "pyproject.toml").write_text('[project]\nname = "app"\nrequires-python = ">=3.14"\n')

    monkeypatch.delenv(interpreters.INSTALL_ENV, raising=False)
    with pytest.raises(UserError, match=r"install one with `uv python install 3\.14`"):
        own_requirements.python_of(project, project, None)
    assert not log.exists()

    monkeypatch.setenv(interpreters.INSTALL_ENV, "1")
    assert own_requirements.python_of(project, project, None) == "3.14"
    assert log.read_text() == "python install 3.14\n"
    assert interpreters.choose("3.14", say=False).version == "3.14.2"
    assert log.read_text() == "python install 3.14\n"  # installed once: found from then on
