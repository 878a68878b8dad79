"""Environments are per recipe, never per stack name: two apps with their own requirements
each get their own, and what is reported is what each one holds. Default stacks come with
the package; a repository's stacks.toml only adds or overrides."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchwatch.errors import UserError
from benchwatch.project.loading import load_project
from benchwatch.project.stacks import load_stacks

V1_APP = """import pydantic
from fastapi import FastAPI

app = FastAPI()


class Item(pydantic.BaseModel):
    name: str


@app.get("/item", response_model=Item)
def item() -> dict:
    return {"name": "pydantic " + pydantic.VERSION.split(".")[0]}
"""

V2_APP = V1_APP.replace(
    "import pydantic\n", "import pydantic\nfrom pydantic import computed_field  # v2 only\n"
)


def own_app(root: Path, name: str, source: str, requirements: str, extra: str = "") -> str:
    directory = root / name
    directory.mkdir(parents=True)
    (directory / f"{name}_app.py").write_text(source)
    (directory / "requirements.txt").write_text(requirements)
    (directory / "benchwatch-app.toml").write_text(
        f'name = "{name}"\napp = "{name}_app:app"\nrequirements = "requirements.txt"\n{extra}'
        '[[endpoints]]\nname = "item"\npath = "/item"\n'
    )
    return name


def two_own_apps(root: Path) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    apps = [
        own_app(root, "old", V1_APP, "fastapi==0.98.0\npydantic==1.10.9\nuvicorn==0.22.0\n"),
        own_app(root, "new", V2_APP, "fastapi==0.100.0\npydantic==2.0.3\nuvicorn==0.23.0\n"),
    ]
    (root / "benchwatch.toml").write_text(f"[benchwatch]\napps = {apps!r}\n".replace("'", '"'))
    return root


def test_two_own_requirement_apps_get_two_environment_keys(tmp_path: Path) -> None:
    project = load_project(two_own_apps(tmp_path / "p"))
    old, new = project.variants()
    assert (old.id, new.id) == ("old@own", "new@own")  # variant ids stay as they were
    assert old.env_key.startswith("own:old:") and new.env_key.startswith("own:new:")
    assert old.env_key != new.env_key


def test_default_stacks_need_no_stacks_toml_and_a_repository_file_overrides(tmp_path: Path) -> None:
    root = two_own_apps(tmp_path / "p")
    defaults = load_stacks(root)
    assert "latest" in defaults and "seed-v1" in defaults
    (root / "stacks.toml").write_text(
        '[stacks.latest]\npython = "3.12"\npins = { fastapi = "0.115.0" }\n'
        '[stacks.mine]\npins = { fastapi = "0.110.0" }\n'
    )
    stacks = load_stacks(root)
    assert stacks["latest"].python == "3.12" and stacks["latest"].pins == {"fastapi": "0.115.0"}
    assert stacks["mine"].pins == {"fastapi": "0.110.0"}
    assert stacks["seed-v1"] == defaults["seed-v1"]


def test_app_python_is_validated_and_changes_the_environment(tmp_path: Path) -> None:
    root = tmp_path / "p"
    root.mkdir()
    own_app(root, "app312", V2_APP, "fastapi==0.100.0\n", extra='python = "3.12"\n')
    (root / "benchwatch.toml").write_text('[benchwatch]\napps = ["app312"]\n')
    (variant,) = load_project(root).variants()
    assert variant.stack.python == "3.12"
    declaration = root / "app312" / "benchwatch-app.toml"
    declaration.write_text(declaration.read_text().replace('"3.12"', '"3.12.1 or so"'))
    with pytest.raises(UserError, match="python: String should match pattern"):
        load_project(root)


def test_a_requirement_that_is_not_an_exact_pin_is_named(tmp_path: Path) -> None:
    root = two_own_apps(tmp_path / "p")
    (root / "new" / "requirements.txt").write_text("fastapi==0.100.0\npydantic>=2\n")
    with pytest.raises(UserError, match="'pydantic>=2' is not an exact pin"):
        load_project(root).variants()


def test_two_apps_with_one_name_are_an_error(tmp_path: Path) -> None:
    root = two_own_apps(tmp_path / "p")
    declaration = root / "new" / "benchwatch-app.toml"
    declaration.write_text(declaration.read_text().replace('name = "new"', 'name = "old"'))
    with pytest.raises(UserError, match="two apps share a name"):
        load_project(root)


@pytest.mark.slow
def test_two_own_apps_boot_in_their_own_environments(tmp_path: Path) -> None:
    from benchwatch.environments import envs
    from benchwatch.measure.verify import verify_variants

    variants = load_project(two_own_apps(tmp_path / "p")).variants()
    checks, problems = verify_variants(variants, quiet=True)
    assert problems == []
    ready, failed = envs.prepare(variants)
    assert failed == {}
    by_app = {v.app.name: ready[v.env_key].versions for v in variants}
    assert (by_app["old"]["pydantic"], by_app["old"]["fastapi"]) == ("1.10.9", "0.98.0")
    assert (by_app["new"]["pydantic"], by_app["new"]["fastapi"]) == ("2.0.3", "0.100.0")
