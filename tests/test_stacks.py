"""asv.conf.json is generated from stacks.toml; the committed file must be what the generator makes."""

from __future__ import annotations

from asv.config import Config
from asv.environment import iter_matrix
from conftest import REPO

from benchwatch import asv_conf
from benchwatch.config import load_stacks


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
    assert all(env[("python", None)] == "3.11" for env in environments)
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
