"""counts/callgrind.py sends its commands straight to vgdb, forced in after 1 ms; a command vgdb
or callgrind rejects is a CallgrindError (a fake vgdb on PATH: nothing here runs valgrind)."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchwatch.counts import callgrind

FAKE = """#!/bin/sh
printf '%s\\n' "$@" > "{args}"
{body}
"""


def _fake(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, body: str) -> Path:
    args = tmp_path / "args"
    vgdb = tmp_path / "bin" / "vgdb"
    vgdb.parent.mkdir()
    vgdb.write_text(FAKE.format(args=args, body=body))
    vgdb.chmod(0o755)
    monkeypatch.setenv("PATH", f"{vgdb.parent}:/usr/bin:/bin")
    return args


def test_a_dump_and_a_toggle_are_one_vgdb_call_forced_in_after_1_ms(tmp_path, monkeypatch):
    args = _fake(tmp_path, monkeypatch, "echo 'sending command dump to pid' >&2")
    callgrind.dump(4242, "r0-1")
    assert args.read_text().split("\n")[:-1] == ["--max-invoke-ms=1", "--pid=4242", "dump", "r0-1"]
    callgrind.instrument(4242, False)
    assert args.read_text().split("\n")[-3:-1] == ["instrumentation", "off"]


@pytest.mark.parametrize(
    "body, said",
    [
        ("echo 'vgdb error: no FIFO found matching pid 4242' >&2; exit 1", "no FIFO found"),
        ("echo \"command 'dump' not recognised\"; exit 0", "not recognised"),
    ],
)
def test_a_rejected_command_is_an_error_naming_it(tmp_path, monkeypatch, body, said):
    _fake(tmp_path, monkeypatch, body)
    with pytest.raises(callgrind.CallgrindError, match=f"vgdb dump failed: .*{said}"):
        callgrind.dump(4242, "r0-1")
