"""Write the `case` block of scripts/app_env.sh (the names the app-env secret may not set) from
src/benchwatch/declarations/app_env.py, the one list init uses too (`--check`: exit 1 when the script differs)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from benchwatch.declarations.app_env import SHELL_BEGIN, SHELL_END, shell_case

TARGET = Path(__file__).resolve().parent / "app_env.sh"


def rewritten(text: str) -> str:
    before, found, rest = text.partition(SHELL_BEGIN)
    _, ended, after = rest.partition(SHELL_END)
    if not found or not ended:
        raise SystemExit(
            f"ERROR: {TARGET} has no block between {SHELL_BEGIN.strip()!r} and {SHELL_END.strip()!r}"
        )
    return before + shell_case() + after


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--check", action="store_true", help="only check, write nothing")
    args = parser.parse_args()
    text = TARGET.read_text()
    wanted = rewritten(text)
    if args.check:
        if wanted != text:
            print(
                f"ERROR: {TARGET} is out of date: run .venv/bin/python scripts/app_env_names.py",
                file=sys.stderr,
            )
            return 1
        print(f"{TARGET} agrees with src/benchwatch/declarations/app_env.py")
        return 0
    TARGET.write_text(wanted)
    print(f"wrote {TARGET}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
