"""The site's pages as HTML and SVG, without a browser: one colour per stack in every chart,
change points at their commit, honest colouring, the releases table, bad input.

The trends are TEST DATA (site_demo: a history with a known step, built like the change-point
tests' ones); the run and the attributions are real results (tests/fixtures/site)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import site_demo
from test_changes import _sha
from test_report import synthetic_run

from benchwatch.attribute.table import Attribution
from benchwatch.publish.latest import speedup_table
from benchwatch.publish.release_cells import release_name
from benchwatch.publish.releases_page import release_table
from benchwatch.publish.site import build_site
from benchwatch.report.honest import measured
from benchwatch.report.html import STYLESHEET
from benchwatch.report.palette import STACK_COLORS, shared_flavors, stack_color, styles
from benchwatch.report.questions import questions_table
from benchwatch.results.load_facts import AAFigure, AANoise, LoadPlanInfo
from benchwatch.trend.history import PREFIX


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return site_demo.build(tmp_path_factory.mktemp("demo"))


def _stack_colors(html: str) -> dict[str, set[str]]:
    """Every element of an SVG that names its stack -> the colours it is drawn in."""
    found: dict[str, set[str]] = {}
    for tag in re.findall(
        r"<(?:rect|path|circle|polygon|line)\b[^>]*data-stack=\"[^\"]+\"[^>]*>", html
    ):
        stack = re.search(r'data-stack="([^"]+)"', tag).group(1)
        fill = re.search(r'\bfill="(#[0-9a-f]{6})"', tag)
        stroke = re.search(r'\bstroke="(#[0-9a-f]{6})"', tag)
        found.setdefault(stack, set()).add((fill or stroke).group(1))
    return found


def test_a_stack_has_one_colour_whatever_its_flavor_and_unknown_stacks_a_stable_one() -> None:
    found = styles(
        ["hello@latest", "hello-starlette@latest", "hello@seed-v1", "hello-falcon@latest", "latest"]
    )
    assert (
        found["hello@latest"].color
        == found["hello-starlette@latest"].color
        == found["latest"].color
    )
    assert found["hello@latest"].color == STACK_COLORS["latest"] != found["hello@seed-v1"].color
    flavors = [found[v] for v in ("hello@latest", "hello-falcon@latest", "hello-starlette@latest")]
    assert [s.flavor for s in flavors] == [0, 1, 2]
    assert (
        len({(s.dash, s.marker, s.hatch) for s in flavors}) == 3
    )  # told apart by pattern, not colour
    assert (
        stack_color("own") == stack_color("own") and stack_color("own") not in STACK_COLORS.values()
    )
    assert len(set(STACK_COLORS.values())) == len(STACK_COLORS)


def test_inside_shared_flavors_a_flavor_keeps_the_number_the_first_chart_gave_it() -> None:
    every = ["hello@latest", "hello-asgi@latest", "hello-falcon@latest", "hello-starlette@latest"]
    fewer = ["hello@latest", "hello-starlette@latest"]
    assert (
        styles(fewer)["hello-starlette@latest"].flavor == 1
    )  # on its own, numbered within its chart
    with shared_flavors():
        assert [styles(every)[v].flavor for v in every] == [0, 1, 2, 3]
        with shared_flavors():  # nested (the report inside the site): the outer numbering holds
            assert styles(fewer)["hello-starlette@latest"].flavor == 3
        assert (
            styles(["hello-zz@latest", "hello-aa@latest"])["hello-aa@latest"].flavor == 4
        )  # new ones after
    assert styles(fewer)["hello-starlette@latest"].flavor == 1


def test_every_chart_of_every_page_draws_a_stack_in_its_one_colour(demo: Path) -> None:
    pages = [demo / "index.html", demo / "trends.html", demo / "latest" / "report.html"]
    seen: dict[str, set[str]] = {}
    for page in pages:
        for stack, colors in _stack_colors(page.read_text()).items():
            seen.setdefault(stack, set()).update(colors)
    assert {"seed-v1", "seed-v2", "v1-last", "v2-pre-rust", "latest", "next"} <= set(seen)
    assert seen == {stack: {stack_color(stack)} for stack in seen}


def _flavor_markers(html: str) -> dict[str, set[str]]:
    """Every marker (a line chart's point or legend) of a flavor's series -> the shapes it is drawn in."""
    found: dict[str, set[str]] = {}
    for tag, attrs in re.findall(
        r"<(circle|rect|polygon|path)\b([^>]*data-series=\"[^\"]+@[^\"]+\"[^>]*)>", html
    ):
        series = re.search(r'data-series="([^"]+)"', attrs).group(1)
        if "-" not in series.split("@")[0]:
            continue  # the plain app: always the first shape
        if tag == "rect":
            if float(re.search(r'width="([\d.]+)"', attrs).group(1)) > 8:
                continue  # a bar or a legend swatch, not a marker
            shape = "square"
        elif tag == "polygon":
            shape = (
                "triangle"
                if len(re.search(r'points="([^"]+)"', attrs).group(1).split()) == 3
                else "diamond"
            )
        elif tag == "path":
            if re.search(r'd="([^"]+)"', attrs).group(1).count("M") != 2:
                continue  # the series' line, not a marker
            shape = "cross"
        else:
            shape = "circle"
        found.setdefault(series, set()).add(shape)
    return found


def test_every_chart_of_every_page_draws_a_flavor_in_its_one_marker(demo: Path) -> None:
    # the overview's and the report's charts hold hello-asgi, -falcon and -starlette; the trends'
    # only -falcon and -starlette: numbered per chart, -starlette was the third shape in one and
    # the second in the other
    seen: dict[str, set[str]] = {}
    for page in (demo / "index.html", demo / "trends.html", demo / "latest" / "report.html"):
        for series, shapes in _flavor_markers(page.read_text()).items():
            seen.setdefault(series, set()).update(shapes)
    assert {"hello-falcon@latest", "hello-starlette@latest"} <= set(seen)
    assert all(len(shapes) == 1 for shapes in seen.values()), seen


def _chart(trends: str, source: str, figure: str) -> str:
    section = trends.split(f"data-source='{source}'")[1].split("</section>")[0]
    return section.split(f"data-figure='{figure}'")[1].split("</figure>")[0]


def test_the_known_step_is_marked_at_its_commit_with_size_and_the_relative_series_beside(
    demo: Path,
) -> None:
    trends = (demo / "trends.html").read_text()
    main_source = "dev/bench/data.js"
    chart = _chart(trends, main_source, site_demo.STEP_FIGURE)
    absolute, relative = chart.split('class="chart trend relative"')
    marks = re.findall(
        r'class="change-point" data-commit="([0-9a-f]+)" data-kind="(\w+)" '
        r'data-acknowledged="(\d)" data-x="(\d+)"',
        absolute,
    )
    assert marks == [(_sha(site_demo.STEP_AT), "regression", "0", str(site_demo.STEP_AT))]
    assert (
        "+10.0%" in absolute
        and f"{_sha(site_demo.STEP_AT - 1)[:8]} → {_sha(site_demo.STEP_AT)[:8]}" in chart
    )
    # the (vs parent) series: one point at that commit
    assert re.findall(r'class="change-point" data-commit="([0-9a-f]+)"', relative) == [
        _sha(site_demo.STEP_AT)
    ]
    assert 'class="parity"' in relative
    # one line per stack (5 stacks), none of the flat stacks marked
    assert len(re.findall(r'<path d="M[^"]+" fill="none" stroke="#[0-9a-f]{6}"', absolute)) == 5
    hello = _chart(trends, main_source, "GET / c=10 cpu/req")
    assert "change-point" not in hello and 'data-series="hello-falcon@latest"' in hello


def test_an_acknowledged_change_is_grey_with_its_reason(demo: Path) -> None:
    trends = (demo / "trends.html").read_text()
    nightly = "nightly/data.js"
    chart = _chart(trends, nightly, site_demo.STEP_FIGURE)
    assert re.findall(
        r'class="change-point" data-commit="([0-9a-f]+)" data-kind="(\w+)" data-acknowledged="(\d)"',
        chart,
    ) == [(_sha(site_demo.NIGHT_STEP_AT), "improvement", "1")]
    assert "acknowledged: starlette 1.10: faster routing, expected" in chart and "#6b7280" in chart
    assert "nights" in chart and "commits →" not in chart


def test_change_points_are_found_by_the_site_itself_when_no_changes_json_is_given(
    tmp_path: Path, cli
) -> None:
    site_demo.step_history(tmp_path / "gh-pages")
    (tmp_path / "acks.toml").write_text("")
    assert (
        cli(
            "site",
            "--out",
            str(tmp_path / "site"),
            "--data",
            str(tmp_path / "gh-pages"),
            "--no-copy",
        ).returncode
        == 0
    )
    trends = (tmp_path / "site" / "trends.html").read_text()
    assert f'class="change-point" data-commit="{_sha(site_demo.STEP_AT)}"' in trends
    assert not (
        tmp_path / "site" / "dev"
    ).exists()  # --no-copy: github-action-benchmark's files stay its own


def _with_noise(run, rounds: int, band: float | None):
    run.extra.load.plan = LoadPlanInfo(
        rounds=rounds,
        warmup_s=1,
        duration_s=2,
        open_duration_s=2,
        concurrencies=[10, 64],
        rate_fractions=[0.5],
        quick=rounds == 1,
    )
    run.extra.load.aa_noise = (
        None
        if band is None
        else AANoise(
            variant="services@latest",
            figures={
                "x": AAFigure(
                    cv=band / 2,
                    ratio=1 + band,
                    a=[1.0],
                    a_prime=[1 + band],
                    metric="cpu_us_per_request",
                )
            },
        )
    )
    return run


def test_one_round_is_never_coloured_and_more_rounds_only_outside_the_noise_band() -> None:
    stacks = ("seed-v1", "seed-v2", "latest")
    quick = speedup_table(_with_noise(synthetic_run(), 1, 0.05), stacks)
    assert quick is not None and all(c.tone == "" for row in quick.rows for c in row)
    assert "1 round (quick), sequential" in quick.note and "never coloured" in quick.note
    assert "A/A noise cpu/req ±5.0%" in quick.note
    judged = speedup_table(_with_noise(synthetic_run(), 3, 0.05), stacks)
    tones = {c.text: c.tone for row in judged.rows for c in row[2:]}
    assert tones["2.50x faster"] == "better"  # far outside a 5 % band
    wide = speedup_table(
        _with_noise(synthetic_run(), 3, 10.0), stacks
    )  # a band wider than every change
    cells = [c for row in wide.rows for c in row[2:] if c.text not in ("—", "same")]
    assert cells and all(c.tone == "" and c.text.endswith("(within noise)") for c in cells)
    unknown = speedup_table(_with_noise(synthetic_run(), 3, None), stacks)
    assert all(c.tone == "" for row in unknown.rows for c in row)
    assert (
        measured(_with_noise(synthetic_run(), 3, None)).noise("cpu_us_per_request")
        == "A/A noise not measured"
    )


def test_the_real_quick_run_shows_how_it_was_measured_and_colours_no_sequential_ratio(
    demo: Path,
) -> None:
    index = (demo / "index.html").read_text()
    speedups = index.split("<h3>Speed-ups †</h3>")[1].split("</table>")[0]
    assert (
        "1.18x slower" in speedups
        and 'class="worse' not in speedups
        and 'class="better' not in speedups
    )
    note = index.split("<h3>Speed-ups †</h3>")[1].split('<div class="note">')[1].split("</div>")[0]
    assert note.startswith("1 round (quick), sequential") and "A/A noise cpu/req ±12.2%" in note


def test_a_side_by_side_ratio_is_coloured_only_when_its_interval_excludes_one() -> None:
    from test_side_by_side import answered_run

    table = questions_table(answered_run())  # the site shows every ratio
    tones = [
        (row[0].text.split(":")[0], row[1].tone) for row in table.rows
    ]  # a question's name, then its title
    assert tones == [
        ("services_v1_v2", "better"),
        ("hello_frameworks", ""),
        ("hello_frameworks", "better"),
        ("posts_v1_v2", ""),
    ]
    assert "side by side, paired by round" in table.note


def test_releases_list_each_watched_release_first_with_its_effect_per_scenario(demo: Path) -> None:
    results = [Attribution.model_validate_json(p.read_text()) for p in site_demo.attributions()]
    table = release_table("v2-pre-rust", "latest", results)
    [hello] = [
        row
        for row in table.rows
        if row[2].text == "hello"
        and row[3].text == "GET / c=10 cpu/req"
        and row[0].text.startswith("fastapi")
    ]
    assert [c.text for c in hello[:2]] == [
        "fastapi 0.129.2 → 0.165.0",
        "starlette 0.52.1 → 1.10.0, opentelemetry-api — → 1.45.2",
    ]
    assert hello[4].text == "1.136 [1.122, 1.159] slower" and hello[4].tone == "worse"
    assert table.rows[0][0].text.startswith("fastapi")
    leads = list(dict.fromkeys(row[0].text.split(" ")[0] for row in table.rows))
    assert leads[:3] == ["fastapi", "pydantic", "uvicorn"] and leads[-1] == "unpinned"
    unchanged = [row[4] for row in table.rows if row[4].text.endswith("no significant change")]
    assert unchanged and all(c.tone == "" for c in unchanged)
    assert {row[2].text for row in table.rows} == {
        "github_user",
        "hello",
        "payloads",
        "posts",
        "services",
    }
    page = (demo / "releases.html").read_text()
    from benchwatch.compare.rounds import COMPARE_QUICK_ROUNDS

    assert (
        f"{COMPARE_QUICK_ROUNDS} paired rounds (quick)" in page and "Do the steps add up?" in page
    )


MECHANISM = Path(__file__).parent / "fixtures" / "releases" / "attribution-hello-mechanism.json"


def _rows(page: str, title: str) -> list[str]:
    """The text of each row of the table whose aria-label starts with `title`, cells joined by " | "."""
    table = page.split(f'aria-label="{title}')[1].split("</table>")[0]
    return [
        " | ".join(re.findall(r"<td[^>]*>(.*?)</td>", row))
        for row in re.findall(r"<tr>(.*?)</tr>", table)[1:]
    ]


def test_a_release_that_moved_a_figure_shows_its_cost_and_mechanism_in_its_own_row(
    tmp_path: Path,
) -> None:
    """A recorded counts-only attribution, v2-pre-rust -> latest on hello (CONSTRUCTED from the
    measured numbers in docs/evidence.md — instructions per request, the weights of the hello compare,
    uvloop 0.23's write/writev — not one run): the uvloop row names its versions, its estimated cost
    1.037x higher in µs, the shared objects whose instructions moved and the calls by name that changed;
    the uvicorn row its own; the transitive step moved nothing and has no row."""
    from benchwatch.publish.attribution_read import read_attribution

    build_site(tmp_path, attributions=[(MECHANISM.name, read_attribution(MECHANISM))])
    page = (tmp_path / "releases.html").read_text()
    rows = _rows(page, "v2-pre-rust → latest: releases that moved a figure")
    assert [row.split(" | ")[0] for row in rows] == [
        "fastapi 0.129.2 → 0.165.0",
        "uvicorn 0.41.0 → 0.54.0",
        "uvloop 0.22.1 → 0.23.0",
    ]
    [uvloop] = [row for row in rows if row.startswith("uvloop")]
    cells = uvloop.split(" | ")
    assert cells[1:4] == ["—", "hello", "GET /"]
    assert cells[4] == "1.037 [1.036, 1.038] higher: 102.6 → 106.4 µs"
    assert (
        cells[5]
        == "libpython -1,750 (-0.42%); uvloop/libuv -1,170 (-0.28%) (all: 417,023 → 414,100 instr/req)"
    )
    assert cells[6] == "write 0.00 → 2.00, writev 1.00 → 0.00"
    assert '<td class="worse">1.037 [1.036, 1.038] higher' in page
    [uvicorn] = [row for row in rows if row.startswith("uvicorn")]
    assert (
        "0.939 [0.938, 0.940] lower: 102.6 → 96.4 µs" in uvicorn and "libpython -27,300" in uvicorn
    )
    assert uvicorn.endswith("| no call changed") and "write" not in uvicorn
    assert (
        "counted once per side" in page and "paired rounds" not in page
    )  # counts only: no timing rounds


def test_a_release_table_from_an_attribution_without_a_cost_or_a_mechanism_says_not_recorded() -> (
    None
):
    """An attribution written before the mechanism was kept (the real timed hello one) still renders:
    its moved figures are CPU per request, and the mechanism is "not recorded"; one with counts but
    no cost gives the counts' ratios."""
    from benchwatch.publish.release_mechanisms import mechanism_table

    old = Attribution.model_validate_json(
        (Path(__file__).parent / "fixtures" / "site" / "attribution-hello.json").read_text()
    )
    rows = [[c.text for c in row] for row in mechanism_table(old.base, old.head, [old]).rows]
    [fastapi] = [row for row in rows if row[0].startswith("fastapi") and row[3] == "GET / c=10"]
    assert fastapi[4:] == [
        "not counted: cpu/req 1.136 [1.122, 1.159] slower",
        "not recorded",
        "not recorded",
    ]
    from benchwatch.publish.site import render_releases_page

    page = render_releases_page([("attribution-hello.json", old)], None)
    assert "<td>not recorded</td>" in page and "Every figure of every step" in page
    new = Attribution.model_validate_json(MECHANISM.read_text())
    for step in new.steps:  # as if the weights could not be measured: no cost line
        step.ratios = {
            label: r
            for label, r in step.ratios.items()
            if not label.endswith("cost_us_per_request")
        }
    [uvloop] = [
        [c.text for c in row]
        for row in mechanism_table(new.base, new.head, [new]).rows
        if row[0].text.startswith("uvloop")
    ]
    assert (
        uvloop[4]
        == "not weighed: instr/req 0.993 [0.992, 0.993] fewer; syscalls/req 1.500 [1.500, 1.500] more"
    )
    assert uvloop[6] == "write 0.00 → 2.00, writev 1.00 → 0.00"


def test_every_string_of_a_recorded_mechanism_is_escaped(tmp_path: Path) -> None:
    """A published attribution is data from a nightly run: an object or call name cannot inject HTML."""
    from benchwatch.publish.site import render_releases_page

    data = json.loads(MECHANISM.read_text())
    mechanism = next(s for s in data["steps"] if s["requested"] == "uvloop")["mechanism"][
        "hello GET / seq"
    ]
    mechanism["instructions"]["objects"][0]["name"] = "<img src=x onerror=alert(1)>"
    mechanism["calls"]["<script>alert(1)</script>"] = [0.0, 1.0]
    page = render_releases_page([("x.json", Attribution.model_validate(data))], None)
    assert "<img src=x" not in page and "<script>alert" not in page
    assert (
        "&lt;img src=x onerror=alert(1)&gt; -1,750" in page
        and "&lt;script&gt;alert(1)&lt;/script&gt; 0.00 → 1.00" in page
    )


def test_a_broken_data_js_or_attribution_is_one_error_line_naming_the_file(
    tmp_path: Path, cli
) -> None:
    history = tmp_path / "history"
    history.mkdir()
    (history / "data.js").write_text(PREFIX + '{"entries": {"s": [{"commit": {}}]}}')
    done = cli("site", "--out", str(tmp_path / "site"), "--data", str(history))
    assert done.returncode == 3 and done.stderr.count("\n") == 1
    assert done.stderr.startswith(f"ERROR: {history / 'data.js'}: ") and "commit.id" in done.stderr
    assert not (tmp_path / "site").exists()
    bad = tmp_path / "attribution.json"
    bad.write_text(json.dumps({"base": "a", "head": "b", "steps": "nope"}))
    done = cli("site", "--out", str(tmp_path / "site"), "--attribution", str(bad))
    assert done.returncode == 3 and done.stderr.count("\n") == 1
    assert done.stderr.startswith(f"ERROR: --attribution {bad}: not a benchwatch attribution.json")
    assert not (tmp_path / "site").exists()


def test_a_broken_data_js_already_in_the_site_is_a_message_on_both_trend_pages(
    tmp_path: Path,
) -> None:
    (tmp_path / "dev" / "bench").mkdir(parents=True)
    (tmp_path / "dev" / "bench" / "data.js").write_text("window.BENCHMARK_DATA = {entries: {\n")
    build_site(tmp_path)
    for name in ("trends.html", "index.html"):
        html = (tmp_path / name).read_text()
        section = html.split("data-source='dev/bench/data.js' data-state='corrupt'>")[1].split(
            "</section>"
        )[0]
        assert "<div class='message error'>" in section and "corrupt history" in section, name


def test_pages_share_one_nav_and_stay_offline(demo: Path) -> None:
    for name in site_demo.PAGES:
        html = (demo / name).read_text()
        fetched = re.findall(r"<(\w+)[^>]*\b(?:src|href)\s*=\s*[\"']?\s*(?:https?:)?//", html, re.I)
        assert set(fetched) <= {"a"}, (
            name
        )  # links to commits only: nothing is loaded from the network
        assert "url(" not in STYLESHEET.read_text()
        assert all(f"href='{page}'" in html for page in site_demo.PAGES)
        assert "<link rel='stylesheet' href='assets/style.css'>" in html
    assert (
        demo / "assets" / "style.css"
    ).read_text() == STYLESHEET.read_text()  # the report's, inlined there
    assert (
        f"<style>{STYLESHEET.read_text()}</style>" in (demo / "latest" / "report.html").read_text()
    )
    assert "prefers-color-scheme" in STYLESHEET.read_text()
    assert sorted(p.name for p in (demo / "assets").iterdir()) == [
        "style.css"
    ]  # no script among the assets


def test_a_long_history_draws_its_lines_without_a_marker_per_point(tmp_path: Path) -> None:
    from test_changes import _write

    from benchwatch.publish.trend_read import read_trend
    from benchwatch.publish.trends import DENSE, trend_section

    names = {
        f"svc@{stack} GET / c=10 cpu/req": [100.0 + i % 3 for i in range(DENSE + 40)]
        for stack in ("seed-v1", "latest")
    }
    path = _write(tmp_path / "data.js", {"s": ("customSmallerIsBetter", names)})
    html = trend_section(read_trend(path, "main", nightly=False), {})
    assert (
        html.count('<path d="M') == 2 and html.count("<circle cx=") == 2 + 2
    )  # the legend's and the last points


def test_a_published_attribution_that_is_not_ours_is_skipped_with_a_warning(
    tmp_path: Path, cli
) -> None:
    """N2: the nightly publishes attribution files into gh-pages nightly/attribution; one planted
    `{"x": 1}` must not stop every later publish (exit 3): it is skipped, said on stderr."""
    folder = tmp_path / "attribution"
    folder.mkdir()
    real = Path(__file__).parent / "fixtures" / "site" / "attribution-hello.json"
    (folder / "2026-11-20-0123456789ab.json").write_text(real.read_text())
    assert (
        cli("site", "--out", str(tmp_path / "before"), "--attributions", str(folder)).returncode
        == 0
    )
    (folder / "2026-11-21-aaaaaaaaaaaa.json").write_text('{"x": 1}')
    (folder / "2026-11-22-bbbbbbbbbbbb.json").write_text("not json")
    done = cli("site", "--out", str(tmp_path / "after"), "--attributions", str(folder))
    assert done.returncode == 0, done.stderr
    warned = done.stderr.splitlines()
    assert len(warned) == 2 and all(
        line.startswith("warning: skipped: --attribution ") for line in warned
    )
    assert "2026-11-21-aaaaaaaaaaaa.json: not a benchwatch attribution.json" in warned[0]
    assert (tmp_path / "after" / "releases.html").read_text() == (
        tmp_path / "before" / "releases.html"
    ).read_text()
    assert "hello" in (tmp_path / "after" / "releases.html").read_text()
    missing = cli("site", "--out", str(tmp_path / "x"), "--attributions", str(tmp_path / "nowhere"))
    assert missing.returncode == 3 and "not a directory" in missing.stderr


def test_a_release_the_servers_never_import_is_listed_as_not_counted() -> None:
    result = Attribution.model_validate_json(MECHANISM.read_text())
    step = result.steps[0]
    step.skipped = f"the servers import none of {', '.join(step.group)} on v2-pre-rust or latest"
    rows = [
        row
        for row in release_table("v2-pre-rust", "latest", [result]).rows
        if row[0].text == release_name(step)
    ]
    assert rows and all(row[4].text == f"not measured: {step.skipped}" for row in rows)
