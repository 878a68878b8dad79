"""No tracked text file keeps a merge's conflict markers (a merge once left three in docs/counts.md
for a whole stop)."""

from __future__ import annotations

import re
import subprocess

from conftest import REPO

MARKER = re.compile(r"^(<{7} |>{7} |={7}$)", re.MULTILINE)


def test_no_tracked_file_holds_a_conflict_marker() -> None:
    tracked = subprocess.run(
        ["git", "ls-files", "*.md", "*.py", "*.toml", "*.yml", "*.json", "*.sh"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    found = []
    for name in tracked:
        path = REPO / name
        if path.is_file() and MARKER.search(path.read_text(errors="replace")):
            found.append(name)
    assert found == []


def test_the_pattern_finds_each_marker_and_not_a_markdown_rule() -> None:
    assert MARKER.search("a\n<<<<<<< HEAD\nb")
    assert MARKER.search("a\n=======\nb")
    assert MARKER.search("a\n>>>>>>> branch\nb")
    assert not MARKER.search("Title\n=====\n| --- |\n")
