"""counts/same_paths.py: environments seen through symlinks of one length, removed after."""

from __future__ import annotations

from pathlib import Path

from benchwatch.counts.same_paths import Links
from benchwatch.environments.envs import Env


def test_two_environments_get_links_of_one_length_to_themselves_and_only_the_links_are_removed(
    tmp_path: Path,
):
    short, long = (
        tmp_path / "v2-pre-rust-216107b16a8e",
        tmp_path / "v2-pre-rust+sqlalchemy-d8c1581730d6",
    )
    for folder in (short, long):
        (folder / "bin").mkdir(parents=True)
        (folder / "bin" / "python").write_text("")
    with Links() as links:
        seen = [links.of(Env("s", folder, {"fastapi": "1"})) for folder in (short, long)]
        assert len(str(seen[0].path)) == len(str(seen[1].path)) and seen[0].path != seen[1].path
        assert [e.path.resolve() for e in seen] == [short, long] and seen[0].python.is_file()
        assert links.of(Env("s", short, {})).path == seen[0].path  # one link per environment
        assert seen[1].versions == {"fastapi": "1"}
    assert (
        not seen[0].path.parent.exists() and short.is_dir() and (long / "bin" / "python").is_file()
    )


def test_no_folder_is_made_until_an_environment_is_linked(tmp_path: Path, monkeypatch):
    import tempfile

    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    (tmp_path / "env" / "bin").mkdir(parents=True)
    with Links() as links:  # attribute --timings: nothing counted, nothing linked
        assert list(scratch.iterdir()) == []
        links.of(Env("s", tmp_path / "env", {}))
        assert [p.name.startswith("bw-envs-") for p in scratch.iterdir()] == [True]
    assert list(scratch.iterdir()) == []
