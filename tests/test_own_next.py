"""own-next: an app's own lock with the watched packages moved to their newest releases, resolved
by the real uv against a simple index of hand-written wheels on disk (no network)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import tomllib
from pathlib import Path

import pytest

from benchwatch.compare.sides import find_variant, kind_of
from benchwatch.environments import own_next
from benchwatch.environments.uv_tool import uv_executable
from benchwatch.errors import UserError
from benchwatch.project.loading import load_project
from tests.wheel_index import add_wheel

WATCH = ("bwfix-web", "bwfix-core")
PYTHON = f"{sys.version_info.major}.{sys.version_info.minor}"  # the one running the tests


@pytest.fixture
def index(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An index holding the releases a team locked: web 1.0 on core 1.x, a tool, and `other`, which
    caps core below 2."""
    folder = tmp_path / "index"
    for name in ("UV_INDEX_URL", "UV_INDEX", "UV_EXTRA_INDEX_URL", "UV_FIND_LINKS"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("UV_DEFAULT_INDEX", (folder / "simple").as_uri())
    monkeypatch.setenv("UV_CACHE_DIR", str(tmp_path / "uv-cache"))
    monkeypatch.setenv("UV_PYTHON_DOWNLOADS", "never")
    add_wheel(folder, "bwfix-core", "1.0")
    add_wheel(folder, "bwfix-web", "1.0", ("bwfix-core>=1,<2",))
    add_wheel(folder, "bwfix-tool", "1.0")
    add_wheel(folder, "bwfix-other", "1.0", ("bwfix-core<2",))
    return folder


def _newer_releases(index: Path) -> None:
    """What appeared overnight: web 2.0 (needs core 2), core 2.0, and a new tool."""
    add_wheel(index, "bwfix-core", "2.0")
    add_wheel(index, "bwfix-web", "2.0", ("bwfix-core>=2",))
    add_wheel(index, "bwfix-tool", "2.0")


def _locked_project(folder: Path, dependencies: list[str]) -> Path:
    folder.mkdir(parents=True)
    listed = ", ".join(f'"{d}"' for d in dependencies)
    (folder / "pyproject.toml").write_text(
        textwrap.dedent(f"""\
            [project]
            name = "app"
            version = "0.1.0"
            requires-python = ">={PYTHON}"
            dependencies = [{listed}]

            [tool.uv]
            package = false
            """)
    )
    done = subprocess.run(
        [
            uv_executable(),
            "lock",
            "--quiet",
            "--directory",
            str(folder),
            "--python",
            sys.executable,
        ],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    return folder / "uv.lock"


def _pins(path: Path) -> dict[str, str]:
    lines = [line.split(";")[0].strip() for line in path.read_text().splitlines()]
    return dict(line.split("==") for line in lines if "==" in line)


def test_the_watched_packages_move_to_the_newest_and_the_rest_stays_locked(
    index: Path, tmp_path: Path
) -> None:
    lock = _locked_project(tmp_path / "app", ["bwfix-web==1.0", "bwfix-tool"])
    before = lock.read_text()
    _newer_releases(index)

    moved = own_next.move(lock, WATCH, pre=False, cache=tmp_path / "exports")

    assert moved.newest == {"bwfix-web": "2.0", "bwfix-core": "2.0"}
    assert moved.changes() == {"bwfix-core": ("1.0", "2.0"), "bwfix-web": ("1.0", "2.0")}
    assert moved.held == ()
    assert _pins(moved.requirements) == {
        "bwfix-core": "2.0",
        "bwfix-tool": "1.0",
        "bwfix-web": "2.0",
    }
    assert lock.read_text() == before  # the team's lock is never touched


def test_a_newest_release_the_other_pins_refuse_is_reported_with_uv_s_reason(
    index: Path, tmp_path: Path
) -> None:
    lock = _locked_project(tmp_path / "app", ["bwfix-web==1.0", "bwfix-other==1.0"])
    _newer_releases(index)

    moved = own_next.move(lock, WATCH, pre=False, cache=tmp_path / "exports")

    held = {h.name: h for h in moved.held}
    assert set(held) == {"bwfix-web", "bwfix-core"}
    assert moved.changes() == {}
    line = held["bwfix-web"].line()
    assert line.startswith("bwfix-web 2.0 cannot be resolved with your other pins")
    assert "your lock holds 1.0" in line
    assert "bwfix-other" in held["bwfix-core"].reason, held["bwfix-core"].reason
    assert "\n" not in line


def test_pre_releases_only_when_asked(index: Path, tmp_path: Path) -> None:
    lock = _locked_project(tmp_path / "app", ["bwfix-web==1.0"])
    _newer_releases(index)
    add_wheel(index, "bwfix-web", "3.0b1", ("bwfix-core>=2",))

    stable = own_next.move(lock, WATCH, pre=False, cache=tmp_path / "exports")
    pre = own_next.move(lock, WATCH, pre=True, cache=tmp_path / "exports")

    assert stable.moved["bwfix-web"] == "2.0"
    assert pre.moved["bwfix-web"] == "3.0b1"


def test_a_requirements_file_of_exact_pins_moves_too(index: Path, tmp_path: Path) -> None:
    requirements = tmp_path / "requirements.txt"
    requirements.write_text("bwfix-web==1.0\nbwfix-core==1.0\nbwfix-tool==1.0\n")
    _newer_releases(index)

    moved = own_next.move(requirements, WATCH, pre=False, cache=tmp_path / "exports", python=PYTHON)

    assert _pins(moved.requirements) == {
        "bwfix-core": "2.0",
        "bwfix-tool": "1.0",
        "bwfix-web": "2.0",
    }


def test_a_watched_package_the_app_does_not_use_is_named_not_added(
    index: Path, tmp_path: Path
) -> None:
    lock = _locked_project(tmp_path / "app", ["bwfix-tool==1.0"])
    _newer_releases(index)

    moved = own_next.move(lock, WATCH, pre=False, cache=tmp_path / "exports")

    assert moved.not_locked == WATCH
    assert "bwfix-web" not in _pins(moved.requirements)


def test_the_stack_own_next_is_a_variant_and_a_side_of_compare(index: Path, tmp_path: Path) -> None:
    lock = _locked_project(tmp_path / "repo" / "app", ["bwfix-web==1.0"])
    (tmp_path / "repo" / "benchwatch.toml").write_text(
        '[benchwatch]\napps = ["app"]\nwatch = ["bwfix-web", "bwfix-core"]\n'
    )
    (lock.parent / "benchwatch-app.toml").write_text(
        'name = "shop"\napp = "main:app"\nrequirements = "uv.lock"\n'
        '[[endpoints]]\nname = "root"\npath = "/"\n'
    )
    _newer_releases(index)
    project = load_project(tmp_path / "repo")

    assert [v.id for v in project.variants()] == ["shop@own"]
    assert kind_of(project, "own") == kind_of(project, "own-next") == "stack"
    variant = find_variant(project, "shop@own-next")
    assert variant is not None and variant.watch == WATCH
    assert _pins(variant.requirements_file)["bwfix-web"] == "2.0"
    assert _pins(project.select("shop@own", ["own"])[0].requirements_file) == {
        "bwfix-core": "1.0",
        "bwfix-web": "1.0",
    }


def test_own_next_plus_a_package_moves_that_package_alone(index: Path, tmp_path: Path) -> None:
    lock = _locked_project(tmp_path / "repo" / "app", ["bwfix-web==1.0", "bwfix-tool==1.0"])
    (tmp_path / "repo" / "benchwatch.toml").write_text('[benchwatch]\napps = ["app"]\n')
    (lock.parent / "benchwatch-app.toml").write_text(
        'name = "shop"\napp = "main:app"\nrequirements = "uv.lock"\n'
        '[[endpoints]]\nname = "root"\npath = "/"\n'
    )
    _newer_releases(index)
    project = load_project(tmp_path / "repo")

    assert kind_of(project, "own-next+bwfix-web") == "stack"
    web = find_variant(project, "shop@own-next+bwfix-web")
    tool = project.select(None, ["own-next+bwfix-tool"])[-1]

    assert web is not None and web.watch == ("bwfix-web",)
    assert _pins(web.requirements_file) == {
        "bwfix-core": "2.0",
        "bwfix-tool": "1.0",
        "bwfix-web": "2.0",
    }
    assert tool.id == "shop@own-next+bwfix-tool"
    assert _pins(tool.requirements_file) == {
        "bwfix-core": "1.0",
        "bwfix-tool": "2.0",
        "bwfix-web": "1.0",
    }


def test_the_reason_is_uv_s_first_sentence_on_one_line() -> None:
    stderr = textwrap.dedent("""\
          × No solution found when resolving dependencies:
          ╰─▶ Because bwfix-web==2.0 depends on bwfix-core>=2 and your project depends on
              bwfix-other==1.0, we can conclude that your project's requirements are unsatisfiable.
        """)
    assert own_next._reason(stderr) == (
        "Because bwfix-web==2.0 depends on bwfix-core>=2 and your project depends on bwfix-other==1.0"
    )


def test_the_copied_pyproject_reads_back_the_same() -> None:
    document = {
        "project": {"name": "app", "dependencies": ['fastapi[standard]>=0.1 ; python_version>"3"']},
        "tool": {"uv": {"index": [{"name": "ünï", "url": "https://x"}], "package": False}},
        "build-system": {"requires": ["hatchling"], "version": 1.5},
    }
    assert tomllib.loads(own_next._toml(document)) == document


def test_a_workspace_is_refused_in_one_line(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "a"\nversion = "0"\n[tool.uv.workspace]\nmembers = ["b"]\n'
    )
    (tmp_path / "uv.lock").write_text("version = 1\n")
    with pytest.raises(UserError, match="workspace"):
        own_next._project_copy(tmp_path / "uv.lock", tmp_path / "copy", None)


def test_the_command_lists_the_moves_and_is_quiet_once_they_are_measured(
    index: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    from benchwatch.cli import main

    lock = _locked_project(tmp_path / "repo" / "app", ["bwfix-web==1.0", "bwfix-other==1.0"])
    (tmp_path / "repo" / "benchwatch.toml").write_text(
        '[benchwatch]\napps = ["app"]\nwatch = ["bwfix-web", "bwfix-core", "bwfix-other"]\n'
    )
    (lock.parent / "benchwatch-app.toml").write_text(
        'name = "shop"\napp = "main:app"\nrequirements = "uv.lock"\n'
        '[[endpoints]]\nname = "root"\npath = "/"\n'
    )
    _newer_releases(index)
    add_wheel(index, "bwfix-other", "2.0", ("bwfix-core>=2",))
    monkeypatch.chdir(tmp_path / "repo")
    output = tmp_path / "github_output"
    monkeypatch.setenv("GITHUB_OUTPUT", str(output))
    state, report = tmp_path / "state.json", tmp_path / "moved.json"
    argv = ["own-next", "--state", str(state), "--write-state", "--json", str(report)]

    first = main(argv)
    printed = capsys.readouterr().out
    second = main(argv)

    assert first == second == 0
    assert "shop@own-next" in printed and "bwfix-web 1.0 → 2.0" in printed
    assert "changed since the state: yes" in printed
    assert "changed since the state: no" in capsys.readouterr().out
    assert output.read_text() == "changed=true\nchanged=false\n"
    moved = json.loads(report.read_text())["apps"]["shop"]["changes"]
    assert moved["bwfix-other"] == {"locked": "1.0", "moved": "2.0"}
    assert main(["own-next", "--moved-packages"]) == 0
    assert capsys.readouterr().out.split() == ["bwfix-core", "bwfix-other", "bwfix-web"]


def test_pins_that_do_not_resolve_at_all_are_one_error(index: Path, tmp_path: Path) -> None:
    requirements = tmp_path / "requirements.txt"
    requirements.write_text("bwfix-web==1.0\nbwfix-core==2.0\n")  # web 1.0 needs core < 2
    _newer_releases(index)

    with pytest.raises(UserError, match="its pins do not resolve with uv lock: Because") as error:
        own_next.move(requirements, WATCH, pre=False, cache=tmp_path / "exports", python=PYTHON)
    assert "\n" not in str(error.value)


def test_own_next_installs_wheels_only() -> None:
    from benchwatch.declarations.stacks import Stack
    from benchwatch.environments.envs import resolution_flags

    own = Stack(name="own", description="pinned by uv.lock", pins={"fastapi": "0.121.0"})
    assert resolution_flags(own_next.stack_from(own)) == ["--no-build"]
    assert "--no-build" not in resolution_flags(own)


def test_the_watched_packages_are_exempt_from_the_project_s_exclude_newer_date() -> None:
    """A team's `exclude-newer` would hide tonight's releases from `uv lock` while the newest
    (uv pip compile) sees them: the moved copy exempts the watched packages, and only them."""
    document = {
        "project": {"name": "app", "dependencies": ["bwfix-web==1.0", "bwfix-tool==1.0"]},
        "tool": {
            "uv": {
                "exclude-newer": "2026-11-26T00:00:00Z",
                "exclude-newer-package": {"bwfix-tool": "2026-01-01T00:00:00Z"},
            }
        },
    }
    uv = own_next._relaxed(document, WATCH, ["bwfix-web>=2.0"])["tool"]["uv"]
    assert uv["exclude-newer"] == "2026-11-26T00:00:00Z"
    assert uv["exclude-newer-package"] == {
        "bwfix-tool": "2026-01-01T00:00:00Z",
        "bwfix-web": False,
        "bwfix-core": False,
    }
    assert (
        "exclude-newer-package"
        not in own_next._relaxed({"project": document["project"]}, WATCH, [])["tool"]["uv"]
    )
    text = own_next._toml(own_next._relaxed(document, WATCH, []))
    assert tomllib.loads(text)["tool"]["uv"]["exclude-newer-package"]["bwfix-web"] is False


def test_the_same_versions_from_another_index_are_another_environment(
    index: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The environment is keyed by the exported pins: the same version as another file (another
    index, a mirror's own build) must not reuse the environment built from the first."""
    import shutil

    lock = _locked_project(tmp_path / "app", ["bwfix-web==1.0"])
    _newer_releases(index)
    first = own_next.move(lock, WATCH, pre=False, cache=tmp_path / "exports")
    mirror = tmp_path / "mirror"
    shutil.copytree(index, mirror)
    add_wheel(mirror, "bwfix-web", "2.0", ("bwfix-core>=2",), code="SLOWER = True\n")
    monkeypatch.setenv("UV_DEFAULT_INDEX", (mirror / "simple").as_uri())
    monkeypatch.setattr(own_next, "_MEMO", {})
    second = own_next.move(lock, WATCH, pre=False, cache=tmp_path / "exports")

    assert _pins(first.requirements) == _pins(second.requirements)
    assert first.requirements.read_text() != second.requirements.read_text()
    assert second.requirements.read_text().startswith("# own-next: the moved uv.lock ")
