from __future__ import annotations

from pathlib import Path

import pytest
from conftest import REPO, make_project

from benchwatch.errors import UserError
from benchwatch.project.loading import load_project
from benchwatch.project.variants import select_variants


def write_app(directory: Path, text: str) -> Path:
    directory.mkdir(parents=True)
    (directory / "benchwatch-app.toml").write_text(text)
    return directory


MINIMAL = 'name = "mini"\napp = "app:app"\n[[endpoints]]\nname = "root"\npath = "/"\n'


def test_fixture_project_derives_variant_ids(fixture_project: Path) -> None:
    project = load_project(fixture_project)
    ids = [v.id for v in project.variants()]
    assert "good@latest" in ids
    assert "good@seed-v1" not in ids  # excluded by declaration (stacks = ["latest"])
    assert "todo_api@own" in ids  # the app's own requirements file is its stack
    own = next(v for v in project.variants() if v.id == "todo_api@own")
    assert own.stack.pinned_versions()["fastapi"] == "0.165.0"
    assert [e.name for e in own.quick_endpoints] == ["list"]


def test_repository_project_loads_and_every_scenario_has_variants() -> None:
    project = load_project(REPO)
    scenarios = {v.app.name for v in project.variants()}
    assert scenarios == {"services", "github_user", "payloads", "posts", "hello"}
    ids = {v.id for v in project.variants()}
    assert "services@seed-v1" in ids and "services@latest" in ids
    assert not any(i.startswith("services@next") for i in ids)  # next only when asked
    assert "services@next" in {v.id for v in project.variants(["next"])}


def test_patterns_select_and_unknown_pattern_is_an_error(fixture_project: Path) -> None:
    variants = load_project(fixture_project).variants()
    chosen = select_variants(variants, "good@*, todo_*")
    assert [v.id for v in chosen] == ["good@latest", "todo_api@own"]
    with pytest.raises(UserError, match="'nothing@\\*' matches no variant"):
        select_variants(variants, "good@*,nothing@*")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (MINIMAL + "colour = 'red'\n", "colour: Extra inputs are not permitted"),
        (MINIMAL.replace('path = "/"', 'path = "no-slash"'), "endpoints.0.path"),
        (
            MINIMAL + '[[endpoints]]\nname = "root"\npath = "/x"\n',
            "endpoint names must be unique: root",
        ),
        (MINIMAL.replace('app = "app:app"', 'app = "app"'), "app: String should match pattern"),
        ('stacks = ["v9"]\n' + MINIMAL, "unknown stack 'v9'"),
        ('quick = ["nope"]\n' + MINIMAL, "quick names unknown endpoint 'nope'"),
        ("name = 'mini'\napp = 'app:app'\nendpoints = [\n", "not valid TOML"),
    ],
)
def test_malformed_declaration_names_the_bad_key(tmp_path: Path, text: str, message: str) -> None:
    app = write_app(tmp_path / "mini", text)
    root = make_project(tmp_path / "project", [app])
    with pytest.raises(UserError) as caught:
        load_project(root)
    assert message in str(caught.value)
    assert "benchwatch-app.toml" in str(caught.value)


def test_malformed_stack_is_reported_with_its_key(tmp_path: Path) -> None:
    app = write_app(tmp_path / "mini", MINIMAL)
    root = make_project(tmp_path / "project", [app])
    stacks = (
        (root / "stacks.toml").read_text().replace('fastapi = "0.165.0"', 'fastapi = ">=0.100"', 1)
    )
    (root / "stacks.toml").write_text(stacks)
    with pytest.raises(
        UserError, match=r"stacks.latest.pins: .*fastapi = '>=0.100' is not an exact version"
    ):
        load_project(root)


def test_missing_golden_file_is_reported(tmp_path: Path) -> None:
    text = MINIMAL + '[endpoints.expect]\njson = "expected/none.json"\n'
    root = make_project(tmp_path / "project", [write_app(tmp_path / "mini", text)])
    with pytest.raises(UserError, match="endpoints.root: file 'expected/none.json' not found"):
        load_project(root)
