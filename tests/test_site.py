"""The gh-pages landing page, rendered in headless Chromium from file:// (no server, offline).

The runs and data.js trends here are TEST DATA (see test_report.synthetic_run), not measurements.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from test_report import synthetic_run

from benchwatch.cli import main
from benchwatch.report.site import build_site, find_trend_files
from benchwatch.results import write_run

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
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
    assert main(["site", "--out", str(tmp_path / "site"), "--data", str(tmp_path / "nope")]) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith("ERROR: --data") and "not a directory" in err
