"""Interpreters: found where they are installed, named by their build, one per version for a whole
command; environments keyed by the build they were made on; the servers' interpreters in the
fingerprint and in the comment."""

from __future__ import annotations

import json
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from benchwatch.declarations.stacks import Stack
from benchwatch.environments import envs, interpreters
from benchwatch.errors import UserError
from benchwatch.results.schema import Environment


def elf(path: Path, *, symtab: bool) -> Path:
    """A minimal 64-bit little-endian ELF file whose section headers hold a SYMTAB, or do not."""
    types = [0, 3, 11] + ([2] if symtab else [])  # NULL, STRTAB, DYNSYM (+ SYMTAB)
    header = bytearray(64)
    header[:6] = b"\x7fELF\x02\x01"
    struct.pack_into("<Q", header, 0x28, 64)  # e_shoff: right after the header
    struct.pack_into("<HHH", header, 0x3A, 64, len(types), 1)
    sections = b"".join(struct.pack("<II", 0, kind) + bytes(56) for kind in types)
    path.write_bytes(bytes(header) + sections)
    return path


def fake_python(folder: Path, version: str, *, symbols: bool, name: str | None = None) -> Path:
    """An executable that answers benchwatch's question the way a CPython `version` would; its
    'libpython' is an ELF file with or without a symbol table."""
    folder.mkdir(parents=True, exist_ok=True)
    library = elf(folder / f"libpython-{version}.so", symtab=symbols)
    minor = ".".join(version.split(".")[:2])
    facts = {
        "version": version,
        "implementation": "cpython",
        "executable": "",
        "sys_version": version,
        "libpython": str(library),
        "free_threaded": False,
        "config_args": "'--enable-optimizations' '--with-lto'",
        "markers": {
            "python_version": minor,
            "python_full_version": version,
            "sys_platform": "linux",
        },
    }
    path = folder / (name or f"python{minor}")
    path.write_text(f"#!/bin/sh\ncat <<'EOF'\n{json.dumps(facts)}\nEOF\n")
    path.chmod(0o755)
    return path


@pytest.fixture(autouse=True)
def fresh(monkeypatch):
    interpreters.reset()
    yield
    interpreters.reset()


def test_a_symbol_table_is_told_from_a_stripped_file(tmp_path):
    assert interpreters.has_symbol_table(elf(tmp_path / "full.so", symtab=True))
    assert not interpreters.has_symbol_table(elf(tmp_path / "stripped.so", symtab=False))
    (tmp_path / "text").write_text("not an ELF file")
    assert not interpreters.has_symbol_table(tmp_path / "text")


def test_the_newest_patch_wins_then_the_build_with_symbols_and_the_choice_holds_for_the_command(
    tmp_path, monkeypatch, capsys
):
    debian = fake_python(tmp_path / "debian", "3.11.2", symbols=False)
    pyenv = fake_python(tmp_path / "pyenv", "3.11.7", symbols=True)
    stripped_twin = fake_python(tmp_path / "twin", "3.11.7", symbols=False)
    other = fake_python(tmp_path / "other", "3.12.1", symbols=True)
    monkeypatch.setenv(
        "BENCHWATCH_PYTHONS", ":".join(map(str, [debian, stripped_twin, pyenv, other]))
    )
    found = interpreters.find_installed("3.11")
    assert [i.path for i in found] == [pyenv, stripped_twin, debian]
    chosen = interpreters.choose("3.11")
    assert (
        chosen.path == pyenv
        and chosen.version == "3.11.7"
        and chosen.symbols
        and chosen.optimizations == "PGO+LTO"
    )
    said = capsys.readouterr().err
    assert (
        said.count("python 3.11: CPython 3.11.7") == 1 and str(debian) in said
    )  # the others are named
    # later asks in the same command get the same build, even if the machine changed meanwhile
    monkeypatch.setenv("BENCHWATCH_PYTHONS", str(debian))
    assert interpreters.choose("3.11") is chosen
    assert capsys.readouterr().err == ""
    assert (
        interpreters.choose("3.11.2").path == debian
    )  # an exact patch release is a different request


def test_two_builds_of_one_version_are_two_identities(tmp_path):
    a = interpreters._inspect(fake_python(tmp_path / "a", "3.11.7", symbols=True))
    b = interpreters._inspect(fake_python(tmp_path / "b", "3.11.7", symbols=False))
    assert a is not None and b is not None
    assert a.version == b.version and a.build != b.build and a.identity() != b.identity()
    stack = Stack(name="latest", pins={"fastapi": "0.1.0"})
    assert envs._recipe(stack, (), None, a) != envs._recipe(stack, (), None, b)


def test_a_missing_python_is_one_error_naming_the_install_command(tmp_path, monkeypatch):
    monkeypatch.setenv("BENCHWATCH_PYTHONS", str(fake_python(tmp_path, "3.11.7", symbols=True)))
    with pytest.raises(
        UserError, match=r"Python 3\.14 is not installed here .*`uv python install 3\.14`"
    ):
        interpreters.choose("3.14")
    with pytest.raises(UserError, match="give a CPython version like 3.12"):
        interpreters.choose("three")


def test_a_stack_on_a_missing_python_is_bad_input_from_the_command_line(fixture_project, cli):
    # the project's own `latest` replaces the default one
    (fixture_project / "stacks.toml").write_text(
        '[stacks.latest]\npython = "3.99"\npins = { fastapi = "0.115.0" }\n'
    )
    done = cli("verify", "-k", "good@latest", root=fixture_project)
    assert done.returncode == 3, done.stderr
    assert (
        "ERROR: Python 3.99 is not installed here" in done.stderr
        and "uv python install 3.99" in done.stderr
    )
    assert "Traceback" not in done.stderr


def test_the_fingerprint_holds_each_stacks_interpreter(tmp_path):
    python = interpreters._inspect(fake_python(tmp_path, "3.11.7", symbols=False))
    environment = Environment()
    environment.record_environments(
        {"latest": envs.Env("latest", tmp_path, {"fastapi": "0.1"}, python)}
    )
    assert environment.stacks == {"latest": {"fastapi": "0.1"}}
    recorded = environment.interpreters["latest"]
    assert (
        recorded.python == "CPython 3.11.7"
        and recorded.build == python.build
        and not recorded.symbols
    )
    assert recorded.line() == f"CPython 3.11.7 ({python.build}, PGO+LTO, stripped)"
    assert "interpreters" not in [key for key, _, _ in environment.facts()]


def test_this_machines_pythons_are_found_by_version():
    """Whatever this machine has: every interpreter found answers for its own version."""
    here = f"{sys.version_info.major}.{sys.version_info.minor}"
    found = interpreters.find_installed(here)
    assert found, f"the Python running these tests ({sys.executable}) was not found"
    assert all(
        i.minor == here and i.implementation == "cpython" and len(i.build) == 12 for i in found
    )


@pytest.mark.slow
def test_real_environments_of_two_builds_of_one_version_never_meet(monkeypatch, tmp_path):
    """Debian's 3.11.2 and pyenv's 3.11.7 on one machine (the issue's case): a stack built on one is
    never served to a command that chose the other, whatever the cache holds."""
    builds = interpreters.find_installed("3.11")
    if len(builds) < 2:
        pytest.skip("one CPython 3.11 build on this machine")
    monkeypatch.setenv("BENCHWATCH_CACHE", str(tmp_path / "cache"))
    stack = Stack(name="tiny", pins={"six": "1.16.0"})
    built = {}
    for build in builds[:2][::-1]:  # the less preferred first, as a stale cache would hold it
        monkeypatch.setenv("BENCHWATCH_PYTHONS", str(build.path))
        interpreters.reset()
        env = envs.ensure(stack)
        assert env.interpreter is not None and env.interpreter.build == build.build
        ran = subprocess.run(
            [str(env.python), "-c", "import platform; print(platform.python_version())"],
            capture_output=True,
            text=True,
            check=True,
        )
        assert ran.stdout.strip() == build.version
        built[build.build] = env.path
    assert len(set(built.values())) == 2
    monkeypatch.delenv("BENCHWATCH_PYTHONS")
    interpreters.reset()
    assert envs.ensure(stack).path == built[builds[0].build]  # the command's choice, from the cache
