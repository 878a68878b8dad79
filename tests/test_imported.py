"""attribute/imported.py: the distributions a server ran code from, read from its strace trace."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchwatch.attribute.imported import TraceUnreadable, imported, opened_code, unimported


def site_packages(root: Path) -> Path:
    """A site-packages folder with three distributions, their RECORD files as installers write them."""
    site = root / "lib" / "python3.11" / "site-packages"
    records = {
        "fastapi-2.0.dist-info": [
            "fastapi/__init__.py,sha256=x,10",
            "fastapi/routing.py,sha256=y,20",
            "fastapi-2.0.dist-info/METADATA,sha256=z,5",
        ],
        "orjson-3.1.dist-info": [
            "orjson/__init__.py,,",
            "orjson/orjson.cpython-311-x86_64-linux-gnu.so,sha256=a,9",
        ],
        "sqlalchemy-2.1.9.dist-info": [
            "sqlalchemy/__init__.py,,",
            "sqlalchemy-2.1.9.dist-info/METADATA,,",
        ],
        "typing_extensions-4.16.0.dist-info": ["typing_extensions.py,,"],
    }
    for folder, lines in records.items():
        (site / folder).mkdir(parents=True)
        (site / folder / "RECORD").write_text("\n".join(lines) + "\n")
    return site


def test_a_module_opened_by_its_pyc_source_or_shared_object_names_its_distribution(tmp_path):
    site = site_packages(tmp_path)
    trace = tmp_path / "strace.trace"
    trace.write_text(
        "\n".join(
            [
                f'101 1.000001 openat(AT_FDCWD, "{site}", O_RDONLY|O_NONBLOCK|O_CLOEXEC|O_DIRECTORY) = 3',
                f'101 1.000002 openat(AT_FDCWD, "{site}/fastapi/__pycache__/routing.cpython-311.pyc", O_RDONLY|O_CLOEXEC) = 4',
                f'101 1.000003 openat(AT_FDCWD, "{site}/orjson/orjson.cpython-311-x86_64-linux-gnu.so", O_RDONLY|O_CLOEXEC) = 5',
                f'102 1.000004 openat(AT_FDCWD, "{site}/typing_extensions.py", O_RDONLY|O_CLOEXEC <unfinished ...>',
                # importlib.metadata reading every distribution's metadata is not running its code
                f'101 1.000005 openat(AT_FDCWD, "{site}/sqlalchemy-2.1.9.dist-info/METADATA", O_RDONLY|O_CLOEXEC) = 6',
                # a module looked for and not found
                f'101 1.000006 openat(AT_FDCWD, "{site}/sqlalchemy/__init__.py", O_RDONLY|O_CLOEXEC) = -1 ENOENT (No such file)',
            ]
        )
        + "\n"
    )
    assert len(opened_code(trace)) == 3
    assert imported([trace]) == {"fastapi", "orjson", "typing-extensions"}


def test_a_step_is_idle_only_when_the_servers_ran_none_of_what_it_moves():
    ran = {"fastapi", "typing-extensions"}
    assert unimported(["sqlalchemy", "Psycopg_Binary"], ran) == ["Psycopg_Binary", "sqlalchemy"]
    assert unimported(["typing_extensions", "sqlalchemy"], ran) == [
        "sqlalchemy"
    ]  # names normalized


def test_a_missing_trace_is_said(tmp_path):
    with pytest.raises(TraceUnreadable, match="strace.trace"):
        imported([tmp_path / "strace.trace"])
