"""The environment an app's pre-start, set-up and server run in: the app's project importable from
its root (as the template's own image makes it), the caller's PYTHONPATH never, a counting
wrapper's PYTHONPATH first; and the settings an app's `env` may not give, refused by name."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
from conftest import make_project

from benchwatch.declarations.placeholders import Context
from benchwatch.measure import pre_start, server, server_command
from benchwatch.project.loading import load_project

INITIAL_DATA = '''"""Run by its path, as the template's prestart.sh runs app/initial_data.py."""
import sys

from app.core import FIRST_USER

try:
    import leaked_from_the_caller  # noqa: F401
except ImportError:
    pass
else:
    raise SystemExit("the caller's PYTHONPATH reached the app")
open(sys.argv[1], "w").write(FIRST_USER)
'''


def _app(tmp_path: Path, pre_start: str) -> Path:
    """An app shaped like the template's backend/: the package `app`, a script in it run by path."""
    backend = tmp_path / "backend"
    (backend / "app").mkdir(parents=True)
    (backend / "app" / "__init__.py").write_text("")
    (backend / "app" / "core.py").write_text('FIRST_USER = "admin"\n')
    (backend / "app" / "main.py").write_text("from fastapi import FastAPI\n\napp = FastAPI()\n")
    (backend / "app" / "initial_data.py").write_text(INITIAL_DATA)
    (backend / "benchwatch").mkdir()
    (backend / "benchwatch" / "benchwatch-app.toml").write_text(
        f'name = "backend"\napp = "app.main:app"\nroot = ".."\nstacks = ["latest"]\npre_start = {pre_start}\n'
        '[[endpoints]]\nname = "docs"\npath = "/docs"\n'
    )
    return backend


def _variant(tmp_path: Path, pre_start: str = '["python", "app/initial_data.py", "{tmp}/made"]'):
    backend = _app(tmp_path, pre_start)
    project = make_project(tmp_path / "project", [backend / "benchwatch"])
    (variant,) = load_project(project).variants(["latest"])
    return variant


def test_a_pre_start_script_run_by_its_path_imports_the_apps_own_package(
    tmp_path, monkeypatch
) -> None:
    """The template's `bash scripts/prestart.sh` runs `python app/initial_data.py`: Python puts the
    script's folder (app/) on sys.path, not the root, so `from app.core import …` needs the root on
    PYTHONPATH. The caller's PYTHONPATH (benchwatch's own) is never the app's."""
    leaked = tmp_path / "leaked"
    leaked.mkdir()
    (leaked / "leaked_from_the_caller.py").write_text("")
    monkeypatch.setenv("PYTHONPATH", str(leaked))
    variant = _variant(tmp_path)
    scratch = tmp_path / "boot"
    scratch.mkdir()
    context = Context(tmp=str(scratch))
    environ = server_command.server_environment(
        variant, SimpleNamespace(path=Path(sys.prefix)), context
    )
    assert environ["PYTHONPATH"] == str(tmp_path / "backend")
    pre_start.run_pre_start(variant, environ, variant.app.root, context)
    assert (scratch / "made").read_text() == "admin"


def test_a_pre_start_that_fails_says_its_own_last_lines(tmp_path) -> None:
    variant = _variant(
        tmp_path,
        '["python", "-c", "import sys; print(\'no database at 127.0.0.1:9\', file=sys.stderr); sys.exit(4)"]',
    )
    environ = server_command.server_environment(
        variant, SimpleNamespace(path=Path(sys.prefix)), Context()
    )
    with pytest.raises(server.BootError) as caught:
        pre_start.run_pre_start(variant, environ, variant.app.root, Context())
    assert caught.value.reason == "pre_start exited with 4"
    assert caught.value.stderr_tail == "no database at 127.0.0.1:9"


def test_a_counting_wrappers_pythonpath_goes_first_and_the_apps_root_stays(tmp_path) -> None:
    harness = tmp_path / "harness"
    harness.mkdir()
    (harness / "first_on_the_path.py").write_text("")
    variant = _variant(tmp_path)
    environ = server_command.server_environment(
        variant, SimpleNamespace(path=Path(sys.prefix)), Context()
    )
    merged = server_command.with_wrapper(
        environ, {"PYTHONPATH": str(harness), "PYTHONHASHSEED": "0"}
    )
    program = (
        "import sys, app.core, first_on_the_path\n"
        "print(sys.path.index(sys.argv[1]) < sys.path.index(sys.argv[2]))"
    )
    done = subprocess.run(
        [sys.executable, "-c", program, str(harness), str(variant.app.root)],
        env=merged,
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert done.stdout.strip() == "True", done.stderr
    assert merged["PYTHONHASHSEED"] == "0" and environ["PYTHONPATH"] == str(variant.app.root)


@pytest.mark.parametrize(
    ("name", "why"),
    [
        ("PYTHONPATH", "benchwatch sets PYTHONPATH to the app's root (its import root)"),
        ("VIRTUAL_ENV", "benchwatch sets VIRTUAL_ENV to the app's own environment"),
        (
            "GITHUB_TOKEN",
            "GITHUB_*, ACTIONS_*, RUNNER_* belong to the CI runner and never reach an app",
        ),
        (
            "BENCHWATCH_INJECT_LOOPS",
            "BENCHWATCH_INJECT_LOOPS is a test's injected slowdown, never an app's setting",
        ),
    ],
)
def test_a_setting_the_server_takes_over_is_refused_by_init_and_in_a_declaration(
    tmp_path, cli, name, why
) -> None:
    done = cli("init", "--env", f"{name}=.", root=tmp_path)
    (line,) = done.stderr.strip().splitlines()
    assert (
        done.returncode == 3
        and line.startswith(f"ERROR: --env {name}: {why}")
        and line.endswith("; leave it out")
    )
    assert list(tmp_path.iterdir()) == []
    backend = _app(tmp_path, '["true"]')
    app_file = backend / "benchwatch" / "benchwatch-app.toml"
    app_file.write_text(
        app_file.read_text().replace('root = ".."', f'root = ".."\nenv = {{ {name} = "." }}')
    )
    project = make_project(tmp_path / "project", [backend / "benchwatch"])
    done = cli("verify", root=project)
    assert done.returncode == 3, done.stderr
    assert done.stderr.strip().splitlines()[-1].startswith(f"ERROR: {app_file}: env.{name}: {why}")
    assert not (project / "results").exists()
