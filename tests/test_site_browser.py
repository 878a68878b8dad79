"""The site's three pages rendered in headless Chromium at 1400 and 414 CSS px (a phone), driven
over the DevTools protocol (tests/browser.py): no console errors, no horizontal overflow of the
page, chart text at least 10 px, each stack in one colour in every chart (read from the rendered
SVG), wide tables scrolling in their own box, the known step's marker at its commit on the trends and
the overview alike (one renderer draws both), a dark theme.
Screenshots go to $BENCHWATCH_ARTIFACTS (CI uploads them); `scripts/site_screenshots.py` makes the
README's from the same site.

The site: a real `./bw run --quick` and real attributions, trends from TEST DATA (site_demo)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import site_demo
from browser import CHROMIUM, Chromium, measure
from test_changes import _sha

from benchwatch.report.palette import stack_color

needs_chromium = pytest.mark.skipif(
    CHROMIUM is None, reason="chromium is not installed (apt-get install -y chromium)"
)
pytestmark = [needs_chromium, pytest.mark.slow]  # a real Chromium: 4-8 s a test
WIDTHS = (1400, 414)
MIN_TEXT_PX = 10.0


def rgb(color: str) -> str:
    r, g, b = (int(color[i : i + 2], 16) for i in (1, 3, 5))
    return f"rgb({r}, {g}, {b})"


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return site_demo.build(tmp_path_factory.mktemp("browser-site"))


@pytest.fixture(scope="module")
def browser():
    with Chromium() as chromium:
        yield chromium


@pytest.fixture(scope="module")
def artifacts(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = (
        Path(os.environ.get("BENCHWATCH_ARTIFACTS") or tmp_path_factory.mktemp("artifacts"))
        / "site"
    )
    directory.mkdir(parents=True, exist_ok=True)
    return directory


@pytest.mark.parametrize("width", WIDTHS)
def test_every_page_is_readable_at_desktop_and_phone_width(
    site: Path, browser: Chromium, artifacts: Path, width: int
) -> None:
    colors: dict[str, set[str]] = {}
    for name in (*site_demo.PAGES, "latest/report.html"):  # and the full report the nav links to
        page = browser.open((site / name).as_uri(), width)
        found = measure(page)
        where = f"{name} at {width} px"
        assert page.errors == [], where
        assert found["width"] == width and found["scrollWidth"] <= width, (
            f"{where}: the page scrolls sideways"
        )
        assert found["overflowing"] == [], where
        if found["texts"]:
            assert found["minFont"] >= MIN_TEXT_PX, f"{where}: chart text {found['minFont']:.1f} px"
        scrolls = found["scrolls"]
        assert found["tablesOutsideScroll"] == 0 and all(
            s["overflow"] == "auto" for s in scrolls
        ), where
        if width < 600 and any(s["wide"] for s in scrolls):
            assert all(s["hint"] for s in scrolls if s["wide"]), (
                f"{where}: a wide table without its hint"
            )
        if (
            name in site_demo.PAGES
        ):  # the site marks wide tables (report.html has no scripts: every hint)
            assert not any(s["hint"] for s in scrolls if not s["wide"]), (
                f"{where}: a hint under a table that fits"
            )
        for stack, seen in found["colors"].items():
            colors.setdefault(stack, set()).update(seen)
        shot = page.screenshot(
            artifacts / f"{name.removesuffix('.html').replace('/', '-')}-{width}.png", width
        )
        assert shot.stat().st_size > 5_000
    assert {"seed-v1", "seed-v2", "v1-last", "v2-pre-rust", "latest", "next"} <= set(colors)
    assert colors == {
        stack: {rgb(stack_color(stack))} for stack in colors
    }  # one colour per stack, every chart


@pytest.mark.parametrize("name", ["trends.html", "index.html"])  # one renderer draws both
def test_the_known_step_is_marked_between_its_commits(
    site: Path, browser: Chromium, name: str
) -> None:
    page = browser.open((site / name).as_uri(), 414)
    found = page.evaluate(f"""(() => {{
      const middle = (el) => {{ const r = el.getBoundingClientRect(); return r.x + r.width / 2; }};
      const chart = document.querySelector("section.trend-source figure[data-figure='{site_demo.STEP_FIGURE}'] svg");
      const mark = chart.querySelector("g.change-point");
      const dots = [...chart.querySelectorAll("circle[data-series='services@latest']")].filter(c => !c.closest(".legend"));
      return {{commit: mark.getAttribute("data-commit"), x: middle(mark.querySelector("line")),
               before: middle(dots[{site_demo.STEP_AT - 1}]), after: middle(dots[{site_demo.STEP_AT}]),
               tip: mark.querySelector("title").textContent}};
    }})()""")
    assert found["commit"] == _sha(site_demo.STEP_AT)
    assert found["before"] < found["x"] < found["after"]
    assert "+10.0%" in found["tip"] and "ALERT" in found["tip"]


def test_the_dark_theme_follows_the_system_setting(site: Path, artifacts: Path) -> None:
    with Chromium(dark=True) as dark:
        for name in site_demo.PAGES:
            page = dark.open((site / name).as_uri(), 414)
            found = measure(page)
            assert page.errors == [] and found["background"] == "rgb(21, 23, 26)", name
            page.screenshot(artifacts / f"{name.removesuffix('.html')}-414-dark.png", 414, 2400)
