"""A throwaway git repository for `benchwatch bisect`: a one-endpoint FastAPI app on the
`latest` stack, a first (good) commit, then 8 (--commits) commits of which one adds a busy loop of
SPIN iterations to every request. Prints the slow commit's hash last.

    python scripts/make_bisect_repo.py /tmp/bisect-demo --slow-commit 5 --spin 800
"""

from __future__ import annotations

import argparse
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
APP = """from fastapi import FastAPI

app = FastAPI()
SPIN = {spin}


@app.get("/")
async def hello() -> dict[str, str]:
    for _ in range(SPIN):  # commit "{slow}" makes this loop run
        pass
    return {{"message": "Hello World"}}
"""
DECLARATION = """name = "hello"
root = "../.."
app = "apps.hello.app:app"
stacks = ["latest"]

[[endpoints]]
name = "hello"
path = "/"
"""


def git(root: Path, *args: str) -> str:
    done = subprocess.run(
        [
            "git",
            "-C",
            str(root),
            "-c",
            "user.name=bisect-demo",
            "-c",
            "user.email=demo@localhost",
            *args,
        ],
        check=True,
        capture_output=True,
        text=True,
    )
    return done.stdout.strip()


def make(root: Path, slow_commit: int, spin: int, commits: int = 8) -> str:
    if not 1 <= slow_commit <= commits:
        raise SystemExit(f"--slow-commit: give 1..{commits}")
    app_dir = root / "apps" / "hello"
    app_dir.mkdir(parents=True)
    (root / "apps" / "__init__.py").write_text("")
    (app_dir / "__init__.py").write_text("")
    (app_dir / "benchwatch-app.toml").write_text(DECLARATION)
    (root / "benchwatch.toml").write_text(
        '[benchwatch]\napps = ["apps/hello"]\ndefault_stacks = ["latest"]\n'
    )
    (root / "stacks.toml").write_text((REPO / "stacks.toml").read_text())
    slow_subject = f"commit {slow_commit}: count the greeting's characters"
    (app_dir / "app.py").write_text(APP.format(spin=0, slow=slow_subject))
    git(root, "init", "-q", "-b", "main")
    git(root, "add", ".")
    git(root, "commit", "-qm", "the good commit")
    slow_hash = ""
    for number in range(1, commits + 1):
        if number == slow_commit:
            (app_dir / "app.py").write_text(APP.format(spin=spin, slow=slow_subject))
            subject = slow_subject
        else:
            (root / "CHANGES.txt").write_text(f"change {number}\n")
            subject = f"commit {number}: a note"
        git(root, "add", ".")
        git(root, "commit", "-qm", subject)
        if number == slow_commit:
            slow_hash = git(root, "rev-parse", "HEAD")
    return slow_hash


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("directory", type=Path)
    parser.add_argument(
        "--slow-commit",
        type=int,
        default=5,
        help="which of the commits adds the loop (1 = the first)",
    )
    parser.add_argument(
        "--commits", type=int, default=8, help="how many commits after the good one"
    )
    parser.add_argument(
        "--spin",
        type=int,
        default=800,
        help="loop iterations per request (~5 %% of hello@latest here)",
    )
    args = parser.parse_args()
    if args.directory.exists():
        raise SystemExit(f"{args.directory} exists: give a new directory")
    print(make(args.directory, args.slow_commit, args.spin, args.commits))


if __name__ == "__main__":
    main()
