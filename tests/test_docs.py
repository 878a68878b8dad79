"""The user documentation holds together: links resolve, shown commands parse, the README stays short."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from benchwatch.cli import build_parser

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
PAGES = [README, *sorted((ROOT / "docs").glob("*.md"))]
README_MAX_LINES = 220

_FENCE = re.compile(r"^```.*?^```", re.M | re.S)
_LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)|<img [^>]*src=\"([^\"]+)\"")


def _prose(text: str) -> str:
    return _FENCE.sub("", text)


def anchors(path: Path) -> set[str]:
    """GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens, -N for repeats."""
    seen: dict[str, int] = {}
    found = set()
    for line in _prose(path.read_text()).splitlines():
        match = re.match(r"#{1,6} (.+)", line)
        if not match:
            continue
        slug = re.sub(r"[^\w\- ]", "", match.group(1).strip().lower()).replace(" ", "-")
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        found.add(slug if count == 0 else f"{slug}-{count}")
    return found


def links(path: Path) -> list[str]:
    return [a or b for a, b in _LINK.findall(_prose(path.read_text()))]


def broken_links(path: Path) -> list[str]:
    broken = []
    for link in links(path):
        if re.match(r"[a-z]+:", link):  # https:, mailto:
            continue
        target, _, anchor = link.partition("#")
        file = (path.parent / target).resolve() if target else path
        if not file.exists():
            broken.append(f"{link}: no file {file}")
        elif anchor and (file.suffix != ".md" or anchor not in anchors(file)):
            broken.append(f"{link}: no heading #{anchor} in {file.name}")
    return broken


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_points_at_a_file_and_heading_that_exist(page):
    assert not broken_links(page)


def test_the_link_checker_sees_a_missing_file_and_a_missing_heading(tmp_path):
    (tmp_path / "other.md").write_text("# Other page\n\n## A run's files\n")
    page = tmp_path / "page.md"
    page.write_text(
        "[ok](other.md#a-runs-files) [ok](#here) [web](https://example.org/x)\n"
        '[gone](missing.md) [no heading](other.md#nowhere) <img src="gone.png">\n'
        "# Here\n```sh\n[in code](ignored.md)\n```\n"
    )
    assert [b.split(":")[0] for b in broken_links(page)] == [
        "missing.md",
        "other.md#nowhere",
        "gone.png",
    ]


def shown_commands(path: Path) -> list[str]:
    """Lines of code blocks that run benchwatch (`./bw …` or `benchwatch …`), but not the tests."""
    lines = []
    for block in _FENCE.findall(path.read_text()):
        for line in block.splitlines():
            if re.match(r"(\./bw|benchwatch) ", line) and not line.startswith("./bw test"):
                lines.append(line)
    return lines


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_command_shown_parses_with_the_real_options(page):
    parser = build_parser()
    for line in shown_commands(page):
        argv = shlex.split(line, comments=True)[1:]
        try:
            parser.parse_args(argv)
        except SystemExit:
            pytest.fail(f"{page.name}: `{line}` does not parse: see `benchwatch {argv[0]} --help`")


def test_readme_shows_the_test_command_ci_runs_and_the_main_job_first():
    commands = [
        line
        for block in _FENCE.findall(README.read_text())
        for line in block.splitlines()
        if line.startswith("./bw ")
    ]
    assert commands[0].startswith("./bw run --quick")
    assert commands[1].startswith("./bw test")  # .ci/run runs the first line that starts with it


def test_readme_stays_short():
    lines = len(README.read_text().splitlines())
    assert lines < README_MAX_LINES, (
        f"README.md has {lines} lines: move details to a page under docs/"
    )


def test_readme_exit_codes_are_the_table_in_errors_py():
    from benchwatch.errors import EXIT_CODES

    rows = re.findall(r"^\| (\d+) \| ([^|:(]+)", README.read_text(), re.M)
    assert {int(code): meaning.strip() for code, meaning in rows} == EXIT_CODES
