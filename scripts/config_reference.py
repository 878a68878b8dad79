"""Write docs/configuration.md from the models of benchwatch.toml, stacks.toml and
benchwatch-app.toml (`--check`: exit 1 when the file differs from what the models say)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from benchwatch.scaffold.reference import render

TARGET = Path(__file__).resolve().parents[1] / "docs" / "configuration.md"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--check", action="store_true", help="only check, write nothing")
    args = parser.parse_args()
    text = render()
    if args.check:
        if not TARGET.is_file() or TARGET.read_text() != text:
            print(
                f"ERROR: {TARGET} is out of date: run .venv/bin/python scripts/config_reference.py",
                file=sys.stderr,
            )
            return 1
        print(f"{TARGET} agrees with the models")
        return 0
    TARGET.write_text(text)
    print(f"wrote {TARGET}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
