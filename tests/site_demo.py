"""The site the browser tests look at, and the README's screenshots are made from:

- REAL: `fixtures/site/run-quick.json.gz`, the run.json of a real `./bw run --quick` (2026-11-23,
  2 vCPUs), and `fixtures/site/attribution-*.json`, real `./bw attribute --base v2-pre-rust
  --head latest -k '<scenario>@*' --quick` results;
- TEST DATA: the trends, a history with a known step built the way the change-point tests build
  theirs (test_changes._write / _clean / _sha): 40 commits on main, `services@latest` 10 % slower
  from commit 25 (its `(vs parent)` point there 1.10), the other stacks flat; 20 nights, `next`
  8 % faster from night 12 (acknowledged).
"""

from __future__ import annotations

import gzip
import json
import math
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from test_changes import _clean, _sha, _write  # noqa: E402

from benchwatch.trend.history import PREFIX  # noqa: E402

FIXTURES = HERE / "fixtures" / "site"
ATTRIBUTIONS = FIXTURES  # scripts/site_screenshots.py may point it at more real results
SMALLER, BIGGER = "customSmallerIsBetter", "customBiggerIsBetter"
STEP_AT, NIGHT_STEP_AT = 25, 12
STEP_FIGURE = "GET /services?offset=0 c=10 cpu/req"
STEP_NAME = f"services@latest {STEP_FIGURE}"
LEVELS = {
    "seed-v1": 2400.0,
    "seed-v2": 520.0,
    "v1-last": 2100.0,
    "v2-pre-rust": 390.0,
    "latest": 360.0,
}
PAGES = ("index.html", "trends.html", "releases.html")


def _wobble(n: int, phase: float) -> list[float]:
    return [1.0 + 0.005 * math.sin(1.7 * i + phase) for i in range(n)]


def step_history(root: Path) -> tuple[Path, Path]:
    """(main's data.js, the nightly's data.js) under a gh-pages-like root."""
    cpu = {
        f"services@{stack} {STEP_FIGURE}": [level * w for w in _wobble(40, k)]
        for k, (stack, level) in enumerate(LEVELS.items())
    }
    cpu[STEP_NAME] = [v * 3.6 for v in _clean(step_at=STEP_AT, factor=1.10)]
    for k, flavor in enumerate(("hello", "hello-falcon", "hello-starlette")):
        for stack, level in (("seed-v1", 180.0), ("latest", 150.0)):
            cpu[f"{flavor}@{stack} GET / c=10 cpu/req"] = [
                level * (1 - 0.2 * k) * w for w in _wobble(40, k)
            ]
    cpu["micro services validate_json@latest"] = [41.0 * w for w in _wobble(40, 2)]
    cpu["micro services validate_json@seed-v1"] = [610.0 * w for w in _wobble(40, 3)]
    parent = {
        f"services@latest {STEP_FIGURE} (vs parent)": [
            1.10 if i == STEP_AT else w for i, w in enumerate(_wobble(40, 0.3))
        ]
    }
    rps = {
        f"services@latest {STEP_FIGURE.replace('cpu/req', 'rps')}": [
            2800.0 * w for w in _wobble(40, 1)
        ]
    }
    main = _write(
        root / "dev" / "bench" / "data.js",
        {
            "benchwatch (smaller is better)": (SMALLER, cpu),
            "benchwatch (bigger is better)": (BIGGER, rps),
            "benchwatch (vs parent)": (SMALLER, parent),
        },
    )
    nightly_cpu = {
        f"services@{stack} {STEP_FIGURE}": [
            level * (0.92 if stack == "next" and i >= NIGHT_STEP_AT else 1.0) * w
            for i, w in enumerate(_wobble(20, k))
        ]
        for k, (stack, level) in enumerate((("latest", 360.0), ("next", 350.0)))
    }
    nightly = _write(
        root / "nightly" / "data.js",
        {"benchwatch nightly (smaller is better)": (SMALLER, nightly_cpu)},
    )
    data = json.loads(nightly.read_text().removeprefix(PREFIX))
    for i, entry in enumerate(data["entries"]["benchwatch nightly (smaller is better)"]):
        entry["date"] = 1_790_000_000_000 + i * 86_400_000  # one night apart
    nightly.write_text(PREFIX + json.dumps(data))
    return main, nightly


def acks_text() -> str:
    return (
        f'[[ack]]\nfigure = "services@next *"\ncommit = "{_sha(NIGHT_STEP_AT)[:10]}"\n'
        'reason = "starlette 1.10: faster routing, expected"\n'
    )


def real_run(directory: Path) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "run.json").write_bytes(
        gzip.decompress((FIXTURES / "run-quick.json.gz").read_bytes())
    )
    return directory


def attributions() -> list[Path]:
    return sorted(ATTRIBUTIONS.glob("attribution-*.json"))


def build(work: Path) -> Path:
    """The demo site under work/site, made by the commands publish.yml runs (changes, site)."""
    from benchwatch.cli import main

    gh_pages = work / "gh-pages"
    step_history(gh_pages)
    acks = work / "acks.toml"
    acks.write_text(acks_text())
    changes = work / "changes.json"
    code = main(
        ["changes", "--data", str(gh_pages), "--json-file", str(changes), "--acks", str(acks)]
    )
    assert code == 1, "the main step is an unacknowledged gating regression"
    site = work / "site"
    args = [
        "site",
        "--out",
        str(site),
        "--data",
        str(gh_pages),
        "--run",
        str(real_run(work / "run")),
        "--changes",
        str(changes),
    ]
    for path in attributions():
        args += ["--attribution", str(path)]
    assert main(args) == 0
    return site


def screenshots(
    site: Path, out: Path, widths=(1400, 414), max_height: int | None = None, dark: bool = False
) -> list[Path]:
    """A PNG per page and width (the whole page, or its top `max_height` px)."""
    from browser import Chromium

    made = []
    with Chromium(dark=dark) as browser:
        for name in PAGES:
            for width in widths:
                page = browser.open((site / name).as_uri(), width)
                shot = (
                    out / f"site-{name.removesuffix('.html')}-{width}{'-dark' if dark else ''}.png"
                )
                made.append(page.screenshot(shot, width, max_height))
    return made
