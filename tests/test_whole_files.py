"""whole_files: the one way benchwatch replaces a file, whole or not at all, the text as given."""

from pathlib import Path

import pytest

from benchwatch.declarations import redaction
from benchwatch.errors import UserError
from benchwatch.whole_files import FILE_MODE, NotWritten, write_text_whole, write_whole


def test_files_are_written_exactly_with_no_temporary_file_left(tmp_path: Path) -> None:
    redaction.remember("TOKEN", "s3cr3t-value")
    try:  # caches and state files stay exact: results.files redacts, this does not
        write_text_whole(tmp_path / "deep" / "state.json", "token s3cr3t-value\n")
        assert redaction.redact_written("token s3cr3t-value") != "token s3cr3t-value"
    finally:
        redaction.forget_all()
    assert (tmp_path / "deep" / "state.json").read_text() == "token s3cr3t-value\n"
    assert [p.name for p in (tmp_path / "deep").iterdir()] == ["state.json"]
    # the mode a plain open() gives (the umask's), not the temporary file's private 0600
    assert (tmp_path / "deep" / "state.json").stat().st_mode & 0o777 == FILE_MODE


def test_when_one_file_cannot_be_written_none_changes(tmp_path: Path) -> None:
    kept = tmp_path / "kept.txt"
    kept.write_text("before\n")
    (tmp_path / "blocked").write_text("a file where a folder should be")
    with pytest.raises(NotWritten) as raised:
        write_whole({kept: "after\n", tmp_path / "blocked" / "x.txt": "x"})
    assert isinstance(raised.value, UserError) and isinstance(raised.value, OSError)
    assert "could not be written" in str(raised.value)
    assert kept.read_text() == "before\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["blocked", "kept.txt"]
