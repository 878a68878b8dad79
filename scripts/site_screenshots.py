"""The README's screenshots of the site, made the way the browser tests make theirs.

    .venv/bin/python scripts/site_screenshots.py                 # -> docs/img/site-*.png
    .venv/bin/python scripts/site_screenshots.py --attribution /work/attr/posts/attribution.json

The site is tests/site_demo.py's: the real `./bw run --quick` and the real attributions in
tests/fixtures/site (plus any --attribution given), and the trends' test history with a known
step (no published history has enough commits yet). Headless Chromium over the DevTools pipe
(tests/browser.py); nothing leaves the machine.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

import site_demo  # noqa: E402
from browser import Chromium  # noqa: E402

# (page, width, height of the top part shown, file)
SHOTS = (
    ("index.html", 1400, 1500, "site-overview.png"),
    ("trends.html", 1400, 1500, "site-trends.png"),
    ("releases.html", 1400, 1100, "site-releases.png"),
    ("trends.html", 414, 1700, "site-trends-phone.png"),
    ("index.html", 414, 1700, "site-overview-phone-dark.png"),
)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "img")
    parser.add_argument(
        "--attribution",
        type=Path,
        action="append",
        default=[],
        help="more real attribution.json files for the releases page",
    )
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bw-site-shots-"))
    try:
        fixtures = work / "fixtures"
        fixtures.mkdir()
        for path in [*site_demo.attributions(), *args.attribution]:
            name = (
                path.name
                if path.name != "attribution.json"
                else f"attribution-{path.parent.name}.json"
            )
            shutil.copyfile(path, fixtures / name)
        site_demo.ATTRIBUTIONS = fixtures
        site = site_demo.build(work)
        args.out.mkdir(parents=True, exist_ok=True)
        for dark in (False, True):
            with Chromium(dark=dark) as browser:
                for page, width, height, name in SHOTS:
                    if name.endswith("-dark.png") != dark:
                        continue
                    shot = browser.open((site / page).as_uri(), width).screenshot(
                        args.out / name, width, height
                    )
                    print(shot.relative_to(ROOT) if shot.is_relative_to(ROOT) else shot)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
