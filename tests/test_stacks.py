"""asv.conf.json is generated from stacks.toml; the committed file must be what the generator makes."""

from __future__ import annotations

import pytest
from asv.config import Config
from asv.environment import iter_matrix
from conftest import REPO

from benchwatch.errors import UserError
from benchwatch.micro import asv_conf
from benchwatch.project.stacks import load_stacks


def test_committed_asv_conf_is_generated_from_stacks_toml() -> None:
    committed = (REPO / "asv.conf.json").read_text()
    assert committed == asv_conf.render(load_stacks(REPO)), "run `benchwatch stacks --write-asv`"


def test_asv_reads_one_exact_environment_per_pinned_stack() -> None:
    stacks = load_stacks(REPO)
    conf = Config.load(str(REPO / "asv.conf.json"))
    environments = list(iter_matrix("virtualenv", conf.pythons, conf))
    found = [
        {key: value for (kind, key), value in env.items() if kind == "req"} for env in environments
    ]
    pinned = [dict(s.pins) for s in stacks.values() if not s.resolved_at_run_time]
    assert found == pinned
    pythons = [s.python for s in stacks.values() if not s.resolved_at_run_time]
    assert [env[("python", None)] for env in environments] == pythons
    assert {"3.11", "3.12", "3.13"} <= set(
        pythons
    )  # CPython as an axis: latest-py312, latest-py313
    assert conf.build_command == [] and conf.install_command == [] and conf.uninstall_command == []
    assert conf.results_dir.startswith(".asv/") and conf.html_dir.startswith(".asv/")


def test_check_asv_reports_a_stale_file(tmp_path, cli) -> None:
    (tmp_path / "benchwatch.toml").write_text('[benchwatch]\napps = ["apps/services"]\n')
    stacks_text = (REPO / "stacks.toml").read_text()
    (tmp_path / "stacks.toml").write_text(stacks_text)
    done = cli("stacks", "--write-asv", root=tmp_path)
    assert done.returncode == 0, done.stderr
    assert cli("stacks", "--check-asv", root=tmp_path).returncode == 0

    (tmp_path / "stacks.toml").write_text(
        stacks_text.replace('fastapi = "0.165.0"', 'fastapi = "0.165.1"')
    )
    done = cli("stacks", "--check-asv", root=tmp_path)
    assert done.returncode == 3
    assert done.stderr.startswith("ERROR: ") and "benchwatch stacks --write-asv" in done.stderr


def test_stacks_lists_every_stack(cli) -> None:
    done = cli("stacks", root=REPO)
    assert done.returncode == 0, done.stderr
    for name in load_stacks(REPO):
        assert name in done.stdout


def test_a_stack_that_extends_another_takes_its_pins_and_says_only_what_differs(tmp_path) -> None:
    (tmp_path / "stacks.toml").write_text(
        '[stacks.latest]\npython = "3.11"\nexclude_newer = "2026-11-20"\npins = { fastapi = "1.0.0" }\n'
        '[stacks.latest-py313]\nextends = "latest"\npython = "3.13"\n'
    )
    stacks = load_stacks(tmp_path)
    extended = stacks["latest-py313"]
    assert (
        extended.pins == {"fastapi": "1.0.0"}
        and extended.python == "3.13"
        and extended.extends == "latest"
    )
    assert str(extended.exclude_newer) == "2026-11-20"
    (tmp_path / "benchwatch.toml").write_text('[benchwatch]\napps = ["app"]\n')
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "benchwatch-app.toml").write_text(
        'name = "a"\napp = "m:app"\n[[endpoints]]\nname = "x"\npath = "/"\n'
    )
    from benchwatch.project.loading import load_project

    project = load_project(tmp_path)
    assert (
        "latest-py313" not in project.default_stacks and "latest" in project.default_stacks
    )  # an axis is asked for
    assert [v.id for v in project.variants(["latest-py313"])] == ["a@latest-py313"]


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ('[stacks.x]\nextends = "nope"\n', "stacks.x: extends unknown stack 'nope'"),
        (
            '[stacks.x]\nextends = "y"\n[stacks.y]\nextends = "latest"\n',
            "extends 'y', which extends another stack",
        ),
    ],
)
def test_a_stack_that_extends_nothing_known_is_named(tmp_path, extra, message) -> None:
    (tmp_path / "stacks.toml").write_text(extra)
    with pytest.raises(UserError, match=message):
        load_stacks(tmp_path)
