"""The gh-pages landing page, rendered in headless Chromium from file:// (no server, offline).

The runs and data.js trends here are TEST DATA (see test_report.synthetic_run), not measurements.
"""

from __future__ import annotations

import json
import math
import os
import re
import subprocess
from pathlib import Path

import pytest
from browser import CHROMIUM
from test_report import synthetic_run

from benchwatch.cli import main
from benchwatch.report.site import build_site, find_trend_files
from benchwatch.results import write_run

needs_chromium = pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (apt-get install -y chromium)")


def trend_data(runs: int, names: list[str], tool: str, base: float) -> list[dict]:
    """TEST DATA: github-action-benchmark entries with a made-up saw-tooth trend."""
    return [
        {
            "commit": {"id": f"{i:040x}", "message": f"change {i}\n\nbody", "timestamp": "2026-01-01T00:00:00Z",
                       "url": f"https://github.com/example/repo/commit/{i:040x}"},
            "date": 1767225600000 + i * 86_400_000,
            "tool": tool,
            "benches": [{"name": name, "value": base * (1 + 0.05 * ((i * (k + 3)) % 7)), "unit": "us",
                         "range": "± 1", "extra": "3 samples"} for k, name in enumerate(names)],
        }
        for i in range(runs)
    ]  # fmt: skip


def write_data_js(path: Path, runs: int = 10) -> None:
    names = [f"services@{s} GET /services?offset=0 c=64 cpu/req" for s in ("seed-v1", "seed-v2", "latest")]
    data = {
        "lastUpdate": 1767225600000,
        "repoUrl": "https://github.com/example/repo",
        "entries": {
            "load (smaller is better)": trend_data(runs, names, "customSmallerIsBetter", 150.0),
            "load (bigger is better)": trend_data(runs, [n.replace("cpu/req", "rps") for n in names],
                                                  "customBiggerIsBetter", 5000.0),
        },
    }  # fmt: skip
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("window.BENCHMARK_DATA = " + json.dumps(data, indent=2) + "\n")


def artifacts_dir(tmp_path: Path) -> Path:
    directory = Path(os.environ.get("BENCHWATCH_ARTIFACTS") or tmp_path / "artifacts")
    directory.mkdir(parents=True, exist_ok=True)
    return directory


def chromium(tmp_path: Path, page: Path, *args: str) -> subprocess.CompletedProcess:
    profile = tmp_path / "chromium-profile"
    return subprocess.run(
        [CHROMIUM, "--headless", "--disable-gpu", "--no-sandbox", "--hide-scrollbars", "--no-first-run",
         f"--user-data-dir={profile}", "--virtual-time-budget=5000", "--enable-logging=stderr", "--v=0",
         *args, page.resolve().as_uri()],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip


def dump_dom(tmp_path: Path, page: Path) -> tuple[str, str]:
    result = chromium(tmp_path, page, "--dump-dom")
    assert result.returncode == 0, result.stderr[-2000:]
    return result.stdout, result.stderr


def attribute(dom: str, name: str) -> list[str]:
    return re.findall(rf'{name}="([^"]*)"', dom)


def page_errors(dom: str, log: str) -> list[str]:
    recorded = [json.loads(v.replace("&quot;", '"')) for v in attribute(dom, "data-errors")]
    assert recorded, "the dashboard script never ran"
    uncaught = [line for line in log.splitlines() if "Uncaught" in line]
    return [e for r in recorded for e in r] + uncaught


@needs_chromium
def test_dashboard_renders_results_trends_and_nightly_status(tmp_path: Path) -> None:
    data = tmp_path / "gh-pages-data"
    write_data_js(data / "dev" / "bench" / "data.js")
    write_data_js(data / "nightly" / "data.js", runs=4)
    site = tmp_path / "site"
    index = build_site(site, run=synthetic_run(), data_dirs=[data], reference_stack="seed-v1",
                       stacks=("seed-v1", "seed-v2", "latest"))  # fmt: skip
    html = index.read_text()
    assert not re.search(r"""(src|href)\s*=\s*["']?\s*(https?:)?//""", html, re.I)
    dom, log = dump_dom(tmp_path, index)
    assert page_errors(dom, log) == []
    assert attribute(dom, "data-dashboard") == ["done"]
    assert attribute(dom, "data-source-state") == ["ok", "ok"]
    trends = re.findall(r'<div class="trend" data-rendered="1" data-bench="([^"]+)"><h4>.*?<path d="M[^"]+"', dom)
    assert len(trends) == 6  # default filter "cpu/req": 3 figures in each of the two trends
    assert all("cpu/req" in name for name in trends)
    nightly = dom.split('id="nightly-status"')[1].split("<h2")[0]
    assert 'data-state="ok"' in nightly and "Last nightly:" in nightly and "than the night before" in nightly
    speedups = dom.split("<h3>Speed-ups †</h3>")[1].split("</table>")[0]
    assert "seed-v1 → seed-v2" in speedups and "2.50x faster" in speedups
    sequential = dom.split("class=\"note sequential\">")[1].split("</p>")[0]
    assert sequential.startswith("† single sequential measurements")
    assert "A/A copy of services@latest (same variant measured twice, in turn) differed by cpu/req up to 1.0%" in sequential
    assert "<h3>services</h3>" in dom and "server CPU per request" in dom
    assert (site / "latest" / "report.html").is_file() and "latest/report.html" in html
    for link in ("dev/bench/", "nightly/", "asv/"):
        assert f"href=\"{link}\"" in dom
    shot = artifacts_dir(tmp_path) / "site-dashboard.png"
    result = chromium(tmp_path, index, "--window-size=1280,2400", f"--screenshot={shot}")
    assert result.returncode == 0 and shot.stat().st_size > 10_000


@needs_chromium
def test_missing_and_corrupt_data_show_messages_not_errors(tmp_path: Path) -> None:
    site = tmp_path / "site"
    (site / "dev" / "bench").mkdir(parents=True)
    (site / "dev" / "bench" / "data.js").write_text("window.BENCHMARK_DATA = {entries: {\n")  # cut short
    (site / "history").mkdir()
    (site / "history" / "data.js").write_text("window.BENCHMARK_DATA = {lastUpdate: 1};\n")  # wrong shape
    index = build_site(site)
    dom, log = dump_dom(tmp_path, index)
    assert page_errors(dom, log) == []
    states = dict(zip(attribute(dom, "data-source"), attribute(dom, "data-source-state"), strict=True))
    assert states == {"dev/bench/data.js": "corrupt", "nightly/data.js": "missing", "history/data.js": "corrupt"}
    assert "dev/bench/data.js: corrupt, it does not run as JavaScript" in dom
    assert "nightly/data.js: not found (no trend data published there yet)" in dom
    assert "history/data.js: does not set window.BENCHMARK_DATA" in dom
    assert "No run given" in dom
    nightly = dom.split('id="nightly-status"')[1].split("<h2")[0]
    assert 'data-state="missing"' in nightly
    shot = artifacts_dir(tmp_path) / "site-missing-data.png"
    chromium(tmp_path, index, "--window-size=1280,1000", f"--screenshot={shot}")
    assert shot.is_file()


def test_local_history_is_found_and_copied_into_the_site(tmp_path: Path) -> None:
    history = tmp_path / ".benchwatch" / "history"
    write_data_js(history / "data.js")
    assert list(find_trend_files(history)) == ["data.js"]
    write_run(tmp_path / "run", synthetic_run())
    site = tmp_path / "site"
    assert main(["site", "--out", str(site), "--data", str(history), "--run", str(tmp_path / "run")]) == 0
    assert (site / "history" / "data.js").read_text() == (history / "data.js").read_text()
    config = json.loads(re.search(r"id='bw-sources'>(.*?)</script>", (site / "index.html").read_text()).group(1))
    assert [s["path"] for s in config["sources"]] == ["dev/bench/data.js", "nightly/data.js", "history/data.js"]
    assert (site / "assets" / "dashboard.js").is_file() and (site / "latest" / "report.md").is_file()


def test_site_command_rejects_a_missing_data_dir(tmp_path: Path, capsys) -> None:
    assert main(["site", "--out", str(tmp_path / "site"), "--data", str(tmp_path / "nope")]) == 3
    err = capsys.readouterr().err.strip()
    assert err.startswith("ERROR: --data") and "not a directory" in err


# --- change points on the trends ------------------------------------------------------------

STEP_NAME = "services@latest GET /services?offset=0 c=10 cpu/req"


def _add(cli, data_js: Path, suite: str, values: dict[str, float], sha: str, day: int) -> None:
    """One publish's points, appended as publish.yml does (benchwatch trend-add)."""
    gab = data_js.parents[3] / "gab.json"  # outside the gh-pages checkout
    gab.write_text(json.dumps([{"name": n, "unit": "us", "value": v} for n, v in values.items()]))
    done = cli("trend-add", str(data_js), "--gab", str(gab), "--suite", suite, "--commit", sha,
               "--timestamp", f"2026-10-{day:02d}T12:00:00Z", "--url", f"https://github.com/example/repo/commit/{sha}")  # fmt: skip
    assert done.returncode == 0, done.stderr
    gab.unlink()


@needs_chromium
def test_change_points_are_drawn_at_their_commit_and_listed_with_links(tmp_path: Path, cli) -> None:
    """TEST DATA with a known 10 % step at commit 20 of 30 (and a flat series next to it), made
    into a history by the same commands publish.yml runs: trend-add, changes, site --changes."""
    history = tmp_path / "gh-pages"
    data_js = history / "dev" / "bench" / "data.js"
    shas = [f"{i:02d}" + "c0ffee" * 6 + "00" for i in range(30)]
    for i, sha in enumerate(shas):
        wobble = 1.0 + 0.004 * math.sin(1.7 * i)
        _add(cli, data_js, "benchwatch (smaller is better)",
             {STEP_NAME: 150.0 * wobble * (1.10 if i >= 20 else 1.0), STEP_NAME.replace("c=10", "c=64"): 140.0 * wobble},
             sha, 1 + i % 28)  # fmt: skip
    acks_file = tmp_path / "acks.toml"
    acks_file.write_text("")
    changes_json = tmp_path / "changes.json"
    done = cli("changes", "--data", str(history), "--json-file", str(changes_json), "--acks", str(acks_file))
    assert done.returncode == 1, done.stdout + done.stderr  # an unacknowledged gating regression
    site = tmp_path / "site"
    assert cli("site", "--out", str(site), "--data", str(history), "--changes", str(changes_json)).returncode == 0
    dom, log = dump_dom(tmp_path, site / "index.html")
    assert page_errors(dom, log) == []
    charts = dict(re.findall(r'data-bench="([^"]+)">(.*?)</svg>', dom))
    assert re.findall(r'class="change-point" data-commit="([0-9a-f]+)"', charts[STEP_NAME]) == [shas[20]]
    assert 'data-kind="regression" data-acknowledged="0"' in charts[STEP_NAME]
    assert "change-point" not in charts[STEP_NAME.replace("c=10", "c=64")]  # the flat series has none
    tip = re.search(r'class="change-point".*?<title>(.*?)</title>', charts[STEP_NAME]).group(1)
    assert f"{shas[19][:8]} → {shas[20][:8]}" in tip and "regression (ALERT)" in tip and "+10." in tip
    table = dom.split('id="change-points"')[1].split("</table>")[0]
    assert f'href="https://github.com/example/repo/commit/{shas[20]}"' in table
    assert f'href="https://github.com/example/repo/commit/{shas[19]}"' in table and "regression, alert" in table

    # acknowledged: drawn grey with the reason, no longer an alert
    acks_file.write_text(f'[[ack]]\nfigure = "*c=10 cpu/req"\ncommit = "{shas[20][:10]}"\nreason = "accepted in #1"\n')
    assert cli("changes", "--data", str(history), "--json-file", str(changes_json), "--acks", str(acks_file)).returncode == 0
    assert cli("site", "--out", str(site), "--data", str(history), "--changes", str(changes_json)).returncode == 0
    dom, log = dump_dom(tmp_path, site / "index.html")
    chart = dict(re.findall(r'data-bench="([^"]+)">(.*?)</svg>', dom))[STEP_NAME]
    assert 'data-acknowledged="1"' in chart and "acknowledged: accepted in #1" in chart
    assert "acknowledged: accepted in #1" in dom.split('id="change-points"')[1]
    shot = artifacts_dir(tmp_path) / "site-change-points.png"
    chromium(tmp_path, site / "index.html", "--window-size=1280,2000", f"--screenshot={shot}")


def test_site_rejects_a_file_that_is_not_a_changes_document(tmp_path: Path, cli) -> None:
    bad = tmp_path / "changes.json"
    bad.write_text('{"series": []}')
    done = cli("site", "--out", str(tmp_path / "site"), "--changes", str(bad))
    assert done.returncode == 3 and done.stderr.startswith("ERROR: --changes") and "schema_version" in done.stderr
    assert not (tmp_path / "site").exists()
