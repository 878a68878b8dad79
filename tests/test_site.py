"""The gh-pages landing page (index.html): every chart drawn in Python by the report's renderer
(report/svg.py, publish/trends.py) from the data.js files at hand, no chart drawn by a script; a
missing or corrupt data.js is a message on the page; the nightly status; change points marked on
their commit and listed with links. One test types into the page's filter in headless Chromium.

The runs and data.js trends here are TEST DATA (see test_report.synthetic_run), not measurements.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest
from browser import CHROMIUM, Chromium
from test_report import synthetic_run

from benchwatch.cli import main
from benchwatch.publish.nightly import nightly_status
from benchwatch.publish.site import build_site, find_trend_files
from benchwatch.publish.trend_read import read_trend
from benchwatch.report.palette import stack_color
from benchwatch.results.files import write_run

needs_chromium = pytest.mark.skipif(
    CHROMIUM is None, reason="chromium is not installed (apt-get install -y chromium)"
)
STACKS = ("seed-v1", "seed-v2", "latest")


def trend_data(runs: int, names: list[str], tool: str, base: float) -> list[dict]:
    """TEST DATA: github-action-benchmark entries with a made-up saw-tooth trend."""
    return [
        {
            "commit": {
                "id": f"{i:040x}",
                "message": f"change {i}\n\nbody",
                "timestamp": "2026-01-01T00:00:00Z",
                "url": f"https://github.com/example/repo/commit/{i:040x}",
            },
            "date": 1767225600000 + i * 86_400_000,
            "tool": tool,
            "benches": [
                {
                    "name": name,
                    "value": base * (1 + 0.05 * ((i * (k + 3)) % 7)),
                    "unit": "us",
                    "range": "± 1",
                    "extra": "3 samples",
                }
                for k, name in enumerate(names)
            ],
        }
        for i in range(runs)
    ]


def write_data_js(path: Path, runs: int = 10) -> None:
    names = [f"services@{s} GET /services?offset=0 c=64 cpu/req" for s in STACKS]
    data = {
        "lastUpdate": 1767225600000,
        "repoUrl": "https://github.com/example/repo",
        "entries": {
            "load (smaller is better)": trend_data(runs, names, "customSmallerIsBetter", 150.0),
            "load (bigger is better)": trend_data(
                runs, [n.replace("cpu/req", "rps") for n in names], "customBiggerIsBetter", 5000.0
            ),
        },
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("window.BENCHMARK_DATA = " + json.dumps(data, indent=2) + "\n")


def section(html: str, source: str) -> str:
    """The part of a page that draws one data.js (or says why it cannot)."""
    return html.split(f"data-source='{source}'")[1].split("</section>")[0]


def figure(html: str, group: str, name: str) -> str:
    return html.split(f"<figure class='trend-chart' data-group='{group}' data-figure='{name}'")[
        1
    ].split("</figure>")[0]


def scripts(html: str) -> list[str]:
    return re.findall(r"<script\b[^>]*>(.*?)</script>", html, re.S)


def test_the_overview_draws_every_trend_in_python_with_the_reports_renderer(tmp_path: Path) -> None:
    data = tmp_path / "gh-pages-data"
    write_data_js(data / "dev" / "bench" / "data.js")
    write_data_js(data / "nightly" / "data.js", runs=4)
    site = tmp_path / "site"
    index = build_site(
        site, run=synthetic_run(), data_dirs=[data], reference_stack="seed-v1", stacks=STACKS
    )
    html = index.read_text()
    main_trend = section(html, "dev/bench/data.js")
    assert "data-state='ok'" in main_trend and "main: every push (dev/bench)" in main_trend
    for metric, unit in (("cpu/req", "µs, lower is better"), ("rps", "µs, higher is better")):
        chart = figure(main_trend, "services", f"GET /services?offset=0 c=64 {metric}")
        assert f"GET /services?offset=0 c=64 {metric} ({unit})" in chart
        lines = re.findall(
            r'<path d="M[^"]+" fill="none" stroke="(#[0-9a-f]{6})" stroke-width="1.8" '
            r'data-stack="([^"]+)"',
            chart,
        )
        assert sorted(lines) == sorted(
            (stack_color(s), s) for s in STACKS
        )  # one line per stack, in its colour
        assert (
            len(re.findall(r"<circle cx=", chart)) == 3 * 10 + 3
        )  # 10 points per line, the legend's markers
    # the same chart as trends.html draws (which keeps the gating figures only)
    trends = (site / "trends.html").read_text()
    cpu = "GET /services?offset=0 c=64 cpu/req"
    assert figure(section(trends, "dev/bench/data.js"), "services", cpu) == figure(
        main_trend, "services", cpu
    )
    assert "c=64 rps" not in section(trends, "dev/bench/data.js")
    # the nightly status, from nightly/data.js
    nightly = html.split("id='nightly-status'")[1].split("<h2")[0]
    assert (
        "data-state='ok'" in nightly
        and "Last nightly: 2026-01-04T00:00:00Z, commit 0000000000 change 3" in nightly
    )
    assert nightly.count("than the night before") == 5
    assert "not judged: no change-point analysis given" in nightly  # no --changes: nothing claimed
    # the latest run, the report it links, the nav
    speedups = html.split("<h3>Speed-ups †</h3>")[1].split("</table>")[0]
    assert "seed-v1 → seed-v2" in speedups and "2.50x faster" in speedups
    assert "<h3>services</h3>" in html and "server CPU per request" in html
    assert (site / "latest" / "report.html").is_file() and "latest/report.html" in html
    assert all(f"href='{link}'" in html for link in ("dev/bench/", "nightly/", "asv/"))


def test_no_script_draws_a_chart_and_one_stylesheet_serves_the_report_and_the_site(
    tmp_path: Path,
) -> None:
    write_data_js(tmp_path / "data" / "dev" / "bench" / "data.js")
    site = tmp_path / "site"
    build_site(site, run=synthetic_run(), data_dirs=[tmp_path / "data"], stacks=STACKS)
    assert [p.name for p in (site / "assets").iterdir()] == ["style.css"]
    for name in ("index.html", "trends.html", "releases.html"):
        html = (site / name).read_text()
        assert (
            "<script src" not in html and "<link rel='stylesheet' href='assets/style.css'>" in html
        )
        for script in scripts(html):
            assert not re.search(r"createElement|innerHTML|<svg|BENCHMARK_DATA", script), name
    report = (site / "latest" / "report.html").read_text()
    assert (
        f"<style>{(site / 'assets' / 'style.css').read_text()}</style>" in report
        and "<script" not in report
    )


def test_missing_and_corrupt_data_are_messages_on_the_page(tmp_path: Path) -> None:
    site = tmp_path / "site"
    (site / "dev" / "bench").mkdir(parents=True)
    (site / "dev" / "bench" / "data.js").write_text(
        "window.BENCHMARK_DATA = {entries: {\n"
    )  # cut short
    (site / "history").mkdir()
    (site / "history" / "data.js").write_text(
        'window.BENCHMARK_DATA = {"lastUpdate": 1};\n'
    )  # wrong shape
    html = build_site(site).read_text()
    states = dict(re.findall(r"data-source='([^']+)' data-state='(\w+)'", html))
    assert states == {
        "dev/bench/data.js": "corrupt",
        "nightly/data.js": "missing",
        "history/data.js": "corrupt",
    }
    assert "<div class='message error'>" in section(html, "dev/bench/data.js")
    assert "corrupt history" in section(html, "dev/bench/data.js")
    assert "corrupt history (`entries` must map names to lists)" in section(html, "history/data.js")
    assert "nightly/data.js: no data.js given" in section(html, "nightly/data.js")
    nightly = html.split("id='nightly-status'")[1].split("<h2")[0]
    assert "data-state='missing'" in nightly and "class='message'" in nightly
    assert "No run given" in html and "no change-point analysis given" in html
    assert "<svg" not in html.split("id='trends'")[1]  # no figure from a file that cannot be read


def test_a_corrupt_nightly_trend_is_an_error_in_the_nightly_status(tmp_path: Path) -> None:
    (tmp_path / "nightly").mkdir()
    (tmp_path / "nightly" / "data.js").write_text("not javascript at all")
    html = build_site(tmp_path).read_text()
    nightly = html.split("id='nightly-status'")[1].split("<h2")[0]
    assert (
        "data-state='corrupt'" in nightly
        and "<div class='message error'>" in nightly
        and "data.js" in nightly
    )


def test_a_nights_move_is_coloured_only_at_a_change_point(tmp_path: Path) -> None:
    path = tmp_path / "nightly" / "data.js"
    write_data_js(path, runs=4)
    trend = read_trend(path, "nightly", nightly=True)
    name = "services@latest GET /services?offset=0 c=64 cpu/req"
    mark = {
        "suite": "load (smaller is better)",
        "name": name,
        "index": 3,
        "kind": "regression",
        "before": {"commit": f"{2:040x}"},
        "after": {"commit": f"{3:040x}"},
        "acknowledged": None,
    }
    html = nightly_status(trend, None, {(mark["suite"], name): [mark]})
    [judged] = re.findall(r"<li data-judged='1' class='worse'>([^<]*)</li>", html)
    assert judged.startswith(name) and judged.endswith("— change point (regression)")
    assert html.count("<li data-judged='0'>") == 4 and "within the night-to-night noise" in html
    acknowledged = nightly_status(
        trend, None, {(mark["suite"], name): [{**mark, "acknowledged": "expected"}]}
    )
    assert (
        "<li data-judged='1'>" in acknowledged
        and "change point (acknowledged: expected)" in acknowledged
    )


def test_local_history_is_found_and_copied_into_the_site(tmp_path: Path) -> None:
    history = tmp_path / ".benchwatch" / "history"
    write_data_js(history / "data.js")
    assert list(find_trend_files(history)) == ["data.js"]
    write_run(tmp_path / "run", synthetic_run())
    site = tmp_path / "site"
    assert (
        main(["site", "--out", str(site), "--data", str(history), "--run", str(tmp_path / "run")])
        == 0
    )
    assert (site / "history" / "data.js").read_text() == (history / "data.js").read_text()
    html = (site / "index.html").read_text()
    assert re.findall(r"data-source='([^']+)'", html) == [
        "dev/bench/data.js",
        "nightly/data.js",
        "history/data.js",
    ]
    assert "data-state='ok'" in section(html, "history/data.js") and "<svg" in section(
        html, "history/data.js"
    )
    assert (site / "latest" / "report.md").is_file()


def test_site_command_rejects_a_missing_data_dir(tmp_path: Path, capsys) -> None:
    assert main(["site", "--out", str(tmp_path / "site"), "--data", str(tmp_path / "nope")]) == 3
    err = capsys.readouterr().err.strip()
    assert err.startswith("ERROR: --data") and "not a directory" in err


@needs_chromium
def test_the_filter_shows_and_hides_the_drawn_charts(tmp_path: Path) -> None:
    write_data_js(tmp_path / "data" / "dev" / "bench" / "data.js")
    index = build_site(tmp_path / "site", data_dirs=[tmp_path / "data"], stacks=STACKS)
    visible = (
        "[...document.querySelectorAll('#trends figure.trend-chart')].filter(f => f.offsetParent)"
        ".map(f => f.dataset.figure)"
    )
    with Chromium() as browser:
        page = browser.open(index.as_uri(), 414)
        assert page.errors == []
        assert page.evaluate(visible) == [
            "GET /services?offset=0 c=64 cpu/req"
        ]  # the default filter: cpu/req
        assert page.evaluate("document.getElementById('trend-count').textContent") == (
            "showing 1 of 2 charts matching \u201ccpu/req\u201d"
        )
        page.evaluate(
            "(() => { const i = document.getElementById('trend-filter'); i.value = 'RPS';"
            " i.dispatchEvent(new Event('input')); })()"
        )
        assert page.evaluate(visible) == ["GET /services?offset=0 c=64 rps"]
        page.evaluate(
            "(() => { const i = document.getElementById('trend-filter'); i.value = '';"
            " i.dispatchEvent(new Event('input')); })()"
        )
        assert len(page.evaluate(visible)) == 2
        assert page.errors == []


# --- change points on the trends ------------------------------------------------------------

STEP_NAME = "services@latest GET /services?offset=0 c=10 cpu/req"


def _add(cli, data_js: Path, suite: str, values: dict[str, float], sha: str, day: int) -> None:
    """One publish's points, appended as publish.yml does (benchwatch trend-add)."""
    gab = data_js.parents[3] / "gab.json"  # outside the gh-pages checkout
    gab.write_text(json.dumps([{"name": n, "unit": "us", "value": v} for n, v in values.items()]))
    done = cli(
        "trend-add",
        str(data_js),
        "--gab",
        str(gab),
        "--suite",
        suite,
        "--commit",
        sha,
        "--timestamp",
        f"2026-10-{day:02d}T12:00:00Z",
        "--url",
        f"https://github.com/example/repo/commit/{sha}",
    )
    assert done.returncode == 0, done.stderr
    gab.unlink()


def test_change_points_are_drawn_at_their_commit_and_listed_with_links(tmp_path: Path, cli) -> None:
    """TEST DATA with a known 10 % step at commit 20 of 30 (and a flat series next to it), made
    into a history by the same commands publish.yml runs: trend-add, changes, site --changes."""
    history = tmp_path / "gh-pages"
    data_js = history / "dev" / "bench" / "data.js"
    shas = [f"{i:02d}" + "c0ffee" * 6 + "00" for i in range(30)]
    for i, sha in enumerate(shas):
        wobble = 1.0 + 0.004 * math.sin(1.7 * i)
        _add(
            cli,
            data_js,
            "benchwatch (smaller is better)",
            {
                STEP_NAME: 150.0 * wobble * (1.10 if i >= 20 else 1.0),
                STEP_NAME.replace("c=10", "c=64"): 140.0 * wobble,
            },
            sha,
            1 + i % 28,
        )
    acks_file = tmp_path / "acks.toml"
    acks_file.write_text("")
    changes_json = tmp_path / "changes.json"
    done = cli(
        "changes",
        "--data",
        str(history),
        "--json-file",
        str(changes_json),
        "--acks",
        str(acks_file),
    )
    assert done.returncode == 1, done.stdout + done.stderr  # an unacknowledged gating regression
    site = tmp_path / "site"
    assert (
        cli(
            "site", "--out", str(site), "--data", str(history), "--changes", str(changes_json)
        ).returncode
        == 0
    )
    html = (site / "index.html").read_text()
    step = figure(html, "services", "GET /services?offset=0 c=10 cpu/req")
    assert re.findall(
        r'class="change-point" data-commit="([0-9a-f]+)" data-kind="regression" '
        r'data-acknowledged="0" data-x="20"',
        step,
    ) == [shas[20]]
    assert "#dc2626" in step  # red: a regression
    assert "change-point" not in figure(
        html, "services", "GET /services?offset=0 c=64 cpu/req"
    )  # flat: none
    tip = re.search(r'class="change-point".*?<title>(.*?)</title>', step).group(1)
    assert (
        f"{shas[19][:8]} → {shas[20][:8]}" in tip and "regression (ALERT)" in tip and "+10." in tip
    )
    table = html.split("id='change-points'")[1].split("</table>")[0]
    assert (
        f"<a href='https://github.com/example/repo/commit/{shas[20]}'>{shas[20][:8]}</a>" in table
    )
    assert (
        f"<a href='https://github.com/example/repo/commit/{shas[19]}'>" in table
        and "regression, alert" in table
    )

    # acknowledged: drawn grey with the reason, no longer an alert
    acks_file.write_text(
        f'[[ack]]\nfigure = "*c=10 cpu/req"\ncommit = "{shas[20][:10]}"\nreason = "accepted in #1"\n'
    )
    assert (
        cli(
            "changes",
            "--data",
            str(history),
            "--json-file",
            str(changes_json),
            "--acks",
            str(acks_file),
        ).returncode
        == 0
    )
    assert (
        cli(
            "site", "--out", str(site), "--data", str(history), "--changes", str(changes_json)
        ).returncode
        == 0
    )
    html = (site / "index.html").read_text()
    step = figure(html, "services", "GET /services?offset=0 c=10 cpu/req")
    assert (
        'data-acknowledged="1"' in step
        and "acknowledged: accepted in #1" in step
        and "#6b7280" in step
    )
    assert "acknowledged: accepted in #1" in html.split("id='change-points'")[1]


def test_site_rejects_a_file_that_is_not_a_changes_document(tmp_path: Path, cli) -> None:
    bad = tmp_path / "changes.json"
    bad.write_text('{"series": []}')
    done = cli("site", "--out", str(tmp_path / "site"), "--changes", str(bad))
    assert (
        done.returncode == 3
        and done.stderr.startswith("ERROR: --changes")
        and "schema_version" in done.stderr
    )
    assert not (tmp_path / "site").exists()
