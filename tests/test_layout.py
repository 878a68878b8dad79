"""The package layout keeps its rules (scripts/layout.py): no import up or sideways between the
pipeline's packages, no module over 400 lines, a short root, docs/layout.md generated from the tree;
and the check catches each broken rule on a tree made to break it."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

from conftest import REPO

_spec = importlib.util.spec_from_file_location("layout", REPO / "scripts" / "layout.py")
layout = importlib.util.module_from_spec(_spec)
sys.modules["layout"] = layout  # its dataclasses look their module up
_spec.loader.exec_module(layout)


def test_this_repository_keeps_every_rule_and_its_layout_page_is_current() -> None:
    done = subprocess.run(
        [sys.executable, "scripts/layout.py", "--check"], cwd=REPO, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stdout + done.stderr


def _tree(tmp_path: Path, files: dict[str, str]) -> Path:
    package = tmp_path / "benchwatch"
    for rel, text in files.items():
        path = package / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return package


LAYERS = [("low",), ("left", "right"), ("high",)]
GOOD = {
    "__init__.py": "",
    "errors.py": '"""Errors."""\n',
    "low/__init__.py": '"""Low."""\n',
    "low/a.py": "from benchwatch.errors import E\n",
    "left/__init__.py": '"""Left."""\n',
    "left/b.py": "from benchwatch.low.a import x\nfrom benchwatch.left import c\n",
    "right/__init__.py": '"""Right."""\n',
    "high/__init__.py": '"""High."""\n',
    "high/d.py": "def f():\n    from benchwatch.right import r\n    from benchwatch import left\n",
}


def test_a_tree_that_keeps_the_rules_has_no_problem(tmp_path: Path) -> None:
    assert layout.broken_rules(_tree(tmp_path, GOOD), LAYERS, max_lines=5, max_root=2) == []


def test_an_import_up_or_sideways_is_named_with_its_line_even_inside_a_function(
    tmp_path: Path,
) -> None:
    files = {
        **GOOD,
        "low/a.py": "import os\n\n\ndef f():\n    from benchwatch.high.d import f\n",
        "left/b.py": "from benchwatch import right\n",
    }
    problems = layout.broken_rules(_tree(tmp_path, files), LAYERS, max_lines=50, max_root=2)
    assert problems == [
        "benchwatch/left/b.py:1: imports benchwatch.right sideways (left may use only packages below it)",
        "benchwatch/low/a.py:5: imports benchwatch.high.d up (low may use only packages below it)",
    ]


def test_a_long_module_a_crowded_root_an_unknown_or_silent_package_are_each_named(
    tmp_path: Path,
) -> None:
    files = {
        **GOOD,
        "right/long.py": "x = 1\n" * 6,
        "one.py": "",
        "two.py": "",
        "stray/__init__.py": "",
        "left/__init__.py": "",
    }
    problems = layout.broken_rules(_tree(tmp_path, files), LAYERS, max_lines=5, max_root=2)
    assert problems == [
        "benchwatch/left/__init__.py: the package says nothing of itself: give it a docstring",
        "benchwatch/right/long.py: 6 lines, over 5: split it along a seam",
        "benchwatch/stray/__init__.py: package 'stray' is in no layer: add it to LAYERS",
        "benchwatch/: 3 root modules (errors.py, one.py, two.py), over 2",
    ]


def test_the_layout_page_names_every_package_and_module_with_its_docstring() -> None:
    page = layout.layout_markdown()
    for names in layout.LAYERS:
        for name in names:
            assert f"### `{name}/`" in page
    assert "| `boot.py` | Starting the servers of a round" in page
    assert "| boot | `measure/boot.py` |" in page
